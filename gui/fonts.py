"""Fonts: register the bundled ones and pick a family that has real Chinese glyphs.

The app ships (or will ship) a subset CJK font under ``assets/fonts/``; every ``.otf``/``.ttf``/``.ttc`` found
there is registered with ``QFontDatabase.addApplicationFont``. When nothing is bundled, a system family that
covers Chinese is used (Noto Sans CJK SC on Linux, PingFang SC on macOS, Microsoft YaHei on Windows).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics

log = logging.getLogger(__name__)

FONT_DIR = Path(__file__).resolve().parent.parent / "assets" / "fonts"

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

    Needs a ``QGuiApplication``. Returns the first registered family that covers Chinese, else the first system
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
    installed = set(QFontDatabase.families())
    for family in [*_registered, *CJK_FAMILIES]:
        if family in installed and covers(family, _PROBE):
            return family
    fallback = QFont().family()
    log.warning("no font with Chinese glyphs found; using %s", fallback)
    return fallback
