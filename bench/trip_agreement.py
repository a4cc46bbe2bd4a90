"""Does the Live sentence agree with the measured share, start-up after start-up? (issue 34, "10 of 10")

``python -m bench.trip_agreement [--runs 10] [--out docs/trip-agreement.md]`` runs ``main.py screenshot
--layout-json`` ``runs`` times (each a fresh window and engine), and for each reads the layout's "trip" object
(the trip the split row shows: ``whole_ms``, ``weight_read_ms``, ``floor_ms``, ``lesson``) and the split row's
text on screen. A run agrees when

* the lesson key is the one its own measured share calls for, by the rule written out here, not imported:
  reading ÷ (whole − waiting) ≥ 2/3 → "reading", ≤ 1/3 → "paperwork", else "both", where waiting is the step's
  wall ms minus the CPU ms the engine reported for it (the machine busy with other programs);
* the line on screen says that key's words ("mostly reading the weights", "mostly other work", "% of the
  trip").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORDS = {"reading": "mostly reading the weights", "paperwork": "mostly other work", "both": "% of the trip",
         "unmeasured": "reading the weights"}  # unmeasured: the figures, and no lesson (checked below)


def expected_key(read_ms: float | None, whole_ms: float, wait_ms: float = 0.0) -> str:
    """The key the share calls for: reading ÷ (whole step − the time it waited for a busy processor)."""
    if not read_ms:
        return "unmeasured"
    share = read_ms / (whole_ms - wait_ms)
    if wait_ms > 0 and share > 1:  # the reading's clock ran on while other programs had the processor
        return "unmeasured"
    return "reading" if share >= 2 / 3 else "paperwork" if share <= 1 / 3 else "both"


def one_run(folder: Path, i: int, steps: int) -> dict:
    png, js = folder / f"live-{i}.png", folder / f"live-{i}.json"
    out = subprocess.run([sys.executable, "main.py", "screenshot", "--out", str(png), "--layout-json", str(js),
                          "--steps", str(steps), "--size", "1280x720", "--lang", "en"],
                         cwd=REPO, capture_output=True, text=True, timeout=300)
    if out.returncode != 0 or not js.is_file():
        return {"run": i + 1, "error": out.stderr.strip()[-300:]}
    layout = json.loads(js.read_text(encoding="utf-8"))
    trip = layout.get("trip") or {}
    line = " ".join(it["text"] for it in layout["items"] if "reading the weights" in it["text"])
    whole = float(trip.get("whole_ms") or 1.0)
    cpu = trip.get("cpu_ms")
    wait = max(0.0, whole - cpu) if cpu is not None else 0.0  # from the engine's figures, not the page's
    want = expected_key(trip.get("weight_read_ms"), whole, wait)
    said = WORDS.get(trip.get("lesson"), "\0")
    return {"run": i + 1, "whole_ms": trip.get("whole_ms"), "forward_ms": trip.get("forward_ms"),
            "weight_read_ms": trip.get("weight_read_ms"), "floor_ms": trip.get("floor_ms"),
            "wait_ms": wait, "share": (trip.get("weight_read_ms") or 0) / (whole - wait),
            "lesson": trip.get("lesson"), "expected": want,
            "agrees": trip.get("lesson") == want and said in " ".join(line.split())
            and (want != "unmeasured" or ("mostly" not in line and "% of the trip" not in line))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.trip_agreement")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--out", default=None, help="a Markdown file for the table")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [one_run(Path(tmp), i, args.steps) for i in range(args.runs)]
    agree = sum(1 for r in rows if r.get("agrees"))
    lines = [f"Live sentence agrees with the measured share in **{agree} of {len(rows)}** start-ups "
             f"(load average {' / '.join(f'{x:.1f}' for x in os.getloadavg())} at the end).", "",
             "| run | whole step ms | waiting ms | forward ms | weight_read_ms | floor ms | "
             "reading share of the work | lesson on screen | by the share | agrees |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['run']} | error: {r['error']} ||||||||")
            continue
        lines.append(f"| {r['run']} | {r['whole_ms']:.2f} | {r['wait_ms']:.2f} | {r['forward_ms']:.2f} | {r['weight_read_ms'] or 0:.2f} | "  # noqa: E501
                     f"{r['floor_ms'] or 0:.3f} | {100 * r['share']:.0f} % | {r['lesson']} | {r['expected']} | "
                     f"{'yes' if r['agrees'] else 'NO'} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0 if agree == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
