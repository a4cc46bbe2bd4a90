"""The window's engine times layers on one trip in N (issue 34, item 3: timing every layer slowed the Live page's
trips), and the stage keeps the sampled shares for the trips in between."""

from __future__ import annotations

from model.service import EngineService


def test_layer_timing_on_one_trip_in_n(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path / "cache"))
    events: list[dict] = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 1, "layer_timing": True,
                         "layer_timing_every": 4, "draft_model_dir": str(tmp_path / "none")}, events.append)
    svc.handle({"op": "submit", "request_id": "a", "prompt": "hello", "max_new_tokens": 9, "temperature": 0.0})
    svc.handle({"op": "free_run", "on": True})
    while svc.wants_step():
        svc.step()
    steps = [e["report"] for e in events if e["type"] == "step"]
    timed = [i for i, r in enumerate(steps) if r["layer_ms"]]
    assert len(steps) == 9 and timed == [0, 4, 8]
    assert all(len(steps[i]["layer_ms"]) == svc.engine.config.n_layer for i in timed)


def test_every_trip_when_asked(tiny_model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path / "cache"))
    events: list[dict] = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 1, "layer_timing": True,
                         "draft_model_dir": str(tmp_path / "none")}, events.append)
    svc.handle({"op": "submit", "request_id": "a", "prompt": "hello", "max_new_tokens": 3, "temperature": 0.0})
    svc.handle({"op": "free_run", "on": True})
    while svc.wants_step():
        svc.step()
    steps = [e["report"] for e in events if e["type"] == "step"]
    assert len(steps) == 3  # greedy "hello", 3 new tokens: the prefill trip and two decode trips (as above: 9 -> 9)
    n_layer = svc.engine.config.n_layer
    assert all(len(r["layer_ms"]) == n_layer and all(ms > 0 for ms in r["layer_ms"]) for r in steps)


def test_window_asks_for_sampled_layer_timing():
    from gui.app import LAYER_TIMING_EVERY, engine_options
    opts = engine_options(None)
    assert opts["layer_timing_every"] == LAYER_TIMING_EVERY > 1


def test_stage_keeps_the_sampled_layer_shares(qapp):
    from animations.stage.scene import StageScene
    scene = StageScene()
    scene.configure([1000, 1000, 1000, 1000], 4096, 16, "m", 500)
    n = len(scene._warehouse.bars)
    timed = {"layer_ms": [1.0, 3.0, 1.0, 3.0][:n]}
    first = scene._layer_shares(timed)
    assert scene._layer_shares({"layer_ms": []}) == first  # the sampled trip's shares, not equal ones
    fresh = StageScene()
    fresh.configure([1000, 1000, 1000, 1000], 4096, 16, "m", 500)
    assert fresh._layer_shares({}) == [(i + 1) / n for i in range(n)]  # no sample yet: equal shares
