"""The Live session's state without Qt: validation, change events, the bounded history of trips."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gui.live.state import FIELDS, HISTORY, Change, Sampling, SessionState


def test_importing_the_state_brings_no_qt():
    code = ("import sys, gui.live.state; bad = [m for m in sys.modules if m.startswith(('PySide6', 'shiboken'))];"
            " print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_defaults():
    s = SessionState()
    assert (s.batch, s.draft_k, s.draft_kind, s.sharding) == (1, 0, "ngram", ("tp", 1))
    assert s.run_state == "idle" and s.prompt == "" and s.answer_number == 0 and s.trips == ()
    assert s.weights == "default"
    assert s.sampling == Sampling(0.8, 0.95, None, False)


@pytest.mark.parametrize("call, message", [
    (lambda s: s.set_batch(0), "batch must be 1-16"),
    (lambda s: s.set_batch(17), "batch must be 1-16"),
    (lambda s: s.set_batch("4"), "whole number"),
    (lambda s: s.set_batch(True), "whole number"),
    (lambda s: s.set_draft_k(9), "draft_k must be 0-8"),
    (lambda s: s.set_draft_k(-1), "draft_k must be 0-8"),
    (lambda s: s.set_draft_kind("oracle"), "draft kind"),
    (lambda s: s.set_sharding("dp", 2), "tp or pp"),
    (lambda s: s.set_sharding("tp", 0), "shards must be 1-4"),
    (lambda s: s.set_sampling(temperature=-0.1), "temperature"),
    (lambda s: s.set_sampling(top_p=0), "top_p"),
    (lambda s: s.set_sampling(top_p=1.5), "top_p"),
    (lambda s: s.set_sampling(seed="7"), "seed"),
    (lambda s: s.set_sampling(greedy="yes"), "greedy"),
    (lambda s: s.set_sampling(temprature=1.0), "no sampling field"),
    (lambda s: s.set_run_state("stopped"), "run state"),
    (lambda s: s.set_weights("int4"), "weights must be one of default, fp32, fp16, int8"),
    (lambda s: s.set_trip_seconds(0.1), "trip seconds"),
    (lambda s: s.set_trip_seconds(3.5), "trip seconds"),
    (lambda s: s.set_prompt(None), "the prompt must be text"),
    (lambda s: s.set_model_key(""), "model key"),
    (lambda s: s.add_trip([1, 2]), "step report"),
    (lambda s: s.subscribe(print, "batchh"), "no field"),
])
def test_bad_values_raise_a_clear_error_and_change_nothing(call, message):
    s = SessionState()
    seen = []
    s.subscribe(seen.append)
    before = s.snapshot()
    with pytest.raises(ValueError, match=message):
        call(s)
    assert s.snapshot() == before
    assert seen == []


def test_a_change_emits_one_event_with_old_and_new_value():
    s = SessionState()
    seen, batches = [], []
    s.subscribe(seen.append)
    s.subscribe(batches.append, "batch")
    assert s.set_batch(4) is True
    assert s.set_batch(4) is False  # unchanged: no event
    s.set_draft_k(3)
    s.set_sharding("pp", 2)
    assert batches == [Change("batch", 4, 1)]
    assert [c.field for c in seen] == ["batch", "draft_k", "sharding"]
    assert seen[2] == Change("sharding", ("pp", 2), ("tp", 1))


def test_sampling_changes_keep_the_other_fields_and_give_request_arguments():
    s = SessionState(sampling=Sampling(temperature=0.7, top_p=0.9))
    s.set_seed(12)
    assert s.sampling.request(12) == {"temperature": 0.7, "top_p": 0.9, "seed": 12}
    s.set_greedy(True)
    assert s.sampling == Sampling(0.7, 0.9, 12, True)
    assert s.sampling.request(12) == {"temperature": 0.0, "top_p": 1.0, "seed": None}


def test_unsubscribe_stops_the_events():
    s = SessionState()
    seen = []
    stop = s.subscribe(seen.append, "run_state")
    s.set_run_state("running")
    stop()
    s.set_run_state("paused")
    assert [c.value for c in seen] == ["running"]
    assert s.run_state == "paused" and not s.is_running()


def test_the_prompt_is_cut_to_its_limit():
    s = SessionState()
    s.set_prompt("x" * 5000)
    assert len(s.prompt) == 2000


def test_trips_are_a_bounded_history_and_a_new_answer_forgets_them():
    s = SessionState(history=3)
    events = []
    s.subscribe(events.append, "trips")
    for i in range(5):
        s.add_trip({"wall_ms": float(i)})
    assert [t["wall_ms"] for t in s.trips] == [2.0, 3.0, 4.0]
    assert s.last_trip == {"wall_ms": 4.0}
    assert len(events) == 5 and len(events[-1].value) == 3
    assert s.start_answer() == 1 and s.answer_number == 1
    assert s.trips == () and s.last_trip is None
    assert SessionState().history == HISTORY


def test_every_field_is_readable_and_in_the_snapshot():
    s = SessionState()
    for field in FIELDS:
        getattr(s, field)
    assert set(s.snapshot()) == set(FIELDS)


def test_real_time_is_a_validated_field():
    s = SessionState()
    seen = []
    s.subscribe(seen.append, "real_time")
    assert s.real_time is False
    assert s.set_real_time(True) and s.real_time is True
    assert not s.set_real_time(True)
    assert [(c.value, c.old) for c in seen] == [(True, False)]
    with pytest.raises(ValueError, match="real time"):
        s.set_real_time(1)


def test_engine_status_and_its_error_go_together():
    s = SessionState()
    seen = []
    s.subscribe(lambda c: seen.append((c.field, c.value)))
    assert s.engine_status == "stopped" and s.engine_error is None and not s.is_engine_ready()
    s.set_engine_status("loading")
    s.set_engine_status("failed", "no weights here")
    assert s.engine_error == "no weights here"
    s.set_engine_status("ready")
    assert s.is_engine_ready() and s.engine_error is None
    assert seen == [("engine_status", "loading"), ("engine_error", "no weights here"),
                    ("engine_status", "failed"), ("engine_error", None), ("engine_status", "ready")]
    for bad in (lambda: s.set_engine_status("asleep"), lambda: s.set_engine_status("failed"),
                lambda: s.set_engine_status("ready", "why")):
        with pytest.raises(ValueError, match="engine"):
            bad()
    assert s.is_engine_ready()


def test_apprentice_availability_is_a_validated_field():
    s = SessionState()
    assert s.apprentice_available is False
    assert s.set_apprentice_available(True) and s.apprentice_available
    with pytest.raises(ValueError, match="apprentice"):
        s.set_apprentice_available("yes")
