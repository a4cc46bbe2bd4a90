"""The engine process protocol (model/service.py): driven in-process with a list as ``emit``, then once for real
in a spawned process, as the GUI starts it.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import time

import pytest

from model.service import EngineService, engine_main

READY_KEYS = {"type", "model", "threads", "device", "memory_bandwidth_bytes_per_s", "kv_bytes_per_block",
              "block_size", "num_blocks"}


@pytest.fixture
def options(tiny_model_dir, tmp_path):
    return {"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 4, "layer_timing": False,
            "draft_model_dir": str(tmp_path / "no-draft")}


@pytest.fixture(scope="module")
def shared_service(tiny_model_dir, tmp_path_factory):
    """One service for the in-process tests (its construction measures memory bandwidth, so build it once)."""
    events: list[dict] = []
    options = {"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 4, "layer_timing": False,
               "draft_model_dir": str(tmp_path_factory.mktemp("nodraft") / "none")}
    return EngineService(options, events.append), events


@pytest.fixture
def service(shared_service):
    svc, events = shared_service
    svc.handle({"op": "reset"})
    svc.handle({"op": "free_run", "on": False})
    events.clear()
    return svc, events


def drive(svc, limit: int = 500) -> int:
    """Run passes while the service wants them, as engine_main's loop does. Returns how many ran."""
    n = 0
    while svc.wants_step() and n < limit:
        svc.step()
        n += 1
    return n


def of_type(events, kind):
    return [e for e in events if e["type"] == kind]


def test_ready_event(service):
    svc, _ = service
    ready = svc.ready_event()
    assert READY_KEYS <= set(ready) and ready["type"] == "ready"
    assert ready["model"]["n_layer"] == 2 and ready["threads"] == 1 and ready["device"] == "cpu"
    assert ready["memory_bandwidth_bytes_per_s"] > 0 and ready["num_blocks"] >= 8
    assert ready["kv_bytes_per_block"] == 2 * 2 * 32 * 4 * ready["block_size"]


def test_ready_event_names_the_floor_that_applies_and_the_apprentices(service):
    svc, _ = service
    ready = svc.ready_event()
    floor = ready["floor"]
    assert floor["applies"] in ("cache", "dram")
    assert floor["floor_ms"] == floor[f"{floor['applies']}_floor_ms"] > 0
    assert ready["memory_bandwidth_bytes_per_s"] == floor["bandwidth_bytes_per_s"]
    assert floor["weight_bytes"] == ready["model"]["weight_bytes"]
    assert ready["draft_kinds"] == ["ngram"] and ready["draft_kind"] == "ngram"  # no draft model in this fixture


def test_the_window_can_pick_the_ngram_apprentice(service):
    svc, events = service
    try:
        svc.handle({"op": "set_draft_k", "k": 3, "kind": "model"})  # no draft model here
        assert "no draft model" in of_type(events, "error")[-1]["message"] and svc.engine.draft_k == 0
        svc.handle({"op": "set_draft_kind", "kind": "teacher"})
        assert "'model' or 'ngram'" in of_type(events, "error")[-1]["message"]
        events.clear()
        svc.handle({"op": "set_draft_k", "k": 3, "kind": "ngram"})
        assert not of_type(events, "error") and svc.engine.draft_kind == "ngram" and svc.engine.draft_k == 3
        svc.handle({"op": "submit", "request_id": "a", "prompt": "ab ab ab ab ab ab ab", "max_new_tokens": 12})
        svc.handle({"op": "free_run", "on": True})
        drive(svc)
        reports = [e["report"] for e in of_type(events, "step")]
        verify = [r for r in reports if r["phase"] == "verify"]
        assert verify and all(r["draft_kind"] == "ngram" and r["proposed"] >= 1 for r in verify)
        (fin,) = of_type(events, "finished")
        assert fin["finish_reason"] != "length" or sum(r["tokens_out"] for r in reports) == 12
    finally:
        svc.handle({"op": "set_draft_k", "k": 0, "kind": "ngram"})


def test_submit_is_accepted(service):
    svc, events = service
    svc.handle({"op": "submit", "request_id": "a", "prompt": "The quick brown fox", "max_new_tokens": 5})
    (accepted,) = of_type(events, "accepted")
    assert accepted["request_id"] == "a"
    assert accepted["prompt_token_ids"] == svc.engine.tokenizer.encode("The quick brown fox")
    assert len(accepted["prompt_labels"]) == len(accepted["prompt_token_ids"])
    assert not any("Ġ" in label for label in accepted["prompt_labels"])
    assert not of_type(events, "step")  # nothing runs without a grant


def test_grant_n_gives_exactly_n_steps(service):
    svc, events = service
    svc.handle({"op": "submit", "request_id": "a", "prompt": "hello", "max_new_tokens": 20})
    assert drive(svc) == 0
    svc.handle({"op": "grant", "n": 3})
    assert drive(svc) == 3
    assert len(of_type(events, "step")) == 3
    svc.handle({"op": "grant", "n": 2})
    assert drive(svc) == 2
    steps = of_type(events, "step")
    assert [s["report"]["step"] for s in steps] == list(range(steps[0]["report"]["step"],
                                                              steps[0]["report"]["step"] + 5))
    assert not of_type(events, "finished")


def test_grants_beyond_the_work_are_not_spent_on_nothing(service):
    svc, events = service
    svc.handle({"op": "submit", "request_id": "a", "prompt": "hi", "max_new_tokens": 3})
    svc.handle({"op": "grant", "n": 50})
    assert drive(svc) == 3
    (fin,) = of_type(events, "finished")
    assert fin["request_id"] == "a" and fin["finish_reason"] in ("length", "stop")
    assert events[-1]["type"] == "idle"
    svc.handle({"op": "grant", "n": 1000})
    assert svc.grants <= 64  # capped


def test_free_run(service):
    svc, events = service
    for rid in ("a", "b"):
        svc.handle({"op": "submit", "request_id": rid, "prompt": rid, "max_new_tokens": 4})
    svc.handle({"op": "free_run", "on": True})
    assert drive(svc) >= 4
    assert {e["request_id"] for e in of_type(events, "finished")} == {"a", "b"}


def test_reset_drops_work(service):
    svc, events = service
    for rid in ("a", "b"):
        svc.handle({"op": "submit", "request_id": rid, "prompt": "reset me", "max_new_tokens": 30})
    svc.handle({"op": "grant", "n": 10})
    svc.step()
    svc.handle({"op": "reset"})
    assert not svc.engine.has_work() and svc.grants == 0 and not svc.wants_step()
    assert svc.engine.blocks_in_use == 0
    svc.handle({"op": "grant", "n": 5})
    assert drive(svc) == 0
    # the ids can be used again after a reset, and the service still runs
    svc.handle({"op": "submit", "request_id": "a", "prompt": "again", "max_new_tokens": 2})
    assert drive(svc) == 2


@pytest.mark.parametrize("cmd", [
    {"op": "submit", "prompt": "x", "max_new_tokens": "many"},
    {"op": "submit", "prompt": "x", "max_new_tokens": 0},
    {"op": "submit", "prompt": "x", "temperature": "hot"},
    {"op": "submit", "prompt": "x", "temperature": -1},
    {"op": "submit", "prompt": "x", "top_p": 5},
    {"op": "submit", "prompt": "x", "top_k": -2},
    {"op": "submit", "prompt": "x", "seed": "abc"},
    {"op": "submit", "prompt": "x", "max_new_tokens": None},
    {"op": "set_max_batch", "n": 0},
    {"op": "set_max_batch", "n": "x"},
    {"op": "grant", "n": "lots"},
    {"op": "launch_rockets"},
    {"nope": 1},
    None,
    [1, 2],
    "submit",
])
def test_bad_command_gives_error_and_service_keeps_working(service, cmd):
    svc, events = service
    svc.handle(cmd)
    errors = of_type(events, "error")
    assert len(errors) == 1 and errors[0]["message"]
    assert not of_type(events, "accepted")
    svc.handle({"op": "submit", "request_id": "ok", "prompt": "still here", "max_new_tokens": 2})
    svc.handle({"op": "grant", "n": 5})
    assert drive(svc) == 2
    assert of_type(events, "finished")[-1]["request_id"] == "ok"


def test_an_id_reused_after_it_finished_is_reported_again(service):
    svc, events = service
    for _ in range(2):
        svc.handle({"op": "submit", "request_id": "same", "prompt": "again and again", "max_new_tokens": 2})
        svc.handle({"op": "grant", "n": 2})
        drive(svc)
    assert [e["request_id"] for e in of_type(events, "finished")] == ["same", "same"]
    assert not svc.engine.finished  # reported results are not kept forever


def test_duplicate_request_id_is_an_error(service):
    svc, events = service
    svc.handle({"op": "submit", "request_id": "dup", "prompt": "a", "max_new_tokens": 5})
    svc.handle({"op": "submit", "request_id": "dup", "prompt": "b", "max_new_tokens": 5})
    assert len(of_type(events, "accepted")) == 1 and len(of_type(events, "error")) == 1


def test_set_max_batch_through_the_protocol(service):
    svc, events = service
    svc.handle({"op": "set_max_batch", "n": 1})
    for rid in ("a", "b", "c"):
        svc.handle({"op": "submit", "request_id": rid, "prompt": rid * 3, "max_new_tokens": 3})
    svc.handle({"op": "grant", "n": 2})
    drive(svc)
    assert all(e["report"]["batch"] == 1 for e in of_type(events, "step"))
    svc.handle({"op": "set_max_batch", "n": 3})
    svc.handle({"op": "grant", "n": 1})
    drive(svc)
    assert of_type(events, "step")[-1]["report"]["batch"] == 3
    svc.handle({"op": "set_max_batch", "n": 4})


def test_events_are_plain_data(service):
    """Everything emitted crosses a process boundary: only dicts, lists, str, int, float, bool, None."""
    svc, events = service
    svc.handle({"op": "submit", "request_id": "p", "prompt": "plain 😀", "max_new_tokens": 3})
    svc.handle({"op": "grant", "n": 3})
    drive(svc)

    def plain(x):
        if isinstance(x, dict):
            return all(isinstance(k, str) and plain(v) for k, v in x.items())
        if isinstance(x, (list, tuple)):
            return all(plain(v) for v in x)
        return x is None or isinstance(x, (str, int, float, bool))

    assert all(plain(e) for e in events)


def test_missing_model_is_fatal_in_process(tmp_path):
    from model.errors import ModelLoadError
    with pytest.raises(ModelLoadError):
        EngineService({"model_dir": str(tmp_path / "none"), "threads": 1}, lambda e: None)


# ---- the real process -------------------------------------------------------------------------------------------

def _next_event(events, kind: str, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {kind!r} event within {timeout} s")
        event = events.get(timeout=left)
        if event["type"] in ("fatal",) and kind != "fatal":
            raise AssertionError(f"engine process failed: {event}")
        if event["type"] == kind:
            return event


def test_spawned_engine_process(options):
    ctx = mp.get_context("spawn")
    commands, events = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=engine_main, args=(commands, events, options), daemon=True)
    proc.start()
    try:
        ready = _next_event(events, "ready", timeout=120)
        assert READY_KEYS <= set(ready)
        commands.put({"op": "submit", "request_id": "r", "prompt": "one trip", "max_new_tokens": 10})
        assert _next_event(events, "accepted", timeout=30)["request_id"] == "r"
        commands.put({"op": "grant", "n": 3})
        steps = [_next_event(events, "step", timeout=30) for _ in range(3)]
        assert [s["report"]["tokens_out"] for s in steps] == [1, 1, 1]
        with pytest.raises(queue.Empty):  # exactly three: no fourth pass without a grant
            while True:
                event = events.get(timeout=0.5)
                assert event["type"] != "step", event
        commands.put({"op": "bogus"})
        assert _next_event(events, "error", timeout=30)["message"]
        t0 = time.monotonic()
        commands.put({"op": "shutdown"})
        proc.join(timeout=5)
        assert not proc.is_alive(), "engine process did not exit within 5 s of shutdown"
        assert proc.exitcode == 0
        assert time.monotonic() - t0 < 5
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()


def test_spawned_engine_reports_fatal_for_missing_model(options, tmp_path):
    ctx = mp.get_context("spawn")
    commands, events = ctx.Queue(), ctx.Queue()
    options = dict(options, model_dir=str(tmp_path / "missing"))
    proc = ctx.Process(target=engine_main, args=(commands, events, options), daemon=True)
    proc.start()
    try:
        fatal = _next_event(events, "fatal", timeout=120)
        assert "missing" in fatal["message"]
        proc.join(timeout=10)
        assert proc.exitcode == 0
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()


def test_queued_sharding_changes_collapse_to_the_last_one():
    import queue as queue_mod

    from model.service import coalesce

    waiting = queue_mod.Queue()
    for cmd in ({"op": "set_sharding", "mode": "pp", "n": 4}, {"op": "grant", "n": 1},
                {"op": "set_sharding", "mode": "tp", "n": 2}, {"op": "set_max_batch", "n": 3}):
        waiting.put(cmd)
    first = {"op": "set_sharding", "mode": "tp", "n": 4}
    batch = coalesce(first, waiting)
    assert batch == [{"op": "grant", "n": 1}, {"op": "set_sharding", "mode": "tp", "n": 2},
                     {"op": "set_max_batch", "n": 3}]
    assert waiting.empty()
    lone = coalesce({"op": "grant", "n": 2}, waiting)
    assert lone == [{"op": "grant", "n": 2}]


# ---- a tour analysis between commands ---------------------------------------------------------------------------

def _events_of(events: queue.Queue) -> list[dict]:
    out = []
    while True:
        try:
            out.append(events.get_nowait())
        except queue.Empty:
            return out


def test_a_shutdown_behind_a_tour_analysis_ends_the_engine_before_the_analysis(options):
    """The kiosk's tour asks for its measurements as soon as the engine is ready, and an operator may leave at once:
    the engine used to measure all twelve kinds first (the kiosk's exit took 1.0-1.6 s instead of 0.3 s on the tiny
    model, seconds on a bundled book). Both commands wait when the loop starts: the shutdown is served first."""
    from model.teaching.analysis import KINDS

    commands, events = queue.Queue(), queue.Queue()
    commands.put({"op": "analyze", "analysis_id": "t1", "kind": "tour", "prompt": "one trip"})
    commands.put({"op": "shutdown"})
    engine_main(commands, events, options)  # returns: the loop ended
    assert len(KINDS) > 1
    assert [e["type"] for e in _events_of(events)] == ["ready"]  # no analysis was finished or sent


def test_a_tour_analysis_is_measured_a_kind_at_a_time_with_commands_served_between(options):
    """A command that comes behind a tour analysis is answered before the analysis ends, and the analysis still
    brings every kind."""
    import threading

    from model.teaching.analysis import KINDS

    commands, events = queue.Queue(), queue.Queue()
    commands.put({"op": "analyze", "analysis_id": "t2", "kind": "tour", "prompt": "one trip"})
    commands.put({"op": "bogus"})
    loop = threading.Thread(target=engine_main, args=(commands, events, options), daemon=True)
    loop.start()
    seen = []
    try:
        while not seen or seen[-1]["type"] != "analysis":
            seen.append(events.get(timeout=120))
    finally:
        commands.put({"op": "shutdown"})
        loop.join(timeout=30)
    assert not loop.is_alive()
    kinds = [e["type"] for e in seen]
    assert "error" in kinds and kinds.index("error") < kinds.index("analysis"), kinds
    analysis = seen[-1]
    assert analysis["analysis_id"] == "t2" and analysis["kind"] == "tour" and set(analysis["data"]) == set(KINDS)
    assert analysis["elapsed_ms"] > 0
