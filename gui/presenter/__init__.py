"""Presenter mode: its keys and help, the deck of a talk, the cover, recording the page on screen (V)."""
