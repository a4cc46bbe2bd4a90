"""Tearing the book for real: sharded passes over worker processes equal the unsharded engine, and a worker that
dies, hangs or is closed mid-decode never leaves a process behind.

One small random GPT-2 (4 heads, 4 layers, 32 wide) so every degree (TP 2 and 4, PP 2 and 4) is possible; the
runners are started once per module and shared (a forkserver makes every start after the first cheap).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time

import psutil
import pytest
import torch
from tokenizers import Tokenizer as HFTokenizer

from model.checkpoint import load_pretrained, save_pretrained
from model.engine import Engine
from model.errors import ShardingError
from model.gpt2 import GPT2Config
from model.parallel import ShardedRunner, shard_state, split_layers, tp_degrees
from model.parallel import runner as parallel  # the runner looks up free_port in its own module
from model.tokenizer import EOS_TEXT
from tests.model.conftest import lively_gpt2, prompt_ids

DEGREES = [("tp", 2), ("tp", 4), ("pp", 2), ("pp", 4)]
KV_BUDGET = 32 * 16 * 1024  # 32 blocks of 16 tokens at 1 KiB per token (2 × 4 layers × 4 heads × 8 × fp32)
MAX_NEW = 8


def gone(pids) -> list[int]:
    """The pids among ``pids`` that still exist (alive, or zombies nobody reaped)."""
    left = []
    for pid in pids:
        try:
            psutil.Process(pid).status()
            left.append(pid)
        except psutil.NoSuchProcess:
            pass
    return left


def wait_gone(pids, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := gone(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, tokenizer_json):
    tok = HFTokenizer.from_file(str(tokenizer_json))
    eos = tok.token_to_id(EOS_TEXT)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=128, n_embd=32, n_layer=4, n_head=4,
                        bos_token_id=eos, eos_token_id=eos, name="tiny4")
    return save_pretrained(lively_gpt2(config, seed=3), tmp_path_factory.mktemp("tiny4") / "tiny4", tokenizer_json)


@pytest.fixture(scope="module")
def tiny4(model_dir):
    return load_pretrained(model_dir)


def make_engine(tiny4, **kw) -> Engine:
    model, tokenizer = tiny4
    return Engine(model, tokenizer, kv_budget_bytes=KV_BUDGET, max_batch=3, **kw)


def prompts(tiny4, batch: int) -> list[list[int]]:
    model, tokenizer = tiny4
    lengths = [18, 5, 11][:batch]  # two blocks, one partial block, one in between
    return [prompt_ids(n, seed=10 + i, vocab=tokenizer.vocab_size, avoid=tokenizer.eos_token_id)
            for i, n in enumerate(lengths)]


def decode(engine: Engine, batch_prompts) -> tuple[dict, dict]:
    """Greedy tokens and every sampled row of logits, per request id."""
    engine.record_logits = True
    ids = [engine.add_request(p, max_new_tokens=MAX_NEW) for p in batch_prompts]
    while engine.has_work():
        engine.step()
    return ({r: engine.finished[r].token_ids for r in ids},
            {r: torch.stack(engine.logits[r]) for r in ids})


@pytest.fixture(scope="module")
def reference(tiny4):
    return {b: decode(make_engine(tiny4), prompts(tiny4, b)) for b in (1, 3)}


@pytest.fixture(scope="module")
def tiny4_fp16(tiny4):
    """The tiny model with fp16 weights (model/quantize.py: to_fp16), a copy."""
    import copy

    from model.quantize import to_fp16
    return to_fp16(copy.deepcopy(tiny4[0])), tiny4[1]


@pytest.fixture(scope="module")
def reference_fp16(tiny4_fp16):
    return {b: decode(make_engine(tiny4_fp16), prompts(tiny4_fp16, b)) for b in (1, 3)}


@pytest.fixture(scope="module")
def runners(tiny4):
    """(mode, n) -> a running ShardedRunner on the tiny model, started on first use, closed at the end."""
    started: dict[tuple[str, int, str], ShardedRunner] = {}
    geometry = make_engine(tiny4)

    def get(mode: str, n: int, weights: str = "fp32") -> ShardedRunner:
        if (mode, n, weights) not in started:
            started[(mode, n, weights)] = ShardedRunner.from_engine(geometry, mode, n, weights=weights)
        return started[(mode, n, weights)]

    yield get
    pids = [pid for r in started.values() for pid in r.pids]
    for r in started.values():
        r.close()
    assert wait_gone(pids) == []


# ---- pure helpers -------------------------------------------------------------------------------------------

def test_degrees_and_stages():
    assert tp_degrees(4, 4) == [1, 2, 4]
    assert tp_degrees(12, 4) == [1, 2, 3, 4]
    assert tp_degrees(4, 2) == [1, 2]
    assert split_layers(4, 2) == [(0, 2), (2, 4)]
    assert split_layers(5, 2) == [(0, 3), (3, 5)]
    assert split_layers(4, 4) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    with pytest.raises(ValueError):
        split_layers(4, 5)


def test_tp_shards_split_heads_inside_q_k_v(tiny4):
    model, _ = tiny4
    cfg = model.config
    state = model.state_dict()
    C, hs = cfg.n_embd, cfg.head_dim
    shard = shard_state(state, cfg, "tp", 2, rank=1)
    w = state["h.0.attn.c_attn.weight"]  # (3C, C): Q rows, then K rows, then V rows
    got = shard["h.0.attn.c_attn.weight"]  # (3C/2, C)
    for j in range(3):  # rank 1 holds heads 2 and 3 of Q, of K and of V
        assert torch.equal(got[j * C // 2:(j + 1) * C // 2], w[j * C + 2 * hs:j * C + 4 * hs])
    assert torch.equal(shard["h.0.attn.c_proj.weight"], state["h.0.attn.c_proj.weight"][:, 2 * hs:4 * hs])
    assert torch.equal(shard["h.0.mlp.c_fc.weight"], state["h.0.mlp.c_fc.weight"][2 * C:])
    held = sum(t.numel() for t in shard.values())
    replicated = sum(t.numel() for k, t in state.items() if "ln_" in k or k in ("wte.weight", "wpe.weight")
                     or k.endswith("c_proj.bias"))
    assert held == replicated + (sum(t.numel() for t in state.values()) - replicated) // 2


@pytest.mark.parametrize("weights", ["fp32", "fp16"])
def test_a_workers_shard_multiplies_through_the_weight_multiply(tiny4, weights):
    """What a worker does to its shard (model/parallel/worker.py): no ``nn.Linear`` is left, every projection is a
    module of model/quantize.py that multiplies through model/weight_mm.py, and its products are the linears'."""
    import torch.nn as nn

    from model.parallel.shard import _Shard
    from model.quantize import Fp16Linear, MatrixLinear, fp16_modules, matrix_modules
    model, _ = tiny4
    shard = _Shard(model.config, "tp", 2, 0)
    shard.load_state_dict(shard_state(model.state_dict(), model.config, "tp", 2, 0), strict=True)
    before = shard.h[0].mlp.c_fc
    weight = before.weight.detach().clone()  # [out, in]
    x = torch.randn(3, model.config.n_embd, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        want = before(x)
        (fp16_modules if weights == "fp16" else matrix_modules)(shard)
        got = shard.h[0].mlp.c_fc(x)
    assert not any(isinstance(m, nn.Linear) for m in shard.modules())
    kind = Fp16Linear if weights == "fp16" else MatrixLinear
    assert all(isinstance(b.attn.c_attn, kind) and isinstance(b.mlp.c_proj, kind) for b in shard.h)
    if weights == "fp32":
        assert torch.allclose(got, want, atol=1e-5)
    else:
        # each weight rounded to fp16 (and the input, where the kernel rounds it too) moves each term of a product
        # by at most 2^-11 of it: a bound that follows the products' size (a fixed 2e-3 failed 4 of 300 random
        # inputs on this model, whose outputs reach 5)
        bound = 2 * 2.0**-11 * (x.abs() @ weight.abs().T) + 1e-5
        assert ((got - want).abs() <= bound).all(), ((got - want).abs() / bound).max()


def test_pp_shards_hold_only_their_layers(tiny4):
    model, _ = tiny4
    cfg, state = model.config, model.state_dict()
    first = shard_state(state, cfg, "pp", 2, rank=0)
    last = shard_state(state, cfg, "pp", 2, rank=1)
    assert {k.split(".")[1] for k in first if k.startswith("h.")} == {"0", "1"}
    assert {k.split(".")[1] for k in last if k.startswith("h.")} == {"2", "3"}
    assert "wpe.weight" in first and "ln_f.weight" not in first
    assert "ln_f.weight" in last and "wte.weight" in last and "wpe.weight" not in last  # the tied LM head


# ---- sharded = unsharded ------------------------------------------------------------------------------------

PRECISION_DEGREES = [(m, n, "fp32") for m, n in DEGREES] + [("tp", 2, "fp16"), ("pp", 2, "fp16")]


@pytest.mark.parametrize("mode,n,weights", PRECISION_DEGREES, ids=[f"{m}{n}-{w}" for m, n, w in PRECISION_DEGREES])
def test_sharded_equals_unsharded(request, mode, n, weights, runners):
    """Sharded = one process, in fp32 and in fp16 (the workers convert their shards, model/quantize.py, and
    multiply through model/weight_mm.py): the same tokens, logits within float rounding."""
    tiny4 = request.getfixturevalue("tiny4" if weights == "fp32" else "tiny4_fp16")
    reference = request.getfixturevalue("reference" if weights == "fp32" else "reference_fp16")
    runner = runners(mode, n, weights)
    full = tiny4[0].weight_bytes()
    assert all(0 < w < full for w in runner.weight_bytes)  # each worker holds a shard, not the book
    if weights == "fp16":  # the workers really hold fp16 matrices (biases and norms stay fp32)
        assert sum(runner.weight_bytes) < 0.6 * sum(runners(mode, n).weight_bytes)
    for batch in (1, 3):
        engine = make_engine(tiny4)
        engine.set_runner(runner)
        tokens, logits = decode(engine, prompts(tiny4, batch))
        ref_tokens, ref_logits = reference[batch]
        assert tokens == ref_tokens
        for rid in ref_logits:
            assert torch.allclose(logits[rid], ref_logits[rid], atol=1e-4, rtol=0), (
                f"{mode}{n} batch {batch} {rid}: max diff {(logits[rid] - ref_logits[rid]).abs().max():.2e}")
        workers = engine.last_workers
        assert [w["rank"] for w in workers] == list(range(n))
        for w in workers:
            assert w["compute_ms"] > 0 and w["comm_ms"] > 0 and w["bubble_ms"] >= 0
            assert 0 < w["weight_read_ms"] <= w["compute_ms"]  # its own GEMVs, head, gathers (model/timing.py)
            assert w["weight_bytes"] == runner.weight_bytes[w["rank"]]
            if mode == "tp":
                assert w["bubble_ms"] == 0
    if mode == "pp":
        assert sum(w["bubble_ms"] for w in workers) > 0  # someone waited: the pipeline's fill and drain


def test_switching_back_and_forth_recomputes_the_kv(tiny4, reference, runners):
    """Half the decode on TP 2, the rest locally: the K/V are recomputed on each side, the tokens agree."""
    engine = make_engine(tiny4)
    engine.record_logits = True
    ids = [engine.add_request(p, max_new_tokens=MAX_NEW) for p in prompts(tiny4, 3)]
    engine.set_runner(runners("tp", 2))
    for _ in range(4):
        engine.step()
    engine.set_runner(None)
    for _ in range(2):
        engine.step()
    engine.set_runner(runners("pp", 2))
    while engine.has_work():
        engine.step()
    assert {r: engine.finished[r].token_ids for r in ids} == reference[3][0]


# ---- failures -------------------------------------------------------------------------------------------------

def test_a_taken_port_does_not_stop_sharding(tiny4, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        real = parallel.free_port
        offered = iter([port])
        monkeypatch.setattr(parallel, "free_port", lambda host="127.0.0.1": next(offered, None) or real(host))
        with ShardedRunner.from_engine(make_engine(tiny4), "pp", 2) as runner:
            assert runner.port != port
            engine = make_engine(tiny4)
            engine.set_runner(runner)
            engine.add_request([5, 6, 7], max_new_tokens=2)
            assert len(list(engine.run())) == 2


def test_a_killed_worker_falls_back_to_one_process(tmp_path, tiny4, model_dir):
    """The engine service notices a SIGKILLed worker within 10 s, says so calmly, stops the other worker, and
    the decode carries on locally to the very tokens it would have written anyway."""
    from model.service import EngineService

    texts = ["The quick brown fox", "def fibonacci(n):", "一趟一个字"]
    local = make_engine(tiny4)
    for i, t in enumerate(texts):
        local.add_request(t, max_new_tokens=12, request_id=f"q{i}")
    while local.has_work():
        local.step()

    events: list[dict] = []
    svc = EngineService({"model_dir": str(model_dir), "threads": 1, "max_batch": 3, "layer_timing": False,
                         "draft_model_dir": str(tmp_path / "no-draft")}, events.append)
    try:
        assert svc.ready_event()["sharding"] == {"mode": "tp", "n": 1, "degrees_tp": [1, 2, 4], "max_pp": 4}
        svc.handle({"op": "set_sharding", "mode": "tp", "n": 2})
        assert events[-1]["type"] == "sharding" and events[-1]["n"] == 2, events[-1]
        pids = svc.runner.pids
        for i, t in enumerate(texts):
            svc.handle({"op": "submit", "request_id": f"q{i}", "prompt": t, "max_new_tokens": 12})
        svc.handle({"op": "free_run", "on": True})
        for _ in range(4):  # the prefill and three decode steps on the workers
            svc.step()
        assert events[-1]["type"] == "step" and len(events[-1]["report"]["workers"]) == 2
        os.kill(pids[1], signal.SIGKILL)
        t0 = time.monotonic()
        svc.step()
        assert time.monotonic() - t0 < 10
        errors = [e for e in events if e["type"] == "error"]
        assert [e["message"] for e in errors] == ["A worker stopped; the book is whole again on one desk."]
        assert events[-1] == {"type": "sharding", "mode": "tp", "n": 1, "workers": []}
        assert svc.runner is None and svc.engine.runner is None
        assert wait_gone(pids) == []  # the killed one reaped, the other stopped: no zombie, no orphan
        while svc.engine.has_work():
            svc.step()
    finally:
        svc.close()
    finished = {e["request_id"]: e["text"] for e in events if e["type"] == "finished"}
    assert finished == {f"q{i}": local.finished[f"q{i}"].text for i in range(3)}
    assert events[-1]["type"] == "idle"
    svc.handle({"op": "set_sharding", "mode": "tp", "n": 3})  # 4 heads cannot be cut in 3
    assert events[-1]["type"] == "error" and "not 3" in events[-1]["message"]


@pytest.mark.parametrize("flag", ["--tp", "--pp"])
def test_generate_cli_sharded(model_dir, capsys, flag):
    import json

    from model.cli import generate_main

    argv = ["one trip", "the quick brown fox", "--max-new-tokens", "5", "--model", str(model_dir), "--threads", "1",
            "--json"]
    assert generate_main(argv) == 0
    local = json.loads(capsys.readouterr().out)
    assert generate_main(argv + [flag, "2"]) == 0
    sharded = json.loads(capsys.readouterr().out)
    assert [r["token_ids"] for r in sharded["requests"]] == [r["token_ids"] for r in local["requests"]]
    for step in sharded["steps"]:
        assert [w["rank"] for w in step["workers"]] == [0, 1]
        assert all({"compute_ms", "comm_ms", "bubble_ms", "weight_bytes", "weight_read_ms"} <= set(w)
                   for w in step["workers"])
        assert 0 < step["weight_read_ms"] == step["workers"][0]["weight_read_ms"] <= step["forward_ms"]  # rank 0's
    assert "workers" not in local["steps"][0]
    with pytest.raises(SystemExit) as e:
        generate_main(argv + ["--tp", "2", "--pp", "2"])
    assert e.value.code == 2
    assert generate_main(argv + ["--tp", "3"]) == 2  # 4 heads
    assert "divisible by 3" in capsys.readouterr().err


def test_a_hung_worker_is_noticed_at_the_timeout(tiny4):
    engine = make_engine(tiny4)
    runner = ShardedRunner.from_engine(engine, "tp", 2, timeout_s=2)
    pids = runner.pids
    try:
        engine.set_runner(runner)
        engine.add_request([5, 6, 7], max_new_tokens=8)
        engine.step()
        os.kill(pids[0], signal.SIGSTOP)
        t0 = time.monotonic()
        with pytest.raises(ShardingError):  # "did not answer", or the peer's own gloo timeout
            engine.step()
        assert time.monotonic() - t0 < 10
        assert not runner.alive()
    finally:
        runner.close()
    assert wait_gone(pids) == []


def test_closing_during_a_decode_leaves_no_worker(tiny4):
    engine = make_engine(tiny4)
    runner = ShardedRunner.from_engine(engine, "pp", 4)
    pids = runner.pids
    engine.set_runner(runner)
    for p in prompts(tiny4, 3):
        engine.add_request(p, max_new_tokens=100)
    stepped, failure = [], []

    def decode_loop():
        try:
            while engine.has_work():
                engine.step()
                stepped.append(1)
        except ShardingError as e:
            failure.append(e)

    thread = threading.Thread(target=decode_loop)
    thread.start()
    while len(stepped) < 3:
        time.sleep(0.01)
    runner.close()
    thread.join(10)
    assert not thread.is_alive()
    assert failure and engine.has_work()  # stopped in the middle, with an error the service understands
    assert wait_gone(pids) == []
    assert not runner.alive()


# ---- the engine process ---------------------------------------------------------------------------------------

def _engine_process(tmp_path, model_dir):
    import multiprocessing as mp

    from model.service import engine_main

    ctx = mp.get_context("spawn")
    commands, events = ctx.Queue(), ctx.Queue()
    options = {"model_dir": str(model_dir), "threads": 1, "max_batch": 3, "layer_timing": False,
               "draft_model_dir": str(tmp_path / "no-draft")}
    # as gui/engine_link/bridge.py
    proc = ctx.Process(target=engine_main, args=(commands, events, options), daemon=False)
    proc.start()
    return proc, commands, events


def _until(events, predicate, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = events.get(timeout=max(0.01, deadline - time.monotonic()))
        assert event["type"] not in ("fatal", "error"), event
        if predicate(event):
            return event
    raise AssertionError("the engine process did not answer")


@pytest.mark.parametrize("ending", ["shutdown", "killed"])
def test_the_engine_process_leaves_no_worker(tmp_path, model_dir, ending):
    """Shut down during a sharded decode: exit code 0, no worker left. Killed outright (no chance to clean up):
    the workers notice their parent is gone and leave by themselves."""
    proc, commands, events = _engine_process(tmp_path, model_dir)
    try:
        _until(events, lambda e: e["type"] == "ready")
        commands.put({"op": "set_sharding", "mode": "pp", "n": 2})
        pids = [w["pid"] for w in _until(events, lambda e: e["type"] == "sharding")["workers"]]
        assert len(pids) == 2
        commands.put({"op": "submit", "prompt": "The quick brown fox", "max_new_tokens": 100})
        commands.put({"op": "free_run", "on": True})
        _until(events, lambda e: e["type"] == "step" and e["report"]["phase"] == "decode"
               and len(e["report"]["workers"]) == 2)
        family = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]  # workers and their helpers
        assert set(pids) <= set(family)
        if ending == "shutdown":
            commands.put({"op": "shutdown"})
            proc.join(15)
            assert proc.exitcode == 0
        else:
            os.kill(proc.pid, signal.SIGKILL)
            proc.join(5)
        assert wait_gone(family, timeout=10) == []
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()
        commands.cancel_join_thread()
        events.cancel_join_thread()
