"""The weight multiply, measured: fp32, fp16 and int8 weights (``python -m bench.weights_bench [--quick]``).

Writes docs/benchmarks-weights.json and the section "The weight multiply" of docs/benchmarks.md (replaced between
its markers; the rest of that file is left as it is). One torch thread; every comparison alternates its contenders
within each round (ABCABC...), and each figure is the median of the rounds with their min–max.

- **Read speed.** A stack of (4n, n) weights (n = 768, GPT-2 small's fc) of 512 MB in fp32 (256 MB in fp16,
  128 MB + scales in int8), multiplied by 1 and by 5 rows through ``model/weight_mm.py`` (and, as a contender the
  engine does not use, FBGEMM's dynamic int8 of ``quantize_dynamic``), against a plain read: ``sum`` over a 512 MB
  float32 tensor. "plain trips" = the product's time ÷ a plain read of the bytes that precision holds; GB/s counts
  those bytes.
- **Decode against its floor.** The engine's batch-1 decode forward (ms, median of the steps of each run) in each
  precision, against its floor: that precision's weight bytes ÷ the machine's read speed
  (``model.hardware.decode_floors``, cached). The default code book (``target-big``, 110 MB in fp32: lives in
  RAM) and the pocket code book (``target``, 17 MB: fits the last-level cache).
- **Engine against transformers** ``generate()`` (fp32, greedy, same weights) at batch 1 and 8, tokens/s.
- **Layer timing.** The decode forward with ``layer_timing`` on and off, in each precision.
- **Bits per byte** on the held-out corpus (``~/.cache/one-trip/corpus/heldout/{code,prose}.bin`` with the default
  code book, ``~/.cache/one-trip/corpus-poems/heldout/poems.bin`` with the default poems book: the big books; the
  first ``max_tokens`` tokens of each), windows of the model's context
  (``model.training.model_card.bits_per_byte``).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from model.weight_mm import PRECISIONS, WeightMatrix

REPO = Path(__file__).resolve().parent.parent
CORPUS = Path.home() / ".cache" / "one-trip"
HELDOUT = {"code": (CORPUS / "corpus/heldout/code.bin", "target-big"),
           "prose": (CORPUS / "corpus/heldout/prose.bin", "target-big"),
           "poems": (CORPUS / "corpus-poems/heldout/poems.bin", "poems-big")}
BEGIN, END = "<!-- weights_bench: begin -->", "<!-- weights_bench: end -->"


def summarise(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


class DynamicInt8:
    """FBGEMM's dynamic int8 linear (``quantize_dynamic``'s kernel: per-channel int8 weights, the activations of
    the whole call quantized with one scale): a contender only (a row's result depends on its batch-mates)."""

    def __init__(self, w: torch.Tensor):
        from model.weight_mm import quantize_rows
        q, s = quantize_rows(w)
        qw = torch._make_per_channel_quantized_tensor(q, s.double(), torch.zeros(len(s), dtype=torch.long), 0)
        self.packed = torch.ops.quantized.linear_prepack(qw, None)
        self.nbytes = q.numel() + 4 * len(s)

    def mm(self, x):
        return torch.ops.quantized.linear_dynamic(x, self.packed, True), False


def _stack(n: int, total_bytes: int):
    """Weights (4n, n) float32 of ``total_bytes`` in all, and each precision's stack over them (plus the contender)."""
    g = torch.Generator().manual_seed(0)
    count = max(1, total_bytes // (16 * n * n))
    ws = [torch.randn(4 * n, n, generator=g) * 0.02 for _ in range(count)]
    stacks = {p: [WeightMatrix(w, torch.zeros(4 * n), p) for w in ws] for p in PRECISIONS}
    stacks["int8 (FBGEMM dynamic)"] = [DynamicInt8(w) for w in ws]
    return ws, stacks


def read_speed(n: int = 768, total_bytes: int = 512 * 2**20, rows=(1, 5), rounds: int = 7) -> dict:
    """Median ms per product of the whole stack per precision and row count, and the plain read (module doc)."""
    ws, stacks = _stack(n, total_bytes)
    plain = torch.ones(len(ws) * 4 * n * n)  # as many float32 bytes as the fp32 stack
    xs = {r: torch.randn(r, n) for r in rows}
    times: dict = {"plain": []}
    for _ in range(rounds + 1):  # round 0 warms up (oneDNN packs fp32 for 2+ rows there) and is dropped
        t0 = time.perf_counter_ns()
        plain.sum()
        times["plain"].append((time.perf_counter_ns() - t0) / 1e6)
        for name, stack in stacks.items():
            for r in rows:
                t0 = time.perf_counter_ns()
                for m in stack:
                    m.mm(xs[r])
                times.setdefault(f"{name}|{r}", []).append((time.perf_counter_ns() - t0) / 1e6)
    plain_ms = summarise(times["plain"][1:])
    plain_gb_s = plain.numel() * 4 / plain_ms["median"] / 1e6
    out = {"n_embd": n, "matrices": len(ws), "fp32_bytes": plain.numel() * 4, "plain_ms": plain_ms,
           "plain_gb_s": plain_gb_s, "kernels": []}
    for name, stack in stacks.items():
        nbytes = sum(m.nbytes for m in stack)
        for r in rows:
            ms = summarise(times[f"{name}|{r}"][1:])
            out["kernels"].append({"kernel": name, "rows": r, "bytes": nbytes, "ms": ms,
                                   "gb_s": nbytes / ms["median"] / 1e6,
                                   "plain_trips": ms["median"] / (nbytes / plain_gb_s / 1e6)})
    return out


def _decode_forward_ms(model, tokenizer, steps: int, layer_timing: bool = False) -> tuple[float, float]:
    """Median decode forward ms and median weight_read ms of one batch-1 run of ``steps`` tokens."""
    from model.engine import Engine
    engine = Engine(model, tokenizer, max_batch=1, layer_timing=layer_timing)
    engine.add_request([1, 2, 3, 4], max_new_tokens=steps)
    reports = [r for r in engine.run() if r.phase == "decode"]
    return statistics.median(r.forward_ms for r in reports), statistics.median(r.weight_read_ms for r in reports)


def _models(model_dir: Path):
    from model.checkpoint import load_pretrained
    from model.quantize import set_precision
    fp32, tok = load_pretrained(model_dir)
    return {p: set_precision(copy.deepcopy(fp32), p) for p in PRECISIONS}, tok


def decode_vs_floor(model_dir: Path, steps: int = 32, rounds: int = 5, layer_timing_too: bool = True) -> dict:
    """Batch-1 decode forward ms per precision (and with layer timing), interleaved, against each floor."""
    from model.hardware import decode_floors
    models, tok = _models(model_dir)
    runs: dict = {}
    for m in models.values():
        _decode_forward_ms(m, tok, 4)  # warm-up
    for _ in range(rounds):
        for p, m in models.items():
            fwd, read = _decode_forward_ms(m, tok, steps)
            runs.setdefault(p, []).append(fwd)
            runs.setdefault(f"{p}|read", []).append(read)
            if layer_timing_too:
                runs.setdefault(f"{p}|layers", []).append(_decode_forward_ms(m, tok, steps, True)[0])
    out = {"model": models["fp32"].config.name, "rows": []}
    for p, m in models.items():
        floor = decode_floors(m.weight_bytes())
        fwd = summarise(runs[p])
        read = summarise(runs[f"{p}|read"])
        row = {"weights": p, "weight_bytes": m.weight_bytes(), "applies": floor["applies"],
               "floor_ms": floor["floor_ms"], "floor_gb_s": floor["bandwidth_bytes_per_s"] / 1e9, "forward_ms": fwd,
               "ratio": fwd["median"] / floor["floor_ms"], "weight_read_ms": read,
               "read_gb_s": m.weight_bytes() / read["median"] / 1e6}
        if layer_timing_too:
            timed = summarise(runs[f"{p}|layers"])
            row.update(layer_timing_ms=timed, layer_timing_overhead=timed["median"] / fwd["median"] - 1,
                       overhead_per_round=[b / a - 1 for a, b in zip(runs[p], runs[f"{p}|layers"])])
        out["rows"].append(row)
    return out


def _engine_run(model, tokenizer, prompts: list[list[int]], new_tokens: int, max_batch: int) -> tuple[float, list]:
    """Seconds to serve ``prompts`` (greedy, ``new_tokens`` each) on a fresh engine, after a one-token request of
    the same batch has made what the engine makes at its first passes (oneDNN's packed fp32 copies: once per
    engine, as the window's one engine pays it once). Returns (seconds, reports)."""
    from model.engine import Engine
    engine = Engine(model, tokenizer, max_batch=max_batch, prefix_cache=False)  # each run reads its prompt, as HF
    for ids in prompts:
        engine.add_request(list(ids), max_new_tokens=1)
    list(engine.run())
    for ids in prompts:
        engine.add_request(list(ids), max_new_tokens=new_tokens)
    t0 = time.perf_counter()
    reports = list(engine.run())
    return time.perf_counter() - t0, reports


def engine_vs_transformers(model_dir: Path, batches=(1, 8), new_tokens: int = 64, rounds: int = 3) -> list[dict]:
    """Tokens/s of the engine in each precision and of transformers' fp32 ``generate()``, interleaved."""
    from transformers import GPT2LMHeadModel

    models, tok = _models(model_dir)
    # float32, as the engine's fp32 column: a folder stored in FP16 (the big books) would otherwise load as half,
    # which torch's CPU GEMM runs ~10x slower than float32
    hf = GPT2LMHeadModel.from_pretrained(str(model_dir), torch_dtype=torch.float32).eval()
    prompt = tok.encode("def fibonacci(n):\n    ") or [0]
    for m in models.values():
        _engine_run(m, tok, [prompt], 4, 1)
    rows = []
    for batch in batches:
        tps: dict = {}
        for _ in range(rounds):
            for p, m in models.items():
                elapsed, _ = _engine_run(m, tok, [prompt] * batch, new_tokens, batch)
                tps.setdefault(p, []).append(batch * new_tokens / elapsed)
            x = torch.tensor([prompt] * batch)
            with torch.inference_mode():
                t0 = time.perf_counter()
                hf.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=new_tokens,
                            min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)
            tps.setdefault("transformers", []).append(batch * new_tokens / (time.perf_counter() - t0))
        rows.append({"model": models["fp32"].config.name, "batch": batch,
                     "tok_s": {k: summarise(v) for k, v in tps.items()},
                     "ratio": {p: statistics.median(tps[p]) / statistics.median(tps["transformers"])
                               for p in PRECISIONS}})
    return rows


def bits_per_byte(max_tokens: int = 200_000) -> dict:
    """Held-out bits per byte per text and precision, and each precision's difference from fp32."""
    from model.training.model_card import bits_per_byte as bpb
    out = {}
    for name, (path, model_name) in HELDOUT.items():
        if not path.is_file():
            out[name] = {"missing": str(path)}
            continue
        models, tok = _models(REPO / "assets" / "models" / model_name)
        ids = np.fromfile(path, dtype=np.uint16)[:max_tokens]
        window = models["fp32"].config.n_positions
        with torch.inference_mode():
            res = {p: bpb(m, ids, tok, window) for p, m in models.items()}
        out[name] = {"model": model_name, **res, "delta": {p: res[p]["bpb"] - res["fp32"]["bpb"] for p in PRECISIONS}}
    return out


def measure(quick: bool = False) -> dict:
    from bench.run import machine_info
    from model.catalog import CODE
    torch.set_num_threads(1)
    pocket, big = REPO / "assets" / "models" / "target", CODE.path()
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    load_start = os.getloadavg()
    r = {"machine": machine_info(), "started": started, "quick": quick, "load_average_start": load_start,
         "read_speed": read_speed(total_bytes=(128 if quick else 512) * 2**20, rounds=3 if quick else 7),
         "bits_per_byte": bits_per_byte(5_000 if quick else 40_000),
         "floor": [decode_vs_floor(big, 16 if quick else 32, 2 if quick else 5),
                   decode_vs_floor(pocket, 16 if quick else 32, 2 if quick else 5)],
         "transformers": engine_vs_transformers(big, new_tokens=16 if quick else 64, rounds=1 if quick else 3)
         + engine_vs_transformers(pocket, new_tokens=16 if quick else 64, rounds=1 if quick else 3)}
    r["load_average_end"] = os.getloadavg()
    return r


def _f(s: dict, digits: int = 2) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def render_read_speed(r: dict) -> list[str]:
    lines = [f"### Read speed of the weight multiply ({r['matrices']} matrices of (4n, n), n = {r['n_embd']}: "
             f"{r['fp32_bytes'] / 2**20:.0f} MiB in fp32)", "",
             f"Plain read (`sum` over {r['fp32_bytes'] / 2**20:.0f} MiB of float32): {_f(r['plain_ms'], 1)} ms, "
             f"**{r['plain_gb_s']:.1f} GB/s**.", "",
             "| kernel | rows | bytes held | ms per stack | GB/s of its bytes | plain trips |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {k['kernel']} | {k['rows']} | {k['bytes'] / 2**20:.0f} MiB | {_f(k['ms'], 1)} | {k['gb_s']:.1f} | "
              f"{k['plain_trips']:.2f} |" for k in r["kernels"]]
    return lines + [""]


def render_floor(f: dict) -> list[str]:
    lines = [f"### Decode against its floor: {f['model']} (batch 1)", "",
             "| weights | bytes | floor (which, GB/s) | decode forward ms | × floor | weight_read ms | read GB/s | "
             "layer timing ms | layer-timing overhead |", "|---|---|---|---|---|---|---|---|---|"]
    for row in f["rows"]:
        lt = (f"{_f(row['layer_timing_ms'], 3)} | {row['layer_timing_overhead']:+.1%}" if "layer_timing_ms" in row
              else "– | –")
        lines.append(f"| {row['weights']} | {row['weight_bytes']:,} | {row['floor_ms']:.3f} ms ({row['applies']}, "
                     f"{row['floor_gb_s']:.1f}) | {_f(row['forward_ms'], 3)} | {row['ratio']:.2f} | "
                     f"{_f(row['weight_read_ms'], 3)} | {row['read_gb_s']:.1f} | {lt} |")
    return lines + [""]


def render_transformers(rows: list[dict]) -> list[str]:
    lines = ["### Engine against transformers `generate()` (fp32), tokens/s", "",
             "| model | batch | engine fp32 | engine fp16 | engine int8 | transformers | fp32 × | fp16 × | int8 × |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        t = row["tok_s"]
        lines.append(f"| {row['model']} | {row['batch']} | "
                     + " | ".join(_f(t[k], 0) for k in (*PRECISIONS, "transformers"))
                     + " | " + " | ".join(f"{row['ratio'][p]:.2f}" for p in PRECISIONS) + " |")
    return lines + [""]


def render_bpb(b: dict) -> list[str]:
    lines = ["### Held-out bits per byte", "",
             "| text (model) | tokens | fp32 | fp16 (Δ) | int8 (Δ) |", "|---|---|---|---|---|"]
    for name, r in b.items():
        if "missing" in r:
            lines.append(f"| {name} | missing: {r['missing']} | | | |")
            continue
        lines.append(f"| {name} ({r['model']}) | {r['fp32']['tokens']:,} | {r['fp32']['bpb']:.4f} | "
                     f"{r['fp16']['bpb']:.4f} ({r['delta']['fp16']:+.5f}) | {r['int8']['bpb']:.4f} "
                     f"({r['delta']['int8']:+.5f}) |")
    return lines + ["", "Bounds (issue 44): fp16 within 0.005 of fp32, int8 within 0.02.", ""]


def render_findings(r: dict) -> list[str]:
    """What the tables say, computed from them (so the words follow the figures of the run)."""
    k = {(x["kernel"], x["rows"]): x["ms"]["median"] for x in r["read_speed"]["kernels"]}
    big = r["floor"][-1]["rows"]
    fwd = {row["weights"]: row["forward_ms"]["median"] for row in big}
    lines = ["**Reading.** "
             f"fp16 multiplies the stack {k[('fp32', 1)] / k[('fp16', 1)]:.1f}× faster than fp32 at 1 row and "
             f"{k[('fp32', 5)] / k[('fp16', 5)]:.1f}× at 5 rows; the engine's int8 (`_weight_int8pack_mm`) is "
             f"{k[('int8', 1)] / k[('fp16', 1)]:.1f}× slower than fp16 at 1 row here. On the DRAM-sized model the "
             f"decode forward is {fwd['fp32'] / fwd['fp16']:.2f}× faster in fp16 than in fp32. FBGEMM's dynamic "
             f"int8 is {k[('int8', 1)] / k[('int8 (FBGEMM dynamic)', 1)]:.1f}× faster than the engine's int8 at 1 row "
             f"and {k[('int8', 5)] / k[('int8 (FBGEMM dynamic)', 5)]:.1f}× at 5, but it quantizes the activations "
             "of a whole pass with one scale, so a row's result depends on the other rows of its batch (batched ≠ "
             "alone); the engine keeps `_weight_int8pack_mm`, which multiplies each row on its own "
             "(model/weight_mm.py).", ""]
    return lines


def render(r: dict) -> str:
    m = r["machine"]
    ls, le = r["load_average_start"], r["load_average_end"]
    lines = [BEGIN, "## The weight multiply: fp32, fp16 and int8 weights (issue 44)", "",
             f"`python -m bench.weights_bench` (module doc says what each table measures; figures in "
             f"docs/benchmarks-weights.json). Measured {r['started']} on {m['cpu']}, {m['cores']} cores, torch "
             f"{m['torch']}, **1 thread**; medians (min–max) of interleaved rounds. Load average (1, 5, 15 min) "
             f"{', '.join(f'{v:.2f}' for v in ls)} at the start, {', '.join(f'{v:.2f}' for v in le)} at the end "
             f"on {m['cores']} cores (above {m['cores']}, processes waited for a core): compare the precisions with "
             "each other (they alternate within each round) rather than with other sections, measured at other "
             "times.", ""]
    lines += render_read_speed(r["read_speed"])
    for f in r["floor"]:
        lines += render_floor(f)
    lines += render_transformers(r["transformers"]) + render_bpb(r["bits_per_byte"]) + render_findings(r)
    return "\n".join(lines + [END]) + "\n"


def write_section(md: Path, section: str) -> None:
    """Replace the section between the markers in ``md`` (or add it before "## Lessons", else at the end)."""
    text = md.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(END, 1)[1]
    elif "\n## Lessons" in text:
        head, tail = text.split("\n## Lessons", 1)
        text = head + "\n" + section + "\n## Lessons" + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    md.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.weights_bench", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller sizes, fewer rounds (a smoke run)")
    p.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"), help="the report to put the section in")
    p.add_argument("--render-only", action="store_true", help="write the section again from the .json, no measuring")
    a = p.parse_args(argv)
    out = Path(a.out)
    data = out.with_name("benchmarks-weights" + ("-quick" if a.quick else "") + ".json")
    if a.render_only:
        r = json.loads(data.read_text(encoding="utf-8"))
    else:
        r = measure(quick=a.quick)
        data.write_text(json.dumps(r, indent=1, default=str) + "\n", encoding="utf-8")
    write_section(out, render(r))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
