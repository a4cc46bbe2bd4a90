"""``python -m bench.int8_kernels``: which int8 kernel the engine should run, measured.

The big book's weight stack (``bench.desk_bench.stack_shapes``: every block's four projections and the LM head, as
model/weight_mm.py ``WeightMatrix``, random weights of the book's shapes) multiplied by 1, 5 and 8 rows in fp16 and
in int8 with each of the two int8 kernels: FBGEMM with a scale per row (the engine's, ``fbgemm_int8_mm``) and
``torch._weight_int8pack_mm`` (its fallback), beside a plain read (``sum``) of as many bytes as each stack holds.
One thread; ``--rounds`` rounds after a dropped warm-up round, every contender once a round; medians and min–max.
Writes JSON (``--json``, default docs/int8-kernels.json) and prints one line per kernel. A speed figure, never a
test's assertion.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

ROWS = (1, 5, 8)


def stacks() -> dict:
    """{contender: [WeightMatrix, ...]} over the big book's shapes (n_embd 512, 8 layers, 6144 tokens)."""
    import torch

    from bench.desk_bench import stack_shapes
    from model.weight_mm import WeightMatrix
    ws = [torch.randn(o, i) * 0.02 for o, i in stack_shapes(512, 8, 6144)]
    out = {"fp16": [WeightMatrix(w, torch.zeros(w.shape[0]), "fp16") for w in ws],
           "int8 fbgemm": [WeightMatrix(w, torch.zeros(w.shape[0]), "int8") for w in ws],
           "int8pack": [WeightMatrix(w, torch.zeros(w.shape[0]), "int8") for w in ws]}
    for m in out["int8pack"]:
        m.int8_kernel = "int8pack"
    return out


def plain_read_ms(t) -> float:
    """ms of one ``sum`` over the float32 tensor ``t``."""
    t0 = time.perf_counter_ns()
    t.sum()
    return (time.perf_counter_ns() - t0) / 1e6


def measure(rounds: int = 9) -> dict:
    """Returns {"load", "bytes": {contender: bytes}, "plain_ms": {bytes kind: ms}, "ms": {"<contender> <rows>":
    median ms}, "spread": {same key: [min, max]}}."""
    import torch

    from bench.desk_bench import time_stack
    torch.set_num_threads(1)
    s = stacks()
    nbytes = {p: sum(m.nbytes for m in ms) for p, ms in s.items()}
    plain = {p: torch.randn(n // 4) for p, n in nbytes.items() if p != "int8pack"}  # int8pack holds int8's bytes
    times = {(p, r): [] for p in s for r in ROWS}
    ptimes = {p: [] for p in plain}
    load = os.getloadavg()
    for rnd in range(rounds + 1):
        for p, ms in s.items():
            for r in ROWS:
                t = time_stack(ms, r)
                if rnd:
                    times[(p, r)].append(t)
        for p, t in plain.items():
            t = plain_read_ms(t)
            if rnd:
                ptimes[p].append(t)
    return {"load": [load, os.getloadavg()], "bytes": nbytes,
            "plain_ms": {p: statistics.median(v) for p, v in ptimes.items()},
            "ms": {f"{p} {r}": statistics.median(v) for (p, r), v in times.items()},
            "spread": {f"{p} {r}": [min(v), max(v)] for (p, r), v in times.items()}}


def lines(out: dict) -> list[str]:
    """One line per contender: ms at 1 row, as a share of a plain read of its bytes, and 5 and 8 rows in 1-row
    trips."""
    rows = []
    for p, n in out["bytes"].items():
        one = out["ms"][f"{p} 1"]
        plain = out["plain_ms"].get(p, out["plain_ms"]["int8 fbgemm"])
        five, eight = out["ms"][f"{p} 5"] / one, out["ms"][f"{p} 8"] / one
        rows.append(f"{p:12s} {n / 1e6:5.1f} MB  1 row {one:6.2f} ms ({plain / one * 100:3.0f} % of a plain read, "
                    f"{plain:.2f} ms)  5 rows {five:.2f}x  8 rows {eight:.2f}x")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.int8_kernels")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--json", default="docs/int8-kernels.json")
    args = p.parse_args(argv)
    out = measure(args.rounds)
    print("\n".join(lines(out)))
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
