"""The tour's look: the scene's size, its type sizes (``px``, fitted to the view by ``fit_factor``), fonts,
colours, the translation helper ``T`` and the honesty badges' words. Shared by every tour scene
(``animations.scenes.base.TourScene`` and its pages) and by the tour's widgets (gui/tour/).
"""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QColor, QFont

from animations.fonts import FAMILY, GLYPH_FALLBACK
from animations.typescale import TypeScale, set_text_features

SCENE_W, SCENE_H = 1600.0, 640.0

# Text sizes in scene units are the type scale of a window SCENE_H / VIEW_FRACTION tall: the sizes a scene gets
# when its view takes VIEW_FRACTION of its window's height (the page title above it and the caption under it are
# widgets: gui/tour/layout.py). ``build`` then scales them by ``fit_factor`` so that, fitted into the view it is
# shown in, a scene's text comes out at the window's own type scale (body text as large as the caption under the
# stage, headings a step above it, labels a step below), ``FLOOR_MARGIN`` above it so that rounding to whole
# pixels never takes the small style under height / 48 (the floor).
VIEW_FRACTION = 0.6
SCENE_TYPE = TypeScale(SCENE_H / VIEW_FRACTION)
FLOOR_MARGIN = 1.03

MIN_FACTOR, MAX_FACTOR = 0.6, 1.5
_factor = 1.0  # the factor of the scene being built (see fit_factor; set by TourScene.build, set_text_factor)


def set_text_factor(factor: float) -> None:
    """The factor on ``px`` while a scene is built (``TourScene.build``; 1.0 outside a build)."""
    global _factor
    _factor = float(factor)


def px(style: str) -> float:
    """Font size in scene units of a type-scale style (small, label, body, number, heading, title)."""
    return SCENE_TYPE.px(style) * _factor


def fit_factor(view) -> float:
    """The factor on the scene's text sizes (``px``) that, fitted into ``view`` (a shown ``QGraphicsView`` showing
    a SCENE_W × SCENE_H scene), makes them the type scale of the view's window (in presenter mode too: the pages
    are laid out for that scale; the title, caption and controls around the stage grow), ``FLOOR_MARGIN`` above
    it: under
    1 when the view is larger than VIEW_FRACTION of its window's height, over 1 when smaller; within
    [MIN_FACTOR, MAX_FACTOR]. 1.0 while the view is not shown."""
    if view is None or not view.isVisible():
        return 1.0
    vp = view.viewport().size()
    scale = min(vp.width() / SCENE_W, vp.height() / SCENE_H)
    window_h = view.window().height()
    if scale <= 0 or window_h <= 0:
        return 1.0
    # at most MAX_FACTOR: a view squeezed to a sliver (mid-layout, a tiny window) must not blow the text up
    wanted = FLOOR_MARGIN * TypeScale(window_h).minimum / (scale * SCENE_TYPE.px("small"))
    return min(MAX_FACTOR, max(MIN_FACTOR, wanted))

BG = QColor("#0f1419")
PANEL = QColor("#17202a")
EDGE = QColor("#33465b")
TEXT = QColor("#eef3f8")
DIM = QColor("#a9b8c8")
ACCENT = QColor("#ffc94a")  # the lit chapter, the token being written
BLUE = QColor("#4a74a3")
BLUE_LIGHT = QColor("#86aad3")
GREEN = QColor("#4fae6f")
GREEN_LIGHT = QColor("#b5f5c5")
RED = QColor("#e0665a")
ORANGE = QColor("#e08a1e")
PURPLE = QColor("#b48ee0")
PAPER = QColor("#f4efe2")
INK = QColor("#1b1d21")
SEAT_COLORS = [QColor(c) for c in ("#e69f00", "#56b4e9", "#009e73", "#f0e442", "#cc79a7", "#d55e00", "#0072b2")]

BADGE_COLORS = {"measured": GREEN, "formula": BLUE_LIGHT, "source": PURPLE, "illustrative": ORANGE}

LATIN_FAMILY = GLYPH_FALLBACK  # bundled (assets/fonts): only the token-label marks the CJK family lacks
CJK_FAMILY = FAMILY  # bundled (assets/fonts): the one family of every text, both languages
_families: list[str] = []
_lang = "zh"


def families_for(cjk_family: str | None, lang: str) -> list[str]:
    """Font families in fallback order, the same in both languages: the CJK family (it has Latin letters too),
    then the Latin one only for glyphs it lacks (↵ ⇥ ␀ …). ``lang`` is accepted for the callers' symmetry;
    English punctuation is made proportional by font features (``typescale.set_text_features``)."""
    from PySide6.QtGui import QFontDatabase
    installed = set(QFontDatabase.families())
    latin = [LATIN_FAMILY] if LATIN_FAMILY in installed else []
    cjk = [f for f in dict.fromkeys((CJK_FAMILY, cjk_family)) if f and f in installed and f != LATIN_FAMILY]
    return cjk + latin


def set_font_family(family: str | None, lang: str = "zh") -> None:
    """The families every tour scene uses: ``family`` (one with Chinese glyphs, from
    ``animations.fonts.register_fonts``) and the bundled Latin font as a glyph fallback (see ``families_for``), with
    ``lang``'s punctuation."""
    global _families, _lang
    _families = families_for(family, lang)
    _lang = lang


def font(px: float, bold: bool = False) -> QFont:
    """The tour's font at ``px`` pixels (scene units): one family in both languages (Latin letters and Chinese
    on one baseline); in English with proportional punctuation."""
    f = QFont()
    if _families:
        f.setFamilies(_families)
    set_text_features(f, _lang)
    f.setPixelSize(max(1, round(px)))  # to the nearest pixel: fit_factor's FLOOR_MARGIN keeps it over the floor
    f.setBold(bold)
    return f


RECORD: set[str] | None = None  # tests: when a set, every source string passed to T is added to it


def T(text: str) -> str:
    """``text`` (English source) in the current language (Qt translation context ``"Tour"``)."""
    if RECORD is not None:
        RECORD.add(text)
    out = QCoreApplication.translate("Tour", text)
    return out if out else text  # a missing translation must never blank a label


def badge_text(kind: str) -> str:
    """The words of an honesty badge, translated."""
    return {"measured": T("measured here"), "formula": T("formula"), "source": T("from the source"),
            "illustrative": T("illustrative")}[kind]


def page_title(title: str, number: int | None) -> str:
    """``title`` translated, with the section number in front as "01 · …" when there is one."""
    return (f"{number:02d} · " if number else "") + T(title)


def heat_color(v: float) -> tuple[int, int, int]:
    """A diverging colour for ``v`` in [-1, 1]: blue (negative) … dark (0) … amber (positive)."""
    v = max(-1.0, min(1.0, v))
    if v >= 0:
        return int(30 + 225 * v), int(36 + 165 * v), int(48 + 26 * v)
    v = -v
    return int(30 + 44 * v), int(36 + 134 * v), int(48 + 207 * v)


def seq_color(v: float) -> tuple[int, int, int]:
    """A sequential colour for ``v`` in [0, 1]: dark → amber (attention weights, probabilities)."""
    v = max(0.0, min(1.0, v)) ** 0.6
    return int(24 + 231 * v), int(32 + 170 * v), int(44 + 30 * v)


def formula_text(text: str) -> str:
    """``text`` with no line break between a number and its unit ("4 倍", "8 ms") nor beside a spaced operator
    ("Σ(8+i) = 69", "1 + 2"): a formula wraps only between its parts."""
    from animations.textset import keep_units
    return re.sub(r" ([=+×÷≈→]) ", "\u00a0\\1\u00a0", keep_units(text))


def analysis_of(ctx: dict, kind: str) -> dict | None:
    """The engine's measurement of ``kind`` in ``ctx["analysis"]``, or None when there is none or it failed."""
    a = (ctx.get("analysis") or {}).get(kind)
    return a if a and "error" not in a else None
