"""Fixtures for the window tests: the stage stand-in (until animations.stage.scene lands) and windows on engines."""

from __future__ import annotations

import pytest

from tests.gui.stand_in import install_if_missing

install_if_missing()

FAKE_TARGET = "tests.gui.fake_engine:engine_main"


@pytest.fixture(autouse=True)
def coarse_stage_clock(monkeypatch):
    """The clocks these tests make tick every 50 ms, not every 15 ms as the app's do. What a test here checks moves
    by the clock's measured seconds, not by its count of ticks, and the frames in between cost processor time: the
    touch, Live extras and exhibit tests took 55.1 and 58.3 s of CPU at 50 ms against 59.1 and 60.6 s at 15 ms
    (two interleaved runs each). The frame rate itself is measured at the app's own tick, by
    bench/window_bench.py."""
    from animations.clock import AnimationClock
    monkeypatch.setattr(AnimationClock, "FRAME_MS", 50)


@pytest.fixture
def make_window(qtbot):
    """Build a started MainWindow on an engine; waits until the engine is ready.

    ``make_window(target=FAKE_TARGET, options=None, batch=1, trip_s=0.05)``; the window is closed (engine
    stopped) at teardown by pytest-qt.
    """
    from gui import i18n
    from gui.engine_link.bridge import EngineBridge
    from gui.window.main_window import MainWindow

    windows = []

    def make(target: str = FAKE_TARGET, options: dict | None = None, batch: int = 1, trip_s: float = 0.05,
             ready_timeout_ms: int = 60_000):
        opts = {"model_dir": None, "device": "cpu", "threads": 1, "max_batch": batch, "layer_timing": True}
        opts.update(options or {})
        window = MainWindow(EngineBridge(opts, target=target))
        windows.append(window)  # qtbot keeps only a weak reference; the window must live until closed
        qtbot.addWidget(window)
        window.scene.trip_duration_s = trip_s
        window.resize(1280, 800)
        window.show()
        with qtbot.waitSignal(window.bridge.ready, timeout=ready_timeout_ms):
            window.start()
        return window

    yield make
    for window in windows:
        window.close()
    i18n.set_language("en")


@pytest.fixture
def fonts(qapp):
    """The app's one font family, with the bundled glyphs registered."""
    from animations.fonts import register_fonts
    return register_fonts()
