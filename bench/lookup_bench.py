"""``python -m bench.lookup_bench``: what the n-gram apprentice (prompt lookup) buys on its own presets.

For each lookup preset of the code model (``model.catalog.CODE.lookup_presets``), at the preset's own sampling,
the Live page's answer (``--tokens``, 64) is written plainly and with the n-gram apprentice guessing the preset's
k per trip, on fresh engines over one loaded model (paged KV cache, prefix cache off, one torch thread):

* each round writes ``--answers`` answers (seeds 1..answers) once plainly and once with the apprentice, the order
  of the two sides alternating from round to round (ABBA); a warm-up round first, thrown away;
* a side's time in a round = the summed ``StepReport.wall_ms`` of its answers (prefill, lookups, verify passes,
  sampling: the whole step);
* speed-up = median plain ms ÷ median n-gram ms over the rounds; the per-round speed-ups give the spread
  and the rounds the apprentice was faster in;
* acceptance = guesses kept ÷ guesses proposed over every kept round; answers = the distinct answers (seeds);
  loops = those of them in which the apprentice's answer wrote a phrase three times in a row
  (``model.loops.find_loop``). As on the Live page, the engine stops a looping request (``Engine.stop_loops``), on
  both sides, so a loop is not timed as if it were an answer.

Writes the figures as JSON (``--json``, default ``assets/lookup.json``: the Live page reads them through
``model.catalog.lookup_measured``) and prints a Markdown table. ``--temperature`` overrides the presets'
sampling (0: greedy) for a comparison; then nothing is written unless ``--json`` says where.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_answer(target, tokenizer, ids: list[int], n: int, k: int, sampling) -> dict:
    """One answer of up to ``n`` tokens after ``ids`` on a fresh engine, the n-gram apprentice guessing ``k`` per
    trip (0: plain). Returns {"ms": summed step wall ms, "proposed", "accepted", "text"}."""
    from model.engine import Engine
    e = Engine(target, tokenizer, kv_budget_bytes=8 * 2**20, prefix_cache=False, max_batch=1)
    e.stop_loops = True  # as the Live page's engine does (model/service.py)
    if k:
        e.set_draft_kind("ngram")
        e.set_draft_k(k)
    e.add_request(ids, max_new_tokens=n, sampling=sampling)
    ms = sum(r.wall_ms for r in e.run(max_steps=10_000))
    text = next(iter(e.finished.values())).text if e.finished else ""
    return {"ms": ms, "proposed": e.spec_proposed, "accepted": e.spec_accepted, "text": text}


def measure(target, tokenizer, prompt: str, k: int, sampling_for, n: int, answers: int, rounds: int) -> dict:
    """The figures of one preset (see the module doc). ``sampling_for(seed)`` gives a ``SamplingParams``."""
    from model.loops import find_loop
    ids = tokenizer.encode(prompt)
    plain_ms: list[float] = []
    with_ms: list[float] = []
    proposed = accepted = 0
    looped: set[int] = set()  # seeds whose answer with the apprentice looped (and was stopped)
    example = ""
    for r in range(-1, rounds):  # round -1: the warm-up
        sides = (0, k) if r % 2 == 0 else (k, 0)
        totals = {0: 0.0, k: 0.0}
        for side in sides:
            for seed in range(1, answers + 1):
                out = one_answer(target, tokenizer, ids, n, side, sampling_for(seed))
                totals[side] += out["ms"]
                if side and r >= 0:
                    proposed += out["proposed"]
                    accepted += out["accepted"]
                    if find_loop(out["text"]) is not None:
                        looped.add(seed)
                    elif not example:
                        example = out["text"]
        if r >= 0:
            plain_ms.append(totals[0])
            with_ms.append(totals[k])
    speedup = statistics.median(plain_ms) / statistics.median(with_ms)
    rounds_x = [p / w for p, w in zip(plain_ms, with_ms)]
    return {"k": k, "tokens": n, "answers": answers, "looped_seeds": sorted(looped), "rounds": rounds,
            "plain_ms": {"median": statistics.median(plain_ms), "min": min(plain_ms), "max": max(plain_ms)},
            "ngram_ms": {"median": statistics.median(with_ms), "min": min(with_ms), "max": max(with_ms)},
            "speedup": speedup, "round_speedups": rounds_x, "rounds_faster": sum(1 for x in rounds_x if x > 1.0),
            "acceptance": accepted / proposed if proposed else None, "loops": len(looped), "example": example}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=64, help="tokens per answer (the Live page's answer: 64)")
    p.add_argument("--answers", type=int, default=4, help="answers per side per round (seeds 1..N)")
    p.add_argument("--rounds", type=int, default=8, help="kept rounds (after one warm-up round)")
    p.add_argument("--temperature", type=float, default=None, help="override the presets' temperature (0: greedy)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", default=None, help="where to write the figures (default assets/lookup.json)")
    a = p.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    from model.catalog import CODE
    from model.checkpoint import load_pretrained
    from model.sampling import SamplingParams
    target, tokenizer = load_pretrained(CODE.path())
    load_start = list(os.getloadavg())
    result: dict = {"command": "python -m bench.lookup_bench " + " ".join(argv if argv is not None else sys.argv[1:]),
                    "date": time.strftime("%Y-%m-%d"), "threads": a.threads, "presets": {}}
    for preset in CODE.lookup_presets:
        t = preset.temperature if a.temperature is None else a.temperature

        def sampling_for(seed: int, t=t, top_p=preset.top_p):
            return SamplingParams() if t == 0 else SamplingParams(temperature=t, top_p=top_p, seed=seed)
        figures = measure(target, tokenizer, preset.prompt, preset.k, sampling_for, a.tokens, a.answers, a.rounds)
        figures.update({"temperature": t, "top_p": preset.top_p if t else 1.0})
        result["presets"][preset.key] = figures
    result["load_average"] = [round(x, 2) for x in load_start] + [round(x, 2) for x in os.getloadavg()]
    out = a.json or (str(REPO / "assets" / "lookup.json") if a.temperature is None else None)
    if out:
        Path(out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"load average (1, 5, 15 min) at start and end: {result['load_average']}")
    print("| preset | temperature | plain ms | n-gram ms | speed-up (medians) | rounds faster | kept | loops |")
    print("|---|---|---|---|---|---|---|---|")
    for key, f in result["presets"].items():
        pm, nm = f["plain_ms"], f["ngram_ms"]
        print(f"| {key} | {f['temperature']:g} | {pm['median']:.0f} ({pm['min']:.0f}–{pm['max']:.0f}) | "
              f"{nm['median']:.0f} ({nm['min']:.0f}–{nm['max']:.0f}) | **{f['speedup']:.2f}×** "
              f"({min(f['round_speedups']):.2f}–{max(f['round_speedups']):.2f}) | "
              f"{f['rounds_faster']} of {f['rounds']} | "
              f"{(f['acceptance'] or 0) * 100:.0f} % | {f['loops']} of {f['answers']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
