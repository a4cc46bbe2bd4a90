"""``python -m bench.live_apprentice_runs``: the Live page with the apprentice on, as a visitor sees it, N times.

Each run is one ``main.py screenshot --draft-k K --steps S --lang L --size WxH --layout-json F`` (a fresh window
and engine process: the engine's start-up check picks the apprentice under the page's own sampling, a plain run
of S trips, then S trips with the apprentice), read back from the layout JSON's ``apprentice`` field: the
speed-up the readout shows (plain ms per token ÷ apprentice ms per token, ``SpecMeter``), the share of guesses
kept, the apprentice, the sampling temperature, and the answer as shown, checked for a phrase written three
times in a row (``model.loops.find_loop``). Writes a Markdown report (``--out``, default
``docs/live-apprentice-runs.md``) and the raw rows beside it as JSON.

Pass: speed-up >= ``--bar`` (1.2) at a temperature >= 0.6 with no loop in the answer; the report counts passes.
``--lookup``: the same on the code model's lookup preset (``model.catalog.CODE.lookup_presets``), where the page
runs the n-gram apprentice at the preset's own sampling; report in ``docs/live-lookup-runs.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_run(args, i: int, tmp: Path) -> dict:
    layout, png = tmp / f"run{i}.json", tmp / f"run{i}.png"
    cmd = [sys.executable, str(REPO / "main.py"), "screenshot", "--draft-k", str(args.k), "--steps", str(args.steps),
           "--lang", args.lang, "--size", args.size, "--layout-json", str(layout), "--out", str(png)]
    if args.lookup:  # the code model's lookup preset, its prompt exactly (the page runs it with its own sampling)
        from model.catalog import CODE
        cmd += ["--model", str(CODE.path()), "--prompt", CODE.lookup_presets[0].prompt]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, cwd=REPO,
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    row = {"run": i + 1, "rc": proc.returncode, "seconds": round(time.time() - t0, 1),
           "load_average": list(os.getloadavg())}
    if proc.returncode != 0 or not layout.exists():
        row["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return row
    facts = json.loads(layout.read_text(encoding="utf-8")).get("apprentice") or {}
    from model.loops import find_loop
    answer = facts.get("answer") or ""
    loop = find_loop(answer)
    row.update({k: facts.get(k) for k in ("kind", "k", "speedup", "acceptance", "trips", "temperature", "chosen",
                                          "pays_when")})
    row["stopped_for_loop"] = facts.get("loop")
    row["loop_shown"] = loop.phrase if loop else None
    row["answer"] = answer
    row["pass"] = bool(row.get("speedup") and row["speedup"] >= args.bar and (row.get("temperature") or 0) >= 0.6
                       and loop is None)
    return row


def report(args, rows: list[dict]) -> str:
    ok = [r for r in rows if r.get("speedup")]
    sp = [r["speedup"] for r in ok]
    what = (", on the code model's lookup preset (the answer repeats the prompt)" if args.lookup else "")
    lines = [
        f"# The Live page with the apprentice on{what}, {len(rows)} times",
        "",
        f"`main.py screenshot --draft-k {args.k} --steps {args.steps} --lang {args.lang} --size {args.size} "
        + ("--model assets/models/target --prompt PRESET " if args.lookup else "")
        + f"--layout-json F` run {len(rows)} times in a row (`python -m bench.live_apprentice_runs"
        + (" --lookup" if args.lookup else "") + "`), each a fresh "
        "window and engine: the start-up check picks the apprentice under the page's own sampling, then a plain "
        f"run of {args.steps} trips and {args.steps} trips with the apprentice. Speed-up: the readout's figure "
        "(plain ms per token ÷ apprentice ms per token). Loop: a phrase three times in a row in the answer as "
        "shown (`model.loops`). Machine: 2 shared CPU cores; load average (1 min) at each run's end in the table.",
        "",
        f"**{sum(r.get('pass', False) for r in rows)} of {len(rows)} runs pass** (speed-up ≥ {args.bar}× at "
        f"temperature ≥ 0.6, no loop shown)."
        + (f" Speed-up median {statistics.median(sp):.2f}×, {min(sp):.2f}–{max(sp):.2f}." if sp else ""),
        "",
        "| run | apprentice | temperature | speed-up | kept | loop shown | stopped for a loop | load | pass | "
        "answer (start) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['run']} | error: {' '.join(r['error'])[:80]} | | | | | | | no | |")
            continue
        ans = " ".join((r.get("answer") or "").split())[:60].replace("|", "\\|")
        acc = f"{r['acceptance'] * 100:.0f} %" if r.get("acceptance") is not None else "–"
        lines.append(f"| {r['run']} | {r.get('kind')} | {r.get('temperature')} | "
                     f"{r['speedup']:.2f}× | {acc} | {r.get('loop_shown') or 'none'} | "
                     f"{r.get('stopped_for_loop') or 'no'} | {r['load_average'][0]:.1f} | "
                     f"{'yes' if r.get('pass') else 'no'} | {ans} |" if r.get("speedup") else
                     f"| {r['run']} | {r.get('kind')} | {r.get('temperature')} | – | {acc} | | | "
                     f"{r['load_average'][0]:.1f} | no | {ans} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.live_apprentice_runs", description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--lang", default="en")
    p.add_argument("--size", default="1920x1080")
    p.add_argument("--bar", type=float, default=1.2)
    p.add_argument("--timeout", type=int, default=400)
    p.add_argument("--lookup", action="store_true",
                   help="the code model's lookup preset as the prompt (default --out docs/live-lookup-runs.md)")
    p.add_argument("--out", type=Path, default=None, help="default docs/live-apprentice-runs.md")
    a = p.parse_args(argv)
    if a.out is None:
        a.out = REPO / ("docs/live-lookup-runs.md" if a.lookup else "docs/live-apprentice-runs.md")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            rows.append(one_run(a, i, Path(tmp)))
            r = rows[-1]
            print(f"run {i + 1}: {r.get('kind')} speed-up {r.get('speedup')} kept {r.get('acceptance')} "
                  f"T {r.get('temperature')} loop {r.get('loop_shown')} pass {r.get('pass')} {r.get('error', '')}",
                  file=sys.stderr, flush=True)
            a.out.parent.mkdir(parents=True, exist_ok=True)
            a.out.write_text(report(a, rows), encoding="utf-8")
            a.out.with_suffix(".json").write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
    print(a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
