"""The observer effect (issue 34, item 3): is the Live page's trip the engine's trip?

``python -m bench.live_vs_headless [--runs 5] [--steps 40] [--layer-every N ...] [--out docs/live-vs-headless.md]``

For each setting, ``runs`` interleaved rounds (ABBA...), each in fresh processes:

* headless: ``main.py generate PROMPT --json`` at the window's settings (its prompt, sampling and seed as the
  window submitted them, its engine's threads, batch 1), the median whole step (``wall_ms``) of its decode steps;
* live: the window offscreen at 1280x720 (``gui.screenshot.open_live_window``) running the same number of trips
  in real time (the engine runs them back to back while the window animates and paints), the median whole step
  of the decode steps its engine reported; with the window's CPU use (process CPU s ÷ wall s over the run), the
  engine process's threads and CPU affinity.

Reported per setting: medians of the runs' medians, their spread, live ÷ headless. The issue's bar: within 1.25×.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def live_once(steps: int, layer_every: int, size: tuple[int, int] = (1280, 720), pin: bool = False) -> dict:
    """One run of the window (this process): ``steps`` trips at batch 1, real time. Returns the decode steps'
    whole and forward ms, the request as submitted, the window's CPU use and the engine's threads/affinity.
    ``pin``: the window on the first core, its engine process on the last (an experiment: does keeping the
    painting off the engine's core help?)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import psutil

    from gui.capture.screenshot import open_live_window, prepare_live, wait_until
    args = argparse.Namespace(lang="en", model=None, draft_model=None, device="cpu", threads=None, batch=1,
                              steps=steps, prompt=None, draft_k=0, tp=None, pp=None, presenter=False, kiosk=False,
                              details=False, layer_timing_every=layer_every, engine_target=None)
    opened = open_live_window(args, size, name="bench")
    if isinstance(opened, int):
        raise RuntimeError("the window could not open")
    app, window = opened
    try:
        if prepare_live(app, window, args, "bench") != 0:
            raise RuntimeError("the engine did not start")
        wait_until(app, lambda: window.bridge.apprentice_info is not None, 60)  # the start-up check runs while idle
        submitted, reports = [], []
        submit = window.bridge.submit

        def record(request_id, prompt, max_new_tokens, **kw):
            submitted.append({"prompt": prompt, "max_new_tokens": max_new_tokens, **kw})
            return submit(request_id, prompt, max_new_tokens, **kw)
        window.bridge.submit = record
        window.bridge.step.connect(reports.append)
        window.set_real_time(True)
        me = psutil.Process()
        engine = psutil.Process(window.bridge.pid)
        if pin and (os.cpu_count() or 1) > 1:
            cores = sorted(me.cpu_affinity())
            me.cpu_affinity(cores[:1])
            for proc in [engine, *engine.children(recursive=True)]:
                proc.cpu_affinity(cores[-1:])
        cpu0, t0 = sum(me.cpu_times()[:2]), time.perf_counter()
        if not window.run_trips(steps):
            raise RuntimeError("could not start the run")
        wait_until(app, lambda: len(reports) >= steps or window.is_session_done(), 120)
        gui_cpu = (sum(me.cpu_times()[:2]) - cpu0) / (time.perf_counter() - t0)
        decode = [r for r in reports if r.get("phase") == "decode" and r.get("batch") == 1]
        return {"whole_ms": [r["wall_ms"] for r in decode], "forward_ms": [r["forward_ms"] for r in decode],
                "layer_timed": sum(1 for r in decode if r.get("layer_ms")), "request": submitted[0],
                "threads": (window.engine_info or {}).get("threads"), "gui_cpu": gui_cpu,
                "engine_threads": engine.num_threads(), "engine_affinity": sorted(engine.cpu_affinity()),
                "gui_affinity": sorted(me.cpu_affinity())}
    finally:
        window.close()
        window.stop()


def _live(steps: int, layer_every: int, pin: bool = False) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.live_vs_headless", "--live-once", "--steps", str(steps),
                          "--layer-every", str(layer_every)] + (["--pin"] if pin else []), cwd=REPO, capture_output=True, text=True, timeout=300)  # noqa: E501
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        raise RuntimeError(f"live run failed: {out.stderr[-2000:]}")
    return json.loads(lines[-1])


def _headless(request: dict, threads: int, layer_timing: bool = False) -> dict:
    cmd = [sys.executable, "main.py", "generate", request["prompt"], "--json", "--max-batch", "1",
           "--max-new-tokens", str(request["max_new_tokens"]), "--threads", str(threads),
           "--temperature", str(request.get("temperature", 0.8)), "--top-k", str(request.get("top_k", 0)),
           "--top-p", str(request.get("top_p", 1.0))]
    if request.get("seed") is not None:
        cmd += ["--seed", str(request["seed"])]
    if layer_timing:
        cmd.append("--layer-timing")
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"generate failed: {out.stderr[-2000:]}")
    steps = [s for s in json.loads(out.stdout)["steps"] if s["phase"] == "decode"]
    return {"whole_ms": [s["wall_ms"] for s in steps], "forward_ms": [s["forward_ms"] for s in steps]}


def _med(values: list[float]) -> float:
    return float(statistics.median(values))


def compare(runs: int, steps: int, layer_every: int, pin: bool = False) -> dict:
    """``runs`` interleaved rounds of live and headless (ABBA); per run the median decode step; returns both
    sides' per-run medians and the ratio of their medians."""
    probe = _live(steps, layer_every, pin)  # warm-up (discarded): caches, the read speed cache, the request's settings
    request = {**probe["request"], "max_new_tokens": steps}
    live, head, extra = [], [], []
    for i in range(runs):
        order = ("live", "head") if i % 2 == 0 else ("head", "live")
        for side in order:
            if side == "live":
                r = _live(steps, layer_every, pin)
                live.append({"whole": _med(r["whole_ms"]), "forward": _med(r["forward_ms"])})
                extra.append(r)
            else:
                r = _headless(request, int(probe["threads"] or 1))
                head.append({"whole": _med(r["whole_ms"]), "forward": _med(r["forward_ms"])})
    lw, hw = _med([x["whole"] for x in live]), _med([x["whole"] for x in head])
    return {"layer_every": layer_every, "pin": pin, "runs": runs, "steps": steps, "threads": probe["threads"],
            "live_whole": [x["whole"] for x in live], "head_whole": [x["whole"] for x in head],
            "live_forward": [x["forward"] for x in live], "head_forward": [x["forward"] for x in head],
            "ratio": lw / hw, "gui_cpu": _med([e["gui_cpu"] for e in extra]),
            "layer_timed": [e["layer_timed"] for e in extra], "engine_threads": extra[-1]["engine_threads"],
            "engine_affinity": extra[-1]["engine_affinity"], "gui_affinity": extra[-1]["gui_affinity"],
            "load": list(os.getloadavg())}


def report(rows: list[dict]) -> str:
    def s(v: list[float]) -> str:
        return f"{_med(v):.2f} ({min(v):.2f}–{max(v):.2f})"
    lines = ["| layer timing | window / engine cores | live whole step ms | headless whole step ms | live ÷ headless | live forward ms | "  # noqa: E501
             "headless forward ms | window CPU | trips layer-timed | load (1/5/15 min) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        every = {0: "never", 1: "every trip"}.get(r["layer_every"], f"1 trip in {r['layer_every']}")
        cores = f"{r['gui_affinity']} / {r['engine_affinity']}" if r.get("pin") else "any / any"
        lines.append(f"| {every} | {cores} | {s(r['live_whole'])} | {s(r['head_whole'])} | **{r['ratio']:.2f}×** | "
                     f"{s(r['live_forward'])} | {s(r['head_forward'])} | {100 * r['gui_cpu']:.0f} % | "
                     f"{r['layer_timed']} of {r['steps'] - 1} | {' / '.join(f'{x:.1f}' for x in r['load'])} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.live_vs_headless")
    p.add_argument("--live-once", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--layer-every", type=int, nargs="+", default=[16])
    p.add_argument("--pin", action="store_true",
                   help="also run each setting with the window and engine on separate cores")
    p.add_argument("--out", default=None, help="a JSON file for the rows (the table goes to stdout)")
    args = p.parse_args(argv)
    if args.live_once:
        print(json.dumps(live_once(args.steps, args.layer_every[0], pin=args.pin)), flush=True)
        os._exit(0)  # the window's engine is stopped; skip Qt's teardown
    rows = [compare(args.runs, args.steps, every, pin) for every in args.layer_every
            for pin in ((False, True) if args.pin else (False,))]
    print(report(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
