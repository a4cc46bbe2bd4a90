"""The stage: the warehouse holds the book, the cart carries it to the desk, the cheat sheet fills up.

One real forward pass of the model is one trip. ``StageScene.show_trip(trip)`` turns the engine's measured step
report (a plain dict) into a ``Timeline``; ``advance(dt_s)`` is the only thing that moves stage time, and every
frame the scene ``seek``s the trip's timeline, so the picture at any moment is a pure function of trip time.

What a trip shows, in order (fractions of the trip's duration):
  0.00–0.16  the chapters (one per transformer layer, drawn to scale by their real bytes) are loaded onto the
             cart in layer order; faint outlines stay on the shelf (the warehouse keeps the book, a copy travels)
  0.16–0.28  the cart rolls to the desk
  0.28–0.76  each chapter lights up in turn for a share proportional to its measured ``layer_ms``; the cheat
             sheet (KV cache) fills to ``blocks_in_use``; a prefill trip reads the question sheet at the same time
  0.70–0.84  the new tokens appear as paper slips, one seat per request sharing the table (up to 16)
  0.78–1.00  the cart rolls back and the chapters return to the shelf

Everything is created in ``configure``; a frame only sets positions, opacity, scale and a few flags.
All user-visible strings go through ``_tr`` (Qt's translation system, context "StageScene", English source
strings; Chinese in ``assets/i18n/one_trip_zh_CN.ts``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque
from typing import Callable

from PySide6.QtCore import QCoreApplication, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainterPath, QPen, QRadialGradient
from PySide6.QtWidgets import (
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from animations.easing import clamp01, ease_out_back, linear, smooth
from animations.items import (
    BACKGROUND,
    CART_BED,
    CHAPTER_LIT,
    GHOST,
    GRID_CELL,
    GRID_COLS,
    GRID_GAP,
    LAMP_DECODE,
    LAMP_PREFILL,
    PANEL,
    PANEL_EDGE,
    RAIL,
    REQUEST_COLORS,
    TEXT,
    TEXT_DIM,
    WHEEL_R,
    ApprenticeItem,
    CartItem,
    ChapterItem,
    CheatSheetItem,
    DESK_COLORS,
    DesksItem,
    GuessSlipItem,
    QuestionSheetItem,
    SlipItem,
    font_for,
    pick_family,
)
from animations.timeline import Animation, Fade, Lambda, Timeline, lerp, lerp_point


def _tr(text: str) -> str:
    """``text`` (English source) in the application's current language, via Qt's translators."""
    return QCoreApplication.translate("StageScene", text)


def format_bytes(n: int) -> str:
    """``n`` bytes as a short decimal figure: ``"512 B"``, ``"48.0 kB"``, ``"1.0 MB"``, ``"16.1 GB"``."""
    n = max(0, int(n))
    if n < 1000:
        return f"{n} B"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000.0
        if n < 999.95 or unit == "TB":
            return f"{n:.1f} {unit}"
    raise AssertionError("unreachable")


SCENE_RECT = QRectF(0, 0, 1600, 600)  # the view fits this rect
MAX_SEATS = 16

# Layout in scene units (the view fits SCENE_RECT; at 1080p one unit is about one pixel).
CAPTION_Y = 14.0
WAREHOUSE = QRectF(20, 84, 400, 500)
DESK = QRectF(690, 84, 560, 500)
CHEAT = QRectF(1270, 84, 310, 500)
BOOK_AREA = QRectF(40, 200, 360, 318)  # where the chapters rest, bottom-aligned
FLOOR_Y = 568.0  # wheels touch this line
CART_SCALE = 0.6  # chapters ride at 60 % of their size
CART_PAD = 12.0
CART_REST_X = 436.0
CART_DESK_X = 712.0
SEATS = QRectF(968, 184, 268, 384)
GRID_TOP = 180.0

# Phases of a trip, as fractions of its duration.
LOAD = (0.00, 0.16)
ROLL_OUT = (0.16, 0.28)
COMPUTE = (0.28, 0.76)
LAMP_ON = (0.22, 0.30)
LAMP_OFF = (0.74, 0.80)
SHEET_IN = (0.16, 0.28)
SHEET_OUT = (0.70, 0.78)
SLIPS_IN = (0.74, 0.88)
OLD_SLIPS_OUT = (0.00, 0.08)
ROLL_BACK = (0.78, 0.88)
SHELVE = (0.88, 1.00)
# The apprentice (speculative decoding, "verify" trips): guesses in pencil, then the master's verdicts.
APPRENTICE_IN = (0.00, 0.06)
GUESS_WRITE = (0.03, 0.24)
VERDICTS = (0.46, 0.76)  # judged while the master reads the chapters
BONUS_IN = (0.70, 0.80)
APPRENTICE_POS = QPointF(566, 196)  # beside the desk, on the road side
MAX_GUESSES = 8
DESKS_POS = QPointF(702, 178)  # the torn book's desks, above the parked cart
DESKS_W = 256.0

FRAME_S = 1.0 / 60.0  # a real-time trip lasts at least one frame


# --- animations specific to the stage ----------------------------------------------------------------------
class _Pose(Animation):
    """Moves and scales one item between two poses (position in scene units, scale factor)."""

    def __init__(self, item: QGraphicsItem, a: tuple[QPointF, float], b: tuple[QPointF, float], rate_func=smooth):
        super().__init__(rate_func)
        self.item, self.a, self.b = item, a, b

    def apply(self, p: float) -> None:
        self.item.setPos(lerp_point(self.a[0], self.b[0], p))
        self.item.setScale(lerp(self.a[1], self.b[1], p))


# --- the scene -----------------------------------------------------------------------------------------------
class StageScene(QGraphicsScene):
    """Warehouse, cart, desk and cheat sheet; animates one real forward pass per ``show_trip``.

    Stage time moves only through ``advance(dt_s)``. ``trip_finished`` is emitted once per trip that was shown,
    when its timeline ends. Trips that arrive while one is animating wait in ``pending`` (at most
    ``max_pending``; in real-time mode only the newest few), oldest first; the oldest are dropped past the cap.
    """

    trip_finished = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSceneRect(SCENE_RECT)
        self.setBackgroundBrush(BACKGROUND)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)  # items move every frame
        self._family = pick_family()
        self._lang = "en"
        self._trip_duration_s = 1.0
        self._real_time = False
        self.max_pending = 32
        self.max_pending_real_time = 3
        self.dropped_trips = 0
        self._pending: deque[dict] = deque()
        self._timeline: Timeline | None = None
        self._trip: dict | None = None
        self._t = 0.0
        self._duration = 0.0
        self._caption_fn: Callable[[], str] = lambda: _tr(
            "The book rests in the warehouse. Every token costs one trip.")
        self._colors: dict[str, QColor] = {}
        self._configured = False
        self._lit: int | None = None
        self._blocks_in_use = 0
        self.configure([1] * 4, 0, 0, "")
        self._configured = False  # the placeholder book does not count as configured

    # --- public properties ---------------------------------------------------------------------------------
    @property
    def trip_duration_s(self) -> float:
        """Seconds one trip takes on screen at human pace (default 1.0)."""
        return self._trip_duration_s

    @trip_duration_s.setter
    def trip_duration_s(self, value: float) -> None:
        if not value > 0:
            raise ValueError(f"trip_duration_s must be > 0, got {value!r}")
        self._trip_duration_s = float(value)

    @property
    def real_time(self) -> bool:
        """When True each trip lasts its measured ``wall_ms`` (at least one frame): trips just flash."""
        return self._real_time

    @real_time.setter
    def real_time(self, value: bool) -> None:
        self._real_time = bool(value)
        self._trim_pending()

    @property
    def pending(self) -> list[dict]:
        """Trips waiting for the one on screen to finish, oldest first (a copy)."""
        return list(self._pending)

    @property
    def language(self) -> str:
        return self._lang

    @property
    def font_family(self) -> str:
        return self._family

    def busy(self) -> bool:
        """True while a trip is animating or waiting."""
        return self._timeline is not None or bool(self._pending)

    def current_trip(self) -> dict | None:
        """The trip on screen, or None."""
        return self._trip

    def trip_time_s(self) -> float:
        """Seconds into the trip on screen (0 when idle)."""
        return self._t

    def current_duration_s(self) -> float:
        """Seconds the trip on screen lasts in total (0 when idle)."""
        return self._duration

    # --- what tests and the window can read back ---------------------------------------------------------
    @property
    def chapters(self) -> list[ChapterItem]:
        return list(self._chapters)

    def lit_chapter(self) -> int | None:
        """Index (0-based) of the layer being computed at the desk now, or None."""
        return self._lit

    def filled_cells(self) -> int:
        """Cheat-sheet cells drawn as in use now."""
        return self._grid.filled

    def caption_text(self) -> str:
        """The caption above the stage now."""
        return self._caption.text()

    def slip_texts(self) -> list[str]:
        """Texts of the token slips visible now, in seat order."""
        return [s.text for s in self._front if s.isVisible() and s.opacity() > 0.01]

    def guess_states(self) -> list[tuple[str, str, str]]:
        """The apprentice's slips visible now: (state, guess, master's token beside a wrong guess)."""
        return [(g.state, g.text, g.fix) for g in self._guesses if g.opacity() > 0.01]

    def apprentice_visible(self) -> bool:
        return self._apprentice.opacity() > 0.01

    @property
    def desks(self) -> DesksItem:
        """The torn book's desks (empty and hidden while the book is whole)."""
        return self._desks

    def sharding(self) -> tuple[str, int]:
        """(mode "tp" | "pp", number of desks) the stage draws."""
        return self._shard_mode, self._shard_n

    def set_sharding(self, mode: str, n: int, layers: list[tuple[int, int]] | None = None) -> None:
        """Draw the book torn ``n`` ways: "tp" cuts every chapter into n strips (one per desk), "pp" gives each
        desk a run of whole chapters (``layers``: per desk [start, stop); default: an even split). n = 1: whole."""
        if mode not in ("tp", "pp"):
            raise ValueError(f"sharding mode must be 'tp' or 'pp', got {mode!r}")
        n = max(1, int(n))
        n_layer = len(self._chapters)
        if mode == "pp":
            n = min(n, n_layer)
            if not layers or len(layers) != n:
                # The engine's event carries the real stages; without one, split as model.parallel.split_layers
                # does (animations/ may not import model/, so the three lines are repeated here on purpose).
                base, extra = divmod(n_layer, n)
                layers, start = [], 0
                for d in range(n):
                    stop = start + base + (1 if d < extra else 0)
                    layers.append((start, stop))
                    start = stop
        else:
            layers = [(0, n_layer)] * n
        self._shard_mode, self._shard_n = mode, n
        self._shard_layers = [(int(a), int(b)) for a, b in layers]
        self._apply_sharding()
        self._retranslate()

    def _apply_sharding(self) -> None:
        n, mode = self._shard_n, self._shard_mode
        n_layer = len(self._chapters)
        if n <= 1:
            for ch in self._chapters:
                ch.set_shards([])
            self._desks.configure(mode, n_layer, [], [])
            self._desks.setOpacity(0.0)
            return
        layers = self._shard_layers if len(self._shard_layers) == n else [(0, n_layer)] * n
        colors = [DESK_COLORS[d % len(DESK_COLORS)] for d in range(n)]
        for i, ch in enumerate(self._chapters):
            if mode == "tp":
                ch.set_shards(colors, "tp")
            else:
                owner = next((d for d, (a, b) in enumerate(layers) if a <= i < b), 0)
                ch.set_shards([colors[owner]], "pp")
        self._desks.configure(mode, n_layer, layers, [_tr("Desk {i}").format(i=d + 1) for d in range(n)])
        self._desks.setOpacity(1.0)

    # --- configuration -----------------------------------------------------------------------------------
    def configure(self, layer_bytes: list[int], block_bytes: int, num_blocks: int, model_name: str,
                  dictionary_bytes: int = 0) -> None:
        """Draw the model: one chapter per layer (width to scale by ``layer_bytes``, bytes), a KV cache of
        ``num_blocks`` pages of ``block_bytes`` bytes each, and ``model_name`` in the warehouse.
        ``dictionary_bytes``: the weights outside the layers (embeddings, final norm), named beside the book.

        Drops any trip on screen or waiting (without ``trip_finished``) and shows the idle stage.
        """
        layer_bytes = [max(0, int(b)) for b in layer_bytes] or [0]
        self._layer_bytes = layer_bytes
        self._block_bytes = max(0, int(block_bytes))
        self._num_blocks = max(0, int(num_blocks))
        self._model_name = str(model_name)
        self._dictionary_bytes = max(0, int(dictionary_bytes))
        self._pending.clear()
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self.clear()
        self._build()
        self._configured = True
        self._show_idle()

    def _build(self) -> None:
        fam = self._family
        self._fonts = {
            "caption": font_for(fam, 34, bold=True),
            "header": font_for(fam, 28, bold=True),
            "sub": font_for(fam, 22),
            "status": font_for(fam, 24, bold=True),
            "slip": font_for(fam, 24),
            "slip_small": font_for(fam, 22),
            "sheet": font_for(fam, 24, bold=True),
        }
        n = len(self._layer_bytes)

        # panels
        for rect in (WAREHOUSE, DESK, CHEAT):
            path = QPainterPath()
            path.addRoundedRect(rect, 14, 14)
            panel = QGraphicsPathItem(path)
            panel.setBrush(PANEL)
            panel.setPen(QPen(PANEL_EDGE, 2))
            panel.setZValue(0)
            panel.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # drawn once, then blitted
            self.addItem(panel)

        def text(font_key: str, color: QColor, z: float = 9) -> QGraphicsSimpleTextItem:
            item = QGraphicsSimpleTextItem()
            item.setFont(self._fonts[font_key])
            item.setBrush(color)
            item.setZValue(z)
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # drawn once, then blitted
            self.addItem(item)
            return item

        self._caption = text("caption", TEXT)
        self._wh_header = text("header", TEXT)
        self._wh_model = text("sub", TEXT_DIM)
        self._wh_sub = text("sub", TEXT_DIM)
        self._wh_note = text("sub", TEXT_DIM)
        self._desk_header = text("header", TEXT)
        self._status = text("status", CHAPTER_LIT)
        self._cheat_header = text("header", TEXT)
        self._cheat_sub = text("sub", TEXT_DIM)
        self._cheat_more = text("sub", TEXT_DIM)
        self._cheat_count = text("status", TEXT)
        self._wh_header.setPos(WAREHOUSE.left() + 18, WAREHOUSE.top() + 12)
        self._wh_model.setPos(WAREHOUSE.left() + 18, WAREHOUSE.top() + 52)
        self._wh_sub.setPos(WAREHOUSE.left() + 18, WAREHOUSE.top() + 80)
        self._desk_header.setPos(DESK.left() + 18, DESK.top() + 12)
        self._status.setPos(DESK.left() + 18, DESK.top() + 56)
        self._cheat_header.setPos(CHEAT.left() + 18, CHEAT.top() + 12)
        self._cheat_sub.setPos(CHEAT.left() + 18, CHEAT.top() + 52)
        self._status.setOpacity(0.0)

        cart_w = CART_SCALE * BOOK_AREA.width() + 2 * CART_PAD
        # rails between the warehouse and the desk
        for y in (FLOOR_Y,):
            rail = QGraphicsLineItem(WAREHOUSE.right() - 6, y, CART_DESK_X + cart_w + 10, y)
            rail.setPen(QPen(RAIL, 4, Qt.PenStyle.DashLine, Qt.PenCapStyle.RoundCap))
            rail.setZValue(1)
            rail.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # drawn once, then blitted
            self.addItem(rail)

        # the book: chapter widths to scale by bytes, stacked top (chapter 1) to bottom, resting on the shelf
        gap = 4.0 if n <= 24 else 1.0
        h = min(60.0, (BOOK_AREA.height() - gap * (n - 1)) / n)
        biggest = max(self._layer_bytes) or 1
        widths = [max(2.0, BOOK_AREA.width() * b / biggest) if max(self._layer_bytes) else BOOK_AREA.width()
                  for b in self._layer_bytes]
        book_h = n * h + (n - 1) * gap
        top = BOOK_AREA.bottom() - book_h
        label_px = int(max(12, min(24, h - 10)))
        self._fonts["chapter"] = font_for(fam, label_px, bold=True)
        self._chapters: list[ChapterItem] = []
        self._shelf: list[QPointF] = []
        self._cart_offsets: list[QPointF] = []
        cart_w = CART_SCALE * BOOK_AREA.width() + 2 * CART_PAD
        stack_h = CART_SCALE * book_h
        self._cart_y = FLOOR_Y - CART_BED - 2 * WHEEL_R
        for i, w in enumerate(widths):
            y = top + i * (h + gap)
            pos = QPointF(BOOK_AREA.left(), y)
            ghost_path = QPainterPath()
            ghost_path.addRoundedRect(QRectF(0, 0, w, h), min(5.0, h / 4), min(5.0, h / 4))
            ghost = QGraphicsPathItem(ghost_path)
            ghost.setPos(pos)
            ghost.setPen(QPen(GHOST, 1.5, Qt.PenStyle.DashLine))
            ghost.setBrush(Qt.BrushStyle.NoBrush)
            ghost.setZValue(2)
            ghost.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # drawn once, then blitted
            self.addItem(ghost)
            chapter = ChapterItem(w, h, self._fonts["chapter"])
            chapter.setZValue(5 + (n - i) * 0.001)  # earlier chapters leave first: keep them on top
            chapter.setPos(pos)
            self.addItem(chapter)
            self._chapters.append(chapter)
            self._shelf.append(pos)
            self._cart_offsets.append(QPointF(CART_PAD, -stack_h + CART_SCALE * (y - top)))
        self._wh_note.setPos(WAREHOUSE.left() + 18, BOOK_AREA.bottom() + 14)

        # the cart
        self._cart = CartItem(cart_w, stack_h)
        self._cart.setZValue(4)
        self._cart.setPos(CART_REST_X, self._cart_y)
        self.addItem(self._cart)

        # the desk lamp: a soft glow around the parked cart
        stack_center = QPointF(CART_DESK_X + cart_w / 2, self._cart_y - stack_h / 2)
        radius = max(140.0, 0.75 * max(cart_w, stack_h))
        self._lamp = QGraphicsEllipseItem(-radius, -radius, 2 * radius, 2 * radius)
        self._lamp.setPos(stack_center)
        self._lamp.setPen(Qt.PenStyle.NoPen)
        self._lamp.setZValue(3)
        self._lamp.setOpacity(0.0)
        self._lamp.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)  # drawn once, then blitted
        self.addItem(self._lamp)
        self._lamp_radius = radius
        self._set_lamp_color(LAMP_DECODE)

        # the question sheet (prefill) and the seats' token slips (two sets: old ones fade while new ones pop)
        self._sheet = QuestionSheetItem(SEATS.adjusted(0, 0, 0, -8), self._fonts["sheet"])
        self._sheet.setZValue(6)
        self.addItem(self._sheet)
        self._seat_marks: list[SlipItem] = []
        for _ in range(MAX_SEATS):
            mark = SlipItem(self._fonts["slip"], hollow=True)
            mark.setZValue(5.5)
            self.addItem(mark)
            self._seat_marks.append(mark)
        self._front: list[SlipItem] = []
        self._back: list[SlipItem] = []
        for group in (self._front, self._back):
            for _ in range(MAX_SEATS):
                slip = SlipItem(self._fonts["slip"])
                slip.setZValue(7)
                self.addItem(slip)
                group.append(slip)

        # the cheat sheet
        self._grid = CheatSheetItem(self._num_blocks)
        grid_w = GRID_COLS * (GRID_CELL + GRID_GAP) - GRID_GAP
        self._grid.setPos(CHEAT.center().x() - grid_w / 2, GRID_TOP)
        self._grid.setZValue(2)
        self.addItem(self._grid)
        grid_bottom = GRID_TOP + self._grid.rows * (GRID_CELL + GRID_GAP)
        self._cheat_more.setPos(CHEAT.left() + 18, grid_bottom + 4)
        self._cheat_count.setPos(CHEAT.left() + 18, CHEAT.bottom() - 48)

        # the apprentice and its guess slips (verify trips)
        self._fonts["small"] = font_for(fam, 18)
        self._apprentice = ApprenticeItem(self._fonts["small"])
        self._apprentice.setPos(APPRENTICE_POS)
        self._apprentice.setZValue(8)
        self.addItem(self._apprentice)
        self._guesses: list[GuessSlipItem] = []
        for _ in range(MAX_GUESSES + 1):
            g = GuessSlipItem(self._fonts["slip_small"], self._fonts["small"])
            g.setZValue(7.5)
            self.addItem(g)
            self._guesses.append(g)
        self._guess_rid: str | None = None

        # the torn book's desks
        self._desks = DesksItem(DESKS_W, self._fonts["small"], self._fonts["small"])
        self._desks.setPos(DESKS_POS)
        self._desks.setZValue(6.5)
        self.addItem(self._desks)
        if not hasattr(self, "_shard_mode"):
            self._shard_mode, self._shard_n, self._shard_layers = "tp", 1, []
        self._apply_sharding()
        self._lit = None
        self._blocks_in_use = 0
        self._retranslate()

    def _set_lamp_color(self, color: QColor) -> None:
        grad = QRadialGradient(QPointF(0, 0), self._lamp_radius)
        inner = QColor(color)
        inner.setAlpha(120)
        mid = QColor(color)
        mid.setAlpha(45)
        outer = QColor(color)
        outer.setAlpha(0)
        grad.setColorAt(0.0, inner)
        grad.setColorAt(0.55, mid)
        grad.setColorAt(1.0, outer)
        self._lamp.setBrush(QBrush(grad))

    # --- language ----------------------------------------------------------------------------------------
    def set_language(self, lang: str) -> None:
        """Re-apply every string on the stage in ``lang`` ("zh" or "en").

        The words come from Qt's installed translators (the window installs the Chinese one); this call
        re-reads them, so call it after the application's translator changes.
        """
        if lang not in ("zh", "en"):
            raise ValueError(f"unknown language {lang!r}; expected 'zh' or 'en'")
        self._lang = lang
        self._retranslate()

    def set_font_family(self, family: str) -> None:
        """Use ``family`` for every text on the stage (one with Chinese glyphs; see gui.fonts).

        Redraws the stage, so a trip on screen or waiting is dropped: call it before the first trip.
        """
        self._family = family
        configured = self._configured
        self.configure(self._layer_bytes, self._block_bytes, self._num_blocks, self._model_name,
                       self._dictionary_bytes)
        self._configured = configured  # a placeholder book stays a placeholder

    def _retranslate(self) -> None:
        n = len(self._layer_bytes)
        self._wh_header.setText(_tr("Warehouse · GPU memory"))
        book = _tr("The book: {n} chapters · {size}").format(n=n, size=format_bytes(sum(self._layer_bytes)))
        if self._dictionary_bytes:
            book += _tr(" + dictionary {size}").format(size=format_bytes(self._dictionary_bytes))
        self._wh_model.setText(self._model_name)
        self._wh_sub.setText(book)
        self._wh_note.setText(_tr("A copy travels; the book stays home"))
        self._fit_width(self._wh_note, WAREHOUSE.width() - 36)
        for i, (chapter, b) in enumerate(zip(self._chapters, self._layer_bytes)):
            # the placeholder book (no model yet, or none could be loaded) has no sizes to show
            chapter.set_label(_tr("Ch. {i} · {size}").format(i=i + 1, size=format_bytes(b))
                              if self._model_name else _tr("Ch. {i}").format(i=i + 1))
        if self._shard_n > 1:
            how = _tr("every page cut in {n} strips") if self._shard_mode == "tp" else _tr("chapters split {n} ways")
            self._desk_header.setText(_tr("{n} desks · compute · {how}").format(n=self._shard_n,
                                                                             how=how.format(n=self._shard_n)))
            self._desks.configure(self._shard_mode, len(self._chapters), self._desks_layers(),
                                  [_tr("Desk {i}").format(i=d + 1) for d in range(self._shard_n)])
        else:
            self._desk_header.setText(_tr("Desk · compute"))
        self._apprentice.set_text(_tr("Apprentice"), self._apprentice_note())
        self._cheat_header.setText(_tr("Cheat sheet · KV cache"))
        self._cheat_sub.setText(_tr("one page = {size}").format(size=format_bytes(self._block_bytes)))
        for item, box in ((self._wh_header, WAREHOUSE), (self._wh_model, WAREHOUSE), (self._wh_sub, WAREHOUSE),
                          (self._desk_header, DESK), (self._cheat_header, CHEAT), (self._cheat_sub, CHEAT)):
            self._fit_width(item, box.width() - 36)
        hidden = self._num_blocks - self._grid.drawn
        self._cheat_more.setText(_tr("… and {n} more pages").format(n=hidden) if hidden > 0 else "")
        self._update_count(self._blocks_in_use)
        self._update_status(self._lit)
        self._set_caption(self._caption_fn)
        if self._trip is not None:
            self._sheet.set_title(_tr("The question · {n} tokens").format(n=int(self._trip.get("tokens_in", 0) or 0)),
                                 self._fonts["sheet"])

    def _desks_layers(self) -> list[tuple[int, int]]:
        n_layer = len(self._chapters)
        if len(self._shard_layers) == self._shard_n:
            return list(self._shard_layers)
        return [(0, n_layer)] * self._shard_n

    def _apprentice_note(self) -> str:
        trip = self._trip
        if trip is None or trip.get("phase") != "verify":
            return _tr("draft model")
        return _tr("guessed in {ms} ms").format(ms=f"{float(trip.get('draft_ms') or 0.0):.1f}")

    @staticmethod
    def _fit_width(item: QGraphicsSimpleTextItem, width: float) -> None:
        w = item.boundingRect().width()
        item.setScale(min(1.0, width / w) if w > 0 else 1.0)

    def _set_caption(self, fn: Callable[[], str]) -> None:
        self._caption_fn = fn
        self._caption.setText(fn())
        self._fit_width(self._caption, SCENE_RECT.width() - 40)
        w = self._caption.boundingRect().width() * self._caption.scale()
        self._caption.setPos(SCENE_RECT.center().x() - w / 2, CAPTION_Y)

    def show_notice(self, text: Callable[[], str]) -> None:
        """Show ``text()`` (re-read on a language switch) as the stage's caption until the next trip."""
        self._set_caption(text)

    def _update_count(self, in_use: int) -> None:
        self._cheat_count.setText(_tr("{used} of {total} pages used").format(used=in_use, total=self._num_blocks))
        self._fit_width(self._cheat_count, CHEAT.width() - 36)

    def _update_status(self, lit: int | None) -> None:
        if lit is not None:
            self._status.setText(_tr("Reading chapter {i} of {n}").format(i=lit + 1, n=len(self._chapters)))
            self._fit_width(self._status, DESK.width() - 36)

    # --- trips -------------------------------------------------------------------------------------------
    def show_trip(self, trip: dict) -> None:
        """Animate one real forward pass (a step report as a dict; see the module docstring for the keys).

        Starts at once when idle; otherwise waits in ``pending``.
        """
        if not self._configured:
            n = len(trip.get("layer_ms") or []) or 1
            self.configure([0] * n, 0, max(16, int(trip.get("blocks_in_use", 0))), "")
        if self._timeline is None and not self._pending:
            self._start(trip)
        else:
            self._pending.append(trip)
            self._trim_pending()

    def _trim_pending(self) -> None:
        cap = self.max_pending_real_time if self._real_time else self.max_pending
        while len(self._pending) > cap:
            self._pending.popleft()
            self.dropped_trips += 1

    def advance(self, dt_s: float) -> None:
        """Move stage time forward by ``dt_s`` seconds (the clock's tick); the only way stage time moves.

        At most one trip ends per call, so even real-time trips shorter than a frame are each seen.
        """
        if self._timeline is None:
            if not self._pending:
                return
            self._start(self._pending.popleft())
        if not dt_s > 0:
            return
        self._t += dt_s
        if self._t < self._duration:
            self._timeline.seek(self._t)
            return
        leftover = self._t - self._duration
        self._timeline.seek(self._duration)
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self.trip_finished.emit()
        if self._timeline is None and self._pending:  # a slot may already have started one
            self._start(self._pending.popleft())
            self._t = min(leftover, self._duration * 0.5)
            self._timeline.seek(self._t)

    def reset(self) -> None:
        """Forget every trip and return to the idle stage (empty cheat sheet, no slips, idle caption)."""
        self._pending.clear()
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self._show_idle()

    def _show_idle(self) -> None:
        for chapter, pos in zip(self._chapters, self._shelf):
            chapter.setPos(pos)
            chapter.setScale(1.0)
            chapter.set_lit(False)
        self._lit = None
        self._cart.setPos(CART_REST_X, self._cart_y)
        self._lamp.setOpacity(0.0)
        self._status.setOpacity(0.0)
        self._sheet.setOpacity(0.0)
        for slip in self._front + self._back + self._seat_marks:
            slip.setOpacity(0.0)
        self._apprentice.setOpacity(0.0)
        for g in self._guesses:
            g.setOpacity(0.0)
        self._desks.set_lit(None)
        self._desks.set_sync(0.0)
        self._colors.clear()
        self._set_cache(0, 0)
        self._set_caption(lambda: _tr("The book rests in the warehouse. Every token costs one trip."))

    def _trip_seconds(self, trip: dict) -> float:
        if self._real_time:
            wall_ms = trip.get("wall_ms") or 0.0
            try:
                wall_s = float(wall_ms) / 1000.0
            except (TypeError, ValueError):
                wall_s = 0.0
            return max(FRAME_S, wall_s if math.isfinite(wall_s) else 0.0)
        return self._trip_duration_s

    def _start(self, trip: dict) -> None:
        self._trip = trip
        self._duration = self._trip_seconds(trip)
        self._t = 0.0
        self._timeline = self._build_timeline(trip, self._duration)
        self._timeline.seek(0.0)

    def _layer_shares(self, trip: dict) -> list[float]:
        """Cumulative ends (0 … 1) of each layer's share of the compute window, from ``layer_ms``."""
        n = len(self._chapters)
        raw = trip.get("layer_ms") or []
        ms = []
        if len(raw) == n:
            for v in raw:
                try:
                    f = float(v)
                except (TypeError, ValueError):
                    f = 0.0
                ms.append(f if math.isfinite(f) and f > 0 else 0.0)
        if not ms or sum(ms) <= 0:
            ms = [1.0] * n
        total = sum(ms)
        ends, acc = [], 0.0
        for v in ms:
            acc += v
            ends.append(acc / total)
        ends[-1] = 1.0
        return ends

    def _caption_for(self, trip: dict) -> Callable[[], str]:
        phase = trip.get("phase", "decode")
        tokens_in = int(trip.get("tokens_in", 0) or 0)
        batch = int(trip.get("batch", 0) or len(trip.get("request_ids") or []) or 1)
        if phase == "prefill":
            return lambda: _tr("Reading the question: {n} tokens in one trip").format(n=tokens_in)
        if phase == "mixed":
            return lambda: _tr("Reading and writing in one trip: {n} tokens in").format(n=tokens_in)
        if phase == "verify":
            return lambda: _tr("Checking the apprentice's guesses: {n} tokens in one trip").format(n=tokens_in)
        if batch > 1:
            return lambda: _tr("Sharing a table: {n} requests, one trip, a token each").format(n=batch)
        if self._shard_n > 1 and trip.get("workers"):
            n = self._shard_n
            if self._shard_mode == "tp":
                return lambda: _tr("Torn book: every page split over {n} desks, which sync after each half-chapter"
                                   ).format(n=n)
            return lambda: _tr("Torn book: chapters split over {n} desks; a desk waits while another works"
                               ).format(n=n)
        return lambda: _tr("Writing: one trip, one token")

    def _color_for(self, request_id: str) -> QColor:
        color = self._colors.get(request_id)
        if color is None:
            color = REQUEST_COLORS[len(self._colors) % len(REQUEST_COLORS)]
            self._colors[request_id] = color
        return color

    def _seats(self, trip: dict) -> list[tuple[str, str]]:
        """(request_id, slip text) per seat, in batch order, at most MAX_SEATS."""
        texts: dict[str, list[str]] = {}
        for token in trip.get("tokens") or []:
            rid = str(token.get("request_id", ""))
            texts.setdefault(rid, []).append(str(token.get("label") or token.get("text") or ""))
        order = [str(r) for r in trip.get("request_ids") or []]
        for rid in texts:
            if rid not in order:
                order.append(rid)
        return [(rid, "".join(texts.get(rid, [])) or "…") for rid in order[:MAX_SEATS]]

    def _layout_seats(self, n: int) -> list[QRectF]:
        if n <= 0:
            return []
        cols = 1 if n <= 5 else 2
        rows = math.ceil(n / cols)
        gap = 10.0 if rows <= 5 else 7.0
        h = min(64.0, (SEATS.height() - gap * (rows - 1)) / rows)
        w = (SEATS.width() - gap * (cols - 1)) / cols
        top = SEATS.top()
        return [QRectF(SEATS.left() + (i % cols) * (w + gap), top + (i // cols) * (h + gap), w, h) for i in range(n)]

    def _build_timeline(self, trip: dict, d: float) -> Timeline:
        tl = Timeline()
        phase = trip.get("phase", "decode")
        reads_question = phase in ("prefill", "mixed")
        self._set_caption(self._caption_for(trip))
        self._set_lamp_color(LAMP_PREFILL if reads_question else LAMP_DECODE)

        def at(window: tuple[float, float]) -> tuple[float, float]:
            return window[0] * d, window[1] * d

        rest = [QPointF(CART_REST_X + o.x(), self._cart_y + o.y()) for o in self._cart_offsets]

        # load: chapters slide from the shelf onto the cart, in layer order
        tl.add_lagged((_Pose(ch, (self._shelf[i], 1.0), (rest[i], CART_SCALE)) for i, ch in enumerate(self._chapters)),
                      *at(LOAD), lag_ratio=0.35)

        def roll(x0: float, x1: float) -> Callable[[float], None]:
            def fn(p: float) -> None:
                x = lerp(x0, x1, p)
                self._cart.setPos(x, self._cart_y)
                for ch, off in zip(self._chapters, self._cart_offsets):
                    ch.setPos(x + off.x(), self._cart_y + off.y())
            return fn

        tl.add(Lambda(roll(CART_REST_X, CART_DESK_X)), *at(ROLL_OUT))

        # compute: each chapter lit for its share of the measured time
        ends = self._layer_shares(trip)
        workers = sorted(trip.get("workers") or [], key=lambda w: int(w.get("rank", 0)))
        sharded = self._shard_n > 1 and bool(workers)
        if sharded:
            self._desks.set_times([(float(w.get("compute_ms") or 0.0), float(w.get("comm_ms") or 0.0),
                                    float(w.get("bubble_ms") or 0.0)) for w in workers])

        def light(p: float) -> None:
            lit = None if p <= 0.0 or p >= 1.0 else min(bisect_right(ends, p), len(ends) - 1)
            if lit != self._lit:
                if self._lit is not None and self._lit < len(self._chapters):
                    self._chapters[self._lit].set_lit(False)
                if lit is not None:
                    self._chapters[lit].set_lit(True)
                self._lit = lit
                self._update_status(lit)
            if sharded:
                self._desks.set_lit(lit)
                if self._shard_mode == "tp" and lit is not None:
                    start = ends[lit - 1] if lit > 0 else 0.0
                    f = (p - start) / max(1e-9, ends[lit] - start)
                    # two all-reduces per chapter: after attention and after the MLP
                    self._desks.set_sync(max(0.0, 1 - abs(f - 0.5) / 0.14, 1 - abs(f - 0.97) / 0.14))
                else:
                    self._desks.set_sync(0.0)
            if reads_question:
                self._sheet.set_progress(p)

        tl.add(Lambda(light, linear), *at(COMPUTE))
        tl.add(Fade(self._lamp, 0.0, 1.0), *at(LAMP_ON))
        tl.add(Fade(self._lamp, 1.0, 0.0), *at(LAMP_OFF))
        tl.add(Fade(self._status, 0.0, 1.0), *at(LAMP_ON))
        tl.add(Fade(self._status, 1.0, 0.0), *at(LAMP_OFF))

        # the cheat sheet grows (or shrinks, when requests finished) to blocks_in_use
        old = self._blocks_in_use
        new = max(0, int(trip.get("blocks_in_use", old) or 0))
        fresh_from = min(old, new)
        tl.add(Lambda(lambda p: self._set_cache(round(lerp(old, new, p)), fresh_from), linear), *at(COMPUTE))

        # the question sheet (prefill)
        if reads_question:
            self._sheet.set_title(_tr("The question · {n} tokens").format(n=int(trip.get("tokens_in", 0) or 0)),
                                 self._fonts["sheet"])
            tl.add(Fade(self._sheet, 0.0, 1.0), *at(SHEET_IN))
            tl.add(Fade(self._sheet, 1.0, 0.0), *at(SHEET_OUT))
        else:
            self._sheet.setOpacity(0.0)

        # slips: the old ones fade, the new ones pop up one seat after another
        old_slips = [s for s in self._front if s.opacity() > 0.0]
        self._front, self._back = self._back, self._front
        for slip in old_slips:
            tl.add(Fade(slip, slip.opacity(), 0.0, linear), *at(OLD_SLIPS_OUT))
        guess_rows = self._guess_rows(trip)
        self._apprentice.setOpacity(0.0)
        for g in self._guesses:
            g.setOpacity(0.0)
        seats = self._seats(trip) if not guess_rows else []
        if guess_rows:
            self._add_guesses(tl, trip, guess_rows, at)
        rects = self._layout_seats(len(seats))
        font = self._fonts["slip"] if len(seats) <= 8 else self._fonts["slip_small"]
        pops = []
        for slip, mark, (rid, label), rect in zip(self._front, self._seat_marks, seats, rects):
            slip.set_content(rect, label, self._color_for(rid), font, rid)
            mark.set_content(rect, "", self._color_for(rid), font, rid)
            mark.setOpacity(1.0)  # the seat is taken from the start of the trip
            pops.append(Lambda(self._popper(slip), ease_out_back))
        for slip, mark in zip(self._front[len(seats):], self._seat_marks[len(seats):]):
            slip.setOpacity(0.0)
            mark.setOpacity(0.0)
        tl.add_lagged(pops, *at(SLIPS_IN), lag_ratio=0.25)

        # back home
        tl.add(Lambda(roll(CART_DESK_X, CART_REST_X)), *at(ROLL_BACK))
        tl.add_lagged((_Pose(ch, (rest[i], CART_SCALE), (self._shelf[i], 1.0)) for i, ch in enumerate(self._chapters)),
                      *at(SHELVE), lag_ratio=0.35)
        return tl

    def _guess_rows(self, trip: dict) -> list[tuple[str, str, str]]:
        """For a verify trip: the rows of the apprentice's column for its first seat that guessed:
        (state, text, master's token) with state "ink" (accepted), "wrong", "pencil" (discarded after a wrong
        one), "bonus" (all right: the master's free token). Empty when there is nothing to show."""
        if trip.get("phase") != "verify" or not int(trip.get("proposed") or 0):
            return []
        guesses = {str(g.get("request_id")): [str(x) for x in g.get("labels") or []]
                   for g in trip.get("guesses") or []}
        tokens: dict[str, list[dict]] = {}
        for t in trip.get("tokens") or []:
            tokens.setdefault(str(t.get("request_id", "")), []).append(t)
        for rid in [str(r) for r in trip.get("request_ids") or []]:
            emitted = tokens.get(rid, [])
            labels = guesses.get(rid)
            accepted = sum(1 for t in emitted if t.get("accepted_from_draft"))
            if labels is None:  # an engine without guess labels: the accepted ones equal the emitted tokens
                labels = [str(t.get("label", "")) for t in emitted[:accepted]]
                if accepted < int(trip.get("proposed") or 0) and len(trip.get("request_ids") or []) == 1:
                    labels.append("?")
            if not labels:
                continue
            self._guess_rid = rid
            labels = labels[:MAX_GUESSES]
            rows = []
            for i, guess in enumerate(labels):
                if i < accepted:
                    rows.append(("ink", guess, ""))
                elif i == accepted:
                    fix = str(emitted[i].get("label", "")) if i < len(emitted) else ""
                    rows.append(("wrong", guess, fix))
                else:
                    rows.append(("pencil", guess, ""))
            if accepted >= len(labels) and len(emitted) > accepted:
                rows.append(("bonus", str(emitted[accepted].get("label", "")), ""))
            return rows
        return []

    def _add_guesses(self, tl: Timeline, trip: dict, rows: list[tuple[str, str, str]], at) -> None:
        color = self._color_for(self._guess_rid or "")
        n = len(rows)
        gap = 6.0
        h = min(46.0, (SEATS.height() - gap * (n - 1)) / max(1, n))
        self._apprentice.set_text(_tr("Apprentice"), _tr("guessed in {ms} ms").format(
            ms=f"{float(trip.get('draft_ms') or 0.0):.1f}"))
        tl.add(Fade(self._apprentice, 0.0, 1.0), *at(APPRENTICE_IN))
        tl.add(Lambda(self._apprentice.set_writing, linear), *at(GUESS_WRITE))
        writes, verdicts = [], []
        for i, (state, text, fix) in enumerate(rows):
            g = self._guesses[i]
            rect = QRectF(SEATS.left(), SEATS.top() + i * (h + gap), SEATS.width(), h)
            if state == "bonus":
                g.set_content(rect, text, "bonus", color, tag=_tr("free"))
                tl.add(Lambda(self._popper(g), ease_out_back), *at(BONUS_IN))
                continue
            g.set_content(rect, text, "pencil", color)
            writes.append(Fade(g, 0.0, 1.0, linear))
            verdicts.append(Lambda(self._judge(g, state, text, fix), linear))
        tl.add_lagged(writes, *at(GUESS_WRITE), lag_ratio=0.6)
        if verdicts:
            tl.add_lagged(verdicts, *at(VERDICTS), lag_ratio=0.5)

    @staticmethod
    def _judge(g: GuessSlipItem, state: str, text: str, fix: str) -> Callable[[float], None]:
        """The master's verdict on one guess: ink it, cross it out (writing its own token), or drop it."""
        def fn(p: float) -> None:
            if state == "pencil":  # after the first wrong guess the rest are thrown away
                g.setOpacity(1.0 - 0.75 * p)
                return
            if p > 0 and g.state != state:
                g.set_content(g.rect(), text, state, g.color, fix=fix)
            elif p <= 0 and g.state != "pencil":
                g.set_content(g.rect(), text, "pencil", g.color)
            g.set_verdict(p)
        return fn

    @staticmethod
    def _popper(slip: SlipItem) -> Callable[[float], None]:
        def fn(p: float) -> None:
            slip.setOpacity(clamp01(p * 1.5))
            slip.setScale(max(0.0, 0.4 + 0.6 * p))
        return fn

    def _set_cache(self, in_use: int, fresh_from: int) -> None:
        self._grid.set_state(in_use, fresh_from)
        if in_use != self._blocks_in_use or not self._cheat_count.text():
            self._blocks_in_use = in_use
            self._update_count(in_use)


__all__ = ["StageScene", "format_bytes", "SCENE_RECT", "MAX_SEATS", "REQUEST_COLORS"]
