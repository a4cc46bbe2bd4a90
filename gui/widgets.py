"""Small widgets of the main window: token chips and the frame-time counter (the plots: ``gui.live.plots``)."""

from __future__ import annotations

import html
import math
import time
from collections import deque

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QScrollArea, QSizePolicy, QWidget

SPECIAL_TOKENS = {"<|endoftext|>": "end of text"}  # a special token's raw text -> what it means (translated)


def chip_text(label: str) -> str:
    """What a chip shows for a token ``label`` (``model.tokenizer`` labels: visible marks for whitespace, hex for
    bytes that are not yet a character): a special token as what it means ("end of text" / "文末"), never raw; a
    replacement character (U+FFFD), which would read as a decoding failure, as its code point."""
    meaning = SPECIAL_TOKENS.get(label.strip())
    if meaning is not None:
        return QCoreApplication.translate("TokenChips", meaning)
    return label.replace("\ufffd", "⟨U+FFFD⟩")


class TokenChips(QScrollArea):
    """A row of chips, one per token: the token's label above, its id below. Shows the newest chips that fit
    whole (older ones are hidden, never cut at the edge); its height follows its font (two lines).

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
        # "… +N" at the left while older chips are hidden: a visitor sees that the row starts earlier
        self._more = QLabel()
        self._more.setObjectName("chipMore")
        self._more.setTextFormat(Qt.RichText)
        self._more.hide()
        self._row.insertWidget(0, self._more)
        self.setWidget(self._inner)
        self.horizontalScrollBar().rangeChanged.connect(self._scroll_to_end)
        self.chips: deque[QLabel] = deque()

    def add(self, label: str, token_id: int, kind: str = "answer") -> QLabel:
        """Add a chip. ``kind`` is "answer" (a generated token) or "prompt" (a token of the question)."""
        chip = QLabel(f"<div align='center'>{html.escape(chip_text(label)) or '&nbsp;'}<br>"
                      f"<span style='color:#8797a8'>{int(token_id)}</span></div>")
        chip.setTextFormat(Qt.RichText)
        chip.setFont(self.font())
        chip.setObjectName("chipPrompt" if kind == "prompt" else "chip")
        chip.setProperty("role", "chip")  # the model's token and its id: content, on two lines by design
        chip.setProperty("tokenLabel", label)
        chip.setProperty("tokenId", int(token_id))
        self._tooltip(chip)
        self._row.insertWidget(self._row.count() - 1, chip)
        self.chips.append(chip)
        while len(self.chips) > self.max_chips:
            old = self.chips.popleft()
            self._row.removeWidget(old)
            old.deleteLater()
        self._fit()
        return chip

    def sizeHint(self):  # noqa: N802 - Qt override: two lines of text and the chip's frame
        from PySide6.QtCore import QSize
        from PySide6.QtGui import QFontMetrics
        h = QFontMetrics(self.font()).lineSpacing() * 2 + 12
        if self.chips:
            h = max(h, max(c.sizeHint().height() for c in list(self.chips)[-8:]) + 6)
        return QSize(200, h)

    def minimumSizeHint(self):  # noqa: N802 - Qt override
        return self.sizeHint()

    @staticmethod
    def _tooltip(chip: QLabel) -> None:
        chip.setToolTip(QCoreApplication.translate("TokenChips", "token {label} has id {id}")
                        .format(label=chip.property("tokenLabel"), id=chip.property("tokenId")))

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        from PySide6.QtCore import QEvent
        if event.type() == QEvent.LanguageChange:  # tooltips follow a language switch
            for chip in self.chips:
                self._tooltip(chip)
        super().changeEvent(event)
        if event.type() == QEvent.FontChange:
            for chip in self.chips:
                chip.setFont(self.font())
            self.setFixedHeight(self.sizeHint().height())
            self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Show the newest chips that fit whole in the visible width; hide the older ones."""
        if self.height() != self.sizeHint().height():
            self.setFixedHeight(self.sizeHint().height())
        margins = self._row.contentsMargins()
        room = self.viewport().width() - margins.left() - margins.right() - 2
        spacing = self._row.spacing()
        widths = []
        for chip in self.chips:
            chip.ensurePolished()  # the style sheet's padding and border are in its size hint only once polished
            widths.append(max(chip.sizeHint().width(), chip.minimumSizeHint().width()))
        shown = self._count_fitting(widths, room, spacing)
        hidden = len(widths) - shown
        if hidden:  # make room for the marker, which may hide one more chip
            self._more.setFont(self.font())
            self._more.setText(self._more_text(hidden))
            self._more.ensurePolished()
            more_w = max(self._more.sizeHint().width(), self._more.minimumSizeHint().width()) + spacing
            shown = self._count_fitting(widths, room - more_w, spacing)
            hidden = len(widths) - shown
            self._more.setText(self._more_text(hidden))
            self._more.setToolTip(QCoreApplication.translate("TokenChips", "{n} earlier tokens are not shown")
                                  .format(n=hidden))
        self._more.setVisible(hidden > 0)
        for i, chip in enumerate(self.chips):
            chip.setVisible(i >= hidden)

    @staticmethod
    def _count_fitting(widths: list[int], room: int, spacing: int) -> int:
        """How many of the newest chips (``widths``, oldest first, px) fit whole in ``room`` px."""
        used = n = 0
        for w in reversed(widths):
            if used + w > room:
                break
            used += w + spacing
            n += 1
        return n

    @staticmethod
    def _more_text(hidden: int) -> str:
        return f"<div align='center'>…<br><span style='color:#8797a8'>+{hidden}</span></div>"

    def clear(self) -> None:
        """Remove every chip."""
        while self.chips:
            chip = self.chips.popleft()
            chip.hide()
            self._row.removeWidget(chip)
            chip.deleteLater()
        self._more.hide()

    def texts(self) -> list[str]:
        """The chips' plain labels, oldest first (for tests)."""
        return [c.text() for c in self.chips]

    def _scroll_to_end(self, _lo: int, hi: int) -> None:
        self.horizontalScrollBar().setValue(hi)
        if hi > 0 and sum(c.isVisible() for c in self.chips) > 1:
            # the row came out wider than the view (the fonts or the view changed after the last fit): hide
            # the oldest chip that would be cut, rather than show it cut at the left edge
            self._fit()


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


class PaintCounter(QObject):
    """Counts the real paints (frames) of the widget it filters into a ``FrameCounter`` (install it on the
    stage view's viewport)."""

    def __init__(self, counter: FrameCounter, parent: QObject):
        super().__init__(parent)
        self.counter = counter

    def eventFilter(self, obj, event):  # noqa: N802 - Qt override
        if event.type() == QEvent.Paint:
            self.counter.frame()
        return False
