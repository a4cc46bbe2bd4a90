"""Translations: English source strings in the code, Chinese in ``assets/i18n/one_trip_zh_CN.ts``.

The ``.ts`` XML is read directly by ``TsTranslator`` (no build step, never stale); a compiled ``.qm``
(``pyside6-lrelease``) is used only when no ``.ts`` ships.
Each language's translator is loaded once and reused (switching back and forth holds one per language);
switching language installs or removes it; Qt then sends every widget a ``LanguageChange`` event
and each window re-applies its strings.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from pathlib import Path

import shiboken6
from PySide6.QtCore import QCoreApplication, QTranslator

import assets

log = logging.getLogger(__name__)

I18N_DIR = assets.I18N  # the bundled translations, wherever the package is installed
LANGUAGES = ("en", "zh")
_QT_LOCALE = {"zh": "zh_CN"}


def tr_window(text: str) -> str:
    """``text`` (the English source) in the current language, in the translation context "MainWindow": the one
    helper of the window and its Live page (imported as ``_tr``; each module's own copy before issue 36)."""
    return QCoreApplication.translate("MainWindow", text)


class TsTranslator(QTranslator):
    """A translator read straight from a Qt Linguist ``.ts`` file (contexts, sources, translations).

    A string without a finished translation is shown in English (its source text), never as an empty string.
    """

    def __init__(self, path: str | Path, parent=None):
        super().__init__(parent)
        self.table: dict[tuple[str, str], str] = {}
        root = ET.parse(path).getroot()
        for context in root.iter("context"):
            name = context.findtext("name", "")
            for message in context.iter("message"):
                source = message.findtext("source")
                translation = message.find("translation")
                if source is None or translation is None or not (translation.text or "").strip():
                    continue
                if translation.get("type") in ("obsolete", "vanished"):
                    continue
                self.table[(name, source)] = translation.text

    def translate(self, context, source_text, disambiguation=None, n=-1):  # noqa: D102 - Qt override
        # A missing translation falls back to the English source, never to "": Qt keeps a translator's
        # empty-but-not-null answer (Python's "") as the translation, which would blank the label.
        return self.table.get((context, source_text)) or source_text

    def isEmpty(self) -> bool:  # noqa: N802 - Qt override
        return not self.table


def load_translator(lang: str, i18n_dir: str | Path | None = None) -> QTranslator | None:
    """The translator for ``lang`` ("zh"), or None for English or when no file is found."""
    locale = _QT_LOCALE.get(lang)
    if locale is None:
        return None
    directory = Path(i18n_dir) if i18n_dir is not None else I18N_DIR
    ts = directory / f"one_trip_{locale}.ts"
    qm = directory / f"one_trip_{locale}.qm"
    # The .ts is the source of truth (several people add contexts to it); a .qm may lag behind it.
    if ts.is_file():
        try:
            return TsTranslator(ts)
        except ET.ParseError as exc:
            log.warning("broken translation file %s: %s", ts, exc)
    if qm.is_file():
        translator = QTranslator()
        if translator.load(str(qm)):
            return translator
        log.warning("could not load %s", qm)
    log.warning("no translation for %s in %s", lang, directory)
    return None


_installed: QTranslator | None = None
_current = "en"
_loaded: dict[str, QTranslator | None] = {}  # one translator per language, loaded once and reused


def set_language(lang: str) -> str:
    """Make ``lang`` ("en" or "zh") the application's language. Returns the language now in effect.

    Needs a ``QCoreApplication``; widgets receive ``QEvent.LanguageChange`` and re-apply their strings.
    """
    global _installed, _current
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGUAGES}")
    if lang == _current and (_installed is not None or lang == "en"):
        return _current
    app = QCoreApplication.instance()
    if _installed is not None and shiboken6.isValid(_installed):
        app.removeTranslator(_installed)
        _installed = None
    cached = _loaded.get(lang)
    if cached is not None and (not shiboken6.isValid(cached) or cached.parent() is not app):
        del _loaded[lang]  # its application is gone (tests make a new one): load again
    if lang not in _loaded:
        translator = load_translator(lang)
        if translator is not None:
            translator.setParent(app)  # lives as long as the application; never duplicated
        _loaded[lang] = translator
    translator = _loaded[lang]
    if translator is not None:
        app.installTranslator(translator)
        _installed = translator
    _current = lang
    return _current


def current_language() -> str:
    """The language last set with ``set_language`` ("en" at start)."""
    return _current
