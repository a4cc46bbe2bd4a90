"""Fonts: one family for every text in both languages, the bundled Noto Sans SC subset.

``assets/fonts/`` ships ``NotoSansSC-OneTrip.otf`` (family ``FAMILY``, "Noto Sans SC OneTrip": every Chinese
character of the translations plus the 3,755 common hanzi, and ASCII, Latin-1, general punctuation and arrows,
with tabular digits) and a small DejaVu Sans subset (family ``GLYPH_FALLBACK``) that is only a glyph-level
fallback for the token-label marks the CJK font lacks (↵ ⇥ ␀ ␛ ␍ ⟨ ⟩ ᵀ ✗): ``register_fonts`` makes it the
substitute of ``FAMILY``, so Qt draws those marks from it and everything else from ``FAMILY``.

Every file under ``assets/fonts/`` (found through ``importlib.resources``, see ``assets``) is registered with
``QFontDatabase.addApplicationFont``. Only when nothing is bundled is a system family that covers Chinese used
(Noto Sans CJK SC on Linux, PingFang SC on macOS, Microsoft YaHei on Windows).

Known limits of the one family (checked with fontTools): it has one weight (Regular; bold is synthesised by
Qt), and its · “ ” ‘ ’ … are full-width, as the CJK convention draws them, also in English text.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics

import assets

log = logging.getLogger(__name__)

FONT_DIR = assets.FONTS

FAMILY = "Noto Sans SC OneTrip"  # the one family of the app, both languages (assets/fonts/NotoSansSC-OneTrip.otf)
GLYPH_FALLBACK = "DejaVu Sans OneTrip"  # only for the marks FAMILY lacks (assets/fonts/OneTripLatin-*.ttf)

# Preferred families, best first. A bundled family found by register_fonts() goes before all of them.
CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "PingFang SC",
    "Microsoft YaHei",
    "WenQuanYi Micro Hei",
    "Noto Sans CJK TC",
    "Noto Sans CJK JP",
)

# Characters every Chinese screen needs; a family that lacks any of them is not used for Chinese.
_PROBE = "一趟一个字搬书仓库桌子，。"

_registered: list[str] = []


def _font_files(font_dir: Path) -> list[Path]:
    if not font_dir.is_dir():
        return []
    return sorted(p for p in font_dir.rglob("*") if p.suffix.lower() in (".otf", ".ttf", ".ttc"))


def covers(family: str, text: str) -> bool:
    """True if ``family`` has a glyph for every non-space character of ``text`` (checked with inFontUcs4)."""
    metrics = QFontMetrics(QFont(family))
    return all(ch.isspace() or metrics.inFontUcs4(ord(ch)) for ch in text)


def register_fonts(font_dir: str | Path | None = None) -> str:
    """Register every font file under ``font_dir`` (default ``assets/fonts/``) and return the family to use.

    Needs a ``QGuiApplication``. Returns the first registered family that covers Chinese (``FAMILY`` with the
    bundled fonts), else the first system
    family in ``CJK_FAMILIES`` that is installed and covers Chinese, else the application's default family
    (Latin text still renders; Chinese may not, and a warning is logged).
    Calling it again does not register the same files twice.
    """
    directory = Path(font_dir) if font_dir is not None else FONT_DIR
    if not _registered:
        for path in _font_files(directory):
            font_id = QFontDatabase.addApplicationFont(str(path))
            if font_id < 0:
                log.warning("could not load font %s", path)
                continue
            _registered.extend(QFontDatabase.applicationFontFamilies(font_id))
        if FAMILY in _registered and GLYPH_FALLBACK in _registered:
            QFont.insertSubstitution(FAMILY, GLYPH_FALLBACK)  # token-label marks; see the module docstring
    installed = set(QFontDatabase.families())
    for family in [*_registered, *CJK_FAMILIES]:
        if family in installed and covers(family, _PROBE):
            return family
    fallback = QFont().family()
    log.warning("no font with Chinese glyphs found; using %s", fallback)
    return fallback


def families() -> list[str]:
    """The font families to hand to ``QFont.setFamilies``: the app's one family, then the glyph fallback.

    Registers the bundled fonts first (needs a ``QGuiApplication``); families that are not installed are left out.
    """
    family = register_fonts()
    installed = set(QFontDatabase.families())
    return [family] + [f for f in (GLYPH_FALLBACK,) if f in installed and f != family]


def app_font(px: int | None = None, bold: bool = False) -> QFont:
    """A ``QFont`` of the app's one family (see ``families``), ``px`` pixels high when given (else Qt's default
    size). Needs a ``QGuiApplication``."""
    font = QFont()
    font.setFamilies(families())
    if px is not None:
        font.setPixelSize(max(1, int(px)))
    font.setBold(bold)
    return font


def use_app_font(app, px: int | None = None) -> str:
    """Make ``app_font(px)`` the default font of ``app`` (a ``QGuiApplication``), as the app does at start-up,
    so every widget, item and ``QFont()`` without a family draws Chinese with real glyphs. Returns the family."""
    font = app_font(px)
    app.setFont(font)
    return font.family()
