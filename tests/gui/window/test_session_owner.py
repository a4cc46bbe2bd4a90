"""One owner for the Live session's state: the window is composed (no mixins), and its controls write to the
session and show what the session says, whoever changed it."""

from __future__ import annotations

import pytest

from gui.live.host import LiveHost
from gui.window.main_window import MainWindow

pytestmark = pytest.mark.filterwarnings("error")


def test_the_window_is_composed_not_mixed():
    ours = [c.__name__ for c in MainWindow.__mro__ if c.__module__.split(".")[0] in ("gui", "animations")]
    assert ours == ["MainWindow"]


def test_the_window_is_a_live_host(make_window):
    assert isinstance(make_window(), LiveHost)


def test_the_controls_follow_the_session(qtbot, make_window):
    w = make_window()
    s = w.session
    s.set_batch(5)
    assert w.batch_slider.value() == 5 and w.batch_value.text() == "5"
    s.set_trip_seconds(2.0)
    assert w.speed_slider.value() == 200 and w.scene.trip_duration_s == pytest.approx(2.0)
    assert "2.00" in w.speed_value.text()
    s.set_greedy(True)
    assert w.model_choice.greedy_box.isChecked()
    s.set_prompt("a prompt from the kiosk")
    assert w.prompt_box.currentText() == "a prompt from the kiosk"


def test_the_controls_write_to_the_session(qtbot, make_window):
    w = make_window()
    seen = []
    w.session.subscribe(lambda c: seen.append(c.field))
    w.batch_slider.setValue(3)
    w.speed_slider.setValue(150)
    w.model_choice.greedy_box.setChecked(True)
    w.prompt_box.setEditText("typed by a visitor")
    s = w.session
    assert (s.batch, s.trip_seconds, s.sampling.greedy, s.prompt) == (3, 1.5, True, "typed by a visitor")
    assert {"batch", "trip_seconds", "sampling", "prompt"} <= set(seen)


def test_the_run_state_follows_the_answer(qtbot, make_window):
    w = make_window(trip_s=0.03)
    states = []
    w.session.subscribe(lambda c: states.append(c.value), "run_state")
    w.main_new_tokens = 3
    w.set_prompt("hello world")
    w.run()
    assert w.session.run_state == "running" and w.session.answer_number == 1
    with qtbot.waitSignal(w.session_finished, timeout=20_000):
        pass
    assert w.session.run_state == "complete"
    assert len(w.session.trips) == 3 and w.session.last_trip is w.last_report
    w.reset()
    assert w.session.run_state == "idle"
    assert states[0] == "running" and "complete" in states and states[-1] == "idle"


def test_the_weights_kind_is_the_sessions_and_restarts_the_engine(qtbot, make_window):
    w = make_window()
    assert w.session.weights == "default" and w.bridge.options.get("weights") is None  # the machine's choice
    with qtbot.waitSignal(w.bridge.ready, timeout=30_000):
        w.models.choose_weights("int8")
        assert w.session.weights == "int8" and w.bridge.options["weights"] == "int8"
        assert not w.engine_ready()  # a fresh engine on the new weights is loading
    with pytest.raises(ValueError, match="weights"):
        w.models.choose_weights("int4")
    assert w.session.weights == "int8"
    with qtbot.waitSignal(w.bridge.ready, timeout=30_000):
        w.models.choose_weights("default")  # the int8 box switched off: the machine's choice again, not fp32
    assert w.session.weights == "default" and w.bridge.options["weights"] is None


def test_real_time_is_the_sessions_and_the_checkbox_shows_it(qtbot, make_window):
    """The "Real time" checkbox is a view: the session holds the mode, the checkbox and the stage follow it, and
    ticking the checkbox changes the session."""
    w = make_window()
    w.session.set_real_time(True)
    assert w.real_time_box.isChecked() and w.scene.real_time
    w.real_time_box.setChecked(False)
    assert w.session.real_time is False and not w.scene.real_time
    w.set_real_time(True)
    assert w.session.real_time and w.real_time_box.isChecked()


def test_the_engine_status_is_the_sessions(qtbot, make_window):
    """The session says whether the engine is ready, and whether it has an apprentice."""
    w = make_window(options={"fake_extras": True})
    assert w.session.engine_status == "ready" and w.engine_ready()
    assert w.session.apprentice_available == w.apprentice.is_available()
