"""The Live page's two plots: measured ms per trip (with the floor) and tokens per second.

Smoothness: a report adds a point to plain lists; the curves are redrawn at most ``REDRAW_MS`` apart by one
coalescing timer (``setData`` and a range change relayout the plot, a few ms each: at batch 16 the engine
reports faster than the screen needs). Text: ``set_text_font`` sizes the tick labels from the type scale and
sets the axes' room from the font's measured size; ticks are chosen so their labels never touch.
"""

from __future__ import annotations

import math
from collections import deque

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont, QFontMetricsF
from PySide6.QtWidgets import QWidget

from animations.typescale import set_role

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

    def __init__(self, parent: QWidget | None = None, max_points: int = 400):
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
        # set by the window: runs the redraw just after the stage's next paint (gui.live.frame_jobs), so a
        # plot's relayout (a few ms) never delays a frame of the stage
        self.after_paint = None
        self._top = 1.0

    def set_text_font(self, font: QFont) -> None:
        """Tick labels in ``font``; the axes get the room its measured size needs."""
        self._fm = QFontMetricsF(font)
        for side in ("left", "bottom"):
            self.getAxis(side).setTickFont(font)
        self.getAxis("bottom").setHeight(math.ceil(self._fm.height() + 6))
        self.getAxis("left").setWidth(math.ceil(self._fm.horizontalAdvance("0,000") + 8))
        self._schedule()

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
        self.getAxis("left").setTicks([[(v, _label(v)) for v in y_ticks if half <= v <= top - half], []])
        if self._x:
            lo, hi = self._x[0], max(self._x[-1], self._x[0] + 10)
            span = hi - lo
            label_w = self._fm.horizontalAdvance(str(hi)) * 3.0
            x_ticks = nice_ticks(span, max(1, int(w // label_w)))
            step = x_ticks[0] if x_ticks else span
            start = math.ceil(lo / step) * step
            xs = [start + i * step for i in range(int((hi - start) // step) + 1)]
            self.getAxis("bottom").setTicks([[(v, _label(v)) for v in xs], []])
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
    in the plot's title (``gui.live.readout``), not on the line, so no label covers the newest points.
    """

    def __init__(self, parent: QWidget | None = None, max_points: int = 400):
        super().__init__(parent, max_points)
        self._prefill: deque[bool] = deque(maxlen=max_points)
        self._line = self.plot([], [], pen=pg.mkPen("#4d6a86", width=1.5))
        self._pre = self.plot([], [], pen=None, symbol="o", symbolSize=7, symbolBrush=PREFILL_COLOR, symbolPen=None)
        self._dec = self.plot([], [], pen=None, symbol="o", symbolSize=7, symbolBrush=DECODE_COLOR, symbolPen=None)
        self.floor_ms: float | None = None
        self._floor = pg.InfiniteLine(angle=0, movable=False,
                                      pen=pg.mkPen(FLOOR_COLOR, width=2, style=Qt.DashLine))
        self._floor.setVisible(False)
        self.addItem(self._floor, ignoreBounds=True)

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


class RatePlot(_Plot):
    """Tokens per second of each trip: tokens written ÷ measured wall time."""

    def __init__(self, parent: QWidget | None = None, max_points: int = 400):
        super().__init__(parent, max_points)
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
