"""Engine benchmarks: each function measures one question and returns plain rows for the report.

Every timing is wall time from ``time.perf_counter`` around real work on this machine; contenders are
alternated within each repeat so that a slow moment of the machine hurts both alike.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import torch

from model.checkpoint import load_pretrained, save_pretrained
from model.engine import Engine
from model.gpt2 import GPT2, GPT2Config
from model.hardware import decode_floor_ms, measure_memory_bandwidth

CODE_PROMPTS = ["def fibonacci(n):", "import os\n\ndef read_lines(path):", "class Stack:\n    def __init__(self):"]
PROSE_PROMPTS = ["The history of the city", "In this tutorial we will learn", "The function returns a new list"]


def summarise(values: list[float]) -> dict:
    """Median, min and max of a list of measurements (same unit in, same unit out)."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def random_model_dir(n_embd: int, n_layer: int, n_head: int, vocab_size: int, tokenizer_json: Path,
                     n_positions: int = 1024, seed: int = 0) -> Path:
    """A random-weight GPT-2 of the given shape written in HF layout to a temp dir (for speed, not text)."""
    cfg = GPT2Config(vocab_size=vocab_size, n_positions=n_positions, n_embd=n_embd, n_layer=n_layer,
                     n_head=n_head, name=f"random-{n_layer}x{n_embd}")
    out = Path(tempfile.mkdtemp(prefix="onetrip-bench-")) / cfg.name  # the folder's name is the model's name
    save_pretrained(GPT2(cfg).init_weights(seed), out, tokenizer_json)
    return out


def _engine_run(model, tokenizer, prompts: list[list[int]], new_tokens: int, max_batch: int,
                draft=None, draft_k: int = 0) -> tuple[float, list, Engine]:
    engine = Engine(model, tokenizer, max_batch=max_batch)
    if draft is not None and draft_k:
        engine.set_draft(*draft)
        engine.set_draft_k(draft_k)
    for ids in prompts:
        engine.add_request(list(ids), max_new_tokens=new_tokens)
    t0 = time.perf_counter()
    reports = list(engine.run())
    return time.perf_counter() - t0, reports, engine


def engine_vs_transformers(model_dir: Path, batches=(1, 8), new_tokens: int = 128, repeats: int = 3) -> list[dict]:
    """Tokens/s of this engine and of transformers' ``generate()`` (greedy, same weights, same prompt)."""
    from transformers import GPT2LMHeadModel

    model, tokenizer = load_pretrained(model_dir)
    hf = GPT2LMHeadModel.from_pretrained(str(model_dir)).eval()
    prompt = tokenizer.encode("def fibonacci(n):\n    ") or [0]
    rows = []
    _engine_run(model, tokenizer, [prompt], 4, 1)  # warm-up: first-call allocations are not decode speed
    with torch.inference_mode():
        hf.generate(torch.tensor([prompt]), max_new_tokens=4, do_sample=False, pad_token_id=0)
    for batch in batches:
        ours, theirs = [], []
        for _ in range(repeats):
            elapsed, _, _ = _engine_run(model, tokenizer, [prompt] * batch, new_tokens, batch)
            ours.append(batch * new_tokens / elapsed)
            x = torch.tensor([prompt] * batch)
            with torch.inference_mode():
                t0 = time.perf_counter()
                hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=new_tokens,
                            min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
                theirs.append(batch * new_tokens / (time.perf_counter() - t0))
        o, t = summarise(ours), summarise(theirs)
        rows.append({"model": model.config.name, "parameters": model.num_parameters(), "batch": batch,
                     "engine_tok_s": o, "transformers_tok_s": t, "ratio": o["median"] / t["median"]})
    return rows


def floor_gap(model_dirs: list[Path], steps: int = 32, repeats: int = 3) -> list[dict]:
    """Batch-1 decode step (forward ms) against the memory-bandwidth floor, for models of several sizes."""
    bandwidth = max(measure_memory_bandwidth() for _ in range(3))
    rows = []
    for d in model_dirs:
        model, tokenizer = load_pretrained(d)
        _engine_run(model, tokenizer, [[1, 2, 3, 4]], 4, 1)  # warm-up
        times = []
        for _ in range(repeats):
            _, reports, _ = _engine_run(model, tokenizer, [[1, 2, 3, 4]], steps, 1)
            times += [r.forward_ms for r in reports if r.phase == "decode"]
        floor = decode_floor_ms(model.weight_bytes(), bandwidth)
        step = summarise(times)
        rows.append({"model": model.config.name, "parameters": model.num_parameters(),
                     "weight_bytes": model.weight_bytes(), "bandwidth_gb_s": bandwidth / 1e9,
                     "floor_ms": floor, "step_ms": step, "ratio": step["median"] / floor})
        del model
    return rows


def batch_sweep(model_dir: Path, batches=(1, 2, 4, 8, 16, 32, 64), new_tokens: int = 32,
                repeats: int = 2) -> list[dict]:
    """Decode step time and tokens/s as more requests share each trip."""
    model, tokenizer = load_pretrained(model_dir)
    prompt = tokenizer.encode("The weights are read once per trip") or [0]
    _engine_run(model, tokenizer, [prompt], 4, 1)  # warm-up
    rows = []
    for batch in batches:
        steps, rates = [], []
        for _ in range(repeats):
            elapsed, reports, _ = _engine_run(model, tokenizer, [prompt] * batch, new_tokens, batch)
            steps += [r.wall_ms for r in reports if r.phase == "decode"]
            rates.append(batch * new_tokens / elapsed)
        rows.append({"batch": batch, "step_ms": summarise(steps), "tok_s": summarise(rates)})
    return rows


def speculative_sweep(model_dir: Path, draft_dir: Path, ks=range(0, 9), new_tokens: int = 64,
                      repeats: int = 2) -> list[dict]:
    """Tokens/s and acceptance rate for 0..8 draft guesses, on code prompts and on prose prompts."""
    model, tokenizer = load_pretrained(model_dir)
    draft = load_pretrained(draft_dir)
    rows = []
    for kind, prompts in (("code", CODE_PROMPTS), ("prose", PROSE_PROMPTS)):
        encoded = [tokenizer.encode(p) for p in prompts]
        for k in ks:
            rates, proposed, accepted, trips, tokens = [], 0, 0, 0, 0
            for _ in range(repeats):
                for ids in encoded:
                    elapsed, reports, engine = _engine_run(model, tokenizer, [ids], new_tokens, 1, draft, k)
                    rates.append(new_tokens / elapsed)
                    proposed += engine.spec_proposed
                    accepted += engine.spec_accepted
                    dec = [r for r in reports if r.phase in ("decode", "verify")]
                    trips += len(dec)
                    tokens += sum(r.tokens_out for r in dec)
            rows.append({"kind": kind, "k": k, "tok_s": summarise(rates),
                         "acceptance": accepted / proposed if proposed else None,
                         "tokens_per_trip": tokens / trips if trips else None})
    return rows


def prefix_ttft(model_dir: Path, prefix_tokens: int = 256, repeats: int = 5) -> list[dict]:
    """Time to first token of a request whose first ``prefix_tokens`` tokens another request already
    computed, with the prefix cache on and off."""
    model, tokenizer = load_pretrained(model_dir)
    base = tokenizer.encode("You are a concise assistant. " * 64)
    prefix = (base * (prefix_tokens // max(1, len(base)) + 1))[:prefix_tokens]
    rows = []
    results = {True: [], False: []}
    hits = {True: 0, False: 0}
    for r in range(repeats):
        for cached in (True, False):
            engine = Engine(model, tokenizer, max_batch=1, prefix_cache=cached)
            engine.add_request(prefix + tokenizer.encode(" First question?"), max_new_tokens=1)
            list(engine.run())
            rid = engine.add_request(prefix + tokenizer.encode(f" Question number {r}?"), max_new_tokens=1)
            list(engine.run())
            results[cached].append(engine.finished[rid].ttft_ms)
            hits[cached] = engine.finished[rid].prefix_hit_tokens
    for cached in (True, False):
        rows.append({"prefix_cache": cached, "prefix_tokens": prefix_tokens, "ttft_ms": summarise(results[cached]),
                     "prefix_hit_tokens": hits[cached]})
    return rows


def sharding_sweep(model_dir: Path, degrees=(1, 2, 4), steps: int = 16) -> list[dict]:
    """Decode step time split into compute and communication for tensor and pipeline parallel."""
    try:
        from model.parallel import ShardedRunner
    except ImportError as e:  # pragma: no cover - the parallel module is optional for this report
        return [{"error": f"model.parallel unavailable: {e}"}]
    model, tokenizer = load_pretrained(model_dir)
    _engine_run(model, tokenizer, [[1, 2, 3, 4]], 4, 1)  # warm-up, so the first row is not the slow one
    rows = []
    for mode in ("tp", "pp"):
        for n in degrees:
            if mode == "tp" and model.config.n_head % n:
                continue
            if mode == "pp" and n > model.config.n_layer:
                continue
            engine = Engine(model, tokenizer, max_batch=4)
            runner = None
            if n > 1:
                runner = ShardedRunner(model_dir, model.config, mode, n, engine.num_blocks, engine.block_size)
                engine.set_runner(runner)
            try:
                for i in range(4):
                    engine.add_request(tokenizer.encode(f"Request {i} shares the table") or [0], max_new_tokens=steps)
                reports = [r for r in engine.run() if r.phase == "decode"]
            finally:
                if runner is not None:
                    runner.close()
            step = summarise([r.wall_ms for r in reports])
            workers = [w for r in reports for w in r.workers]
            rows.append({"mode": mode, "n": n, "step_ms": step,
                         "compute_ms": statistics.median([w["compute_ms"] for w in workers]) if workers else step["median"],
                         "comm_ms": statistics.median([w["comm_ms"] for w in workers]) if workers else 0.0,
                         "bubble_ms": statistics.median([w.get("bubble_ms", 0.0) for w in workers]) if workers else 0.0})
    return rows
