"""Training the bundled models: corpora, the training loop, the model cards (never imported by the app)."""
