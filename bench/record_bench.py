"""The record command's speed: ``python main.py record --section 7 --seconds 4 --fps 30 --size 1280x720``
(issue #26's target: under a minute on a 2-core machine), run as a user runs it, in a fresh process each time.

Wall seconds from start to exit (Python, Qt and PyAV start-up included) and the command's own "made in" figure
(the frames: stepping the clock, drawing offscreen, encoding), median with min-max over the repeats, and the load
average around them (the machine is shared).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARGS = ["--section", "7", "--seconds", "4", "--fps", "30", "--size", "1280x720", "--lang", "en"]


def _stat(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def measure(repeats: int = 3) -> dict:
    """Run the record command ``repeats`` times (MP4, then once as WebM and GIF); seconds and file sizes."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out: dict = {"command": "python main.py record " + " ".join(ARGS) + " --out clip.mp4", "runs": {}}
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory() as tmp:
        for ext, n in ((".mp4", repeats), (".webm", 1), (".gif", 1)):
            walls, made, size = [], [], 0
            for i in range(n):
                clip = Path(tmp) / f"clip{i}{ext}"
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "main.py", "record", *ARGS, "--out", str(clip)], cwd=REPO,
                                      env=env, capture_output=True, text=True, timeout=600)
                walls.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    return {"error": f"record exited {proc.returncode}: {proc.stderr.strip()[-300:]}"}
                m = re.search(r"made in ([0-9.]+) s", proc.stdout)
                made.append(float(m.group(1)) if m else float("nan"))
                size = clip.stat().st_size
            out["runs"][ext] = {"wall_s": _stat(walls), "frames_s": _stat(made), "bytes": size}
    out["load_average"] = {"start": load_start, "end": os.getloadavg() if hasattr(os, "getloadavg") else None}
    return out


def markdown(r: dict) -> list[str]:
    """The "Recording a clip" section of docs/benchmarks.md."""
    lines = ["## Recording a clip", ""]
    if "error" in r:
        return lines + [r["error"], ""]
    load = r.get("load_average") or {}
    lines += [f"`{r['command']}` (120 frames; 4 s at 30 fps), a fresh process per run, offscreen. Wall: start to "
              "exit, start-up included; frames: stepping the clock, drawing and encoding the 120 frames.", ""]
    if load.get("start"):
        lines += [f"Load average (1, 5, 15 min): {', '.join(f'{x:.2f}' for x in load['start'])} at the start, "
                  f"{', '.join(f'{x:.2f}' for x in load['end'])} at the end (2 cores, shared).", ""]
    lines += ["| format | runs | wall s (median, min–max) | frames s | file kB |", "|---|---|---|---|---|"]
    for ext, x in r["runs"].items():
        w, f = x["wall_s"], x["frames_s"]
        lines.append(f"| {ext} | {w['n']} | {w['median']:.1f} ({w['min']:.1f}–{w['max']:.1f}) | "
                     f"{f['median']:.1f} ({f['min']:.1f}–{f['max']:.1f}) | {x['bytes'] / 1000:.0f} |")
    return lines + [""]
