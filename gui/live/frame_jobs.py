"""Work that may wait a frame: run just after the stage has painted, so that it never delays a frame.

The animation clock ticks every ~16 ms and each tick's picture is painted right after it. Work done in a tick
(writing a trip's tokens into the answer, the chips and the sixteen seat cards: several ms at batch 16) pushes
that frame's paint late, and the stage stutters at every trip boundary. ``AfterPaint`` queues such work and
runs it once the stage view has painted (the paint event posts the run, so it comes after the paint), in the
idle part of the frame before the next tick; at most ``budget_ms`` of it per frame, the rest after the next
paint. When nothing paints (a hidden window, a test without a shown window) a fallback timer runs it after
``fallback_ms``. Jobs run in the order they were queued; a job queued under a ``key`` replaces a waiting one
with the same key (a redraw that reads the current state needs to run once, not once per trip).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

log = logging.getLogger("gui.window.main_window")


class AfterPaint(QObject):
    """A FIFO of callables run after ``widget``'s next paint (at most ``budget_ms`` per paint)."""

    def __init__(self, widget: QWidget, budget_ms: float = 1.5, fallback_ms: int = 50, parent: QObject | None = None):
        super().__init__(parent)
        self._jobs: list[tuple[str | None, Callable[[], None]]] = []
        self._posted = False
        self.budget_ms = float(budget_ms)
        self._fallback = QTimer(self)
        self._fallback.setSingleShot(True)
        self._fallback.setInterval(int(fallback_ms))
        self._fallback.timeout.connect(self.flush)
        widget.installEventFilter(self)

    def defer(self, job: Callable[[], None], key: str | None = None) -> None:
        """Queue ``job`` to run after the next paint; with ``key``, drop a queued job of the same key first."""
        if key is not None:
            self._jobs = [(k, j) for k, j in self._jobs if k != key]
        self._jobs.append((key, job))
        if not self._fallback.isActive():
            self._fallback.start()

    def pending(self) -> int:
        """How many jobs wait."""
        return len(self._jobs)

    def flush(self) -> None:
        """Run every waiting job now, in order (before anything reads what they write, and on the fallback)."""
        self._fallback.stop()
        while self._jobs:
            self._run_one()

    def discard(self, key: str) -> bool:
        """Drop the waiting job queued under ``key``; True if there was one."""
        before = len(self._jobs)
        self._jobs = [(k, j) for k, j in self._jobs if k != key]
        return len(self._jobs) < before

    def clear(self) -> None:
        """Forget every waiting job."""
        self._jobs.clear()
        self._fallback.stop()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Paint and self._jobs and not self._posted:
            self._posted = True
            QTimer.singleShot(0, self._after_paint)  # a posted call: it runs once this paint is done
        return False

    def _after_paint(self) -> None:
        self._posted = False
        start = time.perf_counter()
        while self._jobs:
            self._run_one()
            if (time.perf_counter() - start) * 1000.0 >= self.budget_ms:
                break
        if self._jobs:
            self._fallback.start()
        else:
            self._fallback.stop()

    def _run_one(self) -> None:
        _key, job = self._jobs.pop(0)
        try:
            job()
        except Exception:  # noqa: BLE001 - one failed redraw must not stop the words and numbers
            log.exception("a deferred redraw failed")


__all__ = ["AfterPaint"]
