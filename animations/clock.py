"""The one animation clock: a precise 15 ms timer that reports elapsed time, never tick counts.

15 ms, not 16: even a precise Qt timer fires up to ~1 ms either side of its interval on a busy machine
(measured here: a 16 ms timer gave frame gaps of p95 16.8-16.9 ms, over a 60 Hz display's 16.7 ms; 15 ms gives
p95 15.8 ms; docs/benchmarks.md, "The window").

Qt timers fire late or skip under load; counting ticks would make the animation slow down when the machine is
busy. ``AnimationClock`` measures the real time since its last tick with ``time.perf_counter`` and emits it,
multiplied by ``speed`` (slow motion below 1), as ``tick(dt_s)``. Only the window connects to it; the stage
moves its time solely through ``StageScene.advance(dt_s)``.
"""

from __future__ import annotations

import time
from typing import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal


class AnimationClock(QObject):
    """Emits ``tick(dt_s)`` about every ``interval_ms`` while running; ``dt_s`` = measured seconds × ``speed``."""

    tick = Signal(float)

    MIN_SPEED = 1.0 / 32.0
    MAX_SPEED = 32.0

    def __init__(
        self,
        parent: QObject | None = None,
        interval_ms: int = 15,
        max_dt_s: float = 0.1,
        time_source: Callable[[], float] = time.perf_counter,
    ):
        """``max_dt_s`` caps one tick's real seconds (after a stall or a suspended laptop the stage steps, not
        jumps); ``time_source`` returns seconds (tests pass a fake one)."""
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._now = time_source
        self._last_s = 0.0
        self._max_dt_s = max_dt_s
        self._speed = 1.0

    # --- running -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start ticking; the first tick's dt counts from now. Does nothing if already running."""
        if self._timer.isActive():
            return
        self._last_s = self._now()
        self._timer.start()

    def stop(self) -> None:
        """Stop ticking (the timer is stopped, not just ignored)."""
        self._timer.stop()

    def is_running(self) -> bool:
        """True while the timer is active."""
        return self._timer.isActive()

    @property
    def interval_ms(self) -> int:
        """The timer's requested interval in milliseconds (the real one varies; dt says what it was)."""
        return self._timer.interval()

    # --- speed -------------------------------------------------------------------------------------------
    @property
    def speed(self) -> float:
        """Animation seconds per real second: 1 normal, 0.5 half speed (slow motion), 2 double."""
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        self._speed = min(self.MAX_SPEED, max(self.MIN_SPEED, float(value)))

    def speed_up(self, factor: float = 1.5) -> float:
        """Multiply ``speed`` by ``factor`` (the + key); returns the new speed."""
        self.speed = self._speed * factor
        return self._speed

    def slow_down(self, factor: float = 1.5) -> float:
        """Divide ``speed`` by ``factor`` (the − key); returns the new speed."""
        self.speed = self._speed / factor
        return self._speed

    # --- ticking -----------------------------------------------------------------------------------------
    def _on_timeout(self) -> None:
        now = self._now()
        real_dt = min(max(now - self._last_s, 0.0), self._max_dt_s)
        self._last_s = now
        self.tick.emit(real_dt * self._speed)


__all__ = ["AnimationClock"]
