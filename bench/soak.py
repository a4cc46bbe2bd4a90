"""Soak benchmark (not a test): ``python -m bench.soak --minutes 30 --out docs/soak.md``.

Starts the app as a kiosk would (``main.py --kiosk``, offscreen unless ``--display`` is given) with settings
that make the attract loop run at high speed: idle after 1 s, a tour section every 1.5 s, 0.25 s per trip on
screen, the live model (bundled, or ``--model``). Every ``--every`` seconds (default 60) it samples the resident
memory (RSS) of the app and of all its child processes (the engine), and at the end writes the series and the
verdict: does the total grow by less than 5 % after minute 5? The app is then stopped with SIGTERM and its
exit code, exit time and any process left behind are recorded too.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
GROWTH_LIMIT = 0.05
WARMUP_MIN = 5.0

INI = """[General]
language={lang}

[kiosk]
idle_seconds=1
section_seconds=1.5
trip_seconds=0.25
"""


def rss_tree(pid: int) -> tuple[int, int, int]:
    """(app RSS, children RSS, number of children) in bytes, for ``pid`` and all its descendants."""
    try:
        proc = psutil.Process(pid)
        app = proc.memory_info().rss
        kids = proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0, 0
    child = 0
    for k in kids:
        try:
            child += k.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return app, child, len(kids)


def _count_log(stderr, counts: dict[str, int], errors: list[str]) -> None:
    """Count the app's log lines as they come (live decodes, attract loops, engine restarts, errors), keeping
    the first ten error lines."""
    for line in stderr:
        counts["lines"] += 1
        if "status: Running." in line:
            counts["live"] += 1
        elif "attract loop starts" in line:
            counts["attract"] += 1
        elif "engine process" in line and "exited" in line:
            counts["restarts"] += 1
        if " ERROR " in line or "Traceback" in line or " CRITICAL " in line:
            counts["errors"] += 1
            if len(errors) < 10:
                errors.append(line.strip())


def _sample_memory(proc: subprocess.Popen, counts: dict[str, int], minutes: float, every_s: float) -> list[dict]:
    """The app's and its engine's resident memory (bytes) every ``every_s`` seconds, printed as it goes, until
    ``minutes`` have passed or the app has exited."""
    samples: list[dict] = []
    start = time.monotonic()
    next_at = 0.0
    while True:
        elapsed = time.monotonic() - start
        if elapsed >= next_at:
            app, child, n = rss_tree(proc.pid)
            samples.append({"minute": round(elapsed / 60.0, 2), "app": app, "engine": child, "children": n,
                            "total": app + child, "live": counts["live"]})
            print(f"[soak] {elapsed / 60:5.1f} min  app {app / 2**20:7.1f} MiB  engine {child / 2**20:7.1f} MiB"
                  f"  live decodes {counts['live']}", flush=True)
            next_at += every_s
        if elapsed >= minutes * 60 or proc.poll() is not None:
            break
        time.sleep(0.5)
    return samples


def run(minutes: float, every_s: float, model: str | None, lang: str, display: bool) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="one-trip-soak-"))
    (scratch / "cfg" / "One Trip").mkdir(parents=True)
    (scratch / "cfg" / "One Trip" / "One Trip.ini").write_text(INI.format(lang=lang))
    env = dict(os.environ, ONE_TRIP_CONFIG_DIR=str(scratch / "cfg"), ONE_TRIP_LOG_DIR=str(scratch / "log"))
    if not display:
        env["QT_QPA_PLATFORM"] = "offscreen"
    cmd = [sys.executable, str(REPO / "main.py"), "--kiosk"] + (["--model", model] if model else [])
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    counts = {"live": 0, "attract": 0, "restarts": 0, "errors": 0, "lines": 0}
    errors: list[str] = []
    reader = threading.Thread(target=_count_log, args=(proc.stderr, counts, errors), daemon=True)
    reader.start()
    try:
        samples = _sample_memory(proc, counts, minutes, every_s)
        died = proc.poll()
        children = {c.pid for c in psutil.Process(proc.pid).children(recursive=True)} if died is None else set()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM) if died is None else None
        code = proc.wait(timeout=15)
        exit_s = time.monotonic() - t0
        time.sleep(0.3)
        left = [p for p in children if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=2)
    return {"samples": samples, "counts": counts, "errors": errors, "exit_code": code, "exit_s": exit_s,
            "left": left, "died_early": died, "minutes": minutes, "lang": lang, "model": model or "bundled"}


def verdict(samples: list[dict]) -> tuple[float | None, bool | None]:
    """Growth of the total RSS from the first sample at or after minute 5 to the last one."""
    after = [s for s in samples if s["minute"] >= WARMUP_MIN - 0.05]
    if len(after) < 2:
        return None, None
    base, last = after[0]["total"], after[-1]["total"]
    growth = (last - base) / base if base else 0.0
    return growth, growth < GROWTH_LIMIT


def report(result: dict) -> str:
    mib = 2 ** 20
    growth, ok = verdict(result["samples"])
    lines = [
        "# Soak: the kiosk's attract loop with the live model",
        "",
        f"Run {dt.datetime.now().strftime('%Y-%m-%d %H:%M')} on {platform.platform()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}; `python -m bench.soak --minutes "
        f"{result['minutes']:g}`; model: {result['model']}; language: {result['lang']}.",
        "",
        "Settings: idle after 1 s, a tour section every 1.5 s, 0.25 s per trip on screen (high speed), offscreen.",
        f"Live decodes started: {result['counts']['live']}; attract loop starts: {result['counts']['attract']}; "
        f"engine restarts: {result['counts']['restarts']}; error lines in the log: {result['counts']['errors']}.",
        "",
        "| minute | app RSS (MiB) | engine RSS (MiB) | total (MiB) | live decodes so far |",
        "|---:|---:|---:|---:|---:|",
    ]
    for s in result["samples"]:
        lines.append(f"| {s['minute']:.1f} | {s['app'] / mib:.1f} | {s['engine'] / mib:.1f} | "
                     f"{s['total'] / mib:.1f} | {s['live']} |")
    lines.append("")
    if growth is None:
        lines.append(f"**Verdict:** not enough samples after minute {WARMUP_MIN:g} to judge (run longer).")
    else:
        lines.append(f"**Verdict:** total RSS grew {growth * 100:+.2f} % from minute {WARMUP_MIN:g} to the end: "
                     f"{'PASS' if ok else 'FAIL'} (limit {GROWTH_LIMIT * 100:.0f} %).")
    lines.append("")
    lines.append(f"Shutdown by SIGTERM: exit code {result['exit_code']} in {result['exit_s']:.2f} s; processes left "
                 f"behind: {len(result['left'])}."
                 + (f" The app ended by itself early (code {result['died_early']})." if result["died_early"] is not None
                    else ""))
    if result["errors"]:
        lines += ["", "Error lines:", ""] + [f"    {e}" for e in result["errors"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from model.argtypes import OneLineParser, float_in
    p = OneLineParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float_in(0.1, 7 * 24 * 60), default=30.0, help="0.1 to 10,080 (a week)")
    p.add_argument("--every", type=float_in(1.0, 3600.0), default=60.0, metavar="S",
                   help="seconds between memory samples, 1-3600")
    p.add_argument("--out", default=str(REPO / "docs" / "soak.md"), metavar="FILE")
    p.add_argument("--model", default=None, metavar="DIR")
    p.add_argument("--lang", choices=("zh", "en"), default="zh")
    p.add_argument("--display", action="store_true", help="use the real display instead of offscreen")
    args = p.parse_args(argv)
    out = Path(args.out)
    try:  # refused now, not after half an hour of measuring
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.is_dir():
            raise IsADirectoryError(21, "is a folder; give a file name such as soak.md")
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=".soak-", suffix=".probe"):
            pass  # the folder takes a new file (root passes os.access everywhere)
    except OSError as e:
        print(f"python -m bench.soak: error: --out {args.out}: {e.strerror or e}", file=sys.stderr)
        return 2
    result = run(args.minutes, args.every, args.model, args.lang, args.display)
    text = report(result)
    out.write_text(text, encoding="utf-8")
    print(text)
    growth, ok = verdict(result["samples"])
    return 0 if ok is not False and result["exit_code"] == 0 and not result["left"] else 1


if __name__ == "__main__":
    sys.exit(main())
