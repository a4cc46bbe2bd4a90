"""What every part of the Live stage shares: the scene's regions, its type sizes, and a text-item helper.

The stage is designed in one fixed logical size, ``SCENE_RECT`` (1600 × 700 scene units); the view fits it with
``fitInView``. Font sizes are *scene units* chosen from the window's type scale (animations/typescale.py) and
the view's fit factor, so that after the view scales the scene no text is smaller than ``window height / 60``
px. Every text item is a ``QGraphicsSimpleTextItem`` tagged with its role (``set_role``), and is placed from
its measured ``boundingRect`` — never at a fixed offset beside text whose width depends on the language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsPathItem, QGraphicsScene, QGraphicsSimpleTextItem

from animations.items import PANEL, PANEL_EDGE, TEXT
from animations.textset import UNITS
from animations.typescale import TypeScale, set_role, set_text_features

SCENE_RECT = QRectF(0, 0, 1600, 700)
MAX_SEATS = 16

# Regions (scene units). Each part owns one region; nothing is drawn across another part's region.
CAPTION = QRectF(16, 0, 1568, 66)  # tall enough for the headline's line (44 units: 64 with its leading)
WAREHOUSE = QRectF(16, 68, 380, 412)
DESKS = QRectF(412, 68, 664, 412)  # the road (carts at the warehouse door) and the desks
# the lower row keeps the upper row's columns: the cheat sheet under the warehouse, the legend under the desks (the
# legend's lines are the longest words on the stage; at 4:3 its text is a third wider for the scene than at 16:9)
CHEAT = QRectF(16, 492, 380, 200)
LEGEND = QRectF(412, 492, 664, 200)
TABLE = QRectF(1092, 68, 492, 624)  # the seats (and the apprentice on verify trips)
SCENE_MIN_HEIGHT = 600.0  # the shortest the page draws the stage (``StageRegions``): every part's words still fit
# presenter mode's floor: its rows under the stage are a type step taller, and at 16:9 its stage gets shorter
# rather than narrower (under 90 % of the width at 1280x720 with the apprentice's lines); the lower row keeps
# its height below 600 (``StageRegions``), the upper row's bars and carts give the rest
PRESENTER_SCENE_MIN_HEIGHT = 520.0


@dataclass(frozen=True)
class StageRegions:
    """The regions above for a scene ``height`` units tall (1600 wide). A window whose rows under the stage take
    more height (the apprentice's and the torn book's lines) gets a shorter stage, not a narrower one: the
    caption and the margins keep their size, the upper row (warehouse, desks) gives two thirds of the height
    taken off and the lower row (cheat sheet, legend) one third; the table spans both. ``height`` 700: the
    constants above."""

    height: float = SCENE_RECT.height()

    def __post_init__(self):
        object.__setattr__(self, "height", max(PRESENTER_SCENE_MIN_HEIGHT, min(SCENE_RECT.height(),
                                                                               float(self.height))))

    @property
    def _cut(self) -> float:
        return SCENE_RECT.height() - self.height

    @property
    def scene(self) -> QRectF:
        return QRectF(0, 0, SCENE_RECT.width(), self.height)

    @property
    def caption(self) -> QRectF:
        return QRectF(CAPTION)

    @property
    def _lower_cut(self) -> float:
        # a third of the first 100 units taken off; below 600 the lower row (the legend's lines, the cheat
        # sheet's) keeps its height and the upper row, whose bars and carts scale, gives the rest
        return min(self._cut, SCENE_RECT.height() - SCENE_MIN_HEIGHT) / 3

    def _upper(self, like: QRectF) -> QRectF:
        return QRectF(like.x(), like.y(), like.width(), like.height() - (self._cut - self._lower_cut))

    def _lower(self, like: QRectF) -> QRectF:
        return QRectF(like.x(), like.y() - (self._cut - self._lower_cut), like.width(),
                      like.height() - self._lower_cut)

    @property
    def warehouse(self) -> QRectF:
        return self._upper(WAREHOUSE)

    @property
    def desks(self) -> QRectF:
        return self._upper(DESKS)

    @property
    def cheat(self) -> QRectF:
        return self._lower(CHEAT)

    @property
    def legend(self) -> QRectF:
        return self._lower(LEGEND)

    @property
    def table(self) -> QRectF:
        return QRectF(TABLE.x(), TABLE.y(), TABLE.width(), TABLE.height() - self._cut)


def regions_of(scene) -> StageRegions:
    """The regions of ``scene`` (a ``StageScene``; any other scene: the full-height ones)."""
    return getattr(scene, "regions", None) or StageRegions()
PAD = 14.0
ROOM_FLOOR = 1 / 48  # no stage text under this share of the window height (issue 24: read from 3 m)
HEADLINE = 1.66 / 40  # the headline (the caption: what this trip shows): 1.6 × the body size of height / 40, and
# a little over, so that rounding to whole scene units never takes it under
NO_LINE_START = "，。、：；！？）」』》,.:;!?)"
# a figure and its unit ("5.9 毫秒", "2 TB/s"): ``wrap_lines`` never breaks a line between them
_FIGURE = re.compile(r"[-−+]?\d[\d,.]*[ \u00a0]?(?:"
                     + "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True)) + r")(?![A-Za-z])")
_LATIN = re.compile(r"[A-Za-z0-9_.,%]")  # a run of these in Chinese text is one word: no line breaks inside it
_ELIDE_KEY = 0x0E18  # QGraphicsItem.data() key: what set_elided last set


def tr(text: str) -> str:
    """``text`` (English source) in the application's current language (Qt translation context "StageScene")."""
    return QCoreApplication.translate("StageScene", text)


def trip_tokens(tokens_in: int, tokens_out: int) -> str:
    """How many tokens one trip (one forward pass) read and wrote, said the same way everywhere on the Live
    page (the stage's headline and the readout): "20 tokens in, 1 out"."""
    first = tr("1 token in") if int(tokens_in) == 1 else tr("{n} tokens in").format(n=int(tokens_in))
    return tr("{tokens_in}, {n} out").format(tokens_in=first, n=int(tokens_out))


@dataclass(frozen=True)
class StageType:
    """Font sizes in scene units for a view that shows the scene ``fit`` px per unit in a window
    ``window_height`` px tall: ``units(style) = TypeScale(window_height).px(style) / fit``.

    Default: a 1920×1080 window whose view is 1536 px wide (80 %): fit 0.96. Sizes are clamped to
    [16, 44] units so the layout never degenerates; the text floor holds whenever fit ≥ window_height / 960.
    """

    window_height: float = 1080.0
    fit: float = 0.96
    presenter: bool = False
    lang: str = "en"  # English gets proportional punctuation (typescale.set_text_features)

    def units(self, style: str) -> float:
        """Scene units of ``style`` (a ``TypeScale`` style, or "headline": ``HEADLINE`` of the window height,
        1.6 × the room's body size); never under ``ROOM_FLOOR`` of the window height once fitted."""
        step = 1.2 if self.presenter else 1.0
        if style == "headline":
            px = self.window_height * HEADLINE * step
        else:
            px = TypeScale(self.window_height, self.presenter).px(style)
        px = max(px, self.window_height * ROOM_FLOOR)
        return max(16.0, min(44.0, px / max(1e-6, self.fit)))

    def font(self, family: str, style: str, bold: bool = False) -> QFont:
        font = QFont(family)
        font.setPixelSize(max(1, round(self.units(style) + 0.49)))  # round up: never under the floor
        font.setBold(bold)
        return set_text_features(font, self.lang)


def fit_for_view(view_w: float, view_h: float, scene_h: float = SCENE_RECT.height()) -> float:
    """Pixels per scene unit after ``fitInView(scene rect, KeepAspectRatio)`` into a view of that size (a scene
    ``scene_h`` units tall: ``StageRegions.height``)."""
    return max(1e-6, min(view_w / SCENE_RECT.width(), view_h / max(1.0, scene_h)))


def add_text(scene: QGraphicsScene, font: QFont, role: str, color: QColor = TEXT, z: float = 20.0,
             parent: QGraphicsItem | None = None) -> QGraphicsSimpleTextItem:
    """A text item on ``scene`` (or under ``parent``) with ``font``, tagged ``role``."""
    item = QGraphicsSimpleTextItem(parent)
    # drawn once into a pixmap and blitted while it does not change: a frame that repaints the region around
    # it (a cart rolling past, a card beside one that changed) does not lay its glyphs out again
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    item.setFont(font)
    item.setBrush(color)
    item.setZValue(z)
    set_role(item, role)
    if parent is None:
        scene.addItem(item)
    return item


def set_elided(item: QGraphicsSimpleTextItem, text: str, width: float,
               mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
    """Set ``text`` on ``item``, elided with "…" to fit ``width`` scene units in the item's font."""
    key = (text, round(width, 2), item.font().key(), mode.value)
    if item.data(_ELIDE_KEY) == key:  # unchanged: frames cost nothing
        return
    item.setData(_ELIDE_KEY, key)
    fm = QFontMetricsF(item.font())
    item.setText(fm.elidedText(text, mode, max(1.0, width)) if fm.horizontalAdvance(text) > width else text)


def set_lines(item: QGraphicsSimpleTextItem, lines: list[str]) -> None:
    """Set ``lines`` on ``item``, one under another (forgets what ``set_elided`` last set)."""
    item.setData(_ELIDE_KEY, None)
    text = "\n".join(lines)
    if item.text() != text:
        item.setText(text)


def line_height(font: QFont) -> float:
    """Height of one line of ``font`` in scene units (QFontMetricsF.height)."""
    return QFontMetricsF(font).height()


def _last_fit(fm: QFontMetricsF, text: str, end: int, width: float) -> int:
    """The smallest ``start`` with ``text[start:end]`` no wider than ``width`` (``end`` when not even one glyph
    fits). Widths grow as glyphs are added in front, so the edge is found by galloping then halving: about
    2·log2(line length) measurements instead of one per character."""
    fits = lambda start: fm.horizontalAdvance(text[start:end]) <= width  # noqa: E731
    step, good = 1, end
    while good > 0:
        probe = max(0, end - step)
        if not fits(probe):
            break
        good, step = probe, step * 2
    else:
        return 0
    lo = max(0, end - step)  # does not fit; good fits (or is end)
    while good - lo > 1:
        mid = (lo + good) // 2
        if fits(mid):
            good = mid
        else:
            lo = mid
    return good


def _first_fit(fm: QFontMetricsF, text: str, start: int, width: float) -> int:
    """The largest ``end`` with ``text[start:end]`` no wider than ``width`` (``start`` when not even one glyph
    fits); galloping then halving, as ``_last_fit``."""
    fits = lambda end: fm.horizontalAdvance(text[start:end]) <= width  # noqa: E731
    n = len(text)
    step, good = 1, start
    while good < n:
        probe = min(n, start + step)
        if not fits(probe):
            break
        good, step = probe, step * 2
    else:
        return n
    hi = min(n, start + step)  # does not fit; good fits (or is start)
    while hi - good > 1:
        mid = (good + hi) // 2
        if fits(mid):
            good = mid
        else:
            hi = mid
    return good


_LINES_CACHE: dict[tuple, list[str]] = {}
_LINES_CACHE_MAX = 512  # a table of 16 seats re-asks for the same lines every trip: keep them


def _cached(kind: str, font: QFont, text: str, width: float, lines: int, compute) -> list[str]:
    key = (kind, font.key(), text, round(width, 2), lines)
    hit = _LINES_CACHE.get(key)
    if hit is None:
        hit = compute()
        if len(_LINES_CACHE) >= _LINES_CACHE_MAX:
            _LINES_CACHE.pop(next(iter(_LINES_CACHE)))  # the oldest entry
        _LINES_CACHE[key] = hit
    return list(hit)


def tail_lines(font: QFont, text: str, width: float, lines: int) -> list[str]:
    """The end of ``text`` broken into at most ``lines`` lines that each fit ``width``; a leading "…" marks text
    cut at the front (the most recent tokens stay). Breaks at a space when the line has one, else anywhere
    (Chinese has no spaces: it breaks between any two characters). Results are cached (same font, text,
    width and lines: same lines)."""
    return _cached("tail", font, text, width, lines, lambda: _tail_lines(font, text, width, lines))


def _tail_lines(font: QFont, text: str, width: float, lines: int) -> list[str]:
    fm = QFontMetricsF(font)
    text = " ".join(text.split()) + (" " if text[-1:].isspace() else "")  # one line: runs of blanks become one
    cjk = any("\u3000" <= ch <= "\u9fff" for ch in text)
    out: list[str] = []
    end = len(text)
    while end > 0 and len(out) < lines:
        start = _last_fit(fm, text, end, width)
        if start == end:  # one glyph wider than the line: show it anyway
            start = end - 1
        elif start > 0 and text[start - 1] != " " and not cjk:  # mid-word: break at the first space
            space = text.find(" ", start, end)
            if 0 <= space < end - 1:
                start = space + 1
        out.insert(0, text[start:end])
        end = start
    cut = end > 0
    # the tail found from the end is wrapped again from its start, so only the last line is short
    tail = ("…" if cut else "") + text[end:].lstrip(" " if cut else "")
    for _ in range(len(tail)):
        again = _wrap_lines(font, tail, width, lines + 1)
        if len(again) <= lines:
            return again
        tail = "…" + tail[2:] if tail.startswith("…") else "…" + tail[1:]
    return out


def add_panel(scene: QGraphicsScene, rect: QRectF, z: float = 0.0) -> QGraphicsPathItem:
    """A rounded panel behind a part."""
    path = QPainterPath()
    path.addRoundedRect(rect, 14, 14)
    panel = QGraphicsPathItem(path)
    panel.setBrush(PANEL)
    panel.setPen(QPen(PANEL_EDGE, 2))
    panel.setZValue(z)
    scene.addItem(panel)
    return panel


def stack(items: list[QGraphicsSimpleTextItem], left: float, top: float, gap: float = 2.0) -> float:
    """Place visible text items one under another from ``top`` by their measured heights; returns the bottom."""
    y = top
    for item in items:
        if not item.isVisible() or not item.text():
            continue
        item.setPos(left, y)
        y += item.boundingRect().height() + gap
    return y


def wrap_lines(font: QFont, text: str, width: float, max_lines: int) -> list[str]:
    """The start of ``text`` in at most ``max_lines`` lines of ``width``, broken at spaces where there are any
    (Chinese breaks between any two characters); the last line is elided with "…" when text is left over.
    Results are cached (same font, text, width and lines: same lines)."""
    return _cached("wrap", font, text, width, max_lines, lambda: _wrap_lines(font, text, width, max_lines))


def _wrap_lines(font: QFont, text: str, width: float, max_lines: int) -> list[str]:
    fm = QFontMetricsF(font)
    out: list[str] = []
    start = 0
    text = " ".join(text.split())
    cjk = any("\u3000" <= ch <= "\u9fff" for ch in text)
    while start < len(text) and len(out) < max_lines:
        end = _first_fit(fm, text, start, width)
        if cjk and end < len(text) and text[end] in NO_LINE_START and end - 1 > start:
            end -= 1  # a Chinese line never starts with a comma or a full stop: take a character down with it
        if end < len(text) and not cjk:  # Latin text breaks at spaces; Chinese between any two characters
            space = text.rfind(" ", start, end + 1)
            if space > start:
                end = space
        if cjk and start < end < len(text):  # a Latin word in Chinese text ("CPU") stays whole
            word = end
            while word > start and _LATIN.match(text[word - 1]) and _LATIN.match(text[word]):
                word -= 1
            if word > start:
                end = word
        for m in _FIGURE.finditer(text, start, min(len(text), end + 24)):  # a number keeps its unit
            if m.start() < end < m.end() and m.start() > start:
                end = m.start()
        end = max(end, start + 1)
        if len(out) == max_lines - 1 and end < len(text):
            out.append(fm.elidedText(text[start:], Qt.TextElideMode.ElideRight, width))
            break
        out.append(text[start:end].strip())
        start = end
        while start < len(text) and text[start] == " ":
            start += 1
    return out
