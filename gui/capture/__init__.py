"""Pictures and clips of the app without a person at it: ``screenshot``, ``record`` and the video writer."""
