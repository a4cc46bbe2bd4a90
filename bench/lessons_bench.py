"""``python main.py bench --lessons``: every page's measured comparison, taken as the page takes it, N times.

Each run is one whole page measurement (``model/teaching/lesson_runs.py``: a warm-up, interleaved repeats, medians), so
"agreed in 10 of 10" means ten visitors opening the page would each have seen the lesson hold. Per lesson the
report gives how many runs agreed, the median and spread (over the runs) of each side's median, the reasons
given when a run disagreed, and the load average before and after (runnable processes; this machine is shared).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from model.teaching.lessons import summary

CODE_PROMPT = "def fibonacci(n):"
TOUR_PROMPT = "Explain the KV cache in one sentence."  # gui/tour/data.py DEFAULT_PROMPTS["en"]
# The Live page's sampling (temperature 0.8, top-p 0.95): where the issue found the apprentice losing.
LIVE_SAMPLING = {"temperature": 0.8, "top_p": 0.95, "seed": 0}


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _lessons(engine, kv_budget: int) -> list[tuple[str, str, str, str, object]]:
    """(page, lesson, better side, worse side, one page measurement -> (better ms, worse ms, data))."""
    from model.sampling import SamplingParams
    from model.teaching import lesson_runs as lr

    tok = engine.tokenizer
    tour_ids = tok.encode(TOUR_PROMPT) or [0]
    code_ids = tok.encode(CODE_PROMPT) or [0]
    live = SamplingParams(**LIVE_SAMPLING)
    system = (tok.encode("You are a concise assistant. ") or [0]) * 64
    system = system[:engine.config.n_positions // 2]

    def kv():
        d = lr.kv_cache_times(engine, tour_ids[:32], 24, kv_budget)
        return d["with"], d["without"], d

    def batching():
        d = lr.batching(engine, tour_ids[:16], kv_budget)
        return d["continuous"]["ms"], d["static"]["ms"], d

    def prefix():
        d = lr.prefix_times(engine, system, tour_ids[:24], (tok.encode("And why does it help?") or [0])[:24],
                            kv_budget)
        return d["warm"], d["cold"], d

    def spec(apprentice, sampling, ids):
        def run():
            d = lr.speculative_times(engine, ids, 32, kv_budget, apprentice=apprentice, sampling=sampling)
            return (d["with"], d["plain"], d) if d.get("available") else (None, None, d)
        return run

    out = [("08", "the KV cache is faster than recomputing", "with the cache", "without", kv),
           ("12", "continuous batching is faster than static", "continuous", "static", batching),
           ("13", "the draft model speeds up greedy code", "draft model, k=4", "plain",
            spec("model", None, code_ids)),
           ("13", "the n-gram apprentice speeds up greedy code", "n-gram, k=4", "plain",
            spec("ngram", None, code_ids)),
           ("Live", "the draft model under the Live page's sampling (T 0.8, top-p 0.95)", "draft model, k=4",
            "plain", spec("model", live, code_ids)),
           ("Live", "the n-gram apprentice under the Live page's sampling", "n-gram, k=4", "plain",
            spec("ngram", live, code_ids)),
           ("15", "a shared opening is read faster from the prefix cache", "warm (cached)", "cold", prefix)]
    return out


def lessons(model_dir: Path, draft_dir: Path | None, runs: int = 10, progress=print) -> list[dict]:
    """Every lesson's comparison ``runs`` times on the model in ``model_dir`` (draft from ``draft_dir``).

    Returns one row per lesson: ``page``, ``lesson``, ``better``/``worse`` (side names), ``runs``, ``agreed``
    (runs whose verdict held), ``better_ms``/``worse_ms`` (summary of the per-run medians, ms), ``why_not``
    (reason -> count), ``acceptance`` (apprentice rows: the median over runs), ``load_start``/``load_end``.
    """
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.teaching.analysis import KV_BUDGET_BYTES
    from model.teaching.lessons import verdict

    model, tok = load_pretrained(model_dir)
    engine = Engine(model, tok, kv_budget_bytes=KV_BUDGET_BYTES)
    if draft_dir is not None and (Path(draft_dir) / "config.json").is_file():
        draft, dtok = load_pretrained(draft_dir)
        engine.set_draft(draft, dtok)
    rows = []
    for page, lesson, better, worse, fn in _lessons(engine, KV_BUDGET_BYTES):
        load_start = _load()
        b_meds, w_meds, agreed, reasons, rates, unavailable = [], [], 0, Counter(), [], False
        for _ in range(runs):
            b, w, data = fn()
            if b is None:
                unavailable = True
                break
            b_meds.append(b["median"])
            w_meds.append(w["median"])
            v = verdict(b, w)
            agreed += v["holds"]
            if not v["holds"]:
                reasons[data.get("why_not") or "noise"] += 1
            if data.get("acceptance") is not None:
                rates.append(data["acceptance"])
        row = {"page": page, "lesson": lesson, "better": better, "worse": worse, "runs": len(b_meds),
               "agreed": agreed, "why_not": dict(reasons), "load_start": load_start, "load_end": _load()}
        if unavailable:
            row["unavailable"] = "no draft model loaded"
        else:
            row["better_ms"], row["worse_ms"] = summary(b_meds), summary(w_meds)
            if rates:
                row["acceptance"] = summary(rates)["median"]
        rows.append(row)
        progress(format_row(row))
    return rows


def format_row(r: dict) -> str:
    """One line per lesson for the terminal."""
    if r.get("unavailable"):
        return f"p{r['page']:>4}  {r['lesson']}: {r['unavailable']}"
    b, w = r["better_ms"], r["worse_ms"]
    why = ", ".join(f"{k} ×{n}" for k, n in r["why_not"].items())
    acc = f"; kept {100 * r['acceptance']:.0f}%" if r.get("acceptance") is not None else ""
    return (f"p{r['page']:>4}  {r['agreed']}/{r['runs']} agree  {r['better']} {b['median']:.1f} ms "
            f"({b['min']:.1f}–{b['max']:.1f})  vs  {r['worse']} {w['median']:.1f} ms ({w['min']:.1f}–{w['max']:.1f})"
            f"{acc}  load {r['load_start']} → {r['load_end']}  {r['lesson']}" + (f"  [why not: {why}]" if why else ""))


def markdown(rows: list[dict]) -> list[str]:
    """The report's "Lessons" section (Markdown lines)."""
    lines = ["## Lessons: does each page's comparison agree with what it teaches?", "",
             "Each run is one whole page measurement as the page takes it (a warm-up, then 5 runs of each side "
             "taken in turn, ABBA; the page shows the medians). Sides: the median over the runs of each run's "
             "median, with the min–max. Load: 1-, 5-, 15-minute load average at the lesson's start and end.", "",
             "| page | lesson | runs agreeing | better side, ms | other side, ms | kept | why not | load start → end |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("unavailable"):
            lines.append(f"| {r['page']} | {r['lesson']} | — | — | — | — | {r['unavailable']} | — |")
            continue
        b, w = r["better_ms"], r["worse_ms"]
        why = ", ".join(f"{k} ×{n}" for k, n in r["why_not"].items()) or "—"
        acc = f"{100 * r['acceptance']:.0f} %" if r.get("acceptance") is not None else "—"
        lines.append(f"| {r['page']} | {r['lesson']} | {r['agreed']} of {r['runs']} | {r['better']}: "
                     f"{b['median']:.1f} ({b['min']:.1f}–{b['max']:.1f}) | {r['worse']}: {w['median']:.1f} "
                     f"({w['min']:.1f}–{w['max']:.1f}) | {acc} | {why} | {r['load_start']} → {r['load_end']} |")
    lines += ["", "Rows \"Live\" are the Live page's apprentice under the window's default sampling, where the issue "
              "found it slower than plain decoding: sampling keeps a guess with probability min(1, p/q) "
              "(model/speculative.py), so fewer guesses are kept and the apprentice's own passes are not paid back. "
              "The engine process measures this at start-up (model/service.py, event \"apprentice\": both "
              "apprentices under the sampling in use and greedy), picks the one that pays, and says under which "
              "setting (pays_when) so the Live page can run its apprentice demo there and say so."]
    return lines + [""]
