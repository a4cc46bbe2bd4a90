"""The one animation clock: a precise 15 ms timer that reports elapsed time, never tick counts.

15 ms, not 16: even a precise Qt timer fires up to ~1 ms either side of its interval on a busy machine
(measured here: a 16 ms timer gave frame gaps of p95 16.8-16.9 ms, over a 60 Hz display's 16.7 ms; 15 ms gives
p95 15.8 ms; docs/benchmarks.md, "The window").

Qt timers fire late or skip under load; counting ticks would make the animation slow down when the machine is
busy. ``AnimationClock`` measures the real time since its last tick with ``time.perf_counter`` and emits it,
multiplied by ``speed`` (slow motion below 1), as ``tick(dt_s)``. Only the window connects to it; the stage
moves its time solely through ``StageScene.advance(dt_s)``.

Stepped (``set_stepped(True)``, for ``python main.py record``): the timer never runs and the wall is never read;
time moves only when ``step_to(t_s)`` is called, so frame i of a clip is the picture at exactly i / fps seconds
however long it took to render. ``start``/``stop`` still say whether the owner wants ticks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer, Signal


class AnimationClock(QObject):
    """Emits ``tick(dt_s)`` about every ``interval_ms`` while running; ``dt_s`` = measured seconds × ``speed``."""

    tick = Signal(float)

    MIN_SPEED = 1.0 / 32.0
    MAX_SPEED = 32.0
    FRAME_MS = 15  # ms between ticks when none is asked for: about 60 a second (a 16.7 ms frame, less its work)

    def __init__(
        self,
        parent: QObject | None = None,
        interval_ms: int | None = None,
        max_dt_s: float = 0.1,
        time_source: Callable[[], float] = time.perf_counter,
    ):
        """``interval_ms``: ms between ticks (None: ``FRAME_MS``); ``max_dt_s`` caps one tick's real seconds (after
        a stall or a suspended laptop the stage steps, not jumps); ``time_source`` returns seconds (tests pass a
        fake one)."""
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(self.FRAME_MS if interval_ms is None else interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._now = time_source
        self._last_s = 0.0
        self._max_dt_s = max_dt_s
        self._speed = 1.0
        self._stepped = False
        self._wanted = False  # stepped mode: start() was called and stop() was not
        self._stepped_s = 0.0  # stepped mode: the clock's time, seconds

    # --- running -----------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start ticking; the first tick's dt counts from now. Does nothing if already running. Stepped: the
        next ``step_to`` ticks (the timer stays off)."""
        if self._stepped:
            self._wanted = True
            return
        if self._timer.isActive():
            return
        self._last_s = self._now()
        self._timer.start()

    def stop(self) -> None:
        """Stop ticking (the timer is stopped, not just ignored)."""
        self._wanted = False
        self._timer.stop()

    def is_running(self) -> bool:
        """True while the timer is active (stepped: while ticks are wanted)."""
        return self._wanted if self._stepped else self._timer.isActive()

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

    # --- stepping (recording a clip) --------------------------------------------------------------------------
    def set_stepped(self, on: bool = True) -> None:
        """Stepped mode on: the timer stops for good and time is 0 s until ``step_to`` moves it (a running clock
        stays wanted, so the next step ticks). Off: back to the timer, running if it was wanted."""
        if on and not self._stepped:
            self._wanted = self._timer.isActive()
            self._timer.stop()
            self._stepped_s = 0.0
        elif not on and self._stepped:
            self._stepped = False
            if self._wanted:
                self.start()
        self._stepped = bool(on)

    @property
    def stepped(self) -> bool:
        """True in stepped mode."""
        return self._stepped

    @property
    def time_s(self) -> float:
        """Stepped mode: the clock's time in seconds (the last ``step_to``); 0.0 before any step."""
        return self._stepped_s

    def step_to(self, t_s: float) -> float:
        """Stepped mode: move the clock to ``t_s`` seconds and emit ``tick((t_s - time_s) × speed)`` if ticks
        are wanted (none for a zero step). Returns the step in seconds. Raises RuntimeError outside stepped
        mode, ValueError for a time before ``time_s`` (a clip never runs backwards)."""
        if not self._stepped:
            raise RuntimeError("step_to needs set_stepped(True) first")
        dt = float(t_s) - self._stepped_s
        if dt < 0 or dt != dt:
            raise ValueError(f"step_to({t_s!r}) is before the clock's time {self._stepped_s!r}")
        self._stepped_s = float(t_s)
        if self._wanted and dt > 0:
            self.tick.emit(dt * self._speed)
        return dt

    # --- ticking -----------------------------------------------------------------------------------------
    def _on_timeout(self) -> None:
        now = self._now()
        real_dt = min(max(now - self._last_s, 0.0), self._max_dt_s)
        self._last_s = now
        self.tick.emit(real_dt * self._speed)


__all__ = ["AnimationClock"]
