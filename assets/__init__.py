"""The app's bundled files (models, fonts, translations, icons), found through ``importlib.resources``.

``assets/`` is a package so that its files travel as package data: the same code finds them in a checkout
(``python main.py``), an editable install, ``pip install .``, a wheel and ``pipx``, whatever the current folder.
Imports nothing but the standard library, so ``model/`` (no Qt) and ``gui/`` share it.

    assets.path("models", "target")        -> Path of the bundled target model folder
    assets.path("fonts")                   -> Path of the bundled fonts
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["root", "path", "MODELS", "FONTS", "I18N", "ICONS"]


def root() -> Path:
    """The folder holding the bundled files, as a real path on disk.

    Raises ``FileNotFoundError`` if the package is not on the file system (e.g. imported from a zip archive):
    the models are memory-mapped and the fonts handed to Qt by file name, so they must be real files.
    """
    found = files(__name__)
    location = Path(str(found))
    if not isinstance(found, Path) or not location.is_dir():
        raise FileNotFoundError(f"the bundled assets are not a folder on disk: {found}")
    return location


def path(*parts: str) -> Path:
    """``root() / parts[0] / parts[1] / ...``; the path may not exist (callers say what is missing)."""
    return root().joinpath(*parts)


MODELS = path("models")
FONTS = path("fonts")
I18N = path("i18n")
ICONS = path("icons")
