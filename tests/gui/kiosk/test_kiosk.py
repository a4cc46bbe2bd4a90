"""Kiosk mode: idle → attract loop → any key back to the start; the lock and the operator chord; the screen;
settings through QSettings; a kiosk app ends with 0 and no child on SIGTERM and on the operator chord."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication

from gui import settings as app_settings
from gui.kiosk.kiosk import KioskController
from gui.settings import Settings
from tests.gui.test_app import AppProcess, stop_mid_decode
from tests.gui.tour_host import ensure_tour

CHORD = Qt.ControlModifier | Qt.AltModifier | Qt.ShiftModifier


@pytest.fixture
def kiosk(qtbot, make_window):
    """A started window (fake engine) in kiosk mode with a tour, idle time 0.3 s, sections every 0.25 s."""
    window = make_window(trip_s=0.02)
    tour = ensure_tour(qtbot, window)
    settings = Settings(language="zh", idle_seconds=0.3, section_seconds=0.25, prompts=["Once upon a time"])
    controller = KioskController(window, settings).install()
    controller.show()
    yield window, controller, tour
    controller.release()
    window.close()


def test_attract_loop_starts_when_idle_and_a_key_stops_it(qtbot, kiosk):
    window, controller, tour = kiosk
    beats: list[str] = []
    controller.attract.beat.connect(beats.append)
    assert not controller.is_attracting()
    qtbot.waitUntil(controller.is_attracting, timeout=3000)
    assert window.lang == "zh"  # the attract loop plays in the kiosk's language
    qtbot.waitUntil(lambda: "live" in beats, timeout=5000)  # sections, then a real decode on the Live page
    assert beats[:3] == ["section 0", "section 1", "section 2"]
    qtbot.waitUntil(lambda: window.reports_received > 0, timeout=5000)
    qtbot.waitUntil(lambda: beats[-1].startswith("section") and beats[-1] != "section 0", timeout=8000)
    window.set_language("en")  # a visitor switched language, then walked away; the next one gets zh again
    tour.goto(5)
    qtbot.keyClick(window, Qt.Key_Right)  # the first key only wakes the kiosk: it does not turn a page
    assert not controller.is_attracting()
    assert tour.current_index == 0 and window.is_tour_visible()
    assert window.lang == "zh"
    assert window.is_session_done()
    qtbot.waitUntil(controller.is_attracting, timeout=3000)  # idle again: plays again


def test_escape_and_close_do_not_leave_but_the_operator_chord_does(qtbot, kiosk):
    window, controller, _ = kiosk
    assert window.isFullScreen()
    qtbot.keyClick(window, Qt.Key_Escape)
    assert not window.close()  # Alt+F4 and a window manager's close arrive as this close event
    assert window.isVisible()
    qtbot.keyClick(window, Qt.Key_F)  # F in a kiosk re-places the window; it stays fullscreen
    assert window.isFullScreen()
    qtbot.keyClick(window, Qt.Key_F12)  # the frame-time overlay stays available
    assert window.frame_overlay.isVisible()
    qtbot.keyClick(window, Qt.Key_F12)
    qtbot.keyClick(window, Qt.Key_Q, CHORD)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=2000)
    assert not window.bridge.is_running()


def test_fullscreen_on_the_screen_and_on_another_when_it_goes(qtbot, kiosk):
    window, controller, _ = kiosk
    screen = QGuiApplication.screens()[0]
    assert window.windowHandle().screen() is screen
    assert window.geometry() == screen.geometry()
    QGuiApplication.instance().screenRemoved.emit(screen)  # as if it were unplugged: move to what remains
    qtbot.waitUntil(lambda: window.isFullScreen() and controller.screens.index == 0, timeout=2000)
    assert window.windowHandle().screen() in QGuiApplication.screens()


def test_kiosk_locks_prompts_to_a_short_length(kiosk):
    window, _, tour = kiosk
    assert window.prompt_box.lineEdit().maxLength() <= 200
    window.set_prompt("x" * 5000)
    assert len(window.prompt()) <= 2000


def test_settings_persist_through_qsettings(tmp_path, monkeypatch):
    path = tmp_path / "one-trip.ini"
    qs = QSettings(str(path), QSettings.IniFormat)
    assert app_settings.load(qsettings=qs) == Settings()  # nothing saved yet: defaults
    chosen = Settings(language="en", idle_seconds=42, screen=1, operator_chord="Ctrl+Alt+K", trip_seconds=0.5,
                      section_seconds=5, prompts=["Hello there", "从前有一座山，山里有一座庙，"])
    app_settings.save(chosen, qsettings=qs)
    again = app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat))
    assert again == chosen
    # the command line wins for this run, and is not written back
    args = type("Args", (), {"lang": "zh", "idle_seconds": 3.0, "screen": None})()
    override = app_settings.load(args, qsettings=QSettings(str(path), QSettings.IniFormat))
    assert (override.language, override.idle_seconds, override.screen) == ("zh", 3.0, 1)
    assert app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat)).idle_seconds == 42
    # a bad value is replaced by its default, not an error
    qs = QSettings(str(path), QSettings.IniFormat)
    qs.setValue("kiosk/idle_seconds", "soon")
    qs.sync()
    assert app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat)).idle_seconds == 60.0
    # the default QSettings() lands in ONE_TRIP_CONFIG_DIR
    monkeypatch.setenv(app_settings.ENV_CONFIG_DIR, str(tmp_path / "cfg"))
    try:
        assert app_settings.configure_qsettings() == tmp_path / "cfg" / "One Trip" / "One Trip.ini"
        QSettings().setValue("language", "en")
        QSettings().sync()
        assert "language=en" in (tmp_path / "cfg" / "One Trip" / "One Trip.ini").read_text()
    finally:
        monkeypatch.undo()
        app_settings.configure_qsettings()


@pytest.mark.parametrize("how", ["sigterm", "chord"])
def test_kiosk_app_exits_cleanly(tiny_model_dir, tmp_path, how):
    env = {"ONE_TRIP_CONFIG_DIR": str(tmp_path / "cfg"), "ONE_TRIP_LOG_DIR": str(tmp_path / "log")}
    if how == "chord":
        env["ONE_TRIP_OPERATOR_CHORD_MS"] = "1500"
    app = AppProcess(tiny_model_dir, env, kiosk=True)
    stop_mid_decode(app, how, wait_engine=False)
    assert app.seen("kiosk: leaving")
    assert (tmp_path / "log" / "one-trip.log").is_file()  # the log went to the (overridden) log directory
    assert "kiosk: leaving" in (tmp_path / "log" / "one-trip.log").read_text()
