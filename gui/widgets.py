"""Small widgets of the main window: token chips, the live plots and the frame-time counter."""

from __future__ import annotations

import html
import math
import time
from collections import deque

import pyqtgraph as pg
from PySide6.QtCore import QCoreApplication, QEvent, Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QWidget

# Colours match the stage (animations.items): dark panels, light text.
PREFILL_COLOR = "#ffb347"  # orange: trips that read the whole question
DECODE_COLOR = "#7ec8ff"  # blue: trips that write one token per seat
FLOOR_COLOR = "#ff6b6b"  # red: the time a trip cannot beat on this computer
RATE_COLOR = "#5fd39a"
PLOT_BG = "#17202a"
AXIS_TEXT = "#a9b8c8"
AXIS_LINE = "#33465b"


class TokenChips(QScrollArea):
    """A row of chips, one per token: the token's label above, its id below. Scrolls to the newest chip.

    At most ``max_chips`` are kept (the oldest go first), so a kiosk running for days does not grow.
    """

    def __init__(self, parent: QWidget | None = None, max_chips: int = 240):
        super().__init__(parent)
        self.max_chips = max_chips
        self.setObjectName("chips")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # always shows the newest; no bar to clip
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._inner = QWidget()
        self._inner.setObjectName("chipsInner")
        self._row = QHBoxLayout(self._inner)
        self._row.setContentsMargins(2, 2, 2, 2)
        self._row.setSpacing(6)
        self._row.addStretch(1)
        self.setWidget(self._inner)
        self.horizontalScrollBar().rangeChanged.connect(self._scroll_to_end)
        self.chips: deque[QLabel] = deque()

    def add(self, label: str, token_id: int, kind: str = "answer") -> QLabel:
        """Add a chip. ``kind`` is "answer" (a generated token) or "prompt" (a token of the question)."""
        chip = QLabel(f"<div align='center'>{html.escape(label) or '&nbsp;'}<br>"
                      f"<span style='font-size:small; color:#8797a8'>{int(token_id)}</span></div>")
        chip.setTextFormat(Qt.RichText)
        chip.setObjectName("chipPrompt" if kind == "prompt" else "chip")
        chip.setProperty("tokenLabel", label)
        chip.setProperty("tokenId", int(token_id))
        self._tooltip(chip)
        self._row.insertWidget(self._row.count() - 1, chip)
        self.chips.append(chip)
        while len(self.chips) > self.max_chips:
            old = self.chips.popleft()
            self._row.removeWidget(old)
            old.deleteLater()
        return chip

    @staticmethod
    def _tooltip(chip: QLabel) -> None:
        chip.setToolTip(QCoreApplication.translate("TokenChips", "token {label} has id {id}")
                        .format(label=chip.property("tokenLabel"), id=chip.property("tokenId")))

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.LanguageChange:  # tooltips follow a language switch
            for chip in self.chips:
                self._tooltip(chip)
        super().changeEvent(event)

    def clear(self) -> None:
        """Remove every chip."""
        while self.chips:
            chip = self.chips.popleft()
            self._row.removeWidget(chip)
            chip.deleteLater()

    def texts(self) -> list[str]:
        """The chips' plain labels, oldest first (for tests)."""
        return [c.text() for c in self.chips]

    def _scroll_to_end(self, _lo: int, hi: int) -> None:
        self.horizontalScrollBar().setValue(hi)


def _quiet(plot: pg.PlotWidget) -> None:
    """A plot to look at, not to fiddle with: no mouse zoom, buttons or menu; a faint horizontal grid."""
    plot.setMinimumHeight(70)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.showGrid(x=False, y=True, alpha=0.25)


class TripPlot(pg.PlotWidget):
    """Measured milliseconds per trip (one point per forward pass), with the floor drawn as a line.

    Prefill trips are orange, decode trips blue. Keeps the last ``max_points`` trips.
    """

    def __init__(self, parent: QWidget | None = None, max_points: int = 400, font: QFont | None = None):
        super().__init__(parent, background=PLOT_BG)
        self.max_points = max_points
        _quiet(self)
        self._x: deque[int] = deque(maxlen=max_points)
        self._y: deque[float] = deque(maxlen=max_points)
        self._prefill: deque[bool] = deque(maxlen=max_points)
        self._line = self.plot([], [], pen=pg.mkPen("#4d6a86", width=1.5))
        self._scatter = pg.ScatterPlotItem(size=7, pen=None)
        self.addItem(self._scatter)
        self.floor_ms: float | None = None
        self._floor = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(FLOOR_COLOR, width=2, style=Qt.DashLine),
                                      label="floor", labelOpts={"position": 0.985, "color": FLOOR_COLOR,
                                                                "fill": (23, 32, 42, 220), "anchors": [(1, 1), (1, 1)]})
        self._floor.setVisible(False)
        self.addItem(self._floor, ignoreBounds=False)
        if font is not None:
            self._floor.label.setFont(font)
            for side in ("left", "bottom"):
                self.getAxis(side).setTickFont(font)
                self.getAxis(side).setTextPen(AXIS_TEXT)
                self.getAxis(side).setPen(AXIS_LINE)

    def add_trip(self, x: int, ms: float, prefill: bool) -> None:
        """Plot one trip: ``ms`` is the measured wall time of the forward pass in milliseconds."""
        self._x.append(x)
        self._y.append(ms)
        self._prefill.append(prefill)
        self._line.setData(list(self._x), list(self._y))
        brushes = [pg.mkBrush(PREFILL_COLOR if p else DECODE_COLOR) for p in self._prefill]
        self._scatter.setData(list(self._x), list(self._y), brush=brushes)
        self._update_range()

    def set_floor(self, floor_ms: float | None, text: str) -> None:
        """Draw the floor at ``floor_ms`` milliseconds with ``text`` as its label; None hides it."""
        self.floor_ms = floor_ms
        self._floor.setVisible(floor_ms is not None)
        if floor_ms is not None:
            self._floor.setValue(floor_ms)
            self._floor.label.setFormat(text)
        self._update_range()

    def clear_trips(self) -> None:
        """Forget every plotted trip (the floor stays)."""
        self._x.clear()
        self._y.clear()
        self._prefill.clear()
        self._line.setData([], [])
        self._scatter.setData([], [])
        self._update_range()

    def points(self) -> list[tuple[int, float]]:
        """The plotted (trip, ms) pairs."""
        return list(zip(self._x, self._y))

    def _update_range(self) -> None:
        top = max([*self._y, (self.floor_ms or 0) * 1.5, 0.01])
        self.setYRange(0, top * 1.1, padding=0)
        if self._x:
            self.setXRange(self._x[0], max(self._x[-1], self._x[0] + 10), padding=0.02)


class RatePlot(pg.PlotWidget):
    """Tokens per second of each trip: tokens written ÷ measured wall time."""

    def __init__(self, parent: QWidget | None = None, max_points: int = 400, font: QFont | None = None):
        super().__init__(parent, background=PLOT_BG)
        _quiet(self)
        self._x: deque[int] = deque(maxlen=max_points)
        self._y: deque[float] = deque(maxlen=max_points)
        self._curve = self.plot([], [], pen=pg.mkPen(RATE_COLOR, width=2), symbol="o", symbolSize=5,
                                symbolBrush=RATE_COLOR, symbolPen=None)
        if font is not None:
            for side in ("left", "bottom"):
                self.getAxis(side).setTickFont(font)
                self.getAxis(side).setTextPen(AXIS_TEXT)
                self.getAxis(side).setPen(AXIS_LINE)

    def add_trip(self, x: int, tokens_per_s: float) -> None:
        """Plot the throughput of one trip in tokens per second."""
        self._x.append(x)
        self._y.append(tokens_per_s)
        self._curve.setData(list(self._x), list(self._y))
        self.setYRange(0, max(self._y) * 1.15 or 1, padding=0)

    def clear_trips(self) -> None:
        """Forget every plotted trip."""
        self._x.clear()
        self._y.clear()
        self._curve.setData([], [])


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0–100) of ``values`` by linear interpolation; nan when empty."""
    if not values:
        return math.nan
    s = sorted(values)
    k = (len(s) - 1) * q / 100.0
    lo = math.floor(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class FrameCounter:
    """Real frame times: the gap between consecutive frames, measured with ``time.perf_counter``.

    Call ``frame()`` once per drawn frame. Gaps longer than ``idle_gap_s`` (nothing was animating) are not
    frames and are skipped. Keeps the last ``window`` gaps.
    """

    def __init__(self, window: int = 300, idle_gap_s: float = 0.25):
        self.idle_gap_s = idle_gap_s
        self._gaps: deque[float] = deque(maxlen=window)
        self._last: float | None = None

    def frame(self, now: float | None = None) -> None:
        """Record that a frame was drawn at ``now`` (seconds, perf_counter; default: now)."""
        now = time.perf_counter() if now is None else now
        if self._last is not None:
            gap = now - self._last
            if 0 < gap <= self.idle_gap_s:
                self._gaps.append(gap)
        self._last = now

    def stats_ms(self) -> tuple[float, float, int]:
        """(p50, p95, number of frames) of the recorded frame times, in milliseconds."""
        gaps = [g * 1000.0 for g in self._gaps]
        return percentile(gaps, 50), percentile(gaps, 95), len(gaps)

    def reset(self) -> None:
        """Forget every recorded frame."""
        self._gaps.clear()
        self._last = None


class FrameOverlay(QLabel):
    """The F12 overlay: frame-time p50/p95 of the stage view, refreshed four times a second while shown."""

    def __init__(self, counter: FrameCounter, parent: QWidget | None = None):
        super().__init__(parent)
        self.counter = counter
        self.setObjectName("frameOverlay")
        self.setAttribute(Qt.WA_TransparentForMouseEvents)
        self.setSizePolicy(QSizePolicy.Fixed, QSizePolicy.Fixed)
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.refresh)
        self.hide()

    def toggle(self) -> None:
        """Show or hide the overlay (its refresh timer runs only while shown)."""
        if self.isVisible():
            self.hide()
            self._timer.stop()
        else:
            self.counter.reset()
            self.refresh()
            self.show()
            self.raise_()
            self._timer.start()

    def stop(self) -> None:
        """Stop refreshing (used when the window closes)."""
        self._timer.stop()

    def refresh(self) -> None:
        """Re-read the counter and show p50/p95 in milliseconds."""
        p50, p95, n = self.counter.stats_ms()
        if n == 0:
            text = QCoreApplication.translate("FrameOverlay", "frame time: waiting for frames")
        else:
            text = QCoreApplication.translate("FrameOverlay", "frame time p50 {p50} ms · p95 {p95} ms · {n} frames")
            text = text.format(p50=f"{p50:.1f}", p95=f"{p95:.1f}", n=n)
        self.setText(text)
        self.adjustSize()
