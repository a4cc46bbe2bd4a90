"""Reading versus paperwork: one measured trip split into the time its weight bytes need at the measured read
speed (the floor) and the rest (fixed work per step), drawn as two parts of one bar with a line saying why.

The formula is ``model.teaching.lessons.trip_split`` (one formula, one place; ``model.teaching.lessons`` imports no torch):

    reading_ms   = min(wall_ms, weight_bytes / bandwidth_bytes_per_s × 1000)     (the floor line of the plot)
    paperwork_ms = wall_ms − reading_ms

``bandwidth_bytes_per_s`` is the engine's measured memory read speed (``ready``'s
``memory_bandwidth_bytes_per_s``, the same figure ``bench`` reports as the floor), ``weight_bytes`` the model's
weights (``ready``'s ``model.weight_bytes``): a trip must read every weight once whatever its batch, so the floor
is per trip, not per token.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from animations.typescale import set_role
from model.teaching import lessons
from gui.live.readout import device_name, fmt_bytes, fmt_ms

READING_COLOR = QColor("#ff6b6b")  # the floor line's red on the ms-per-trip plot
PAPERWORK_COLOR = QColor("#5b7690")
MOSTLY = 2 / 3  # a part at least this share of the trip "mostly" makes the trip


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


def trip_split(wall_ms: float, weight_bytes: float, bandwidth_bytes_per_s: float) -> tuple[float, float] | None:
    """(reading_ms, paperwork_ms) of a trip by ``model.teaching.lessons.trip_split`` (the one formula; importing it loads
    no torch), or None when an input is missing or not positive (the row then says what the bar means)."""
    try:
        split = lessons.trip_split(float(wall_ms), int(float(weight_bytes)), float(bandwidth_bytes_per_s))
    except (TypeError, ValueError, OverflowError):
        return None
    return split["reading_ms"], split["rest_ms"]


def split_text(reading_ms: float, paperwork_ms: float, weight_bytes: float, device: str) -> str:
    """One line: both parts in ms and what that means for this model on this machine (``device``: "cpu",
    "cuda", …). The lesson follows the measured shares: mostly paperwork (≥ 2/3), mostly reading, or both."""
    total = reading_ms + paperwork_ms
    share = reading_ms / total if total > 0 else 0.0
    figures = _tr("reading the weights {r} ms, paperwork {p} ms").format(r=fmt_ms(reading_ms), p=fmt_ms(paperwork_ms))
    where = _tr("{size} of weights on a {device}").format(size=fmt_bytes(weight_bytes), device=device_name(device))
    if share <= 1 - MOSTLY:
        # not "sharing a table is almost free": each seat adds its own work per step (the whole step grows with
        # the batch on a CPU, docs/benchmarks.md), and the line stays under every state of the page
        lesson = _tr("{where}: the trip is mostly fixed work per step, not reading the weights, so a smaller "
                     "apprentice is not much cheaper").format(where=where)
    elif share >= MOSTLY:
        lesson = _tr("{where}: the trip is mostly reading, so every seat at the table shares that cost").format(
            where=where)
    else:
        lesson = _tr("{where}: reading and fixed work per step take a similar share of the trip").format(where=where)
    return _tr("{figures} · {lesson}").format(figures=figures, lesson=lesson)


class SplitBar(QWidget):
    """Two parts of one bar, widths in proportion to (reading, paperwork); paints no text (the line beside it
    says the figures)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("splitBar")
        self.parts: tuple[float, float] | None = None
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_parts(self, parts: tuple[float, float] | None) -> None:
        if parts != self.parts:
            self.parts = parts
            self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        h = max(8, self.fontMetrics().height() - 4)
        return QSize(h * 8, h)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(Qt.NoPen)
        p.setBrush(QColor("#17202a"))
        p.drawRoundedRect(r, 3, 3)
        if self.parts:
            total = sum(self.parts)
            if total > 0:
                w = r.width() * self.parts[0] / total
                w = max(2.0, w) if self.parts[0] > 0 else 0.0  # a sliver stays visible: it is never nothing
                p.setBrush(READING_COLOR)
                p.drawRect(QRectF(r.left(), r.top(), w, r.height()))
                p.setBrush(PAPERWORK_COLOR)
                p.drawRect(QRectF(r.left() + w, r.top(), r.width() - w, r.height()))
        p.end()


class SplitRow(QWidget):
    """The bar and its line. ``show_split(wall_ms, weight_bytes, bandwidth, device)`` after each trip; hidden
    until a trip was measured with a known floor."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        self.bar = SplitBar()
        self.label = QLabel()
        self.label.setObjectName("splitLabel")
        self.label.setTextFormat(Qt.PlainText)
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Minimum)
        set_role(self.label, "split")
        row.addWidget(self.bar, 1, Qt.AlignVCenter)
        row.addWidget(self.label, 4)
        self._args: tuple | None = None

    def show_split(self, wall_ms: float | None, weight_bytes: float, bandwidth: float, device: str) -> None:
        """Split the trip (``trip_split``) and say it; a trip that cannot be split hides the row."""
        self._args = (wall_ms, weight_bytes, bandwidth, device)
        parts = trip_split(wall_ms or 0.0, weight_bytes, bandwidth)
        self.bar.set_parts(parts)
        text = split_text(parts[0], parts[1], weight_bytes, device) if parts else _tr(
            "Each trip in one bar: red, reading the weights at the measured speed; blue-grey, the rest, fixed "
            "work per step")
        if self.label.text() != text:
            self.label.setText(text)
        self.bar.setToolTip(_tr("Red: the weights' bytes at the measured read speed (the floor) · blue-grey: the "
                                "rest of the measured trip, fixed work per step (Python, kernel launches, sampling)"))

    def retranslate(self) -> None:
        if self._args is not None:
            self.show_split(*self._args)

    def has_split(self) -> bool:
        return self.bar.parts is not None
