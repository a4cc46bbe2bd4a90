"""The stage's drawn things: chapter, cart, cheat-sheet grid, token slip, question sheet, and their colours.

Each item paints itself in ``paint`` (no child items), caches its pixels, and changes only through small setters
(``set_lit``, ``set_state``, ``set_content``, ``set_progress``) that call ``update()`` when something changed, so
a frame that moves items costs no repaint. Sizes are in scene units (about one pixel at 1080p).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
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
    """A family with Chinese glyphs if one is installed, else the default (the window may override it)."""
    installed = set(QFontDatabase.families())
    for family in ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei",
                   "WenQuanYi Micro Hei"):
        if family in installed:
            return family
    return QFont().family()


# --- items ---------------------------------------------------------------------------------------------------
class ChapterItem(QGraphicsItem):
    """One chapter (transformer layer) of the book: a bar whose width is to scale with its bytes."""

    def __init__(self, width: float, height: float, font: QFont):
        super().__init__()
        self._w, self._h = width, height
        self._font = font
        self._label = ""
        self._lit = False
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        return QRectF(-2, -2, self._w + 4, self._h + 4)

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


__all__ = [
    "ChapterItem", "CartItem", "CheatSheetItem", "SlipItem", "QuestionSheetItem", "REQUEST_COLORS", "font_for",
    "pick_family",
]
