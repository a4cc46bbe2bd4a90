"""``python main.py screenshot ...``: the command line of the screenshot command (see ``gui.capture.screenshot``).

    python main.py screenshot --out FILE.png [--prompt TEXT] [--steps N] [--batch N] [--lang zh|en] [--size WxH]
                              [--draft-k K] [--tp N | --pp N] [--layout-json F] the live window after N real trips
    python main.py screenshot --section N --lang zh|en --out FILE.png  tour page N (1-18), offscreen
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

from model.argtypes import OneLineParser, command_name, float_in, int_in, threads_arg

MAX_STEPS = 1000  # real trips; the bundled model's context window (512) ends a run well before
MAX_BATCH = 16  # seats at the table
MAX_WORKERS = 4  # as model.parallel.MAX_WORKERS (not imported: that module loads torch)
SECTIONS = 18


def build_screenshot_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=command_name("screenshot"),
                                description="Run N real trips offscreen and save the window as a PNG, or "
                                            "render one page of the tour (--section).")
    p.add_argument("--out", required=True, metavar="FILE.png", help="where to write the PNG")
    add_scene_options(p)
    p.add_argument("--at", type=float_in(0.0, 1.0), default=None, metavar="F",
                   help="show the last trip at this fraction of its animation (default 0.55; 0.77 for a verify trip)")
    p.add_argument("--layout-json", default=None, metavar="FILE.json",
                   help="also write every visible text (rect, font px, clipped, role) as JSON (gui.audit.layout_audit)")
    p.add_argument("--kiosk", action="store_true",
                   help="the kiosk's screen: touch mode (finger-sized controls, preset questions), locked down")
    return p


def add_scene_options(p: argparse.ArgumentParser) -> None:
    """What to show, shared by ``screenshot`` and ``record``: a tour page (--section) or the Live page's run."""
    p.add_argument("--prompt", default=None, metavar="TEXT", help="the prompt (default: a preset)")
    p.add_argument("--steps", type=int_in(1, MAX_STEPS), default=8, metavar="N",
                   help=f"real trips (forward passes) to run, 1-{MAX_STEPS}")
    p.add_argument("--batch", type=int_in(1, MAX_BATCH), default=1, metavar="N", help="seats sharing the table, 1-16")
    p.add_argument("--lang", choices=("zh", "en"), default="en")
    p.add_argument("--size", default="1920x1080", metavar="WxH", help="window size in pixels")
    p.add_argument("--model", default=None, metavar="DIR", help="a GPT-2 directory (default: the bundled model)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--threads", type=threads_arg(), default=None, metavar="N", help="engine threads, 1-256")
    p.add_argument("--section", type=int_in(1, SECTIONS, "a tour page"), default=None, metavar="N",
                   help="render tour page N instead (1-15 the sections, 16 the game, 17 Terms, "
                        "18 Three questions: the tabs' names)")
    p.add_argument("--illustrative", action="store_true",
                   help="with --section: skip the live measurement on the bundled model")
    p.add_argument("--draft-k", type=int_in(0, 8), default=0, metavar="K", help="apprentice guesses per trip, 0-8")
    p.add_argument("--draft-model", default=None, metavar="DIR", help="the draft model (default: the bundled one)")
    tear = p.add_mutually_exclusive_group()
    tear.add_argument("--tp", type=int_in(1, MAX_WORKERS), default=None, metavar="N",
                      help="tear the book by pages over N desks")
    tear.add_argument("--pp", type=int_in(1, MAX_WORKERS), default=None, metavar="N",
                      help="tear the book by chapters over N desks")
    p.add_argument("--presenter", action="store_true", help="presenter mode: one type step larger, fewer buttons")
    p.add_argument("--details", action="store_true",
                   help="the Live page's details view (plots, chips, every slider) instead of the visitor's")
    p.add_argument("--code", action="store_true",
                   help="the code view open: the engine's own source of the stage on screen (the Live page's "
                        "details view, or with --section the page's step)")


def screenshot_main(argv: list[str]) -> int:
    """Parse ``argv`` and run the screenshot command. Returns the exit status."""
    args = build_screenshot_parser().parse_args(argv)
    from gui.capture.screenshot import check_layout_json_path, check_out_path, parse_size
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"screenshot: {exc}", file=sys.stderr)
        return 2
    if (reason := check_out_path(args.out)) is not None:  # before the engine starts, not after the run
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    if (reason := check_layout_json_path(args.layout_json)) is not None:  # as --out: before the run
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    if (reason := model_dir_problem(args)) is not None:  # before the engine starts, and in one line
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    if (reason := tear_problem(args)) is not None:  # before the engine and its workers start
        print(f"screenshot: {reason}", file=sys.stderr)
        return 2
    return run_interruptible(lambda: _render(args, size))


def run_interruptible(job) -> int:
    """Run ``job()`` (the offscreen work of screenshot or record) with Ctrl+C made clean (see ``_interrupted``):
    KeyboardInterrupt reaches the caller from the job's own waiting code, never from inside Qt."""
    from gui.app import install_qt_message_handler
    install_qt_message_handler()  # the offscreen platform's notices go to the log (at DEBUG), not the terminal
    previous = {sig: signal.signal(sig, _interrupted) for sig in STOP_SIGNALS}
    _RUN.update(active=True, backstop=None, raised=False, retrying=False, cleanup=[], signum=None)
    try:
        return job()
    finally:
        _RUN["active"] = False  # no more retries; the clean way out has been taken
        if _RUN.get("backstop") is not None:
            _RUN["backstop"].cancel()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, a window closing its ``record`` child) during screenshot or record: the same clean way
    out as Ctrl+C (the clip's temporary file deleted, the engine stopped), then "terminated" and status 143
    (128 + SIGTERM) from ``main.py``. A KeyboardInterrupt, so every ``except KeyboardInterrupt`` on the way
    out treats it as Ctrl+C."""

    signum = signal.SIGTERM


# the signals that end a run cleanly: Ctrl+C, and SIGTERM where there is one to catch (not on Windows)
STOP_SIGNALS = (signal.SIGINT,) + ((signal.SIGTERM,) if sys.platform != "win32" else ())


FORCE_EXIT_S = 10.0  # after Ctrl+C, the longest the clean way out may take before the hard one
RETRY_S = 0.02  # how soon a Ctrl+C that landed inside Qt is delivered again
_SAFE_FILES = ("gui/capture/screenshot.py", "gui/cli.py", "gui/capture/record.py", "gui/capture/video.py",
               "gui/capture/tour_shot.py", "gui/tour/measure.py", "main.py")  # code Python calls, never Qt


def _interrupted(signum, frame):
    """Ctrl+C (or SIGTERM) during a screenshot or a clip: "interrupted" on one line and exit status 130 (128 +
    SIGINT); after SIGTERM "terminated" and 143 (``Terminated``).

    KeyboardInterrupt is raised only where Python called the code: most of the time the signal lands in a
    Python override that Qt called (an event filter, a paint event), where PySide would print a traceback and
    go on taking the screenshot. Then a helper thread sends the signal again every ``RETRY_S`` until it lands
    in the screenshot's own waiting loop (which spends its time in ``time.sleep``); there the window closes and
    the engine is stopped as on any exit, and ``main.py`` says "interrupted". Should that take longer than
    ``FORCE_EXIT_S``, the process says it and leaves at once: the engine process ends itself within half a
    second of this one (``gui.engine_link.engine_entry``).
    """
    if _RUN.get("raised"):
        return  # the clean way out is under way: a repeated signal must not cut it short
    if _RUN.get("signum") is None:
        _RUN["signum"] = signum  # the first signal names the way out (the retries below send SIGINT)
    # stopping the engine hard is what was asked for
    logging.getLogger("gui.engine_link.bridge").setLevel(logging.ERROR)
    if _RUN.get("backstop") is None:
        _RUN["backstop"] = threading.Timer(FORCE_EXIT_S, _exit_now)
        _RUN["backstop"].daemon = True
        _RUN["backstop"].start()
    name = frame.f_code.co_filename.replace("\\", "/") if frame is not None else ""
    qt = sys.modules.get("PySide6.QtCore")
    if name.endswith(_SAFE_FILES) or qt is None or qt.QCoreApplication.instance() is None:
        _RUN["raised"] = True
        raise _stop_exception()  # Python called this code (without an application, Qt calls nothing back)
    if not _RUN.get("retrying"):
        _RUN["retrying"] = True
        threading.Thread(target=_again, name="ctrl-c-retry", daemon=True).start()


def _again() -> None:
    """Deliver SIGINT again until the handler could raise (a signal that arrives while a child process is being
    started is ignored there, see ``model.procs``, so one retry is not enough)."""
    while True:
        time.sleep(RETRY_S)
        # checked after the sleep, not before: a signal sent once the clean way out is under way could land
        # after the interpreter's shutdown has put back the default handler, and end the process as killed
        if not _RUN.get("active") or _RUN.get("raised"):
            return
        os.kill(os.getpid(), signal.SIGINT)


def _stop_exception() -> KeyboardInterrupt:
    return Terminated() if _RUN.get("signum") == signal.SIGTERM else KeyboardInterrupt()


def _exit_now() -> None:
    for path in _RUN.get("cleanup", ()):  # a clip's temporary file (gui.capture.record): never left behind
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        sys.stderr.write("terminated\n" if _RUN.get("signum") == signal.SIGTERM else "interrupted\n")
        sys.stderr.flush()
    finally:
        os._exit(143 if _RUN.get("signum") == signal.SIGTERM else 130)


_RUN: dict = {}


def model_dir_problem(args) -> str | None:
    """None if ``--model`` (and ``--draft-model`` with ``--draft-k``) name folders with a config.json, else a
    one-line reason. Deeper faults (a truncated model.safetensors) are the engine's to report."""
    for flag, value in (("--model", args.model), ("--draft-model", args.draft_model if args.draft_k else None)):
        if value is None:
            continue
        path = Path(value)
        if path.is_file():
            return f"{flag} {value} is a file; give the model's folder (with config.json)"
        if not path.is_dir():
            return f"{flag} {value}: no such folder"
        if not (path / "config.json").is_file():
            return f"{flag} {value}: no config.json in it, so it is not a model folder"
    return None


def tear_problem(args) -> str | None:
    """None if ``--tp``/``--pp`` fit the model's config.json (heads divisible by N; at most one stage per layer),
    else a one-line reason naming the degrees that fit. An unreadable config is left to the engine to report."""
    mode, n = ("tp", args.tp) if args.tp else ("pp", args.pp) if args.pp else ("tp", 1)
    if n <= 1:
        return None
    from model.cli import BUNDLED_MODEL  # light: no torch at import
    model_dir = Path(args.model) if args.model else BUNDLED_MODEL
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        n_head, n_layer = int(config.get("n_head", 12)), int(config.get("n_layer", 12))
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    if mode == "tp":
        fits = [d for d in range(1, MAX_WORKERS + 1) if n_head % d == 0]
        if n not in fits:
            return (f"--tp {n}: the model's {n_head} heads split evenly only {', '.join(map(str, fits))} ways "
                    f"(up to {MAX_WORKERS})")
    elif n > n_layer:
        return f"--pp {n}: the model has {n_layer} layers, so at most {min(n_layer, MAX_WORKERS)} stages"
    return None


def _render(args, size) -> int:
    if args.section is not None:
        from gui.capture.tour_shot import render_section_png
        code = render_section_png(args.section, args.lang, args.out, size=size, live=not args.illustrative,
                                  prompt=args.prompt, layout_json=args.layout_json, kiosk=args.kiosk,
                                  presenter=args.presenter, code=args.code, model_dir=args.model)
        if code == 0:
            print(f"screenshot: {args.out} ({size[0]}x{size[1]}, tour page {args.section}, {args.lang})")
        return code
    from gui.capture.screenshot import screenshot_main as run
    return run(args)
