"""The answer's progress lives in the session (issue 45, item 1): ``SessionState.answer`` (an ``Answer``),
``engine_info``, ``run_wanted``, ``trip_count`` and ``reports_received``. The runner records it there and decides the
pacing only; the readout, the plots, the toggles and the window's properties render from the session and follow
its changes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gui.live.state import Answer, Change, SessionState

# ---- the state, Qt-free ---------------------------------------------------------------------------------------


def test_an_answer_is_validated_and_changed_field_by_field():
    s = SessionState()
    seen: list[Change] = []
    s.subscribe(seen.append, "answer")
    assert s.answer == Answer() and s.answer.done and s.answer.main_request is None
    s.new_answer("s1-main", "def add(a, b):")
    s.set_answer(active=frozenset({"s1-main"}), text="    return", token_ids=(5, 6))
    assert s.answer == Answer(prompt="def add(a, b):", main_request="s1-main", done=False,
                              active=frozenset({"s1-main"}), text="    return", token_ids=(5, 6))
    assert [c.value.text for c in seen] == ["", "    return"] and seen[-1].old.text == ""
    before = s.snapshot()
    for bad in ({"done": "yes"}, {"active": {"s1-main"}}, {"token_ids": [1]}, {"loop_phrase": 3}, {"words": ""}):
        with pytest.raises(ValueError):
            s.set_answer(**bad)
    assert s.snapshot() == before and len(seen) == 2  # nothing changed, nobody told
    assert not s.set_answer(text="    return")  # the same value: no change, no event


def test_an_answer_knows_its_requests():
    a = Answer(main_request="s12-main", done=False)
    assert a.in_answer("s12-main") and a.in_answer("s12-seat3")
    assert not a.in_answer("s1-main") and not a.in_answer("s120-seat1") and not Answer().in_answer("s12-main")


def test_the_counts_engine_info_and_run_wanted():
    s = SessionState()
    fields = []
    s.subscribe(lambda c: fields.append(c.field))
    assert s.count_report() == 1 and s.count_report() == 2 and s.reports_received == 2
    s.set_trip_count(3)
    s.set_run_wanted(True)
    s.set_engine_info({"device": "cpu"})
    assert (s.trip_count, s.run_wanted, s.engine_info) == (3, True, {"device": "cpu"})
    assert fields == ["reports_received", "reports_received", "trip_count", "run_wanted", "engine_info"]
    for setter, bad in ((s.set_trip_count, -1), (s.set_trip_count, 1.5), (s.set_run_wanted, 1),
                        (s.set_engine_info, "ready")):
        with pytest.raises(ValueError):
            setter(bad)


def test_the_speedup_key_is_the_answers_prompt_and_the_settings():
    s = SessionState(batch=2)
    s.new_answer("s1-main", "a prompt")
    assert s.spec_key() == ("a prompt", 2, ("tp", 1), False)
    assert s.spec_key("another") == ("another", 2, ("tp", 1), False)


# ---- the runner records the progress in the session -----------------------------------------------------------


class _Bridge:
    def __init__(self):
        self.sent: list[tuple] = []

    def __getattr__(self, name):  # submit, grant, reset, free_run, set_max_batch...: kept, and accepted
        return lambda *args, **kwargs: self.sent.append((name, args)) or True


class _Seats:
    def __init__(self):
        self.requests: list[str] = []

    def add_request(self, rid, prompt, main=False):
        self.requests.append(rid)

    def clear(self):
        self.requests.clear()

    def seat_list(self):
        return []

    def add_tokens(self, tokens):
        return False

    def finish(self, rid):
        pass

    def add_prompt_chips(self, *args):
        pass


class _Jobs:
    def defer(self, job, key=None):
        job()

    def discard(self, key):
        return False

    def flush(self):
        pass


class _Scene:
    real_time = False

    def __init__(self):
        self.shown: list[dict] = []

    def show_trip(self, report):
        self.shown.append(report)

    def busy(self):
        return False


def _runner(batch: int = 1):
    from gui.live.controller import LiveController
    from gui.live.session import LiveRunner
    session, bridge, finished = SessionState(batch=batch), _Bridge(), []
    page = SimpleNamespace(step_button=SimpleNamespace(isHidden=lambda: False), seats=_Seats())
    meter = SimpleNamespace(reset=lambda: None, start_plain=lambda key: None)
    status = SimpleNamespace(set_status=lambda *a, **k: None, set_status_text=lambda text: None)
    runner = LiveRunner(session, bridge, LiveController(session, bridge), _Scene(), page, _Jobs(), meter, status,
                        lambda: ["a preset"], lambda: finished.append(True), 8)
    return runner, session, bridge, finished


def _report(rid: str, text: str, token_id: int) -> dict:
    return {"request_ids": [rid], "wall_ms": 5.0, "tokens_out": 1, "phase": "decode",
            "tokens": [{"request_id": rid, "text": text, "token_id": token_id}]}


def test_run_before_the_engine_is_ready_is_wanted_in_the_session_and_runs_when_it_is():
    runner, s, bridge, _ = _runner()
    s.set_prompt("hello")
    runner.run()
    assert s.run_wanted and s.answer.done and s.run_state == "idle"
    s.set_engine_info({"device": "cpu"})
    runner.on_engine_ready()
    assert not s.run_wanted and s.run_state == "running"
    assert s.answer.main_request == "s1-main" and s.answer.prompt == "hello" and not s.answer.done


def test_the_runner_records_requests_tokens_trips_and_the_end_in_the_session():
    runner, s, bridge, finished = _runner(batch=3)
    s.set_engine_info({"device": "cpu"})
    s.set_prompt("hello")
    runner.run()
    assert s.answer.active == {"s1-main", "s1-seat1", "s1-seat2"}  # the table's three seats, filled
    s.set_batch(4)  # a larger table: the runner follows the session and fills the new seat
    assert s.answer.active == {"s1-main", "s1-seat1", "s1-seat2", "s1-seat3"}
    runner.on_step(_report("s1-main", " world", 42))
    runner.on_trip_finished()
    assert (s.trip_count, s.reports_received, s.last_trip["tokens"][0]["token_id"]) == (1, 1, 42)
    assert s.answer.text == " world" and s.answer.token_ids == (42,)
    runner.on_step(_report("s0-main", " stale", 7))  # a report of another answer: received, not counted
    assert (s.trip_count, s.reports_received) == (1, 2)
    runner.on_finished({"request_id": "s1-seat1"})
    assert "s1-seat1" not in s.answer.active and not s.answer.done
    runner.on_finished({"request_id": "s1-main", "finish_reason": "length"})
    assert s.answer.done and s.answer.active == frozenset() and s.run_state == "complete" and finished
    runner.reset()
    assert s.trip_count == 0 and s.answer.main_request is None and s.answer.text == "" and s.run_state == "idle"


def test_a_loop_is_recorded_in_the_session():
    runner, s, _, finished = _runner()
    s.set_engine_info({"device": "cpu"})
    s.set_prompt("x")
    runner.run()
    for i in range(12):
        runner.on_step(_report("s1-main", " again and", i))
        runner.on_trip_finished()
        if s.answer.loop_phrase:
            break
    assert s.answer.loop_phrase and s.answer.done and s.run_state == "complete" and finished
    assert s.answer.text.count(s.answer.loop_phrase.strip()) <= 2  # two copies at most on screen


# ---- the views follow the session --------------------------------------------------------------------------------


def test_the_plots_and_the_readout_follow_the_trip_count(qtbot, make_window):
    w = make_window()
    s = w.session
    s.add_trip({"wall_ms": 8.0, "tokens_out": 2, "phase": "decode", "tokens": []})
    s.set_trip_count(s.trip_count + 1)
    assert list(w.trip_plot._x) == [1] and list(w.rate_plot._x) == [1]
    w.live_readout._on_stage_trip(s.last_trip)  # the stage starts that trip
    assert "8" in w.readout.text() and "tok/s" in w.readout.text()
    s.set_trip_count(0)  # Reset
    assert len(w.trip_plot._x) == 0 and len(w.rate_plot._x) == 0 and w.readout.text().startswith("Press Run")


def test_the_readout_and_the_model_line_follow_the_engine_info(qtbot, make_window):
    w = make_window()
    s = w.session
    assert "loading" not in w.readout.text() and w.engine_ready()
    info = s.engine_info
    s.set_engine_info(None)
    assert "loading" in w.readout.text() and w.model_label.text() == "Starting the model…" and not w.engine_ready()
    s.set_engine_info(info)
    assert "loading" not in w.readout.text() and w.model_label.text() != "Starting the model…"


def test_the_windows_answer_is_the_sessions(qtbot, make_window):
    w = make_window()
    w.session.set_answer(text="written", token_ids=(1, 2), loop_phrase="again")
    assert (w.answer_text, w.answer_token_ids, w.loop_phrase) == ("written", [1, 2], "again")


def test_the_idea_toggles_follow_the_extras(qtbot, make_window):
    w = make_window()
    button = w.live_page.exhibit.apprentice_button
    w.session.set_apprentice_available(False)
    w.live_readout.update_extras()
    assert not button.isEnabled()
    w.session.set_apprentice_available(True)
    with qtbot.waitSignal(w.live_readout.extras_shown, timeout=1000):
        w.live_readout.update_extras()
    assert button.isEnabled()
