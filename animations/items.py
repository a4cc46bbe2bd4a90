"""The stage's colours and its few painted things: the cart, the apprentice and its guess slips.

Each item paints itself in ``paint``, caches its pixels, and changes only through small setters that call
``update()`` when something changed, so a frame that moves items costs no repaint. Sizes are in scene units.
The stage's parts (animations/stage_*.py) draw everything else from rect items and tagged text items.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
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
INK = QColor("#1b1d21")
CELL_EMPTY = QColor("#223140")
CELL_EDGE = QColor("#2f4356")
CELL_USED = QColor("#4fae6f")
CELL_FRESH = QColor("#b5f5c5")
PAPER = QColor("#f4efe2")
CART_BODY = QColor("#9a7448")
CART_EDGE = QColor("#d1a874")
WHEEL = QColor("#d4d9df")
RAIL = QColor("#2c3b4b")

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


def pick_family() -> str:
    """The app's one family, with the bundled Chinese glyphs (animations.fonts registers them; the window may
    override it)."""
    from animations.fonts import register_fonts  # the bundled fonts, registered once; the same family as the app
    return register_fonts()


# --- items ---------------------------------------------------------------------------------------------------


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

    def audit_texts(self) -> list[dict]:
        """The painted words, for the layout audit (gui/audit/layout_audit.py): text, item-local rect, font px, role."""
        if not self._text and not self._fix:
            return []
        text = self._text + (f" → {self._fix}" if self._state == "wrong" and self._fix else "")
        return [{"text": text, "rect": QRectF(0, 0, self._w, self._h), "font_px": float(self._font.pixelSize()),
                 "clipped": False, "role": "apprentice"}]

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
                painter.drawText(body.adjusted(0, 0, -8, 0),
                                 Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, self._tag)
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


__all__ = ["GuessSlipItem", "ApprenticeItem", "DESK_COLORS", "CartItem", "REQUEST_COLORS", "pick_family"]
