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
                draft=None, draft_k: int = 0, draft_kind: str = "model", **engine_kwargs) -> tuple[float, list, Engine]:
    engine = Engine(model, tokenizer, max_batch=max_batch, **engine_kwargs)
    if draft_kind == "ngram" and draft_k:
        engine.set_draft_kind("ngram")
        engine.set_draft_k(draft_k)
    elif draft is not None and draft_k:
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
    """Batch-1 decode step (forward ms) against both floors: weights ÷ cache read bandwidth (measured on a buffer
    the size of the weights) and weights ÷ DRAM read bandwidth (a buffer 4 × the last-level cache), each the
    better of 1 thread and all cores (``model.hardware.decode_floors``, measured again here: ``bench --only floor``
    is the way to re-measure the read speed the window's floor uses, kept in the user's cache folder);
    ``applies`` says which one bounds this
    model (the cache floor when the weights fit in the last-level cache), and ``ratio`` is against that one."""
    from model.hardware import decode_floors
    rows = []
    for d in model_dirs:
        model, tokenizer = load_pretrained(d)
        _engine_run(model, tokenizer, [[1, 2, 3, 4]], 4, 1)  # warm-up
        times = []
        for _ in range(repeats):
            _, reports, _ = _engine_run(model, tokenizer, [[1, 2, 3, 4]], steps, 1)
            times += [r.forward_ms for r in reports if r.phase == "decode"]
        floors = decode_floors(model.weight_bytes(), remeasure=True)  # bench re-measures, and keeps it (the cache)
        step = summarise(times)
        rows.append({"model": model.config.name, "parameters": model.num_parameters(),
                     "weight_bytes": model.weight_bytes(), "bandwidth_gb_s": floors["bandwidth_bytes_per_s"] / 1e9,
                     "cache_gb_s": floors["cache_bandwidth_bytes_per_s"] / 1e9,
                     "dram_gb_s": floors["dram_bandwidth_bytes_per_s"] / 1e9, "l3_bytes": floors["l3_bytes"],
                     "cache_floor_ms": floors["cache_floor_ms"], "dram_floor_ms": floors["dram_floor_ms"],
                     "applies": floors["applies"], "floor_ms": floors["floor_ms"], "step_ms": step,
                     "ratio": step["median"] / floors["floor_ms"],
                     "ratio_dram": step["median"] / floors["dram_floor_ms"]})
        del model
    return rows


def gemv_read_speed(total_bytes: int = 4 * 118 * 2**20, repeats: int = 5) -> list[dict]:
    """How fast a batch-1 decode reads weights that do not fit the cache, at 1 thread and at all cores: GB/s of a
    plain read (``buf.sum()``, ``measure_read_bandwidth``) against a chain of 1-row GEMVs over 768 × 3072 fp32
    matrices (GPT-2-small's MLP shape) totalling ``total_bytes``, as ``x @ W`` with W stored [in, out] (the
    engine's decode layout) and as ``F.linear`` with W stored [out, in]. The best of ``repeats`` passes."""
    import os

    import torch.nn.functional as F

    from model.hardware import measure_read_bandwidth
    n = max(1, total_bytes // (768 * 3072 * 4))
    w_out_in = [torch.randn(3072, 768) for _ in range(n)]
    w_in_out = [w.t().contiguous() for w in w_out_in]
    x = torch.randn(1, 768)
    nbytes = n * 768 * 3072 * 4

    def best_gb_s(fn) -> float:
        fn()  # warm-up
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return nbytes / best / 1e9

    rows = []
    before = torch.get_num_threads()
    try:
        for threads in sorted({1, os.cpu_count() or 1}):
            torch.set_num_threads(threads)
            rows.append({"threads": threads, "weights_mb": nbytes / 1e6,
                         "read_gb_s": measure_read_bandwidth(nbytes, threads=threads) / 1e9,
                         "gemv_in_out_gb_s": best_gb_s(lambda: [x @ w for w in w_in_out]),
                         "linear_out_in_gb_s": best_gb_s(lambda: [F.linear(x, w) for w in w_out_in])})
    finally:
        torch.set_num_threads(before)
    return rows


def layout_ab(model_dir: Path, steps: int = 64, repeats: int = 5) -> list[dict]:
    """Batch-1 and batch-8 decode forward ms of the prepared model (``GPT2.prepare_for_decode``: every Linear
    stored [in, out], a contiguous [C, V] LM-head copy, the flat cached forward with oneDNN-packed weights from
    2 rows) against the plain modules with [out, in] weights, alternating within each repeat, on two copies of
    the same weights."""
    rows = []
    prepared, tokenizer = load_pretrained(model_dir)
    plain, _ = load_pretrained(model_dir)  # as loaded: contiguous [out, in], the head read through wte.weight.t()
    prompt = tokenizer.encode("def fibonacci(n):\n    ") or [0]
    for batch in (1, 8):
        times = {"plain": [], "decode layout": []}
        for _ in range(repeats):
            for name, model in (("plain", plain), ("decode layout", prepared)):
                _, reports, _ = _engine_run(model, tokenizer, [prompt] * batch, steps, batch,
                                            decode_layout=model is prepared)
                times[name] += [r.forward_ms for r in reports if r.phase == "decode"]
        a, b = summarise(times["plain"]), summarise(times["decode layout"])
        rows.append({"batch": batch, "plain_ms": a, "decode_layout_ms": b, "speedup": a["median"] / b["median"]})
    return rows


def _threads_child(conn, model_dir: str, threads: int, batch: int, new_tokens: int, repeats: int) -> None:
    """In a fresh process (as the window's engine runs): tokens/s and decode step ms at ``threads`` threads."""
    try:
        conn.send(_threads_measure(model_dir, threads, batch, new_tokens, repeats))
    except Exception as e:  # the parent reports it instead of waiting for an answer that never comes
        conn.send({"error": f"{type(e).__name__}: {e}"})
    conn.close()


def _threads_measure(model_dir: str, threads: int, batch: int, new_tokens: int, repeats: int) -> dict:
    torch.set_num_threads(threads)
    model, tokenizer = load_pretrained(Path(model_dir))
    prompt = tokenizer.encode("def fibonacci(n):\n    ") or [0]
    _engine_run(model, tokenizer, [prompt] * batch, 8, batch)  # warm-up
    rates, steps = [], []
    for _ in range(repeats):
        elapsed, reports, _ = _engine_run(model, tokenizer, [prompt] * batch, new_tokens, batch)
        rates.append(batch * new_tokens / elapsed)
        steps += [r.wall_ms for r in reports if r.phase == "decode"]
    return {"tok_s": rates, "step_ms": steps}


def _window_like_load(stop, duty: float = 0.5, frame_s: float = 1 / 60) -> None:
    """A stand-in for the animating window: busy for ``duty`` of every 60 Hz frame, idle for the rest."""
    while not stop.is_set():
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < duty * frame_s:
            pass
        time.sleep(max(0.0, frame_s - (time.perf_counter() - t0)))


def threads_ab(model_dir: Path, thread_counts=(1, 2), batches=(1, 8), new_tokens: int = 64,
               repeats: int = 3, rounds: int = 2) -> list[dict]:
    """Engine tokens/s at 1 vs 2 intra-op threads, each in a fresh process that has run no torch operation yet
    (as the window's engine starts), alternating, alone and beside a window-like load (a process busy half of
    every 60 Hz frame). The processes come from the sharded workers' forkserver
    (``model.parallel.runner.fresh_process_context``), which has imported torch and computed nothing, so each sets
    its own thread count as a spawned one would, without paying the 2-3 s import each; where the platform has no
    forkserver, they are spawned."""
    from model.parallel.runner import fresh_process_context
    ctx = fresh_process_context()
    rows = []
    for loaded in (False, True):
        stop = ctx.Event()
        load = ctx.Process(target=_window_like_load, args=(stop,), daemon=True) if loaded else None
        if load is not None:
            load.start()
        try:
            for batch in batches:
                got = {t: {"tok_s": [], "step_ms": []} for t in thread_counts}
                for _ in range(rounds):
                    for t in thread_counts:
                        parent, child = ctx.Pipe(duplex=False)
                        proc = ctx.Process(target=_threads_child,
                                           args=(child, str(model_dir), t, batch, new_tokens, repeats))
                        proc.start()
                        child.close()  # so that a child that dies unanswered gives EOFError, not a hang
                        try:
                            result = parent.recv() if parent.poll(600) else {"error": "no answer in 600 s"}
                        except EOFError:
                            result = {"error": f"the measuring process ended with code {proc.exitcode}"}
                        proc.join(timeout=30)
                        if "error" in result:
                            raise RuntimeError(f"threads {t}, batch {batch}: {result['error']}")
                        for key in got[t]:
                            got[t][key] += result[key]
                for t in thread_counts:
                    rows.append({"threads": t, "batch": batch, "window_load": loaded,
                                 "tok_s": summarise(got[t]["tok_s"]), "step_ms": summarise(got[t]["step_ms"])})
        finally:
            if load is not None:
                stop.set()
                load.join(timeout=5)
                if load.is_alive():
                    load.terminate()
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


def speculative_sweep(model_dir: Path, draft_dir: Path | None, ks=range(0, 9), new_tokens: int = 64,
                      repeats: int = 2, apprentices=("model", "ngram")) -> list[dict]:
    """Tokens/s, acceptance and tokens per trip for 0..8 guesses, on code prompts and on prose prompts, for each
    apprentice: the draft model and prompt lookup ("ngram"). Within a repeat every configuration runs on every
    prompt before the next repeat, so a slow moment hits all alike. k = 0 is the plain engine (apprentice "none");
    ``speedup`` is tokens/s over that row's median."""
    model, tokenizer = load_pretrained(model_dir)
    draft = load_pretrained(draft_dir) if draft_dir is not None and "model" in apprentices else None
    configs = [("none", 0)] + [(a, k) for a in apprentices if a != "model" or draft is not None for k in ks if k > 0]
    _engine_run(model, tokenizer, [tokenizer.encode(CODE_PROMPTS[0]) or [0]], 4, 1)  # warm-up
    rows = []
    for kind, prompts in (("code", CODE_PROMPTS), ("prose", PROSE_PROMPTS)):
        encoded = [tokenizer.encode(p) or [0] for p in prompts]
        stats = {c: {"rates": [], "proposed": 0, "accepted": 0, "trips": 0, "tokens": 0} for c in configs}
        for _ in range(repeats):
            for ids in encoded:
                for apprentice, k in configs:
                    st = stats[(apprentice, k)]
                    elapsed, reports, engine = _engine_run(model, tokenizer, [ids], new_tokens, 1, draft, k,
                                                           draft_kind=apprentice)
                    st["rates"].append(new_tokens / elapsed)
                    st["proposed"] += engine.spec_proposed
                    st["accepted"] += engine.spec_accepted
                    dec = [r for r in reports if r.phase in ("decode", "verify")]
                    st["trips"] += len(dec)
                    st["tokens"] += sum(r.tokens_out for r in dec)
        base = statistics.median(stats[("none", 0)]["rates"])
        for (apprentice, k), st in stats.items():
            rate = summarise(st["rates"])
            rows.append({"kind": kind, "apprentice": apprentice, "k": k, "tok_s": rate,
                         "speedup": rate["median"] / base,
                         "acceptance": st["accepted"] / st["proposed"] if st["proposed"] else None,
                         "tokens_per_trip": st["tokens"] / st["trips"] if st["trips"] else None})
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
                         "compute_ms": (statistics.median([w["compute_ms"] for w in workers]) if workers
                                        else step["median"]),
                         "comm_ms": statistics.median([w["comm_ms"] for w in workers]) if workers else 0.0,
                         "bubble_ms": (statistics.median([w.get("bubble_ms", 0.0) for w in workers]) if workers
                                       else 0.0)})
    return rows
