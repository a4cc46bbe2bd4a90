"""Minimal stand-ins for ``animations.stage.scene.StageScene`` and ``animations.clock.AnimationClock``.

Used only while the real animations package is not there yet (see ``install_if_missing``); they follow the
agreed API so the window can be tested end to end.
"""

from __future__ import annotations

import sys
import time
import types

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene


class AnimationClock(QObject):
    tick = Signal(float)

    def __init__(self, parent=None, interval_ms: int = 16):
        super().__init__(parent)
        self.speed = 1.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timeout)
        self._last = 0.0

    def start(self):
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self):
        self._timer.stop()

    def is_running(self) -> bool:
        return self._timer.isActive()

    def _on_timeout(self):
        now = time.perf_counter()
        dt, self._last = now - self._last, now
        self.tick.emit(dt * self.speed)


class StageScene(QGraphicsScene):
    trip_finished = Signal()

    def __init__(self, parent=None):
        super().__init__(0, 0, 1600, 600, parent)
        self.trip_duration_s = 1.0
        self.real_time = False
        self._remaining = 0.0
        self.trips: list[dict] = []
        self.configured = None
        self.language = "en"
        self._rect = self.addRect(100, 100, 200, 200, QColor("#5b8def"), QColor("#cfe0ff"))

    def configure(self, layer_bytes, block_bytes, num_blocks, model_name):
        self.configured = (list(layer_bytes), block_bytes, num_blocks, model_name)

    def show_trip(self, trip: dict):
        self.trips.append(trip)
        self._remaining = 0.0 if self.real_time else self.trip_duration_s

    def advance(self, dt_s: float):
        if self._remaining > 0:
            self._remaining -= dt_s
            self._rect.setX(1000 * (1 - max(self._remaining, 0) / max(self.trip_duration_s, 1e-6)))
            if self._remaining <= 0:
                self._remaining = 0
                self.trip_finished.emit()

    def busy(self) -> bool:
        return self._remaining > 0

    def set_language(self, lang: str):
        self.language = lang


def install_if_missing() -> bool:
    """Register the stand-ins as ``animations.stage.scene``/``animations.clock`` if the real ones are missing.

    Returns True if the stand-ins were installed.
    """
    try:
        import animations.clock  # noqa: F401
        import animations.stage.scene  # noqa: F401
        return False
    except ImportError:
        pass
    stage = types.ModuleType("animations.stage.scene")
    stage.StageScene = StageScene
    clock = types.ModuleType("animations.clock")
    clock.AnimationClock = AnimationClock
    sys.modules["animations.stage.scene"] = stage
    sys.modules["animations.clock"] = clock
    return True
