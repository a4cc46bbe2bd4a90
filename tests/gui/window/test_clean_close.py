"""Closing the window stops the real engine by asking it to, without terminating it."""

from __future__ import annotations

import logging

import psutil

REAL_TARGET = "model.service:engine_main"


def _no_termination(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "did not stop" in r.getMessage()]


def test_close_on_real_engine_does_not_terminate(qtbot, make_window, tiny_model_dir, caplog):
    """Closed in the middle of a real-time answer, the engine is asked to stop and given the time it needs:
    no "engine did not stop in ... s; terminating" line, and no engine process left."""
    w = make_window(target=REAL_TARGET, options={"model_dir": str(tiny_model_dir)}, trip_s=0.02)
    pid = w.bridge.pid
    w.set_prompt("Once upon a time")
    w.run()
    qtbot.waitUntil(lambda: w.reports_received >= 1, timeout=30_000)
    with caplog.at_level(logging.INFO, logger="gui.engine_link.bridge"):
        w.close()
    assert not w.bridge.is_running()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not _no_termination(caplog)
