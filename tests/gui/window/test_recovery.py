"""Recovery: a real engine killed with SIGKILL mid-decode is noticed within 2 s and replaced, and the answer goes
on; a model that cannot be loaded leaves the tour illustrative and writes the reason to the log."""

from __future__ import annotations

import logging
import os
import signal
import time

from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem

from gui.engine_link.bridge import EngineBridge
from gui.window.main_window import MainWindow
from tests.gui.tour_host import ensure_tour

NOTICE_WITHIN_S = 2.0


def test_killed_engine_is_noticed_and_replaced(qtbot, make_window, tiny_model_dir):
    window = make_window(target="model.service:engine_main", options={"model_dir": str(tiny_model_dir)},
                         trip_s=0.02)
    window.set_prompt("Once upon a time")
    window.run()
    qtbot.waitUntil(lambda: window.reports_received >= 3, timeout=20_000)
    old_pid = window.bridge.pid
    died: list[float] = []
    window.bridge.engine_died.connect(lambda _code: died.append(time.monotonic()))
    killed = time.monotonic()
    os.kill(old_pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: bool(died), timeout=int(NOTICE_WITHIN_S * 1000))
    noticed = died[0] - killed
    assert noticed < NOTICE_WITHIN_S
    assert "engine stopped" in window.status_line.text().lower()  # the calm notice
    with qtbot.waitSignal(window.bridge.ready, timeout=60_000):
        pass
    ready = time.monotonic() - killed
    assert window.bridge.pid != old_pid and window.bridge.is_running()
    received = window.reports_received
    qtbot.waitUntil(lambda: window.reports_received > received, timeout=20_000)  # the answer goes on
    logging.getLogger(__name__).warning("recovery: noticed in %.3f s, new engine ready %.2f s after the kill",
                                        noticed, ready)
    print(f"recovery: noticed in {noticed:.3f} s, new engine ready {ready:.2f} s after the kill")
    window.pause()


def _scene_texts(scene) -> str:
    texts = []
    for item in scene.items():
        if isinstance(item, QGraphicsSimpleTextItem):
            texts.append(item.text())
        elif isinstance(item, QGraphicsTextItem):
            texts.append(item.toPlainText())
    return "\n".join(texts)


def test_broken_model_keeps_the_tour_illustrative_and_logs_why(qtbot, tmp_path, caplog):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{ not json")
    window = MainWindow(EngineBridge({"model_dir": str(broken), "device": "cpu", "threads": 1, "max_batch": 1},
                                     target="model.service:engine_main"))
    qtbot.addWidget(window)
    tour = ensure_tour(qtbot, window)
    window.show()
    caplog.set_level(logging.INFO)
    with qtbot.waitSignal(window.bridge.fatal, timeout=60_000) as fatal:
        window.start()
    reason = fatal.args[0]
    assert reason
    assert any("engine fatal" in r.getMessage() and reason in r.getMessage() for r in caplog.records)
    assert "could not be loaded" in window.status_line.text()
    qtbot.waitUntil(lambda: not window.bridge.is_running(), timeout=5000)
    qtbot.wait(600)  # longer than the restart delay
    assert not window.bridge.is_running(), "a model that cannot load is not restarted in a loop"
    assert tour.data.analysis is None
    tour.goto(7)  # the KV cache page: with a model, measured; without, illustrative
    assert "illustrative" in _scene_texts(tour.current_scene)
    window.run()  # pressing Run now says so calmly
    assert "not available" in window.status_line.text()
    window.close()
