"""The link to the engine process: ``bridge.EngineBridge`` (Qt side) and ``engine_entry`` (the child's entry point)."""
