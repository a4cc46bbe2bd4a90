"""A thinner book, measured: int8 weights against fp32 (``python main.py bench --only int8``).

- **Kernels.** The bundled model's 17 weight matrices as one chain of batch-1 products (what one decode trip
  reads), four ways, rounds interleaved, µs per chain (best and median of the rounds): fp32 ``addmm`` on the
  ``[in, out]`` layout (the engine's fp32 path); ``torch.ao``'s dynamic int8 linear (fbgemm/x86 engine,
  per-channel weights, activations quantized on the fly: what ``quantize_dynamic`` runs);
  ``torch._weight_int8pack_mm`` (int8 weight-only, torchao's CPU lowering) with float32 activations; the same
  with bfloat16 activations (what ``model/quantize.py`` runs).
- **Engine.** ``Engine`` on the fp32 model and on ``quantize_int8`` of it, greedy batch 1, one thread, the runs
  alternating (ABAB...): weight bytes (``GPT2.weight_bytes``: int8 values + scales + the float rest), median
  decode forward ms, weight_read ms, whole step ms, and decode tokens/s = 1000 ÷ the run's median decode step
  (wall) ms; the speed-up per round (the fp32 and int8 runs of the same round); the same from each run's
  10th-percentile step (robust to the scheduler cutting steps on a loaded machine).
- **Bits per byte** on the held-out code of the bundled corpus (``assets/models/corpus.json``'s held-out
  standard-library files, read from this Python's stdlib), with ``model.training.model_card.bits_per_byte``
  (the model card's own measure, windows of the model's context).
"""

from __future__ import annotations

import copy
import json
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT = "def read_lines(path):"


def summarise(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def kernels(model, rounds: int = 7, calls: int = 50) -> dict:
    """µs per chain of the model's 17 batch-1 weight products, per kernel (module doc): {name: summary}."""
    import torch

    from model.quantize import ACT_DTYPE, quantize_rows
    mats = [(lin.weight.detach(), lin.bias.detach()) for b in model.h
            for lin in (b.attn.c_attn, b.attn.c_proj, b.mlp.c_fc, b.mlp.c_proj)]
    mats.append((model.wte.weight.detach(), torch.zeros(model.config.vocab_size)))
    xs = {k: torch.randn(1, k) for k in {w.size(1) for w, _ in mats}}
    fp32 = [(b, w.t().contiguous()) for w, b in mats]
    old_engine = torch.backends.quantized.engine
    torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else old_engine
    dyn = []
    for w, b in mats:
        q, s = quantize_rows(w)
        qw = torch._make_per_channel_quantized_tensor(q, s.double(), torch.zeros(len(s), dtype=torch.long), 0)
        dyn.append(torch.ops.quantized.linear_prepack(qw, b))
    packed = [(quantize_rows(w), b) for w, b in mats]
    ones = torch.ones(max(w.size(0) for w, _ in mats))

    def chain_fp32():
        for (b, wt), (w, _) in zip(fp32, mats):
            torch.addmm(b, xs[w.size(1)], wt)

    def chain_dynamic():
        for p, (w, _) in zip(dyn, mats):
            torch.ops.quantized.linear_dynamic(xs[w.size(1)], p, True)

    def chain_int8_f32():
        for ((q, s), _b), (w, _) in zip(packed, mats):
            torch._weight_int8pack_mm(xs[w.size(1)], q, s)

    xb = {k: v.to(ACT_DTYPE) for k, v in xs.items()}
    ones_b = ones.to(ACT_DTYPE)

    def chain_int8_bf16():
        for ((q, s), b), (w, _) in zip(packed, mats):
            torch.addcmul(b, torch._weight_int8pack_mm(xb[w.size(1)], q, ones_b[:q.size(0)]), s)

    chains = {"fp32 addmm (engine, fp32)": chain_fp32, "ao dynamic int8 (x86, per-channel)": chain_dynamic,
              "_weight_int8pack_mm, fp32 activations": chain_int8_f32,
              "_weight_int8pack_mm, bf16 activations (engine, int8)": chain_int8_bf16}
    try:
        times = _time_chains(chains, rounds, calls)
    finally:
        torch.backends.quantized.engine = old_engine
    return {k: summarise(v) for k, v in times.items()}


def _time_chains(chains: dict, rounds: int, calls: int) -> dict[str, list[float]]:
    """µs per call of each chain, per round: three warm-up calls each, then ``rounds`` rounds of ``calls`` calls,
    the order reversed every other round (ABBA)."""
    times: dict[str, list[float]] = {k: [] for k in chains}
    for fn in chains.values():
        for _ in range(3):
            fn()
    for r in range(rounds):
        for name in (list(chains) if r % 2 == 0 else list(reversed(chains))):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                chains[name]()
            times[name].append((time.perf_counter_ns() - t0) / calls / 1e3)
    return times


def _decode_run(model, tokenizer, tokens: int) -> dict:
    from model.engine import Engine
    from model.sampling import SamplingParams
    engine = Engine(model, tokenizer, max_batch=1)
    engine.add_request(PROMPT, max_new_tokens=tokens, sampling=SamplingParams(temperature=0.0))
    steps = [r for r in engine.run() if r.phase == "decode"]
    med = {k: statistics.median(getattr(r, k) for r in steps) for k in ("forward_ms", "weight_read_ms", "wall_ms")}
    med["tokens_per_s"] = 1000.0 / med["wall_ms"]
    walls = sorted(r.wall_ms for r in steps)
    med["wall_p10_ms"] = walls[len(walls) // 10]  # the run's quiet moments: a step the scheduler did not cut
    med["tokens_per_s_p10"] = 1000.0 / med["wall_p10_ms"]
    return med


def engine_ab(model_dir: Path, rounds: int = 6, tokens: int = 64) -> dict:
    """fp32 against int8 on the engine (module doc). Returns {"fp32"/"int8": {metric: summary, "weight_bytes"},
    "speedup": summary of per-round int8 ÷ fp32 tokens/s, "bytes_ratio"}."""
    from model.checkpoint import load_pretrained
    from model.quantize import quantize_int8
    fp32, tokenizer = load_pretrained(model_dir)
    int8 = quantize_int8(copy.deepcopy(fp32))
    runs: dict[str, list[dict]] = {"fp32": [], "int8": []}
    models = {"fp32": fp32, "int8": int8}
    for name in models:
        _decode_run(models[name], tokenizer, 8)  # warm
    for r in range(rounds):
        for name in (["fp32", "int8"] if r % 2 == 0 else ["int8", "fp32"]):
            runs[name].append(_decode_run(models[name], tokenizer, tokens))
    out = {name: {k: summarise([x[k] for x in rs]) for k in rs[0]} for name, rs in runs.items()}
    for name, m in models.items():
        out[name]["weight_bytes"] = m.weight_bytes()
    out["bytes_ratio"] = int8.weight_bytes() / fp32.weight_bytes()
    out["speedup"] = summarise([b["tokens_per_s"] / a["tokens_per_s"] for a, b in zip(runs["fp32"], runs["int8"])])
    out["speedup_p10"] = summarise([b["tokens_per_s_p10"] / a["tokens_per_s_p10"]
                                    for a, b in zip(runs["fp32"], runs["int8"])])
    return out


def heldout_code_ids(tokenizer, max_tokens: int):
    """Token ids (uint16) of the held-out code files of the bundled corpus, each followed by end-of-text, up to
    ``max_tokens``; None where this Python's stdlib lacks them."""
    import numpy as np

    from model.training.corpus import default_stdlib_dir
    names = json.loads((REPO / "assets/models/corpus.json").read_text(encoding="utf-8"))["domains"]["code"][
        "heldout_names"]
    ids: list[int] = []
    eot = tokenizer.eos_token_id
    for name in names:
        path = default_stdlib_dir() / name
        if path.is_file():
            ids += tokenizer.encode(path.read_text(encoding="utf-8", errors="replace"))
            ids += [eot] if eot is not None else []
        if len(ids) >= max_tokens:
            break
    return np.array(ids[:max_tokens], dtype=np.uint16) if ids else None


def bits_per_byte_ab(model_dir: Path, max_tokens: int = 120_000) -> dict:
    """Held-out bits per byte of fp32 and int8 (module doc), or {"missing": why}."""
    import torch

    from model.checkpoint import load_pretrained
    from model.quantize import quantize_int8
    from model.training.model_card import bits_per_byte
    fp32, tokenizer = load_pretrained(model_dir)
    ids = heldout_code_ids(tokenizer, max_tokens)
    if ids is None:
        return {"missing": "this Python's standard library lacks the corpus' held-out files"}
    int8 = quantize_int8(copy.deepcopy(fp32))
    window = fp32.config.n_positions
    with torch.inference_mode():
        a = bits_per_byte(fp32, ids, tokenizer, window)
        b = bits_per_byte(int8, ids, tokenizer, window)
    return {"fp32": a, "int8": b, "delta_bpb": b["bpb"] - a["bpb"], "relative": b["bpb"] / a["bpb"] - 1}


def int8_section(model_dir: Path, quick: bool = False) -> dict:
    from model.checkpoint import load_pretrained
    model, _ = load_pretrained(model_dir)
    return {"kernels": kernels(model, rounds=3 if quick else 9),
            "engine": engine_ab(model_dir, rounds=2 if quick else 6, tokens=32 if quick else 64),
            "bpb": bits_per_byte_ab(model_dir, max_tokens=8_000 if quick else 120_000)}


def _fmt(s: dict, digits: int = 3) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def render_int8(r: dict) -> list[str]:
    lines = ["## A thinner book: int8 weights", "",
             "`--weights int8` (`model/quantize.py`): every weight matrix and both embeddings as int8 rows with a "
             "float32 scale per row, read by `torch._weight_int8pack_mm` with bfloat16 activations; biases and "
             "norms float32. Bundled code model, one thread.", "",
             "### Kernels: one trip's 17 batch-1 weight products", "",
             "| kernel | µs per chain, median (min–max) |", "|---|---|"]
    lines += [f"| {k} | {_fmt(v, 0)} |" for k, v in r["kernels"].items()]
    e = r["engine"]
    lines += ["", "### The engine, fp32 against int8 (greedy, batch 1, runs alternating)", "",
              "| weights | weight bytes | decode forward ms | weight_read ms | whole step ms | decode tokens/s |",
              "|---|---|---|---|---|---|"]
    for name in ("fp32", "int8"):
        x = e[name]
        lines.append(f"| {name} | {x['weight_bytes']:,} | {_fmt(x['forward_ms'])} | {_fmt(x['weight_read_ms'])} | "
                     f"{_fmt(x['wall_ms'])} | {_fmt(x['tokens_per_s'], 0)} |")
    lines += ["", f"int8 holds {e['bytes_ratio']:.3f}× the fp32 bytes; decode tokens/s int8 ÷ fp32 per round: "
                  f"{_fmt(e['speedup'], 2)}× ({e['speedup']['n']} rounds)"
              + (f"; from each run's 10th-percentile step (its quiet moments, where the scheduler cut no step): "
                 f"{_fmt(e['speedup_p10'], 2)}× ({_fmt(e['fp32']['tokens_per_s_p10'], 0)} against "
                 f"{_fmt(e['int8']['tokens_per_s_p10'], 0)} tokens/s)" if "speedup_p10" in e else "")
              + ". On a shared, oversubscribed machine a longer step is cut by the scheduler more often, which "
                "inflates the median ratio; the 10th-percentile ratio is the fairer one there.", ""]
    b = r["bpb"]
    if "missing" in b:
        lines += [f"Bits per byte: not measured ({b['missing']}).", ""]
    else:
        lines += ["### Held-out bits per byte (code)", "",
                  "| weights | bits per byte | nats per token | tokens | bytes |", "|---|---|---|---|---|"]
        lines += [f"| {n} | {b[n]['bpb']:.4f} | {b[n]['nats_per_token']:.4f} | {b[n]['tokens']:,} | {b[n]['bytes']:,} |"
                  for n in ("fp32", "int8")]
        lines += ["", f"int8 changes bits per byte by {b['delta_bpb']:+.4f} ({b['relative']:+.2%}).", ""]
    return lines
