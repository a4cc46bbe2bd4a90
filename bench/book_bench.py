"""``python -m bench.book_bench``: where the book lives decides the trip. The pocket book and the big book of a
family, measured the same way, interleaved, on one thread.

Per book, each round (the books' order alternating from round to round, ABBA):

* **a plain trip**: one greedy answer of ``--new-tokens`` tokens at batch 1; per decode step the engine's own
  timers give ``forward_ms`` and ``weight_read_ms`` (the weight GEMVs and the embedding gather, timed in the
  pass); the round's figures are the medians over its decode steps: forward ms and reading share
  (weight_read_ms ÷ forward_ms);
* **a shared table**: ``--batch`` answers of the same prompt decoded together; the round's figure is the median
  decode step's ``forward_ms`` ÷ the plain trip's median ``forward_ms`` (1.0: eight seats cost one trip);
* **the apprentice** (where the book has one: the big book's is the pocket book, the pocket book's its layer-skip
  draft): one greedy answer with ``--k`` guesses every trip (no early stop); the check's cost is the median verify
  pass's ``forward_ms`` (the target reading k + 1 rows) ÷ the plain trip's, and one guess's cost the median
  ``draft_ms ÷ proposed`` ÷ the plain trip's (1 and 0: a check as dear as a trip, a guess free).

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


def verify_steps(model, tokenizer, draft, ids: list[int], n: int, k: int) -> list:
    """The verify StepReports of one greedy answer of ``n`` tokens with ``draft`` guessing ``k`` every trip."""
    from model.engine import Engine
    from model.sampling import SamplingParams
    e = Engine(model, tokenizer, kv_budget_bytes=32 * 2**20, prefix_cache=False, max_batch=1)
    e.set_draft(draft, tokenizer)
    e.set_draft_kind("model")
    e.set_draft_k(k)
    e.draft_stop_below = 0.0
    e.add_request(ids, max_new_tokens=n, sampling=SamplingParams(temperature=0.0))
    return [r for r in e.run(max_steps=10_000) if r.phase == "verify" and r.proposed > 0]


def one_round(model, tokenizer, ids: list[int], n: int, batch: int, draft=None, k: int = 4) -> dict:
    """One round on one book: the plain trip's median forward ms and reading share, the shared table's cost and,
    with a ``draft``, the check's and one guess's cost in plain trips."""
    plain = decode_steps(model, tokenizer, ids, n, 1)
    fwd = statistics.median(r.forward_ms for r in plain)
    share = statistics.median(r.weight_read_ms / r.forward_ms for r in plain if r.forward_ms > 0)
    table = decode_steps(model, tokenizer, ids, n, batch)
    out = {"forward_ms": fwd, "reading_share": share,
           "batch_cost": statistics.median(r.forward_ms for r in table) / fwd}
    if draft is not None:
        checks = verify_steps(model, tokenizer, draft, ids, n, k)
        out["check_cost"] = statistics.median(r.forward_ms for r in checks) / fwd
        out["guess_cost"] = statistics.median(r.draft_ms / r.proposed for r in checks) / fwd
    return out


def summ(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def load_book(path: Path, weights: str | None):
    """(model, tokenizer) of the book at ``path`` in ``weights`` ("fp32", "fp16", "int8"; None: the precision
    the engine picks on this machine, ``model.weight_mm.choose_precision``), laid out for decoding. A book stored
    in int8 is kept in int8."""
    from model.checkpoint import load_pretrained
    from model.quantize import set_precision
    from model.weight_mm import choose_precision
    model, tok = load_pretrained(path)
    if getattr(model, "weights", "fp32") == "fp32":  # a book stored in int8 (the pocket book's draft) stays so
        set_precision(model, choose_precision(weights, model.config.n_embd, model.weight_bytes())["precision"])
    return model.prepare_for_decode(), tok


def run(books: dict[str, Path], rounds: int, n: int, batch: int, weights: str | None = None,
        drafts: dict[str, Path] | None = None, k: int = 4) -> dict:
    """``books``: {name: model folder}; ``weights``: their precision (None: the engine's default here);
    ``drafts``: {name: the book's draft model folder} for the books whose apprentice is measured (k guesses).
    Returns {name: {"weight_bytes", "weights", "floor", "forward_ms", "reading_share", "batch_cost"[,
    "check_cost", "guess_cost"]}} with each figure's median over the rounds and its spread."""
    from model.hardware import decode_floors
    loaded = {name: load_book(path, weights) for name, path in books.items()}
    helpers = {name: load_book(path, weights)[0] for name, path in (drafts or {}).items()}
    ids = {name: tok.encode(PROMPT) for name, (_, tok) in loaded.items()}
    for name, (model, tok) in loaded.items():  # warm-up
        one_round(model, tok, ids[name], 8, batch, helpers.get(name), k)
    got: dict[str, list[dict]] = {name: [] for name in books}
    names = list(books)
    for rnd in range(rounds):
        for name in (names if rnd % 2 == 0 else names[::-1]):
            model, tok = loaded[name]
            got[name].append(one_round(model, tok, ids[name], n, batch, helpers.get(name), k))
            print(f"  round {rnd} {name}: {got[name][-1]}", file=sys.stderr, flush=True)
    out = {}
    for name, rows in got.items():
        model = loaded[name][0]
        out[name] = {"path": str(books[name]), "weight_bytes": model.weight_bytes(),
                     "weights": getattr(model, "weights", "fp32"),
                     "floor": decode_floors(model.weight_bytes(), threads=1),
                     **{key: summ([r[key] for r in rows]) for key in rows[0]}}
    return out


def _spread(r: dict, key: str, scale: float = 1.0, fmt: str = "{:.2f}") -> str:
    """"median (min–max)" of figure ``key`` of book result ``r``, or "–" where the book has none."""
    if key not in r:
        return "–"
    m = r[key]
    return f"{fmt.format(m['median'] * scale)} ({fmt.format(m['min'] * scale)}–{fmt.format(m['max'] * scale)})"


def markdown(res: dict, batch: int) -> str:
    """One row per book: precision, bytes, where it lives, floor, plain trip, reading share, the shared table's
    cost and the apprentice's check and guess, in plain trips."""
    rows = ["| book | weights | bytes | lives in | floor | plain trip (forward) | reading share | "
            f"batch {batch} ÷ batch 1 | check of {res.get('k', 4)} guesses ÷ trip | one guess ÷ trip |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in res["books"].items():
        f = r["floor"]
        rows.append(f"| {name} | {r.get('weights', 'fp32')} | {r['weight_bytes'] / 1e6:.1f} MB | {f['applies']} "
                    f"({(f['l3_bytes'] or 0) / 2**20:.0f} MiB L3) | {f['floor_ms']:.2f} ms | "
                    f"{_spread(r, 'forward_ms')} ms | {_spread(r, 'reading_share', 100, '{:.0f}')} % | "
                    f"{_spread(r, 'batch_cost')} | {_spread(r, 'check_cost')} | {_spread(r, 'guess_cost')} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    from model.catalog import CODE
    p = argparse.ArgumentParser(prog="python -m bench.book_bench", description=__doc__.splitlines()[0])
    p.add_argument("--big", type=Path, default=CODE.path())
    p.add_argument("--pocket", type=Path, default=CODE.draft_path())
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--new-tokens", type=int, default=48)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--k", type=int, default=4, help="the apprentice's guesses per trip")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--weights", choices=("fp32", "fp16", "int8"), default=None,
                   help="the books' precision (default: the engine's choice on this machine)")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    from model.catalog import identify
    drafts = {name: book.draft_path() for name, path in (("pocket", a.pocket), ("big", a.big))
              if (book := identify(path)) is not None and book.draft_path().is_dir()}
    books = run({"pocket": a.pocket, "big": a.big}, a.rounds, a.new_tokens, a.batch, a.weights, drafts, a.k)
    res = {"books": books, "rounds": a.rounds, "new_tokens": a.new_tokens, "batch": a.batch, "k": a.k,
           "threads": a.threads,
           "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(markdown(res, a.batch))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
