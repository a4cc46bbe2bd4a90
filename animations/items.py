"""The stage's drawn things: chapter, cart, cheat-sheet grid, token slip, question sheet, and their colours.

Each item paints itself in ``paint`` (no child items), caches its pixels, and changes only through small setters
(``set_lit``, ``set_state``, ``set_content``, ``set_progress``) that call ``update()`` when something changed, so
a frame that moves items costs no repaint. Sizes are in scene units (about one pixel at 1080p).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from animations.easing import clamp01

# --- colours ----------------------------------------------------------------------------------------------------
BACKGROUND = QColor("#0f1419")
PANEL = QColor("#17202a")
PANEL_EDGE = QColor("#33465b")
TEXT = QColor("#eef3f8")
TEXT_DIM = QColor("#a9b8c8")
CHAPTER = QColor("#4a74a3")
CHAPTER_EDGE = QColor("#86aad3")
CHAPTER_LIT = QColor("#ffc94a")
CHAPTER_LIT_EDGE = QColor("#fff0c2")
INK = QColor("#1b1d21")
GHOST = QColor("#3d5670")
CELL_EMPTY = QColor("#223140")
CELL_EDGE = QColor("#2f4356")
CELL_USED = QColor("#4fae6f")
CELL_FRESH = QColor("#b5f5c5")
PAPER = QColor("#f4efe2")
PAPER_LINE = QColor("#c9c0ad")
PAPER_READ = QColor("#5d8fc9")
CART_BODY = QColor("#9a7448")
CART_EDGE = QColor("#d1a874")
WHEEL = QColor("#d4d9df")
RAIL = QColor("#2c3b4b")
LAMP_DECODE = QColor(255, 201, 74)
LAMP_PREFILL = QColor(126, 200, 255)

# One color per request sharing the table (distinct on a dark background, colour-blind friendly first).
REQUEST_COLORS = [
    QColor(c)
    for c in (
        "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#9be564",
        "#ff8c94", "#a29bfe", "#00cec9", "#fdcb6e", "#e17055", "#74b9ff", "#b2bec3", "#fd79a8",
    )
]


# Item geometry (scene units).
CART_BED = 14.0
WHEEL_R = 12.0
GRID_COLS = 10
GRID_CELL = 24.0
GRID_GAP = 5.0
GRID_MAX_ROWS = 10


def font_for(family: str, px: int, bold: bool = False) -> QFont:
    font = QFont(family)
    font.setPixelSize(px)
    font.setBold(bold)
    return font


def pick_family() -> str:
    """The app's one family, with the bundled Chinese glyphs (gui.fonts registers them; the window may override it)."""
    from gui.fonts import register_fonts  # Qt only; the same bundled font the app uses, on any machine
    return register_fonts()


# --- items ---------------------------------------------------------------------------------------------------
class ChapterItem(QGraphicsItem):
    """One chapter (transformer layer) of the book: a bar whose width is to scale with its bytes."""

    def __init__(self, width: float, height: float, font: QFont):
        super().__init__()
        self._w, self._h = width, height
        self._font = font
        self._label = ""
        self._lit = False
        self._shards: list[QColor] = []  # torn book: one colour per desk (TP: vertical strips, PP: one band)
        self._shard_mode = "tp"
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-2, -2, self._w + 4, self._h + 4)

    def set_shards(self, colors: list[QColor], mode: str = "tp") -> None:
        """Torn book. ``mode`` "tp": the chapter is cut into ``len(colors)`` vertical strips, one per desk;
        "pp": the whole chapter goes to one desk (``colors[0]``). An empty list: the chapter is whole."""
        colors = list(colors)
        if colors != self._shards or mode != self._shard_mode:
            self._shards, self._shard_mode = colors, mode
            self.update()

    @property
    def shards(self) -> int:
        """Strips this chapter is cut into (1 when whole or torn by chapters)."""
        return len(self._shards) if self._shard_mode == "tp" and self._shards else 1

    @property
    def width(self) -> float:
        """Width in scene units at scale 1 (proportional to the chapter's bytes)."""
        return self._w

    @property
    def height(self) -> float:
        return self._h

    @property
    def lit(self) -> bool:
        """True while this layer is being computed at the desk."""
        return self._lit

    def set_lit(self, lit: bool) -> None:
        if lit != self._lit:
            self._lit = lit
            self.update()

    def set_label(self, label: str) -> None:
        self._label = label
        self.update()

    def set_font(self, font: QFont) -> None:
        self._font = font
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(0, 0, self._w, self._h)
        painter.setPen(QPen(CHAPTER_LIT_EDGE if self._lit else CHAPTER_EDGE, 2))
        painter.setBrush(CHAPTER_LIT if self._lit else CHAPTER)
        radius = min(5.0, self._h / 4)
        painter.drawRoundedRect(rect, radius, radius)
        # labels too small to read (many layers, riding the cart) are left out rather than drawn as specks
        if self._label and self._h >= 20 and self._font.pixelSize() * abs(painter.worldTransform().m22()) >= 11:
            painter.setFont(self._font)
            painter.setPen(INK if self._lit else TEXT)
            painter.drawText(rect.adjusted(12, 0, -8, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                             self._label)
        if self._shards:
            band = max(4.0, self._h * 0.16)
            painter.setPen(Qt.PenStyle.NoPen)
            if self._shard_mode == "tp":
                n = len(self._shards)
                strip = self._w / n
                band = max(5.0, self._h * 0.24)
                for i, color in enumerate(self._shards):
                    tint = QColor(color)
                    tint.setAlpha(70)
                    painter.setBrush(tint)
                    painter.drawRect(QRectF(i * strip, 0, strip, self._h))
                    painter.setBrush(color)
                    painter.drawRect(QRectF(i * strip + 1, self._h - band, strip - 2, band))
                painter.setPen(QPen(BACKGROUND, 4))
                for i in range(1, n):
                    painter.drawLine(QPointF(i * strip, 0), QPointF(i * strip, self._h))
            else:
                painter.setBrush(self._shards[0])
                painter.drawRoundedRect(QRectF(0, 0, max(6.0, band), self._h), radius, radius)


class CartItem(QGraphicsItem):
    """The book cart, side view: a bed on two wheels with a push handle; ``pos`` is the bed's top-left."""

    def __init__(self, width: float, stack_height: float):
        super().__init__()
        self._w, self._stack = width, stack_height
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-4, -self._stack - 40, self._w + 30, self._stack + 40 + CART_BED + 2 * WHEEL_R + 6)

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        # handle at the back (left: the cart is pushed toward the desk)
        painter.setPen(QPen(CART_EDGE, 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        top = -self._stack - 26
        painter.drawLine(QPointF(4, 0), QPointF(-2, top))
        painter.drawLine(QPointF(-2, top), QPointF(18, top))
        # bed
        painter.setPen(QPen(CART_EDGE, 2))
        painter.setBrush(CART_BODY)
        painter.drawRoundedRect(QRectF(0, 0, self._w, CART_BED), 4, 4)
        # wheels
        painter.setPen(QPen(QColor("#6b7580"), 3))
        painter.setBrush(WHEEL)
        for x in (26.0, self._w - 26.0):
            painter.drawEllipse(QPointF(x, CART_BED + WHEEL_R), WHEEL_R, WHEEL_R)


class CheatSheetItem(QGraphicsItem):
    """The KV cache as a grid of pages (blocks); filled cells are pages in use, bright ones were just written."""

    def __init__(self, num_blocks: int):
        super().__init__()
        self.num_blocks = max(0, int(num_blocks))
        self.drawn = min(self.num_blocks, GRID_COLS * GRID_MAX_ROWS)
        self.rows = math.ceil(self.drawn / GRID_COLS) if self.drawn else 0
        self._filled = 0
        self._fresh_from = 0
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        step = GRID_CELL + GRID_GAP
        return QRectF(-2, -2, GRID_COLS * step + 4, max(1, self.rows) * step + 4)

    @property
    def filled(self) -> int:
        """Cells drawn as in use (at most the number of cells drawn)."""
        return self._filled

    def set_state(self, in_use: int, fresh_from: int) -> None:
        """Pages ``[0, in_use)`` are used; ``[fresh_from, in_use)`` were written by the trip on screen."""
        filled = min(max(0, in_use), self.drawn)
        fresh = min(max(0, fresh_from), filled)
        if (filled, fresh) != (self._filled, self._fresh_from):
            self._filled, self._fresh_from = filled, fresh
            self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        step = GRID_CELL + GRID_GAP
        painter.setPen(QPen(CELL_EDGE, 1.5))
        for i in range(self.drawn):
            row, col = divmod(i, GRID_COLS)
            if i < self._fresh_from:
                painter.setBrush(CELL_USED)
            elif i < self._filled:
                painter.setBrush(CELL_FRESH)
            else:
                painter.setBrush(CELL_EMPTY)
            painter.drawRoundedRect(QRectF(col * step, row * step, GRID_CELL, GRID_CELL), 4, 4)


class SlipItem(QGraphicsItem):
    """A paper slip with a new token, one per seat at the desk; a coloured band says which request it is.

    ``hollow=True`` makes an empty seat marker instead (outline and band only): a place taken at the table.
    """

    def __init__(self, font: QFont, hollow: bool = False):
        super().__init__()
        self.hollow = hollow
        self._w, self._h = 100.0, 40.0
        self._font = font
        self._text = ""
        self._color = REQUEST_COLORS[0]
        self.request_id = ""
        self.setOpacity(0.0)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-2, -2, self._w + 6, self._h + 6)

    @property
    def text(self) -> str:
        return self._text

    def set_content(self, rect: QRectF, text: str, color: QColor, font: QFont, request_id: str) -> None:
        """Place the slip (rect in scene units) and give it its token text and request colour."""
        if rect.width() != self._w or rect.height() != self._h:
            self.prepareGeometryChange()
            self._w, self._h = rect.width(), rect.height()
        self.setPos(rect.topLeft())
        self.setTransformOriginPoint(self._w / 2, self._h / 2)
        self._text, self._color, self._font, self.request_id = text, color, font, request_id
        self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.hollow:
            edge = QColor(self._color)
            edge.setAlpha(150)
            painter.setPen(QPen(edge, 2, Qt.PenStyle.DashLine))
            painter.setBrush(QColor(255, 255, 255, 10))
            painter.drawRoundedRect(QRectF(1, 1, self._w - 2, self._h - 2), 5, 5)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(edge)
            painter.drawRoundedRect(QRectF(0, 0, 10, self._h), 4, 4)
            return
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(0, 0, 0, 90))
        painter.drawRoundedRect(QRectF(3, 4, self._w, self._h), 5, 5)  # shadow
        painter.setBrush(PAPER)
        painter.drawRoundedRect(QRectF(0, 0, self._w, self._h), 5, 5)
        painter.setBrush(self._color)
        painter.drawRoundedRect(QRectF(0, 0, 10, self._h), 4, 4)
        painter.setFont(self._font)
        painter.setPen(INK)
        text_rect = QRectF(18, 0, self._w - 24, self._h)
        elided = QFontMetricsF(self._font).elidedText(self._text, Qt.TextElideMode.ElideRight, text_rect.width())
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, elided)


class QuestionSheetItem(QGraphicsItem):
    """The question (prompt) on a sheet of paper; a blue band shows how far the prefill has read it."""

    LINES = (0.92, 0.78, 0.88, 0.95, 0.7, 0.9, 0.83, 0.6, 0.86, 0.74, 0.9, 0.5)

    def __init__(self, rect: QRectF, font: QFont):
        super().__init__()
        self._w, self._h = rect.width(), rect.height()
        self.setPos(rect.topLeft())
        self._font = font
        self._title = ""
        self._progress = 0.0
        self.setOpacity(0.0)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-2, -2, self._w + 8, self._h + 8)

    def set_title(self, title: str, font: QFont | None = None) -> None:
        """Set the header line; its font shrinks (not below 16 px) until the line fits the sheet."""
        self._title = title
        font = QFont(font if font is not None else self._font)
        while font.pixelSize() > 16 and QFontMetricsF(font).horizontalAdvance(title) > self._w - 32:
            font.setPixelSize(font.pixelSize() - 1)
        self._font = font
        self.update()

    @property
    def progress(self) -> float:
        """How much of the question has been read, 0 … 1."""
        return self._progress

    def set_progress(self, p: float) -> None:
        p = clamp01(p)
        if abs(p - self._progress) > 1e-4 or (p in (0.0, 1.0) and p != self._progress):
            self._progress = p
            self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(0, 0, 0, 90))
        painter.drawRoundedRect(QRectF(4, 5, self._w, self._h), 6, 6)
        painter.setBrush(PAPER)
        painter.drawRoundedRect(QRectF(0, 0, self._w, self._h), 6, 6)
        painter.setFont(self._font)
        painter.setPen(INK)
        painter.drawText(QRectF(16, 10, self._w - 32, 34), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                         self._title)
        top, bottom = 62.0, self._h - 20
        n = len(self.LINES)
        pitch = (bottom - top) / n
        read = self._progress * n
        painter.setPen(Qt.PenStyle.NoPen)
        for i, frac in enumerate(self.LINES):
            y = top + i * pitch
            full = (self._w - 36) * frac
            painter.setBrush(PAPER_LINE)
            painter.drawRoundedRect(QRectF(18, y, full, pitch * 0.42), 3, 3)
            done = clamp01(read - i)
            if done > 0:
                painter.setBrush(PAPER_READ)
                painter.drawRoundedRect(QRectF(18, y, full * done, pitch * 0.42), 3, 3)


# --- the apprentice (speculative decoding) and the torn book (parallelism) -------------------------------------
PENCIL = QColor("#8d96a3")
PENCIL_PAPER = QColor(196, 203, 212, 215)  # grey paper: a guess in pencil
WRONG = QColor("#ff5c5c")
RIGHT = QColor("#5ad17a")
BONUS = QColor("#ffc94a")
# One colour per desk of a torn book.
DESK_COLORS = [QColor(c) for c in ("#4fd1c5", "#b794f4", "#f6ad55", "#f687b3")]


class GuessSlipItem(QGraphicsItem):
    """One guess of the apprentice (draft model), written in pencil, then judged by the master's one trip.

    States: "pencil" (a grey guess), "ink" (accepted: the slip turns solid), "wrong" (crossed out, the master's
    own token written beside it), "bonus" (the master's free extra token when every guess was right),
    "plain" (the master's token when the apprentice made no guess). ``verdict`` (0 … 1) animates the change.
    """

    def __init__(self, font: QFont, small_font: QFont):
        super().__init__()
        self._w, self._h = 200.0, 36.0
        self._font, self._small = font, small_font
        self._text = ""
        self._fix = ""
        self._tag = ""
        self._state = "pencil"
        self._verdict = 0.0
        self._color = REQUEST_COLORS[0]
        self.setOpacity(0.0)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-4, -4, self._w + 10, self._h + 10)

    @property
    def state(self) -> str:
        return self._state

    @property
    def text(self) -> str:
        """The guess as written in pencil (or the master's token for "bonus"/"plain")."""
        return self._text

    @property
    def fix(self) -> str:
        """The master's token written beside a wrong guess ("" otherwise)."""
        return self._fix

    @property
    def color(self) -> QColor:
        return self._color

    def rect(self) -> QRectF:
        """Where the slip is, in scene units."""
        return QRectF(self.pos(), QSizeF(self._w, self._h))

    @property
    def verdict(self) -> float:
        return self._verdict

    def set_content(self, rect: QRectF, text: str, state: str, color: QColor, fix: str = "", tag: str = "") -> None:
        if rect.width() != self._w or rect.height() != self._h:
            self.prepareGeometryChange()
            self._w, self._h = rect.width(), rect.height()
        self.setPos(rect.topLeft())
        self._text, self._state, self._color, self._fix, self._tag = text, state, color, fix, tag
        self._verdict = 0.0
        self.update()

    def set_verdict(self, v: float) -> None:
        v = clamp01(v)
        if abs(v - self._verdict) > 1e-3 or (v in (0.0, 1.0) and v != self._verdict):
            self._verdict = v
            self.update()

    def _slip(self, painter: QPainter, rect: QRectF, text: str, ink: float, color: QColor) -> None:
        """A slip that goes from pencil (ink 0) to solid (ink 1)."""
        paper = QColor(PENCIL_PAPER) if ink <= 0.5 else QColor(PAPER)
        if ink > 0.5:
            painter.setPen(Qt.PenStyle.NoPen)
        else:
            painter.setPen(QPen(PENCIL, 1.5, Qt.PenStyle.DashLine))
        painter.setBrush(paper)
        painter.drawRoundedRect(rect, 5, 5)
        if ink > 0:
            band = QColor(color)
            band.setAlphaF(ink)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(band)
            painter.drawRoundedRect(QRectF(rect.left(), rect.top(), 8, rect.height()), 4, 4)
        painter.setFont(self._font)
        pen_color = QColor(INK) if ink > 0.5 else QColor("#4a5260")
        painter.setPen(pen_color)
        text_rect = rect.adjusted(14, 0, -6, 0)
        elided = QFontMetricsF(self._font).elidedText(text, Qt.TextElideMode.ElideRight, text_rect.width())
        painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, elided)

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        v = self._verdict
        mark_w = 30.0
        body = QRectF(0, 0, self._w - mark_w, self._h)
        if self._state == "wrong":
            guess = QRectF(0, 0, (self._w - mark_w) * 0.55 - 3, self._h)
            self._slip(painter, guess, self._text, 0.0, self._color)
            if v > 0:  # the cross-out grows across the guess
                strike = QColor(WRONG)
                strike.setAlpha(210)  # the crossed-out guess stays readable under the strokes
                painter.setPen(QPen(strike, 2.5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
                p = clamp01(v * 2)
                painter.drawLine(QPointF(6, self._h * 0.78),
                                 QPointF(6 + (guess.width() - 12) * p, self._h * 0.78 - (self._h * 0.56) * p))
                painter.drawLine(QPointF(6, self._h * 0.5), QPointF(6 + (guess.width() - 12) * p, self._h * 0.5))
            fix_v = clamp01(v * 2 - 1)
            if fix_v > 0:
                painter.setOpacity(self.opacity() * fix_v)
                fix = QRectF(guess.right() + 6, 0, body.width() - guess.width() - 6, self._h)
                self._slip(painter, fix, self._fix, 1.0, WRONG)
                painter.setOpacity(self.opacity())
                self._mark(painter, "✗", WRONG, mark_w)
            return
        if self._state == "pencil":
            self._slip(painter, body, self._text, 0.0, self._color)
            return
        if self._state == "ink":
            self._slip(painter, body, self._text, v, self._color)
            if v > 0.5:
                self._mark(painter, "✓", RIGHT, mark_w)
            return
        # bonus / plain: the master's own token, written in ink
        edge = BONUS if self._state == "bonus" else self._color
        self._slip(painter, body, self._text, 1.0, edge)
        if self._state == "bonus":
            painter.setPen(QPen(BONUS, 3))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(body.adjusted(-1, -1, 1, 1), 6, 6)
            if self._tag:
                painter.setFont(self._small)
                painter.setPen(INK)
                painter.drawText(body.adjusted(0, 0, -8, 0), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                                 self._tag)
            self._mark(painter, "+1", BONUS, mark_w)

    def _mark(self, painter: QPainter, mark: str, color: QColor, mark_w: float) -> None:
        painter.setFont(self._font)
        painter.setPen(color)
        painter.drawText(QRectF(self._w - mark_w, 0, mark_w, self._h), Qt.AlignmentFlag.AlignCenter, mark)


class ApprenticeItem(QGraphicsItem):
    """The apprentice (draft model): a small figure with a pencil; ``pos`` is the top-left of its box."""

    W, H = 110.0, 150.0

    def __init__(self, font: QFont):
        super().__init__()
        self._font = font
        self._label = ""
        self._note = ""
        self._writing = 0.0
        self.setOpacity(0.0)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-30, -4, self.W + 60, self.H + 40)

    def set_text(self, label: str, note: str = "") -> None:
        self._label, self._note = label, note
        self.update()

    @property
    def label(self) -> str:
        return self._label

    def set_writing(self, p: float) -> None:
        """0 … 1 while the guesses are being written: the pencil hand moves."""
        if abs(p - self._writing) > 1e-3:
            self._writing = p
            self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        cx = self.W / 2
        painter.setFont(self._font)
        painter.setPen(TEXT)
        painter.drawText(QRectF(-30, 0, self.W + 60, 24), Qt.AlignmentFlag.AlignCenter, self._label)
        body = QColor("#9aa7b5")
        painter.setPen(QPen(QColor("#5d6b7a"), 2))
        painter.setBrush(QColor("#e9c9a8"))
        painter.drawEllipse(QPointF(cx, 48), 17, 17)  # head
        painter.setBrush(PENCIL)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.drawRoundedRect(QRectF(cx - 22, 32, 44, 10), 4, 4)  # cap
        painter.setBrush(body)
        painter.setPen(QPen(QColor("#5d6b7a"), 2))
        painter.drawRoundedRect(QRectF(cx - 24, 68, 48, 56), 12, 12)  # body
        # the writing arm and pencil, reaching toward the desk (to the right)
        wob = math.sin(self._writing * math.pi * 10) * 5 if 0 < self._writing < 1 else 0.0
        hand = QPointF(cx + 46, 92 + wob)
        painter.setPen(QPen(body, 8, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(QPointF(cx + 14, 80), hand)
        painter.setPen(QPen(BONUS, 5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(hand + QPointF(-4, -14), hand + QPointF(6, 8))
        painter.setPen(QPen(INK, 3, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        painter.drawLine(hand + QPointF(6, 8), hand + QPointF(8, 12))
        if self._note:
            painter.setPen(TEXT_DIM)
            painter.drawText(QRectF(-30, 128, self.W + 60, 26), Qt.AlignmentFlag.AlignCenter, self._note)


class DesksItem(QGraphicsItem):
    """The torn book's desks, one row per worker: its name, its share of the chapters, its measured times.

    TP: every desk holds a strip of every chapter and works at once; a sync line joins the desks and flashes at
    every all-reduce. PP: each desk holds a run of whole chapters; only the desk whose chapter is being read is
    busy, the others are greyed (the pipeline bubble).
    """

    def __init__(self, width: float, font: QFont, small_font: QFont):
        super().__init__()
        self._w = width
        self._font, self._small = font, small_font
        self._mode = "tp"
        self._n_layer = 1
        self._layers: list[tuple[int, int]] = []
        self._names: list[str] = []
        self._times: list[tuple[float, float, float]] = []
        self._lit: int | None = None
        self._sync = 0.0
        self.row_h = 40.0
        self.gap = 6.0
        self.setOpacity(0.0)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-4, -4, self._w + 8, 4 * (self.row_h + self.gap) + 8)

    @property
    def n(self) -> int:
        return len(self._layers)

    @property
    def mode(self) -> str:
        return self._mode

    def configure(self, mode: str, n_layer: int, layers: list[tuple[int, int]], names: list[str]) -> None:
        """``layers``: per desk the [start, stop) of the chapters it holds (TP: all of them)."""
        self.prepareGeometryChange()
        self._mode, self._n_layer, self._layers, self._names = mode, max(1, n_layer), list(layers), list(names)
        self._times = [(0.0, 0.0, 0.0)] * len(layers)
        self.update()

    def set_times(self, times: list[tuple[float, float, float]]) -> None:
        """Per desk (compute ms, communication ms, bubble ms) of the trip on screen."""
        self._times = list(times)[: len(self._layers)] + [(0.0, 0.0, 0.0)] * max(0, len(self._layers) - len(times))
        self.update()

    def set_lit(self, layer: int | None) -> None:
        if layer != self._lit:
            self._lit = layer
            self.update()

    def set_sync(self, flash: float) -> None:
        """0 … 1: brightness of the sync line (an all-reduce in progress)."""
        flash = clamp01(flash)
        if abs(flash - self._sync) > 1e-2 or (flash in (0.0, 1.0) and flash != self._sync):
            self._sync = flash
            self.update()

    def busy(self, desk: int) -> bool:
        """True when ``desk`` is working on the chapter being read now."""
        if self._lit is None or not 0 <= desk < len(self._layers):
            return False
        if self._mode == "tp":
            return True
        a, b = self._layers[desk]
        return a <= self._lit < b

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        n = len(self._layers)
        name_w, bar_w = 78.0, 64.0
        sync_x = self._w - 10
        book_w = self._w - name_w - bar_w - 34
        worst = max([sum(t) for t in self._times] + [1e-9])
        for d in range(n):
            y = d * (self.row_h + self.gap)
            color = DESK_COLORS[d % len(DESK_COLORS)]
            busy = self.busy(d)
            idle = self._lit is not None and not busy
            row = QRectF(0, y, self._w - 20, self.row_h)
            painter.setPen(QPen(color if not idle else GHOST, 2))
            painter.setBrush(QColor(color.red(), color.green(), color.blue(), 60 if busy else 18))
            painter.drawRoundedRect(row, 6, 6)
            painter.setFont(self._font)
            painter.setPen(TEXT if not idle else TEXT_DIM)
            label = self._names[d] if d < len(self._names) else str(d + 1)
            painter.drawText(QRectF(8, y, name_w - 8, self.row_h), Qt.AlignmentFlag.AlignVCenter, label)
            # the chapters this desk holds: TP a thin strip of each, PP whole chapters of its stage
            a, b = self._layers[d]
            cell = book_w / self._n_layer
            for layer in range(self._n_layer):
                x = name_w + layer * cell
                held = a <= layer < b
                w = (cell - 3) / (n if self._mode == "tp" else 1)
                lit = held and layer == self._lit
                painter.setPen(Qt.PenStyle.NoPen)
                if held:
                    painter.setBrush(CHAPTER_LIT if lit else (CHAPTER if not idle else QColor("#34465a")))
                    painter.drawRoundedRect(QRectF(x, y + 6, max(2.0, w), self.row_h - 12), 2, 2)
                else:
                    painter.setBrush(QColor(255, 255, 255, 14))
                    painter.drawRoundedRect(QRectF(x, y + 6, cell - 3, self.row_h - 12), 2, 2)
            if idle and self._mode == "pp":
                painter.setFont(self._small)
                painter.setPen(TEXT_DIM)
                painter.drawText(QRectF(name_w, y, book_w, self.row_h), Qt.AlignmentFlag.AlignCenter, "z z z")
            # measured times: compute (desk colour), communication (red), bubble (grey)
            if d < len(self._times):
                comp, comm, bub = self._times[d]
                x = self._w - 20 - bar_w - 6
                for value, col in ((comp, color), (comm, WRONG), (bub, GHOST)):
                    w = bar_w * value / worst if worst > 0 else 0.0
                    if w > 0.5:
                        painter.setPen(Qt.PenStyle.NoPen)
                        painter.setBrush(col)
                        painter.drawRect(QRectF(x, y + 10, w, self.row_h - 20))
                        x += w
        # the sync line (TP): every desk waits here for the others, every all-reduce
        if self._mode == "tp" and n > 1:
            top = self.row_h / 2
            bottom = (n - 1) * (self.row_h + self.gap) + self.row_h / 2
            glow = QColor(WRONG)
            glow.setAlphaF(0.25 + 0.75 * self._sync)
            painter.setPen(QPen(glow, 2 + 4 * self._sync, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
            painter.drawLine(QPointF(sync_x, top), QPointF(sync_x, bottom))
            for d in range(n):
                y = d * (self.row_h + self.gap) + self.row_h / 2
                painter.drawLine(QPointF(self._w - 20, y), QPointF(sync_x, y))


__all__ = [
    "GuessSlipItem", "ApprenticeItem", "DesksItem", "DESK_COLORS",
    "ChapterItem", "CartItem", "CheatSheetItem", "SlipItem", "QuestionSheetItem", "REQUEST_COLORS", "font_for",
    "pick_family",
]
