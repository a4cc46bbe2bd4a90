"""``python -m bench.desk_bench``: when does the desk, not the cart, set the trip? The roofline of one core.

A trip of a book of P weights over R rows (R seats at the table, or a check of R - 1 guesses) must

* read the weights: P × bytes per weight ÷ the memory's read speed (the floor, ``model.hardware.decode_floors``);
* multiply them: 2 × P × R floating-point operations ÷ the core's arithmetic speed.

The second passes the first at R* = arithmetic speed × bytes per weight ÷ (2 × read speed) rows: below R* a
seat is nearly free (the cart is the limit), above it every seat costs its arithmetic (the desk is the limit).
Williams, Waterman & Patterson 2009, "Roofline: an insightful visual performance model" (the ridge point).

Measured here, one thread, each figure the median of ``--rounds`` interleaved rounds (min–max):

* **arithmetic speed**: a float32 (256 × C) @ (C × C) product that fits the cache, GFLOP/s (the core's practical
  peak through torch's GEMM);
* **read speed**: ``model.hardware.decode_floors`` (bytes ÷ s of a plain read of RAM, cached per machine);
* **the stack**: the default code book's weight shapes (every block's four projections and the LM head, as
  ``model/weight_mm.py`` ``WeightMatrix`` in each precision), multiplied by R = 1, 2, 4, 5, 8 rows; ms per stack,
  and ms ÷ the 1-row stack (the cost of R rows in plain trips), beside the arithmetic bound 2 × P × R ÷ arithmetic
  speed.

Writes JSON (``--json``) and prints a Markdown table. A speed figure, never a test's assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

ROWS = (1, 2, 4, 5, 8)


def gemm_gflops(c: int = 512, m: int = 256, repeats: int = 40) -> float:
    """Float32 GFLOP/s of (m × c) @ (c × c) on one thread, in cache: 2·m·c² ÷ the median time of ``repeats``."""
    import torch
    a, b = torch.randn(m, c), torch.randn(c, c)
    for _ in range(3):
        a @ b
    times = []
    for _ in range(repeats):
        t = time.perf_counter_ns()
        a @ b
        times.append((time.perf_counter_ns() - t) / 1e9)
    return 2 * m * c * c / statistics.median(times) / 1e9


def stack_shapes(n_embd: int, n_layer: int, vocab: int) -> list[tuple[int, int]]:
    """(out, in) of every weight product of one GPT-2 decode step: per block c_attn, c_proj, c_fc, mlp c_proj; then
    the LM head (vocab × n_embd)."""
    n = n_embd
    return [(3 * n, n), (n, n), (4 * n, n), (n, 4 * n)] * n_layer + [(vocab, n)]


def time_stack(matrices: list, rows: int) -> float:
    """ms to multiply ``rows`` float32 rows through every ``WeightMatrix`` of the stack once."""
    import torch
    xs = {m.in_features: torch.randn(rows, m.in_features) for m in matrices}
    t = time.perf_counter_ns()
    for m in matrices:
        m.mm(xs[m.in_features])
    return (time.perf_counter_ns() - t) / 1e6


def run(shapes: list[tuple[int, int]], precisions=("fp32", "fp16", "int8"), rounds: int = 7) -> dict:
    """The stack in each precision at each row count, interleaved (every precision and row count once a round;
    the first round is a warm-up, dropped). Returns {"params", "gflops", "stacks": {precision: {"bytes", rows:
    {"median", "min", "max"}}}}."""
    import torch

    from model.weight_mm import WeightMatrix
    ws = [torch.randn(o, i) * 0.02 for o, i in shapes]
    stacks = {p: [WeightMatrix(w, torch.zeros(w.shape[0]), p) for w in ws] for p in precisions}
    times: dict = {p: {r: [] for r in ROWS} for p in precisions}
    for rnd in range(rounds + 1):
        for p in precisions:
            for r in ROWS:
                ms = time_stack(stacks[p], r)
                if rnd:
                    times[p][r].append(ms)
    out = {"params": sum(o * i for o, i in shapes), "gflops": gemm_gflops(), "stacks": {}}
    for p in precisions:
        out["stacks"][p] = {"bytes": sum(m.nbytes for m in stacks[p]),
                            **{r: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                               for r, v in times[p].items()}}
    return out


def markdown(res: dict, read_bytes_per_s: float) -> str:
    """The stack's ms per row count and precision, in plain trips, beside the arithmetic bound and the ridge."""
    gflops = res["gflops"]
    lines = [f"Arithmetic: {gflops:.1f} GFLOP/s (float32 GEMM in cache, one thread); read speed of RAM: "
             f"{read_bytes_per_s / 1e9:.1f} GB/s; {res['params'] / 1e6:.1f}M weights.", "",
             "| weights | bytes | ridge R* (rows) | " + " | ".join(f"{r} rows: ms (trips; arithmetic bound ms)"
                                                             for r in ROWS) + " |",
             "|---|---|---|" + "---|" * len(ROWS)]
    for p, s in res["stacks"].items():
        per_weight = s["bytes"] / res["params"]
        ridge = gflops * 1e9 * per_weight / (2 * read_bytes_per_s)
        one = s[1]["median"] if 1 in s else s["1"]["median"]
        cells = []
        for r in ROWS:
            m = s[r] if r in s else s[str(r)]
            bound = 2 * res["params"] * r / (gflops * 1e9) * 1e3
            cells.append(f"{m['median']:.2f} ({m['median'] / one:.2f}; {bound:.2f})")
        lines.append(f"| {p} | {s['bytes'] / 1e6:.1f} MB | {ridge:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from model.catalog import CODE
    from model.checkpoint import read_config
    p = argparse.ArgumentParser(prog="python -m bench.desk_bench", description=__doc__.splitlines()[0])
    p.add_argument("--model", type=Path, default=CODE.path(), help="the book whose weight shapes are multiplied")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    import torch

    from model.hardware import decode_floors
    torch.set_num_threads(1)
    cfg = read_config(a.model)
    res = run(stack_shapes(cfg.n_embd, cfg.n_layer, cfg.vocab_size), rounds=a.rounds)
    floor = decode_floors(res["stacks"]["fp32"]["bytes"], threads=1)
    res.update(model=str(a.model), rounds=a.rounds, floor=floor,
               load_average=list(os.getloadavg()) if hasattr(os, "getloadavg") else None)
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(markdown(res, floor["dram_bandwidth_bytes_per_s"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
