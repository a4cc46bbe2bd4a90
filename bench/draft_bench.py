"""``python -m bench.draft_bench``: how often a draft model's guesses are kept, and what it buys, on held-out code.

Prompts: the held-out code of the bundled corpus (``assets/models/corpus.json``'s ``heldout_names`` of the
"code" domain: standard-library files the models never trained on, read from this Python's stdlib folder). Each
prompt is the ``--prompt-tokens`` tokens of a file that end just after a ``def ...:`` line (the model then writes
the function's body), at most one prompt per file, files in the order the corpus lists them.

Two measurements, both on the real engine (paged KV cache, the same verify rule the pages use):

* acceptance at k = 1..8, greedy and under sampling (temperature 0.8, top-p 0.95, the window's default): guesses
  kept ÷ guesses proposed, summed over every prompt (``Engine.spec_proposed`` / ``spec_accepted``), and tokens
  per trip (tokens written ÷ verify passes);
* tokens/s at k (default 4) against plain decoding under the same sampling: each round writes every prompt's
  answer once plainly and once with the draft, the order alternating (ABBA) from round to round; tokens/s =
  tokens written ÷ summed step wall time (draft passes, verify pass, sampling: ``StepReport.wall_ms``). The
  median of the rounds and their spread, and the per-round speed-up (plain and draft runs of the same round).

Writes JSON (``--json``) and prints a Markdown table. Uses one torch thread unless ``--threads`` says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def heldout_code_prompts(tokenizer, n_prompts: int, prompt_tokens: int) -> list[list[int]]:
    """Token ids of up to ``n_prompts`` prompts from the held-out code files (see the module doc)."""
    from model.training.corpus import default_stdlib_dir
    names = json.loads((REPO / "assets/models/corpus.json").read_text(encoding="utf-8"))["domains"]["code"][
        "heldout_names"]
    root = default_stdlib_dir()
    out: list[list[int]] = []
    for name in names:
        path = root / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.splitlines(keepends=True)
        pos = 0
        for i, line in enumerate(lines):
            pos += len(line)
            if line.lstrip().startswith("def ") and line.rstrip().endswith(":") and pos > 400 and i + 3 < len(lines):
                ids = tokenizer.encode(text[:pos])
                if len(ids) >= prompt_tokens:
                    out.append(ids[-prompt_tokens:])
                    break
        if len(out) >= n_prompts:
            break
    if not out:
        raise SystemExit("no held-out code found (this Python's stdlib lacks the corpus' held-out files)")
    return out


def one_run(target, tokenizer, draft, ids: list[int], n: int, k: int, sampling) -> dict:
    """One answer of up to ``n`` tokens on a fresh engine: with the draft guessing ``k`` (k = 0: plain).
    Returns {"ms": summed step wall ms of the decode, "tokens", "proposed", "accepted", "trips"}."""
    from model.engine import Engine
    e = Engine(target, tokenizer, kv_budget_bytes=8 * 2**20, prefix_cache=False, max_batch=1)
    if k:
        e.set_draft(draft, tokenizer)
        e.set_draft_kind("model")
        e.set_draft_k(k)
    e.add_request(ids, max_new_tokens=n, sampling=sampling)
    ms, tokens, trips, draft_ms, verify_ms, forward_ms = 0.0, 0, 0, 0.0, 0.0, 0.0
    for r in e.run(max_steps=10_000):
        if r.phase == "prefill":
            continue  # prefill is the same with or without the draft; the draft catches up inside its first pass
        ms += r.wall_ms
        tokens += r.tokens_out
        trips += 1
        draft_ms += r.draft_ms or 0.0
        verify_ms += r.verify_ms or 0.0
        forward_ms += r.forward_ms or 0.0
    return {"ms": ms, "tokens": tokens, "proposed": e.spec_proposed, "accepted": e.spec_accepted, "trips": trips,
            "draft_ms": draft_ms, "forward_ms": forward_ms}


def acceptance(target, tokenizer, draft, prompts, n: int, ks, sampling) -> list[dict]:
    rows = []
    for k in ks:
        prop = acc = tok = trips = 0
        for i, ids in enumerate(prompts):
            s = None if sampling is None else replace(sampling, seed=1000 + i)
            r = one_run(target, tokenizer, draft, ids, n, k, s)
            prop, acc, tok, trips = prop + r["proposed"], acc + r["accepted"], tok + r["tokens"], trips + r["trips"]
        rows.append({"k": k, "acceptance": acc / prop if prop else None, "proposed": prop,
                     "tokens_per_trip": tok / trips if trips else None})
        print(f"  k={k} acceptance {rows[-1]['acceptance']:.3f} tokens/trip {rows[-1]['tokens_per_trip']:.2f}",
              file=sys.stderr, flush=True)
    return rows


def speed(target, tokenizer, draft, prompts, n: int, k: int, sampling, rounds: int) -> dict:
    """Interleaved rounds (ABBA) of plain and draft decoding over every prompt: tokens/s per round."""
    plain, spec, ratio = [], [], []
    split = {"plain": {"ms": 0.0, "forward_ms": 0.0, "trips": 0, "tokens": 0},
             "draft": {"ms": 0.0, "forward_ms": 0.0, "draft_ms": 0.0, "trips": 0, "tokens": 0, "proposed": 0}}
    one_run(target, tokenizer, draft, prompts[0], 8, k, sampling)  # warm-up of both sides
    one_run(target, tokenizer, draft, prompts[0], 8, 0, sampling)
    for rnd in range(rounds):
        got = {}
        for side in ((0, k) if rnd % 2 == 0 else (k, 0)):
            ms = tok = 0
            for i, ids in enumerate(prompts):
                s = None if sampling is None else replace(sampling, seed=2000 + i)
                r = one_run(target, tokenizer, draft, ids, n, side, s)
                ms, tok = ms + r["ms"], tok + r["tokens"]
                acc = split["draft" if side else "plain"]
                for key in acc:
                    acc[key] += r[key]
            got[side] = tok / (ms / 1e3)
        plain.append(got[0])
        spec.append(got[k])
        ratio.append(got[k] / got[0])
        print(f"  round {rnd}: plain {got[0]:.0f} tok/s, draft k={k} {got[k]:.0f} tok/s, {ratio[-1]:.2f}x",
              file=sys.stderr, flush=True)

    def summ(v):
        return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v), "values": v}
    # where a trip's time goes, ms per trip summed over every round: the target's pass (plain: its decode pass;
    # with the draft: the verify pass), the draft's k passes with their sampling, and the rest (packing, the
    # target's sampling, the verify rule)
    per_trip = {side: {"ms": v["ms"] / max(1, v["trips"]), "target_pass_ms": v["forward_ms"] / max(1, v["trips"]),
                       "draft_ms": v.get("draft_ms", 0.0) / max(1, v["trips"]),
                       "tokens_per_trip": v["tokens"] / max(1, v["trips"])} for side, v in split.items()}
    # the same in plain trips (the whole step's wall ms of a plain trip): one guess (the draft's passes and draws
    # ÷ its guesses) and the check (a verify step without the draft's part), as the Live page's why line says it
    plain_trip = per_trip["plain"]["ms"]
    d = split["draft"]
    trip_costs = {"guess": d["draft_ms"] / max(1, d["proposed"]) / plain_trip if plain_trip else None,
                  "check": (d["ms"] - d["draft_ms"]) / max(1, d["trips"]) / plain_trip if plain_trip else None,
                  "guesses_per_trip": d["proposed"] / max(1, d["trips"])}
    return {"k": k, "per_trip": per_trip, "trip_costs": trip_costs, "plain_tokens_per_s": summ(plain),
            "draft_tokens_per_s": summ(spec),
            "round_speedups": ratio,
            "speedup": statistics.median(spec) / statistics.median(plain)}


def pass_costs(target, tokenizer, draft, prompts, repeats: int = 200) -> dict:
    """Median ms of one decode pass of the target and of the draft (batch 1, one token, context = a prompt),
    timed through the engine's own forward (``Engine.forward_timed``) after the prompt's prefill."""
    from model.engine import Engine
    out = {}
    for name, model in (("target", target), ("draft", draft)):
        e = Engine(model, tokenizer, kv_budget_bytes=8 * 2**20, prefix_cache=False, max_batch=1)
        e.add_request(prompts[0], max_new_tokens=repeats + 2)
        ms = [r.forward_ms for r in e.run(max_steps=10_000) if r.phase == "decode"]
        out[name] = {"forward_ms": statistics.median(ms[5:]) if len(ms) > 5 else None, "n": len(ms)}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.draft_bench", description=__doc__.splitlines()[0])
    from model.catalog import CODE  # the big code book and its apprentice, the pocket book
    p.add_argument("--target", type=Path, default=CODE.path())
    p.add_argument("--draft", type=Path, default=CODE.draft_path())
    p.add_argument("--prompts", type=int, default=10)
    p.add_argument("--presets", default=None, metavar="KEY",
                   help="use the bundled model KEY's presets as prompts (e.g. poems) instead of held-out code")
    p.add_argument("--prompt-tokens", type=int, default=96)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--ks", default="1,2,3,4,5,6,7,8")
    p.add_argument("--k", type=int, default=4, help="k of the tokens/s comparison")
    p.add_argument("--rounds", type=int, default=6, help="interleaved rounds of the tokens/s comparison (0: none)")
    p.add_argument("--no-acceptance", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)

    import torch

    from model.checkpoint import load_pretrained
    from model.sampling import SamplingParams
    torch.set_num_threads(a.threads)
    target, tokenizer = load_pretrained(a.target)
    draft, _ = load_pretrained(a.draft)
    if a.presets:
        from model.catalog import by_key
        prompts = [tokenizer.encode(t) for t in by_key(a.presets).presets][:a.prompts]
    else:
        prompts = heldout_code_prompts(tokenizer, a.prompts, a.prompt_tokens)
    sizes = {name: (d / "model.safetensors").stat().st_size for name, d in (("target", a.target), ("draft", a.draft))}
    result = {"draft": str(a.draft), "bytes": sizes, "bytes_ratio": sizes["draft"] / sizes["target"],
              "prompts": len(prompts), "prompt_source": f"presets:{a.presets}" if a.presets else "heldout code",
              "prompt_tokens": a.prompt_tokens, "new_tokens": a.new_tokens,
              "threads": a.threads, "load_average_start": list(os.getloadavg()), "started": time.strftime("%H:%M:%S")}
    sampled = SamplingParams(temperature=0.8, top_p=0.95, seed=0)
    result["pass_ms"] = pass_costs(target, tokenizer, draft, prompts)
    print(f"pass ms: {result['pass_ms']}", file=sys.stderr, flush=True)
    if not a.no_acceptance:
        ks = [int(x) for x in a.ks.split(",")]
        print("greedy", file=sys.stderr)
        result["greedy"] = acceptance(target, tokenizer, draft, prompts, a.new_tokens, ks, None)
        print("sampling (temperature 0.8, top-p 0.95)", file=sys.stderr)
        result["sampling"] = acceptance(target, tokenizer, draft, prompts, a.new_tokens, ks, sampled)
    if a.rounds:
        print(f"tokens/s, k={a.k}, temperature 0.8", file=sys.stderr)
        result["speed"] = speed(target, tokenizer, draft, prompts, a.new_tokens, a.k, sampled, a.rounds)
    result["load_average_end"] = list(os.getloadavg())
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k not in ("greedy", "sampling")}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
