"""The window, measured: time from launch to the first painted frame, frame times while the engine decodes,
resident memory.

``measure`` starts ``python -m bench.window_bench --probe ...`` as a fresh process per scenario (so start-up is
real start-up), which builds the same window as ``python main.py``, runs the live decode, and prints one JSON
line. Frame times are the gaps between real paints of the stage view (the F12 counter), not timer ticks.
On Linux without a display it uses Xvfb when installed, else Qt's offscreen platform (which still paints).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def probe(model: str | None, batch: int, seconds: float, real_time: bool) -> dict:
    """Runs inside the child: open the window, decode at ``batch`` for ``seconds``, report."""
    import psutil
    from PySide6.QtCore import QEvent, QObject, QTimer

    from gui.app import build_window, create_app

    launched = launched_at()
    app = create_app()
    args = argparse.Namespace(model=model, lang="en", device="cpu", threads=None, kiosk=False, presenter=False,
                              screen=None, idle_seconds=None, draft_model=None)
    window = build_window(args, app)
    out: dict = {}
    gaps: list[float] = []
    state = {"last": None, "first": None, "measuring": False}

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt name)
            if event.type() == QEvent.Paint:
                now = time.perf_counter()
                if state["first"] is None:
                    state["first"] = time.time()
                if state["measuring"] and state["last"] is not None:
                    gaps.append((now - state["last"]) * 1000.0)
                state["last"] = now
            return False

    paints = Paints()
    window.view.viewport().installEventFilter(paints)
    # The animation clock's ticks: one per frame the GUI thread manages (60 Hz when nothing blocks it). A
    # paint gap also grows when the stage simply has nothing to redraw for a moment; a tick gap only when the
    # GUI thread was busy, i.e. a frame a moving stage would have dropped.
    ticks: list[float] = []
    window.clock.tick.connect(lambda _dt: ticks.append(time.perf_counter()) if state["measuring"] else None)
    window.show()
    window.start()

    def begin():
        window.set_batch(batch)
        if real_time:
            window.set_real_time(True)
        else:
            window.scene.trip_duration_s = 0.5  # paced: two animated trips a second, each a real pass
        window.run()
        QTimer.singleShot(1500, lambda: state.update(measuring=True, last=None))
        QTimer.singleShot(int(1500 + seconds * 1000), finish)

    def finish():
        tick_gaps = [(b - a) * 1000.0 for a, b in zip(ticks, ticks[1:])]
        proc = psutil.Process()
        rss = proc.memory_info().rss + sum(c.memory_info().rss for c in proc.children(recursive=True))
        out.update({"first_frame_s": (state["first"] or time.time()) - launched,
                    "frames": len(gaps), "p50_ms": _percentile(gaps, 50), "p95_ms": _percentile(gaps, 95),
                    "p99_ms": _percentile(gaps, 99), "rss_mb": rss / 1e6,
                    "tick_p50_ms": _percentile(tick_gaps, 50), "tick_p95_ms": _percentile(tick_gaps, 95),
                    "tick_p99_ms": _percentile(tick_gaps, 99),
                    "gui_rss_mb": proc.memory_info().rss / 1e6, "reports": window.reports_received})
        window.close()

    window.bridge.ready.connect(lambda _info: QTimer.singleShot(200, begin))
    QTimer.singleShot(int(60_000 + seconds * 1000), app.quit)  # never hang the benchmark
    app.exec()
    window.stop()
    return out


def _run_child(model: str | None, batch: int, seconds: float, real_time: bool) -> dict:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "bench.window_bench", "--probe", "--batch", str(batch), "--seconds", str(seconds)]
    if real_time:
        cmd.append("--real-time")
    if model:
        cmd += ["--model", str(model)]
    xvfb = None
    if sys.platform.startswith("linux") and not env.get("DISPLAY"):
        if shutil.which("Xvfb"):
            display = ":87"
            xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1920x1080x24"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)
            env["DISPLAY"] = display
        else:
            env["QT_QPA_PLATFORM"] = "offscreen"
    try:
        env["ONE_TRIP_LAUNCHED_AT"] = repr(time.time())
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120 + seconds)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(5)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            result = json.loads(line)
            result["platform"] = "xvfb" if xvfb is not None else env.get("QT_QPA_PLATFORM", "display")
            return result
    return {"error": f"window probe failed (exit {done.returncode}): {done.stderr.strip()[-400:]}"}


def measure(model: Path | None, quick: bool = False) -> dict:
    """Window figures for the report: first frame, frame times at batch 1 and 16, memory.

    The decode is paced (each trip animated over 0.5 s, one real forward pass per trip), which is how the
    window is used; every frame of the stage is then a moving frame.
    """
    seconds = 4.0 if quick else 15.0
    rows = {}
    for batch in (1, 16):
        r = _run_child(str(model) if model else None, batch, seconds, real_time=False)
        if "error" in r:
            return r
        rows[batch] = r
    return {"first frame after launch (s)": rows[1]["first_frame_s"],
            "frame p50 ms, batch 1": rows[1]["p50_ms"], "frame p95 ms, batch 1": rows[1]["p95_ms"],
            "frame p99 ms, batch 1": rows[1]["p99_ms"],
            "frame p50 ms, batch 16": rows[16]["p50_ms"], "frame p95 ms, batch 16": rows[16]["p95_ms"],
            "frame p99 ms, batch 16": rows[16]["p99_ms"],
            "frames measured, batch 16": rows[16]["frames"],
            "clock tick p50 ms, batch 16": rows[16].get("tick_p50_ms"),
            "clock tick p95 ms, batch 16": rows[16].get("tick_p95_ms"),
            "clock tick p99 ms, batch 16": rows[16].get("tick_p99_ms"),
            "trips decoded, batch 16": rows[16]["reports"],
            "resident memory MB (window + engine), batch 16": rows[16]["rss_mb"],
            "platform": rows[16]["platform"]}


def launched_at() -> float:
    """``$ONE_TRIP_LAUNCHED_AT`` (``time.time()`` seconds, set by ``measure`` for its child), or now when it is
    unset, not a number, nan/inf or in the future."""
    try:
        launched = float(os.environ.get("ONE_TRIP_LAUNCHED_AT", ""))
    except ValueError:
        launched = math.nan
    now = time.time()
    return launched if math.isfinite(launched) and launched <= now else now


def main(argv: list[str] | None = None) -> int:
    from model.argtypes import OneLineParser, float_in, int_in
    p = OneLineParser(prog="python -m bench.window_bench")
    p.add_argument("--probe", action="store_true")
    p.add_argument("--batch", type=int_in(1, 16), default=1, help="seats, 1-16")
    p.add_argument("--seconds", type=float_in(1.0, 3600.0), default=10.0, help="measuring time, 1-3600 s")
    p.add_argument("--real-time", action="store_true")
    p.add_argument("--model", default=None)
    args = p.parse_args(argv)
    if args.probe:
        print(json.dumps(probe(args.model, args.batch, args.seconds, args.real_time)), flush=True)
        return 0
    print(json.dumps(measure(Path(args.model) if args.model else None), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
