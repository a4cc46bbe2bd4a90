"""``python main.py screenshot --out FILE.png [--prompt TEXT] [--steps N] [--batch N] [--lang zh|en] [--size WxH]
[--layout-json FILE.json] [--presenter] [--details] [--code]``

Runs N real trips of the engine (granted at once, so it is quick), waits for their reports, then shows the last
trip on the stage half-way through its animation and saves the whole window as a PNG. Works without a display
(the offscreen platform is chosen when there is none). The PNG is exactly W×H device-independent pixels at any
scale factor (``gui.audit.layout_audit.exact_image``); a window that cannot be that size is refused with exit status 2.
``--layout-json`` also writes every visible text with its rect, font size, role and whether it is clipped.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_PROMPT = None  # the first preset of the model writing (poems in Chinese, code in English)
READY_TIMEOUT_S = 90.0
STILL_STARTING_S = 8.0  # a word on stderr if the engine is not ready this long after the window opened
RUN_TIMEOUT_S = 120.0
APPRENTICE_TIMEOUT_S = 120.0  # the engine measures both apprentices, sampled and greedy, at start-up
MAX_SIDE = 8192  # a bigger window needs gigabytes and Qt's painter gives up past 32767


def parse_size(text: str | None, default: tuple[int, int] = (1920, 1080)) -> tuple[int, int]:
    """"1920x1080" -> (1920, 1080). Raises ValueError for anything else."""
    if not text:
        return default
    w, sep, h = str(text).lower().partition("x")
    if (not sep or not (w.isascii() and w.isdigit()) or not (h.isascii() and h.isdigit())  # "1²80": isdigit, not int
            or not 320 <= int(w) <= MAX_SIDE or not 240 <= int(h) <= MAX_SIDE):
        raise ValueError(f"--size must look like 1920x1080 (from 320x240 to {MAX_SIDE}x{MAX_SIDE}), got {text!r}")
    return int(w), int(h)


def check_out_path(out: str) -> str | None:
    """None if a PNG can be written to ``out`` (its folder is created), else a one-line reason.

    Checked before any rendering, so a bad --out costs no engine start and gives exit status 2.
    """
    from PySide6.QtGui import QImageWriter

    path = Path(out)
    if path.is_dir():
        return f"--out {out} is a folder; give a file name such as shot.png"
    suffix = path.suffix.lower().lstrip(".")
    formats = {bytes(f).decode().lower() for f in QImageWriter.supportedImageFormats()}
    if suffix not in formats:
        return f"--out {out}: cannot write a {suffix or 'suffix-less'} image; use .png (or .jpg, .bmp)"
    return _folder_problem("--out", out)


def check_layout_json_path(out: str | None) -> str | None:
    """None if ``--layout-json`` is absent or a file can be written at ``out`` (its folder is created), else a
    one-line reason (a folder, /proc, a read-only place). Checked up front as ``--out`` is, so the run is not
    made for a file that cannot be written."""
    if not out:
        return None
    path = Path(out)
    if path.is_dir() or str(out).endswith(("/", os.sep)):
        return f"--layout-json {out} is a folder; give a file name such as layout.json"
    if path.exists() and not path.is_file():
        return f"--layout-json {out} is not a regular file"
    return _folder_problem("--layout-json", out)


def _folder_problem(flag: str, out: str) -> str | None:
    """None if a file can be made beside ``out`` (its folder created if need be), else a one-line reason."""
    path = Path(out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{flag} {out}: cannot create its folder ({exc.strerror or exc})"
    if not os.access(path.parent, os.W_OK):
        return f"{flag} {out}: its folder is not writable"
    try:  # os.access says yes to root everywhere, and knows nothing of /proc or a full disk: try it
        probe = tempfile.NamedTemporaryFile(dir=path.parent, prefix=".one-trip-", suffix=".probe", delete=False)
        probe.close()
        os.unlink(probe.name)
    except OSError as exc:
        return f"{flag} {out}: its folder is not writable ({exc.strerror or exc})"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{flag} {out}: the file is not writable"
    return None


def wait_until(app, predicate, timeout_s: float) -> bool:
    """Process ``app``'s events until ``predicate()`` is true (True) or ``timeout_s`` seconds have passed (False).

    The one waiting loop of the commands that drive a window offscreen (screenshot, record, the audit matrix). It
    sleeps in this file, where the screenshot and record commands' Ctrl+C handler may raise KeyboardInterrupt
    (``gui.cli._SAFE_FILES``)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.005)
    return True


def _wait_with_notice(app, predicate, timeout_s: float, notice_after_s: float, notice: str) -> bool:
    """``wait_until``, printing ``notice`` on stderr once if ``predicate`` is still false after ``notice_after_s``."""
    if wait_until(app, predicate, min(notice_after_s, timeout_s)):
        return True
    if notice_after_s >= timeout_s:
        return False
    print(notice, file=sys.stderr, flush=True)
    return wait_until(app, predicate, timeout_s - notice_after_s)


def _apply_extras(app, window, args, name: str = "screenshot") -> bool:
    """--draft-k and --tp/--pp: set the apprentice and tear the book (waiting for the workers). False on failure."""
    k = int(getattr(args, "draft_k", 0) or 0)
    if k:
        if not window.apprentice.is_available():
            print(f"{name}: no apprentice ({window.apprentice.reason()})", file=sys.stderr)
            return False
        window.set_draft_k(k)
    tp, pp = getattr(args, "tp", None), getattr(args, "pp", None)
    mode, n = ("tp", tp) if tp else ("pp", pp) if pp else ("tp", 1)
    if n and n > 1:
        window.set_sharding(mode, n)
        if not window.tear.is_pending() and window.sharding() != (mode, n):
            print(f"{name}: the book cannot be torn {n} ways ({mode}); allowed: "
                  f"{window.tear.degrees(mode)}", file=sys.stderr)
            return False
        if not wait_until(app, lambda: not window.tear.is_pending(), 60.0) or window.sharding() != (mode, n):
            print(f"{name}: the workers did not start ({window.status_line.text()})", file=sys.stderr)
            return False
    return True


def open_live_window(args, size: tuple[int, int], name: str = "screenshot", stepped: bool = False):
    """The Live window of ``args`` (model, language, --presenter), shown at exactly ``size`` (w, h) pixels with
    its engine starting. Returns (app, window), or an exit status (2, with one line on stderr) when the window
    cannot be that size. ``stepped``: its animation clock moves only by ``clock.step_to`` (``gui.capture.record``)."""
    width, height = size
    from gui.app import build_window, create_app
    app = create_app()
    window = build_window(args, app)
    if stepped:
        window.clock.set_stepped(True)
    if getattr(args, "presenter", False):
        from gui.presenter.presenter import Presenter
        Presenter(window).install(presenter_mode=True)
    if getattr(args, "kiosk", False):  # the kiosk's screen: locked down and in touch mode, not fullscreen
        from gui.kiosk.kiosk import KioskController
        from gui.kiosk.touch import install_touch
        from gui.settings import Settings
        KioskController(window, Settings(language=window.lang), attract=False).install().may_close = True
        install_touch(window, kiosk=True)
    if getattr(args, "details", False):
        window.set_details(True)
    if getattr(args, "code", False):
        window.code_view.set_open(True)  # opens the details view, the code in the plots' place
    window.resize(width, height)
    window.show()
    app.processEvents()
    if (window.width(), window.height()) != (width, height):
        print(f"{name}: the window cannot be {width}x{height} (it is {window.width()}x{window.height()}: "
              f"its contents need more room)", file=sys.stderr)
        window.close()
        return 2
    window.start()
    return app, window


def prepare_live(app, window, args, name: str = "screenshot") -> int:
    """Wait for the engine, then set the prompt, the table (--batch), the apprentice (--draft-k, after a plain
    run of --steps trips so the readout can show the measured speed-up) and the torn book (--tp/--pp).
    Returns 0, or 1 with one line on stderr."""
    steps = max(1, int(getattr(args, "steps", None) or 8))
    batch = max(1, min(16, int(getattr(args, "batch", None) or 1)))
    prompt = getattr(args, "prompt", None) or DEFAULT_PROMPT
    if not _wait_with_notice(app, lambda: window.engine_info is not None or window.model_failed() is not None
                             or not window.bridge.is_running(), READY_TIMEOUT_S, STILL_STARTING_S,
                             f"{name}: the engine is still starting (loading the model; waiting up to "
                             f"{READY_TIMEOUT_S:.0f} s)…"):
        print(f"{name}: the engine did not start in time ({READY_TIMEOUT_S:.0f} s): it is frozen, or this "
              f"machine is too busy; see the log", file=sys.stderr)
        return 1
    if window.engine_info is None:
        print(f"{name}: the engine could not start: {window.model_failed() or 'it stopped'}", file=sys.stderr)
        return 1
    window.set_prompt(prompt or window.presets()[0])
    window.set_batch(batch)
    if getattr(args, "draft_k", 0) and window.apprentice.is_available():
        # the start-up verdict first (which apprentice pays, and whether only greedy), then a plain run of the
        # same prompt under the sampling the apprentice will use, so the readout can show the measured speed-up
        if not wait_until(app, lambda: window.bridge.apprentice_info is not None, APPRENTICE_TIMEOUT_S):
            print(f"{name}: no apprentice verdict in time; the apprentice runs as the engine set it", file=sys.stderr)
        if window.run_trips(steps):  # the plain run, under the visitor's own sampling (the apprentice keeps it)
            start = window.reports_received
            wait_until(app, lambda: window.reports_received - start >= steps or window.is_session_done(), RUN_TIMEOUT_S)
            wait_until(app, lambda: False, 0.2)
            window.reset()
    if not _apply_extras(app, window, args, name):
        return 1
    return 0


def apprentice_facts(window) -> dict:
    """The apprentice's figures as the readout shows them: guesses per trip, kind, greedy or not, the measured
    speed-up (plain ms per token ÷ apprentice ms per token, ``SpecMeter``; None without a plain run) and
    acceptance, and the engine's start-up verdict (``chosen``, ``pays_when``); the sampling temperature, the
    visitor's answer as shown and the phrase it was stopped for repeating (``loop``, None when it did not loop)."""
    meter, info = window.spec_meter, window.bridge.apprentice_info or {}
    return {"k": window.apprentice.value(), "kind": window.apprentice_choice.kind(),
            "greedy": window.session.sampling.greedy, "speedup": meter.speedup(window.session.spec_key()),
            "acceptance": meter.acceptance if meter.trips else None, "trips": meter.trips,
            "chosen": info.get("chosen"), "pays_when": info.get("pays_when"),
            "temperature": 0.0 if window.session.sampling.greedy else window.session.sampling.temperature,
            "answer": window.answer_text, "loop": window.loop_phrase}


def trip_facts(window) -> dict | None:
    """The trip the Live page's split row shows (``gui.live.paperwork.trip_figures``): "step" (the engine's step
    number of the median trip among "steps", the last "trips" trips like the one on stage, "on_stage"),
    "whole_ms", "forward_ms", "weight_read_ms", "cpu_ms" (that report's, as the engine sent them), "wait_ms"
    (whole − CPU), "floor_ms" (formula), "reading_ms", "paperwork_ms", "comm_ms", "reading_share" (of the
    whole step less the wait), and "lesson" (the key of the sentence on screen); None before a trip."""
    f = getattr(window.live_page.split_row, "trip", None)
    if not f:
        return None
    keys = ("step", "on_stage", "phase", "batch", "whole_ms", "forward_ms", "weight_read_ms", "cpu_ms", "wait_ms",
            "floor_ms", "reading_ms", "paperwork_ms", "comm_ms", "reading_share", "desks", "trips", "steps", "lesson")
    return {k: f.get(k) for k in keys}


def screenshot_main(args) -> int:
    """Save a screenshot of the window after ``args.steps`` real trips. Returns 0, or 1 with a message."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY") and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    out = getattr(args, "out", None)
    if not out:
        print("screenshot: --out FILE.png is required", file=sys.stderr)
        return 2
    try:
        width, height = parse_size(getattr(args, "size", None))
    except ValueError as exc:
        print(f"screenshot: {exc}", file=sys.stderr)
        return 2
    steps = max(1, int(getattr(args, "steps", None) or 8))
    opened = open_live_window(args, (width, height))
    if isinstance(opened, int):
        return opened
    app, window = opened
    try:
        if (code := prepare_live(app, window, args)) != 0:
            return code
        code, start = _run_steps(app, window, steps)
        if code != 0:
            return code
        _pose_last_trip(window, getattr(args, "at", None))
        app.processEvents()
        return _save_shot(window, args, out, steps, start)
    finally:
        window.close()
        window.stop()


def _run_steps(app, window, steps: int) -> tuple[int, int]:
    """Run ``steps`` real trips in real time and wait for them. Returns 0 (or 1 with a message) and the count of
    reports received before the run."""
    window.set_real_time(True)  # show trips as they come; the engine runs them back to back
    if not window.run_trips(steps):
        print("screenshot: could not start the run", file=sys.stderr)
        return 1, 0
    start = window.reports_received
    if not wait_until(app, lambda: window.reports_received - start >= steps or window.is_session_done()
                      or not window.bridge.is_running(), RUN_TIMEOUT_S):
        print(f"screenshot: only {window.reports_received - start} of {steps} trips in time", file=sys.stderr)
        return 1, start
    if not window.bridge.is_running():
        print("screenshot: the engine stopped during the run", file=sys.stderr)
        return 1, start
    wait_until(app, lambda: False, 0.3)  # let late events (finished, idle) arrive
    return 0, start


def _pose_last_trip(window, at: float | None) -> None:
    """Show the last trip at human pace, stopped at fraction ``at`` of it (by default half-way: carts on the
    road, chapters lighting up)."""
    window.clock.stop()
    window.set_real_time(False)
    if window.last_report is not None:
        window.scene.show_trip(window.last_report)
        duration = float(getattr(window.scene, "trip_duration_s", 1.0))
        if at is None:  # a verify trip says most once the master has judged the guesses
            at = 0.77 if window.last_report.get("phase") == "verify" else 0.55
        at = min(0.999, max(0.0, float(at)))
        for _ in range(30):
            window.scene.advance(duration * at / 30)


def _save_shot(window, args, out: str, steps: int, start: int) -> int:
    """Write the PNG (and the layout JSON with ``--layout-json``) and say what was saved. Returns 0, or 1 or 2
    with a message."""
    path = Path(out)
    if (reason := check_out_path(out)) is not None:
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    from gui.audit.layout_audit import exact_image, write_layout_json
    layout_json = getattr(args, "layout_json", None)
    if layout_json:
        layout = write_layout_json(window, layout_json, window.lang)
        layout["apprentice"] = apprentice_facts(window)  # an added field: the figures the readout shows
        layout["trip"] = trip_facts(window)  # added: the trip the split row shows, and the lesson it chose
        Path(layout_json).write_text(json.dumps(layout, ensure_ascii=False, indent=1), encoding="utf-8")
    image = exact_image(window)  # device-independent pixels, whatever QT_SCALE_FACTOR says
    if not image.save(str(path)):
        print(f"screenshot: could not write {path}", file=sys.stderr)
        return 1
    extra = f", layout in {layout_json}" if layout_json else ""
    trips = window.reports_received - start
    if trips < steps and window.is_session_done():  # said, not left for the reader to notice
        extra += f"; the answer finished after {trips} of the {steps} trips of --steps"
    print(f"screenshot: {path} ({image.width()}x{image.height()}, {trips} trips{extra})")
    return 0
