"""Operator settings for a kiosk that runs for days: every bad value warned about, the operator's file kept,
one translator per language, tooltips that follow a language switch, an engine that is retried for ever."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtCore import QSettings

from gui import settings as app_settings
from gui.settings import Settings


@pytest.mark.parametrize("key, raw, field, used", [
    ("kiosk/idle_seconds", "-5", "idle_seconds", 60.0),
    ("kiosk/idle_seconds", "3000000", "idle_seconds", 60.0),
    ("kiosk/idle_seconds", "nan", "idle_seconds", 60.0),
    ("kiosk/idle_seconds", "inf", "idle_seconds", 60.0),
    ("kiosk/trip_seconds", "1e309", "trip_seconds", 1.0),
    ("kiosk/section_seconds", "0", "section_seconds", 8.0),
    ("kiosk/screen", "abc", "screen", 0),
    ("kiosk/screen", "1.5", "screen", 0),
    ("language", "fr", "language", "system"),  # the system locale's language, as with nothing saved
    ("kiosk/operator_chord", "nonsense", "operator_chord", "Ctrl+Alt+Shift+Q"),
    ("kiosk/operator_chord", "Q", "operator_chord", "Ctrl+Alt+Shift+Q"),
])
def test_bad_value_in_the_file_is_warned_about_and_replaced(tmp_path, caplog, key, raw, field, used):
    path = tmp_path / "one-trip.ini"
    qs = QSettings(str(path), QSettings.IniFormat)
    qs.setValue(key, raw)
    qs.sync()
    with caplog.at_level(logging.WARNING, logger="gui.settings"):
        got = app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat))
    used = app_settings.system_language() if used == "system" else used
    assert getattr(got, field) == used
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert key in warning and repr(raw) in warning and repr(used) in warning


def test_good_values_pass_without_a_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="gui.settings"):
        s = Settings(language="en", idle_seconds="42", screen="1", operator_chord="Ctrl+Alt+K", trip_seconds=0.5)
    assert (s.language, s.idle_seconds, s.screen, s.operator_chord, s.trip_seconds) == ("en", 42.0, 1, "Ctrl+Alt+K",
                                                                                         0.5)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_existing_file_keeps_its_comments(tmp_path, monkeypatch):
    monkeypatch.setenv(app_settings.ENV_CONFIG_DIR, str(tmp_path / "cfg"))
    try:
        path = app_settings.configure_qsettings()
        path.parent.mkdir(parents=True)
        original = ("; kiosk at the east entrance, set by Mei\n[kiosk]\n; one minute, the curator asked\n"
                    "idle_seconds=60\n")
        path.write_text(original, encoding="utf-8")
        assert app_settings.write_defaults_if_new(Settings()) is False
        assert path.read_text(encoding="utf-8") == original
        path.unlink()
        assert app_settings.write_defaults_if_new(Settings()) is True  # a new file lists every key
        assert "operator_chord" in path.read_text(encoding="utf-8")
    finally:
        monkeypatch.undo()
        app_settings.configure_qsettings()


def test_random_bytes_file_is_not_rewritten(tmp_path, caplog):
    path = tmp_path / "one-trip.ini"
    blob = bytes(range(256)) * 4
    path.write_bytes(blob)
    with caplog.at_level(logging.WARNING, logger="gui.settings"):
        got = app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat))
    assert got.idle_seconds == 60.0
    assert path.read_bytes() == blob


def test_unwritable_config_dir_is_said(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(app_settings.ENV_CONFIG_DIR, str(blocker / "cfg"))
    problem = app_settings.write_problem()
    assert problem is not None and "cfg" in problem


def test_language_switches_hold_one_translator_per_language(qapp):
    from PySide6.QtCore import QTranslator

    from gui import i18n
    before = len(qapp.findChildren(QTranslator))
    for _ in range(100):
        i18n.set_language("zh")
        i18n.set_language("en")
    after = len(qapp.findChildren(QTranslator))
    assert after - before <= 1  # the zh translator, loaded once (or already loaded before)
    i18n.set_language("en")


def test_token_chip_tooltips_follow_the_language(qtbot):
    from gui import i18n
    from gui.widgets import TokenChips
    i18n.set_language("en")
    chips = TokenChips()
    qtbot.addWidget(chips)
    chip = chips.add("fox", 42)
    english = chip.toolTip()
    assert "42" in english and "fox" in english
    i18n.set_language("zh")
    try:
        qtbot.waitUntil(lambda: chip.toolTip() != english, timeout=2000)
        assert "42" in chip.toolTip()
    finally:
        i18n.set_language("en")
    qtbot.waitUntil(lambda: chip.toolTip() == english, timeout=2000)


def test_idle_watcher_refuses_overflowing_seconds(qapp):
    from gui.kiosk.kiosk import IdleWatcher
    w = IdleWatcher(60)
    for bad in (3_000_000, float("inf"), 1e308):
        w.set_seconds(bad)  # used to raise OverflowError
        assert w._timer.interval() == 86_400_000
    w.set_seconds(float("nan"))
    assert w._timer.interval() == 86_400_000  # kept, not 0.2 s


def test_an_engine_that_keeps_dying_is_retried_with_back_off(make_window):
    """Six deaths within a minute used to end all retries (and Run then promised 'Loading the model…' for
    ever); now the delay doubles up to a minute and Run says that the engine is restarting."""
    from gui.live.engine_events import RESTART_MAX_DELAY_MS
    window = make_window()
    delays = []
    for _ in range(12):
        window.engine._on_engine_died(-9)
        assert window.engine._restart_timer.isActive()  # never given up
        delays.append(window.engine._restart_timer.interval())
    assert delays[0] == 400 and delays == sorted(delays) and delays[-1] == RESTART_MAX_DELAY_MS
    assert "trying again in 60 s" in window.status_line.text()
    window.run()
    assert window.status_line.text() == "The engine is restarting; it will run when it is ready."


def test_remembering_the_language_keeps_the_operators_comments(tmp_path):
    path = tmp_path / "one-trip.ini"
    path.write_text("; set up by the museum's technician, 2026-11-02\n[General]\nlanguage=zh\n\n"
                    "[kiosk]\n; the visitors' screen\nscreen=1\nidle_seconds=90\n", encoding="utf-8")
    assert app_settings.remember_language("en", path)
    text = path.read_text(encoding="utf-8")
    assert "; set up by the museum's technician, 2026-11-02" in text and "; the visitors' screen" in text
    qs = QSettings(str(path), QSettings.IniFormat)
    assert qs.value("language") == "en" and qs.value("kiosk/screen") in ("1", 1)
    assert text.count("language=") == 1


def test_remembering_the_language_adds_it_to_a_file_without_one(tmp_path):
    path = tmp_path / "one-trip.ini"
    path.write_text("; only kiosk keys here\n[kiosk]\nscreen=0\n", encoding="utf-8")
    assert app_settings.remember_language("zh", path)
    qs = QSettings(str(path), QSettings.IniFormat)
    assert qs.value("language") == "zh" and qs.value("kiosk/screen") in ("0", 0)
    assert "; only kiosk keys here" in path.read_text(encoding="utf-8")


def _blob() -> bytes:
    """4 kB of random bytes that QSettings reads without a FormatError (as no keys): silent once."""
    import random
    return bytes(random.Random(7).randrange(256) for _ in range(4096))


@pytest.mark.parametrize("make, needle", [
    (lambda p: p.write_bytes(_blob()), "binary"),
    (lambda p: p.write_bytes(b"[kiosk]\nidle_seconds=5\n\x00\x00\x00"), "binary"),
    (lambda p: p.mkdir(), "folder"),
])
def test_a_binary_file_or_a_folder_as_the_ini_is_said_once(tmp_path, caplog, make, needle):
    """Issue 38 item 4: garbage text got a warning, a random binary file or a folder in the INI's place none."""
    path = tmp_path / "One Trip.ini"
    make(path)
    before = path.read_bytes() if path.is_file() else None
    with caplog.at_level(logging.WARNING, logger="gui.settings"):
        got = app_settings.load(qsettings=QSettings(str(path), QSettings.IniFormat))
        assert app_settings.remember_language("zh", path) is False  # never written over
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len([w for w in warnings if "using the defaults" in w]) == 1, warnings
    assert str(path) in warnings[0] and needle in warnings[0]
    assert got.idle_seconds == 60.0  # the defaults, not the 5 of a file with a NUL in it
    assert (path.read_bytes() if path.is_file() else None) == before
