"""Errors the engine raises for bad input, each with a one-line message fit for a user."""


class ModelLoadError(Exception):
    """A model or tokenizer directory cannot be loaded; the message names the file or key."""


class RequestError(ValueError):
    """A request the engine cannot serve (bad sampling parameters, unknown request id, ...)."""


class ShardingError(RuntimeError):
    """A sharded forward pass could not finish: a worker process stopped, hung past its timeout, or could not
    start. The runner that raised it is closed; the engine goes back to running on one process."""
