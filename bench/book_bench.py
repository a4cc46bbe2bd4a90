"""``python -m bench.book_bench``: where the book lives decides the trip. The pocket book and the big book of a
family, measured the same way, interleaved, on one thread.

Per book, each round (the books' order alternating from round to round, ABBA):

* **a plain trip**: one greedy answer of ``--new-tokens`` tokens at batch 1; per decode step the engine's own
  timers give ``forward_ms`` and ``weight_read_ms`` (the weight GEMVs and the embedding gather, timed in the
  pass); the round's figures are the medians over its decode steps: forward ms and reading share
  (weight_read_ms ÷ forward_ms);
* **a shared table**: ``--batch`` answers of the same prompt decoded together; the round's figure is the median
  decode step's ``forward_ms`` ÷ the plain trip's median ``forward_ms`` (1.0: eight seats cost one trip).

The report gives, per book, the median of the rounds and their spread, beside the book's bytes, the last-level
cache the OS reports and the decode floor (``model.hardware.decode_floors``: bytes ÷ the read speed of the memory
the book lives in). Writes JSON (``--json``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT = "def fibonacci(n):"


def decode_steps(model, tokenizer, prompt_ids: list[int], n: int, batch: int) -> list:
    """The decode StepReports of ``batch`` greedy answers of ``n`` tokens to the same prompt, decoded together."""
    from model.engine import Engine
    from model.sampling import SamplingParams
    e = Engine(model, tokenizer, kv_budget_bytes=32 * 2**20, prefix_cache=False, max_batch=batch)
    for _ in range(batch):
        e.add_request(prompt_ids, max_new_tokens=n, sampling=SamplingParams(temperature=0.0))
    return [r for r in e.run(max_steps=10_000) if r.phase == "decode" and r.batch == batch]


def one_round(model, tokenizer, ids: list[int], n: int, batch: int) -> dict:
    """One round on one book: the plain trip's median forward ms and reading share, the shared table's cost."""
    plain = decode_steps(model, tokenizer, ids, n, 1)
    fwd = statistics.median(r.forward_ms for r in plain)
    share = statistics.median(r.weight_read_ms / r.forward_ms for r in plain if r.forward_ms > 0)
    table = decode_steps(model, tokenizer, ids, n, batch)
    return {"forward_ms": fwd, "reading_share": share,
            "batch_cost": statistics.median(r.forward_ms for r in table) / fwd}


def summ(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def run(books: dict[str, Path], rounds: int, n: int, batch: int) -> dict:
    """``books``: {name: model folder}. Returns {name: {"weight_bytes", "floor", "forward_ms", "reading_share",
    "batch_cost"}} with each figure's median over the rounds and its spread."""
    from model.checkpoint import load_pretrained
    from model.hardware import decode_floors
    loaded = {name: load_pretrained(path) for name, path in books.items()}
    for model, _ in loaded.values():
        model.prepare_for_decode()
    ids = {name: tok.encode(PROMPT) for name, (_, tok) in loaded.items()}
    for name, (model, tok) in loaded.items():  # warm-up
        one_round(model, tok, ids[name], 8, batch)
    got: dict[str, list[dict]] = {name: [] for name in books}
    names = list(books)
    for rnd in range(rounds):
        for name in (names if rnd % 2 == 0 else names[::-1]):
            model, tok = loaded[name]
            got[name].append(one_round(model, tok, ids[name], n, batch))
            print(f"  round {rnd} {name}: {got[name][-1]}", file=sys.stderr, flush=True)
    out = {}
    for name, rows in got.items():
        model = loaded[name][0]
        out[name] = {"path": str(books[name]), "weight_bytes": model.weight_bytes(),
                     "floor": decode_floors(model.weight_bytes(), threads=1),
                     **{k: summ([r[k] for r in rows]) for k in ("forward_ms", "reading_share", "batch_cost")}}
    return out


def markdown(res: dict, batch: int) -> str:
    rows = ["| book | bytes (fp32) | lives in | floor | plain trip (forward) | reading share | "
            f"batch {batch} ÷ batch 1 |", "|---|---|---|---|---|---|---|"]
    for name, r in res["books"].items():
        f = r["floor"]

        def rng(k, scale=1.0, fmt="{:.2f}"):
            return (fmt.format(r[k]["median"] * scale) + " (" + fmt.format(r[k]["min"] * scale) + "–"
                    + fmt.format(r[k]["max"] * scale) + ")")
        rows.append(f"| {name} | {r['weight_bytes'] / 1e6:.1f} MB | {f['applies']} ({(f['l3_bytes'] or 0) / 2**20:.0f} "
                    f"MiB L3) | {f['floor_ms']:.2f} ms | {rng('forward_ms')} ms | "
                    f"{rng('reading_share', 100, '{:.0f}')} % "
                    f"| {rng('batch_cost')} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from model.catalog import CODE
    p = argparse.ArgumentParser(prog="python -m bench.book_bench", description=__doc__.splitlines()[0])
    p.add_argument("--big", type=Path, default=CODE.path())
    p.add_argument("--pocket", type=Path, default=CODE.draft_path())
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--new-tokens", type=int, default=48)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    books = run({"pocket": a.pocket, "big": a.big}, a.rounds, a.new_tokens, a.batch)
    res = {"books": books, "rounds": a.rounds, "new_tokens": a.new_tokens, "batch": a.batch, "threads": a.threads,
           "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(markdown(res, a.batch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
