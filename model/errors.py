"""Errors the engine raises for bad input, each with a one-line message fit for a user."""


class ModelLoadError(Exception):
    """A model or tokenizer directory cannot be loaded; the message names the file or key."""


class RequestError(ValueError):
    """A request the engine cannot serve (bad sampling parameters, unknown request id, ...)."""
