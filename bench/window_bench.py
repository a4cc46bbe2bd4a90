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


def _paint_filter(on_paint):
    """An event filter (install it on the stage view's viewport) that calls ``on_paint(now)`` at every real
    paint, ``now`` from ``time.perf_counter``."""
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 (Qt name)
            if event.type() == QEvent.Paint:
                on_paint(time.perf_counter())
            return False

    return Paints()


def probe(model: str | None, batch: int, seconds: float, real_time: bool) -> dict:
    """Runs inside the child: open the window, decode at ``batch`` for ``seconds``, report."""
    import psutil
    from PySide6.QtCore import QTimer

    from gui.app import build_window, create_app

    launched = launched_at()
    app = create_app()
    args = argparse.Namespace(model=model, lang="en", device="cpu", threads=None, kiosk=False, presenter=False,
                              screen=None, idle_seconds=None, draft_model=None)
    window = build_window(args, app)
    out: dict = {}
    gaps: list[float] = []
    state = {"last": None, "first": None, "measuring": False}

    def on_paint(now: float) -> None:
        if state["first"] is None:
            state["first"] = time.time()
        if state["measuring"] and state["last"] is not None:
            gaps.append((now - state["last"]) * 1000.0)
        state["last"] = now

    paints = _paint_filter(on_paint)
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
        out.update(_probe_figures(psutil.Process(), window, gaps, ticks, (state["first"] or time.time()) - launched))
        window.close()

    window.bridge.ready.connect(lambda _info: out.setdefault("ready_s", time.time() - launched))
    window.bridge.ready.connect(lambda _info: QTimer.singleShot(200, begin))
    QTimer.singleShot(int(60_000 + seconds * 1000), app.quit)  # never hang the benchmark
    app.exec()
    window.stop()
    return out


def _probe_figures(proc, window, gaps: list[float], ticks: list[float], first_frame_s: float) -> dict:
    """The probe's report: seconds to the first frame, paint and clock-tick gaps (ms percentiles), resident
    memory of the GUI (``proc``, a ``psutil.Process``), of its child processes (the engine, MB) and of both, and
    the trips reported. ("ready_s", seconds from launch to the engine's ready event, is set by the probe.)"""
    tick_gaps = [(b - a) * 1000.0 for a, b in zip(ticks, ticks[1:])]
    engine_rss = sum(c.memory_info().rss for c in proc.children(recursive=True))
    rss = proc.memory_info().rss + engine_rss
    return {"first_frame_s": first_frame_s, "engine_rss_mb": engine_rss / 1e6,
            "frames": len(gaps), "p50_ms": _percentile(gaps, 50), "p95_ms": _percentile(gaps, 95),
            "p99_ms": _percentile(gaps, 99), "rss_mb": rss / 1e6,
            "tick_p50_ms": _percentile(tick_gaps, 50), "tick_p95_ms": _percentile(tick_gaps, 95),
            "tick_p99_ms": _percentile(tick_gaps, 99),
            "gui_rss_mb": proc.memory_info().rss / 1e6, "reports": window.reports_received}


STORM_FINGERS = 5  # a palm on the stage...
STORM_TAPS = 50  # ...then this many taps...
STORM_S = 1.0  # ...in this many seconds (issue 25.6)


def probe_storm(model: str | None, seconds: float) -> dict:
    """Runs inside the child: a kiosk window at 1280x720 in touch mode (as ``screenshot --kiosk`` builds it)
    decodes paced trips; frame and clock-tick gaps are measured for ``seconds`` before a storm of touches on the
    stage (``STORM_FINGERS`` fingers at once, then ``STORM_TAPS`` taps in ``STORM_S``, each a real
    ``QTest.touchEvent`` on a touch-screen device) and for ``seconds`` after it."""
    from PySide6.QtCore import QTimer

    from gui.app import build_window, create_app
    from gui.kiosk.kiosk import KioskController
    from gui.kiosk.touch import install_touch
    from gui.settings import Settings

    app = create_app()
    args = argparse.Namespace(model=model, lang="en", device="cpu", threads=None, kiosk=True, presenter=False,
                              screen=None, idle_seconds=None, draft_model=None)
    window = build_window(args, app)
    KioskController(window, Settings(language="en"), attract=False).install().may_close = True
    router = install_touch(window, kiosk=True)
    storm = _Storm(window, router, seconds)
    window.bridge.ready.connect(lambda _info: QTimer.singleShot(200, storm.begin))
    QTimer.singleShot(int(180_000 + 3 * seconds * 1000), app.quit)  # never hang the benchmark
    app.exec()
    window.stop()
    return storm.out


class _Storm:
    """The storm probe in its window: paint and clock-tick gaps ``seconds`` before and after the touches."""

    def __init__(self, window, router, seconds: float) -> None:
        from PySide6.QtGui import QInputDevice
        from PySide6.QtTest import QTest

        self.window, self.router, self.seconds = window, router, seconds
        self.device = QTest.createTouchDevice(QInputDevice.DeviceType.TouchScreen)
        self.state = {"phase": None, "last": None}
        self.gaps: dict[str, list[float]] = {"before": [], "after": []}
        self.ticks: dict[str, list[float]] = {"before": [], "after": []}
        self.out: dict = {}
        self.paints = _paint_filter(self._on_paint)
        window.view.viewport().installEventFilter(self.paints)
        window.clock.tick.connect(lambda _dt: self.ticks[self.state["phase"]].append(time.perf_counter())
                                  if self.state["phase"] in self.ticks else None)
        window.resize(1280, 720)
        window.show()
        window.start()
        self.taps_left = STORM_TAPS
        self.storm_start = 0.0
        self.waited = 0.0

    def _on_paint(self, now: float) -> None:
        state = self.state
        if state["phase"] in self.gaps:
            if state["last"] is not None:
                self.gaps[state["phase"]].append((now - state["last"]) * 1000.0)
            state["last"] = now

    def spot(self, i: int = 0):
        """A point on the stage, ``7 * i`` px right of the one a third of the way down its middle."""
        from PySide6.QtCore import QPoint

        view = self.window.view
        return self.window.mapFromGlobal(view.mapToGlobal(QPoint(view.width() // 2 + 7 * i, view.height() // 3)))

    def measure(self, phase: str, then) -> None:
        """Measure ``phase`` for ``seconds``, then call ``then``."""
        from PySide6.QtCore import QTimer

        self.state.update(phase=phase, last=None)
        QTimer.singleShot(int(self.seconds * 1000), lambda: (self.state.update(phase=None), then()))

    def begin(self) -> None:
        """Paced trips that outlast the probe; once they flow, measure before the storm."""
        window = self.window
        window.scene.trip_duration_s = 0.5  # paced: two animated trips a second, each a real pass
        window.main_new_tokens = 100_000
        window.run()
        self.waited = time.perf_counter()
        self._warm()

    def _warm(self) -> None:
        """The engine measures its apprentices at start-up first: wait for trips to flow."""
        from PySide6.QtCore import QTimer

        if self.window.reports_received >= 3 or time.perf_counter() - self.waited > 120:
            self.out["wait_for_trips_s"] = time.perf_counter() - self.waited
            QTimer.singleShot(1500, lambda: self.measure("before", self.storm))
        else:
            QTimer.singleShot(100, self._warm)

    def storm(self) -> None:
        """A palm (``STORM_FINGERS`` fingers pressed and lifted at once), then the taps."""
        from PySide6.QtTest import QTest

        window, spot = self.window, self.spot
        self.out["reports_before_storm"] = window.reports_received
        seq = QTest.touchEvent(window, self.device, False)
        for f in range(STORM_FINGERS):
            seq.press(f, spot(f), window)
        seq.commit()
        seq = QTest.touchEvent(window, self.device, False)
        for f in range(STORM_FINGERS):
            seq.release(f, spot(f), window)
        seq.commit()
        self.storm_start = time.perf_counter()
        self.taps_left = STORM_TAPS
        self._one_tap()

    def _one_tap(self) -> None:
        """One tap of the ``STORM_TAPS``, ``STORM_S / STORM_TAPS`` apart; after the last, measure after."""
        from PySide6.QtCore import QTimer
        from PySide6.QtTest import QTest

        window, spot = self.window, self.spot
        i = STORM_TAPS - self.taps_left
        QTest.touchEvent(window, self.device, False).press(i % STORM_FINGERS, spot(i % 3), window).commit()
        QTest.touchEvent(window, self.device, False).release(i % STORM_FINGERS, spot(i % 3), window).commit()
        self.taps_left -= 1
        if self.taps_left > 0:
            QTimer.singleShot(int(STORM_S * 1000 / STORM_TAPS), self._one_tap)
        else:
            self.out["storm_s"] = time.perf_counter() - self.storm_start
            self.measure("after", self.finish)

    def finish(self) -> None:
        """The report: each phase's paint and tick gaps (ms percentiles), and what the taps did."""
        window, router = self.window, self.router
        for phase in ("before", "after"):
            gaps = self.gaps[phase]
            tick_gaps = [(b - a) * 1000.0 for a, b in zip(self.ticks[phase], self.ticks[phase][1:])]
            self.out[phase] = {"frames": len(gaps), "p50_ms": _percentile(gaps, 50),
                               "p95_ms": _percentile(gaps, 95), "p99_ms": _percentile(gaps, 99),
                               "tick_p50_ms": _percentile(tick_gaps, 50), "tick_p95_ms": _percentile(tick_gaps, 95)}
        self.out.update({"window": [window.width(), window.height()], "runs_started_by_taps": router.runs_started,
                         "taps_routed": router.taps, "cancelled": router.cancelled, "running": window.is_running(),
                         "reports": window.reports_received, "router_idle": router.is_idle()})
        window.close()


def measure_storm(model: Path | None, quick: bool = False) -> dict:
    """The kiosk window's frame times before and after a touch storm (issue 25.6), one fresh process."""
    return _run_child(str(model) if model else None, 1, 3.0 if quick else 8.0, real_time=False, storm=True)


def storm_markdown(r: dict) -> list[str]:
    """The storm section of the report: frame and clock-tick gaps before and after, and what the taps did."""
    lines = ["## The kiosk window after a touch storm", ""]
    if "error" in r:
        return lines + [r["error"], ""]
    lines += [f"A kiosk window ({r['window'][0]}x{r['window'][1]}, touch mode) decodes paced trips on the bundled "
              f"model; on its stage {STORM_FINGERS} fingers land at once, then {STORM_TAPS} taps in "
              f"{STORM_S:.0f} s (`QTest.touchEvent` on a touch-screen device; the storm took "
              f"{r.get('storm_s', float('nan')):.2f} s). Gaps between real paints of the stage, and between ticks "
              "of the animation clock (15 ms timer), measured for the same time before and after. A 60 Hz frame "
              "is 16.7 ms.", "",
              "| | frames | frame p50 ms | frame p95 ms | frame p99 ms | tick p50 ms | tick p95 ms |",
              "|---|---|---|---|---|---|---|"]
    for phase in ("before", "after"):
        x = r[phase]
        lines.append(f"| {phase} the storm | {x['frames']} | {x['p50_ms']:.1f} | {x['p95_ms']:.1f} | "
                     f"{x['p99_ms']:.1f} | {x['tick_p50_ms']:.1f} | {x['tick_p95_ms']:.1f} |")
    lines += ["", f"Taps that reached a control: {r['taps_routed']} (closer ones are a bounce and dropped); "
              f"palms cancelled: {r['cancelled']}; runs started by the taps: {r['runs_started_by_taps']} (one was "
              f"running); still running after: {'yes' if r['running'] else 'no'}; trips decoded in all: "
              f"{r['reports']}; the touch router idle after: {'yes' if r['router_idle'] else 'no'}. "
              f"Platform: {r.get('platform')}.", ""]
    return lines


def _run_child(model: str | None, batch: int, seconds: float, real_time: bool, storm: bool = False) -> dict:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "bench.window_bench", "--probe", "--batch", str(batch), "--seconds", str(seconds)]
    if real_time:
        cmd.append("--real-time")
    if storm:
        cmd.append("--storm")
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
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240 + 3 * seconds)
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
    p.add_argument("--storm", action="store_true", help="with --probe: a kiosk window before and after a touch storm")
    args = p.parse_args(argv)
    if args.probe and args.storm:
        print(json.dumps(probe_storm(args.model, args.seconds)), flush=True)
        return 0
    if args.probe:
        print(json.dumps(probe(args.model, args.batch, args.seconds, args.real_time)), flush=True)
        return 0
    print(json.dumps(measure(Path(args.model) if args.model else None), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
