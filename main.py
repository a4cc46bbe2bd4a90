"""One Trip (一趟一个字): watch a real GPT-2 write, one trip of the weights per token.

    python main.py [--model DIR] [--lang zh|en] [--kiosk] [--presenter] ...   the window (default)
    python main.py generate PROMPT ... [--json]                                the engine, headless
    python main.py screenshot --out FILE.png [...]                             the window, saved offscreen
    python main.py record --out FILE.mp4|.webm|.gif [...]                      a page as a clip, frame-exact
    python main.py kv-size ... | roofline ...                                  the calculators
    python main.py bench [--quick]                                             the benchmarks
    python main.py desktop-entry [-- ARG ...]                                  add the app to the desktop's menu

This file is the composition root: it parses the command line and hands over; each command imports its own
heavy dependencies (torch, Qt) only when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys

from model.argtypes import OneLineParser, program_name, threads_arg

# command -> "module:function"; each function takes the remaining argv and returns an exit status
COMMANDS = {
    "generate": "model.cli:generate_main",
    "kv-size": "model.teaching.costs_cli:kv_size_main",
    "roofline": "model.teaching.costs_cli:roofline_main",
    "screenshot": "gui.cli:screenshot_main",
    "record": "gui.capture.record:record_main",
    "bench": "bench.run:bench_main",
    "desktop-entry": "gui.desktop_entry:desktop_entry_main",
}


# commands that open Qt's platform (a window, or offscreen when there is no display)
WINDOW_COMMANDS = ("screenshot", "record")


def platform_ok() -> bool:
    """Before any QApplication: False, after one line on stderr naming the system packages to install, if Qt's
    platform plugin cannot load here (on Linux/X11, Qt 6.5+ needs libxcb-cursor0 and aborts without it)."""
    from gui.platform_check import check
    problem = check()
    if problem:
        print(problem, file=sys.stderr)
    return problem is None


IDLE_SECONDS_RANGE = (0.2, 86_400.0)  # as gui.settings.RANGES (not imported: this file stays light)


def _idle_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    lo, hi = IDLE_SECONDS_RANGE
    if not math.isfinite(value) or not lo <= value <= hi:  # nan, inf, 1e308 and -5 are refused, not clamped
        raise argparse.ArgumentTypeError(f"expected seconds between {lo:g} and {hi:g}, got {text!r}")
    return value


def _screen_index(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a screen index (0, 1, ...), got {text!r}") from None
    if not 0 <= value <= 63:  # as gui.settings.RANGES
        raise argparse.ArgumentTypeError(f"expected a screen index from 0 to 63, got {value}")
    return value


def _run_command(func, argv: list[str]) -> int:
    """Run a subcommand; a reader that goes away (``| head``) or Ctrl+C ends it with one line, not a traceback.

    Exit status: the command's own; 130 after Ctrl+C (128 + SIGINT), 143 after SIGTERM where the command
    catches it (screenshot, record: ``gui.cli.Terminated``); 141 (128 + SIGPIPE, what a shell reports
    for ``yes | head``) when stdout was closed by its reader.
    """
    try:
        return int(func(argv) or 0)
    except KeyboardInterrupt as stop:  # gui.cli.Terminated (SIGTERM) is one too
        signum = getattr(stop, "signum", 2)
        print("terminated" if signum == 15 else "interrupted", file=sys.stderr)
        return 128 + int(signum)
    except BrokenPipeError:
        try:  # Python flushes stdout again at exit: point it at /dev/null so that flush is silent too
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141


def build_gui_parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog=program_name(),
        description="One Trip (一趟一个字): a real GPT-2 writes while the weights are carted, one trip per token.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the epilog's two lines as written
        epilog="commands: " + ", ".join(COMMANDS) + f"\n({program_name()} COMMAND --help for each)")
    p.add_argument("--model", default=None, metavar="DIR",
                   help="a GPT-2 directory in Hugging Face layout (default: the bundled model)")
    p.add_argument("--draft-model", default=None, metavar="DIR", help="draft model for speculative decoding")
    p.add_argument("--lang", choices=("zh", "en"), default=None,
                   help="interface language (default: the one saved last time, else the system locale: zh for "
                        "Chinese, else en)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--threads", type=threads_arg(), default=None, metavar="N",
                   help="torch threads in the engine process, 1-256 (default: cores - 1, at least 1)")
    p.add_argument("--kiosk", action="store_true", help="fullscreen, attract loop when idle, locked down")
    p.add_argument("--presenter", action="store_true", help="large captions, fewer controls, clicker keys")
    p.add_argument("--touch", action="store_true",
                   help="touch mode without --kiosk: finger-sized controls, swipe and tap "
                        "(on by itself on a touch screen)")
    p.add_argument("--screen", type=_screen_index, default=None, metavar="N",
                   help="screen index for fullscreen / kiosk")
    p.add_argument("--remeasure-floor", action="store_true",
                   help="measure the memory's read speed for the floor again (it is measured once per machine and kept "
                        "in the user's cache folder; `bench --only floor` re-measures it too)")
    p.add_argument("--idle-seconds", type=_idle_seconds, default=None, metavar="S",
                   help="kiosk: idle time before the attract loop, {:g} to {:g} s".format(*IDLE_SECONDS_RANGE))
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in COMMANDS:
        if argv[0] in WINDOW_COMMANDS and "-h" not in argv and "--help" not in argv and not platform_ok():
            return 2
        module, func = COMMANDS[argv[0]].split(":")
        return _run_command(lambda rest: getattr(importlib.import_module(module), func)(rest), argv[1:])
    if argv and not argv[0].startswith("-"):
        print(f"{program_name()}: unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    args = build_gui_parser().parse_args(argv)
    from gui.platform_check import display_problem
    if (problem := display_problem(prog=program_name())) is not None:  # before Qt's own abort (status 134)
        print(problem, file=sys.stderr)
        return 2
    if not platform_ok():
        return 2
    from gui.app import run_app
    return int(run_app(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
