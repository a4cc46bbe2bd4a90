"""The Live page's two plots: measured ms per trip (with the floor) and tokens per second.

Smoothness: a report adds a point to plain lists; the curves are redrawn at most ``REDRAW_MS`` apart by one
coalescing timer (``setData`` and a range change relayout the plot, a few ms each: at batch 16 the engine
reports faster than the screen needs). Text: ``set_text_font`` sizes the tick labels from the type scale and
sets the axes' room from the font's measured size; ticks are chosen so their labels never touch. Both axes
carry numbers and their unit: the unit is written after the top y tick ("20 ms") and the last x tick
("40 trips"), joined so no line break can fall between them (``animations.textset``). The floor line of the
trip plot is labelled ("floor 0.32 ms") at the place along it where the fewest points are, on the side of the
line the points are not.
"""

from __future__ import annotations

import math
from collections import deque

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QWidget

from animations.textset import NBSP, keep_units
from animations.typescale import set_role


def _tr(text: str) -> str:
    return QCoreApplication.translate("Plots", text) or text

PREFILL_COLOR = "#ffb347"  # orange: trips that read the whole question
DECODE_COLOR = "#7ec8ff"  # blue: trips that write one token per seat
FLOOR_COLOR = "#ff6b6b"  # red: the time a trip cannot beat on this computer
RATE_COLOR = "#5fd39a"
PLOT_BG = "#17202a"
AXIS_TEXT = "#a9b8c8"
AXIS_LINE = "#33465b"
REDRAW_MS = 100


def nice_ticks(top: float, max_ticks: int) -> list[float]:
    """Round tick values 0 < v <= ``top``, at most ``max_ticks`` of them (1, 2 or 5 × 10^n apart)."""
    if top <= 0 or max_ticks < 1:
        return []
    raw = top / max_ticks
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    if step > top:  # one tick: the largest round value under the top
        step = next(m * mag for m in (5, 2, 1) if m * mag <= top)
    n = int(top // step)
    return [round(step * i, 10) for i in range(1, n + 1)]


def _label(v: float) -> str:
    if v >= 100 or v == int(v):
        return f"{v:,.0f}"
    return f"{v:g}"


class _Plot(pg.PlotWidget):
    """A plot to look at, not to fiddle with: no mouse, buttons or menu; a faint grid; measured axis room."""

    x_unit = "trips"  # source strings, translated when drawn (context "Plots")
    y_unit = ""

    def __init__(self, parent: QWidget | None = None, max_points: int = 400, after_paint=None):
        """``after_paint(job, key=...)``: runs a redraw just after the stage's next paint
        (``gui.live.frame_jobs.AfterPaint.defer``), so a plot's relayout (a few ms) never delays a frame of the
        stage; None redraws at once."""
        super().__init__(parent, background=PLOT_BG)
        self.setMinimumHeight(40)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.setMenuEnabled(False)
        self.showGrid(x=False, y=True, alpha=0.25)
        self.max_points = max_points
        self._x: deque[int] = deque(maxlen=max_points)
        self._y: deque[float] = deque(maxlen=max_points)
        self._fm = QFontMetricsF(self.font())
        for side in ("left", "bottom"):
            axis = self.getAxis(side)
            axis.setTextPen(AXIS_TEXT)
            axis.setPen(AXIS_LINE)
            axis.setStyle(autoExpandTextSpace=False, tickTextOffset=3)
            axis.setTicks([[], []])  # no tick until there is data; then ours (``_set_ticks``), never the defaults
            set_role(axis, "axis")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw_due)
        self.after_paint = after_paint
        self._top = 1.0

    def set_text_font(self, font: QFont) -> None:
        """Tick labels in ``font``; the axes get the room its measured size needs."""
        self._fm = QFontMetricsF(font)
        for side in ("left", "bottom"):
            self.getAxis(side).setTickFont(font)
        self.getAxis("bottom").setHeight(math.ceil(self._fm.height() + 6))
        self._left_width("0,000")
        self._schedule()

    def _left_width(self, widest: str) -> None:
        width = math.ceil(self._fm.horizontalAdvance(widest) + 10)
        axis = self.getAxis("left")
        if abs(axis.width() - width) > 2:
            axis.setWidth(width)

    @staticmethod
    def _with_unit(value: float, unit: str) -> str:
        return keep_units(f"{_label(value)}{NBSP}{_tr(unit)}") if unit else _label(value)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._schedule()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._schedule()

    def _schedule(self) -> None:
        timer = self.__dict__.get("_timer")  # resizeEvent comes from pyqtgraph's constructor, before ours ran
        if timer is not None and not timer.isActive() and self.isVisible():  # hidden: redrawn when shown
            timer.start()

    def _set_ticks(self, top: float) -> None:
        """Y ticks spaced at least two text heights apart, x ticks at least three label widths apart."""
        vb = self.getViewBox()
        h, w = max(1.0, vb.height()), max(1.0, vb.width())
        text_h = self._fm.height()
        y_ticks = nice_ticks(top, max(1, int(h // (2.0 * text_h))))
        half = (text_h / 2 + 1) * top / h  # a label is centred on its tick: keep it inside the axis
        ys = [v for v in y_ticks if half <= v <= top - half]
        y_labels = [(v, self._with_unit(v, self.y_unit) if v == ys[-1] else _label(v)) for v in ys]
        self.getAxis("left").setTicks([y_labels, []])
        self._left_width(max((t for _, t in y_labels), key=self._fm.horizontalAdvance, default="0,000"))
        if self._x:
            lo, hi = self._x[0], max(self._x[-1], self._x[0] + 10)
            span = hi - lo
            last_w = self._fm.horizontalAdvance(self._with_unit(hi, self.x_unit))
            label_w = max(self._fm.horizontalAdvance(str(hi)) * 3.0, last_w * 1.5)
            x_ticks = nice_ticks(span, max(1, int(w // label_w)))
            step = x_ticks[0] if x_ticks else span
            start = math.ceil(lo / step) * step
            xs = [start + i * step for i in range(int((hi - start) // step) + 1)]
            room = (last_w / 2 + 2) * (span * 1.04) / w  # the unit's label is centred on its tick: inside the axis
            xs = [v for v in xs if v <= hi + span * 0.02 - room] or xs[:1]
            labels = [(v, self._with_unit(v, self.x_unit) if v == xs[-1] else _label(v)) for v in xs]
            self.getAxis("bottom").setTicks([labels, []])
        else:
            self.getAxis("bottom").setTicks([[], []])

    def _set_range(self, top: float) -> None:
        self.setYRange(0, top, padding=0)
        if self._x:
            self.setXRange(self._x[0], max(self._x[-1], self._x[0] + 10), padding=0.02)
        self._set_ticks(top)

    def _redraw_due(self) -> None:
        if self.after_paint is not None:
            self.after_paint(self.redraw, key=f"plot {id(self)}")
        else:
            self.redraw()

    def stop_redraws(self) -> None:
        """Stop the coalescing timer (the window is closing)."""
        self._timer.stop()

    def redraw(self) -> None:  # overridden
        raise NotImplementedError

    def points(self) -> list[tuple[int, float]]:
        """The plotted (trip, value) pairs."""
        return list(zip(self._x, self._y))


class TripPlot(_Plot):
    """Measured milliseconds per trip (one point per forward pass), with the floor as a red dashed line.

    Prefill trips are orange, decode trips blue. Keeps the last ``max_points`` trips. The floor's value is named
    in the plot's title (``gui.live.readout``) and on the line itself, where it covers no point.
    """

    y_unit = "ms"

    def __init__(self, parent: QWidget | None = None, max_points: int = 400, after_paint=None):
        super().__init__(parent, max_points, after_paint)
        self._prefill: deque[bool] = deque(maxlen=max_points)
        self._line = self.plot([], [], pen=pg.mkPen("#4d6a86", width=1.5))
        self._pre = self.plot([], [], pen=None, symbol="o", symbolSize=7, symbolBrush=PREFILL_COLOR, symbolPen=None)
        self._dec = self.plot([], [], pen=None, symbol="o", symbolSize=7, symbolBrush=DECODE_COLOR, symbolPen=None)
        self.floor_ms: float | None = None
        self._floor = pg.InfiniteLine(angle=0, movable=False,
                                      pen=pg.mkPen(FLOOR_COLOR, width=2, style=Qt.DashLine))
        self._floor.setVisible(False)
        self.addItem(self._floor, ignoreBounds=True)
        self._floor_label = pg.InfLineLabel(self._floor, "", position=0.5, color=FLOOR_COLOR)
        set_role(self._floor_label, "legend")

    def add_trip(self, x: int, ms: float, prefill: bool) -> None:
        """Plot one trip: ``ms`` is the measured wall time of the forward pass in milliseconds."""
        self._x.append(x)
        self._y.append(ms)
        self._prefill.append(prefill)
        self._schedule()

    def set_floor(self, floor_ms: float | None, text: str = "") -> None:
        """Draw the floor at ``floor_ms`` milliseconds; None hides it. (``text`` is kept for callers; unused.)"""
        self.floor_ms = floor_ms
        self._floor.setVisible(floor_ms is not None)
        if floor_ms is not None:
            self._floor.setValue(floor_ms)
        self._schedule()

    def clear_trips(self) -> None:
        """Forget every plotted trip (the floor stays)."""
        self._x.clear()
        self._y.clear()
        self._prefill.clear()
        self.redraw()

    def redraw(self) -> None:
        """Push the points to the curves and set the ranges and ticks (called by the coalescing timer)."""
        self._timer.stop()
        xs, ys = list(self._x), list(self._y)
        self._line.setData(xs, ys)
        pre = [(x, y) for x, y, p in zip(xs, ys, self._prefill) if p]
        dec = [(x, y) for x, y, p in zip(xs, ys, self._prefill) if not p]
        self._pre.setData([p[0] for p in pre], [p[1] for p in pre])
        self._dec.setData([p[0] for p in dec], [p[1] for p in dec])
        top = max([*ys, (self.floor_ms or 0) * 1.5, 0.01]) * 1.1
        self._set_range(top)
        self._place_floor_label(xs, ys, top)

    def _place_floor_label(self, xs: list[int], ys: list[float], top: float) -> None:
        """The floor's label along its line where the fewest points are near it, below the line when there is
        room (no trip is faster than the floor), else above; hidden when the plot has room on neither side."""
        label = self._floor_label
        if self.floor_ms is None:
            label.setVisible(False)
            return
        label.setVisible(True)
        label.textItem.setFont(self.getAxis("left").style.get("tickFont") or self.font())
        label.setFormat(keep_units(_tr("floor {ms} ms").format(ms=f"{self.floor_ms:.2f}")))
        vb_h = max(1.0, self.getViewBox().height())
        text_h = self._fm.height()
        floor_px = self.floor_ms / top * vb_h  # from the bottom of the plot
        below, above = floor_px > text_h + 2, vb_h - floor_px > text_h + 2
        if not (below or above):  # no room on either side: the plot's title names the floor
            label.setVisible(False)
            return
        label.anchors = [(0.5, 0.0), (0.5, 0.0)] if below else [(0.5, 1.0), (0.5, 1.0)]
        if xs:
            lo, hi = xs[0], max(xs[-1], xs[0] + 10)
            near = [(x - lo) / (hi - lo) for x, y in zip(xs, ys) if abs(y - self.floor_ms) < 2 * text_h * top / vb_h]
            slots = [0.2, 0.35, 0.5, 0.65, 0.8]
            best = min(slots, key=lambda p: (sum(1 for q in near if abs(q - p) < 0.15), abs(p - 0.5)))
        else:
            best = 0.5
        label.setPosition(best)
        label.updatePosition()


class RatePlot(_Plot):
    """Tokens per second of each trip: tokens written ÷ measured wall time."""

    y_unit = "tokens/s"

    def __init__(self, parent: QWidget | None = None, max_points: int = 400, after_paint=None):
        super().__init__(parent, max_points, after_paint)
        self._curve = self.plot([], [], pen=pg.mkPen(RATE_COLOR, width=2), symbol="o", symbolSize=5,
                                symbolBrush=RATE_COLOR, symbolPen=None)

    def add_trip(self, x: int, tokens_per_s: float) -> None:
        """Plot the throughput of one trip in tokens per second."""
        self._x.append(x)
        self._y.append(tokens_per_s)
        self._schedule()

    def clear_trips(self) -> None:
        """Forget every plotted trip."""
        self._x.clear()
        self._y.clear()
        self.redraw()

    def redraw(self) -> None:
        """Push the points to the curve and set the ranges and ticks."""
        self._timer.stop()
        self._curve.setData(list(self._x), list(self._y))
        self._set_range(max([*self._y, 1.0]) * 1.15)
