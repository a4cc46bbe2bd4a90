"""The parts of a trip, measured: ``weight_read_ms`` brackets exactly the weight-reading ops, and per-layer timing
takes the same fast path as an untimed pass (model/timing.py, model/flat_forward.py, model/runner.py)."""

from __future__ import annotations

import time

import pytest
import torch
import torch.nn.functional as F

from model.sampling import SamplingParams
from tests.model.conftest import prompt_ids, run_to_end

GREEDY = SamplingParams(temperature=0.0)


class CountingTimer:
    """Counts begin/end pairs and fails on nesting or an end without a begin."""

    def __init__(self):
        self.pairs = 0
        self.open = False

    def begin(self):
        assert not self.open, "begin() inside an open bracket"
        self.open = True

    def end(self):
        assert self.open, "end() without begin()"
        self.open = False
        self.pairs += 1

    def ms(self):
        return 1.0


def _spy_timers(monkeypatch):
    import model.runner
    timers = []

    def make(device):
        timers.append(CountingTimer())
        return timers[-1]
    monkeypatch.setattr(model.runner, "read_timer", make)
    return timers


@pytest.mark.parametrize("readable", [False, True], ids=["flat", "modules"])
def test_every_weight_op_is_bracketed_once(make_engine, tiny, monkeypatch, readable):
    """Per target pass: one bracket per weight matrix (4 per layer), the LM head and the embedding gathers (one
    bracket on the flat path; the modules bracket wte and wpe apart), at batch 1, at batch 3 (oneDNN-packed
    GEMMs) and in prefill; none left open."""
    model, tok = tiny
    timers = _spy_timers(monkeypatch)
    engine = make_engine(max_batch=3)
    model.set_readable_attention(readable)
    try:
        engine.add_request(prompt_ids(9, 1, tok.vocab_size), max_new_tokens=4, sampling=GREEDY)
        engine.step()  # prefill alone, batch 1
        engine.add_request(prompt_ids(5, 2, tok.vocab_size), max_new_tokens=4, sampling=GREEDY)
        engine.add_request(prompt_ids(7, 3, tok.vocab_size), max_new_tokens=4, sampling=GREEDY)
        run_to_end(engine)
    finally:
        model.set_readable_attention(False)
    L = model.config.n_layer
    embed = 2 if readable else 1
    assert timers and all(t.pairs == 4 * L + 1 + embed and not t.open for t in timers), [t.pairs for t in timers]


def test_weight_read_is_positive_and_within_the_forward(make_engine, tiny):
    _, tok = tiny
    engine = make_engine(max_batch=4)
    for i in range(3):
        engine.add_request(prompt_ids(6 + 5 * i, i, tok.vocab_size), max_new_tokens=6, sampling=GREEDY)
    reports = run_to_end(engine)
    assert {r.phase for r in reports} >= {"prefill", "decode"}
    assert all(0 < r.weight_read_ms <= r.forward_ms for r in reports)


def _slowed(fn, seconds):
    def slow(*args, **kwargs):
        time.sleep(seconds)
        return fn(*args, **kwargs)
    return slow


def test_the_rest_is_not_counted_as_reading(make_engine, tiny, monkeypatch):
    """Layer norms slowed by 2 ms each: forward_ms grows by (2·n_layer + 1) × 2 ms, weight_read_ms does not."""
    model, tok = tiny
    engine = make_engine()
    engine.add_request(prompt_ids(8, 4, tok.vocab_size), max_new_tokens=3, sampling=GREEDY)
    engine.step()
    monkeypatch.setattr(F, "layer_norm", _slowed(F.layer_norm, 0.002))
    r = engine.step()
    assert r.phase == "decode"
    slept = (2 * model.config.n_layer + 1) * 2.0
    assert r.forward_ms >= slept
    assert r.weight_read_ms < r.forward_ms - slept + 0.5  # at most the unslowed rest's scale beside it


def test_the_reading_is_counted(make_engine, tiny, monkeypatch):
    """The batch-1 GEMVs slowed by 2 ms each (torch.addmm, the LM head's matmul): weight_read_ms holds the delay."""
    model, tok = tiny
    engine = make_engine()
    engine.add_request(prompt_ids(8, 5, tok.vocab_size), max_new_tokens=3, sampling=GREEDY)
    engine.step()
    monkeypatch.setattr(torch, "addmm", _slowed(torch.addmm, 0.002))
    r = engine.step()
    assert r.phase == "decode"
    assert r.weight_read_ms >= 4 * model.config.n_layer * 2.0


def test_speculative_steps_time_both_models(tiny):
    import copy

    from model.engine import Engine
    model, tok = tiny
    engine = Engine(model, tok)
    engine.set_draft(copy.deepcopy(model), tok)
    engine.set_draft_k(3)
    engine.add_request(prompt_ids(8, 6, tok.vocab_size), max_new_tokens=8, sampling=GREEDY)
    verify = [r for r in run_to_end(engine) if r.phase == "verify"]
    assert verify
    assert all(0 < r.weight_read_ms <= r.verify_ms for r in verify)
    assert all(0 < r.draft_weight_read_ms <= r.draft_ms for r in verify)


def test_layer_timing_takes_the_flat_path(make_engine, tiny, monkeypatch):
    """Per-layer timing runs the same flat cached forward as an untimed pass (the modules' path cost +61 % per
    trip), with one figure per layer inside forward_ms, and the same tokens."""
    from model.flat_forward import FlatForward
    from model.gpt2 import GPT2
    model, tok = tiny
    calls = {"flat": 0, "modules": 0}
    flat, modules = FlatForward.forward, GPT2._forward_modules

    def spy_flat(self, *a, **k):
        calls["flat"] += 1
        return flat(self, *a, **k)

    def spy_modules(self, *a, **k):
        calls["modules"] += 1
        return modules(self, *a, **k)
    monkeypatch.setattr(FlatForward, "forward", spy_flat)
    monkeypatch.setattr(GPT2, "_forward_modules", spy_modules)
    ids = {}
    for timed in (True, False):
        engine = make_engine(max_batch=2, layer_timing=timed)
        rids = [engine.add_request(prompt_ids(6 + 4 * i, 10 + i, tok.vocab_size), max_new_tokens=5, sampling=GREEDY)
                for i in range(2)]
        reports = run_to_end(engine)
        ids[timed] = [engine.finished[r].token_ids for r in rids]
        if timed:
            assert all(len(r.layer_ms) == model.config.n_layer and all(ms > 0 for ms in r.layer_ms)
                       and sum(r.layer_ms) <= r.forward_ms for r in reports)
        else:
            assert all(r.layer_ms == [] for r in reports)
    assert calls["modules"] == 0 and calls["flat"] > 0
    assert ids[True] == ids[False]
