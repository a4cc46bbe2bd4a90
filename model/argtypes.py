"""Command-line argument types with ranges, and a parser whose errors are one line.

Imports nothing but the standard library: ``main.py`` uses it before torch or Qt are loaded.

    p = OneLineParser(prog=command_name("generate"))
    p.add_argument("--max-new-tokens", type=int_in(1, 1_000_000), ...)

Every count and duration typed on the command line goes through ``int_in`` / ``float_in``: a value that is not
a number, is nan or inf, or lies outside ``[lo, hi]`` is refused with a message naming the range, and the parser
prints ``prog: error: argument --x: ... (see --help)`` on one line and exits with status 2 (argparse's own
status for usage errors). Nothing is clamped silently.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

MAX_THREADS = 256  # torch intra-op threads; 5,000 "works" but makes every step 30× slower, 10**20 overflows torch


def program_name(argv0: str | None = None) -> str:
    """The name the user typed to run One Trip, for help, errors and hints.

    ``main.py`` when run from a checkout (``python main.py ...``), the console script's own name when installed
    (``one-trip``; ``one-trip.exe`` on Windows shows as ``one-trip``), and ``one-trip`` for anything else that
    names no program (``python -c``, an embedding host, a test runner). ``argv0`` defaults to ``sys.argv[0]``.
    """
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    if name.lower().endswith(".exe"):
        name = name[:-4]
    if name == "main.py" or name.startswith("one-trip"):
        return name
    return "one-trip"


def command_name(command: str) -> str:
    """``program_name()`` followed by a subcommand: "one-trip generate", "main.py screenshot"."""
    return f"{program_name()} {command}"


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (no usage block), then exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        text = " ".join(str(message).split())
        self.exit(2, f"{self.prog}: error: {text} (see --help)\n")


def _short(text: str) -> str:
    return repr(text if len(text) <= 24 else text[:24] + "…")


def int_in(lo: int, hi: int, what: str = "a whole number"):
    """An argparse ``type``: a whole number from ``lo`` to ``hi`` inclusive (``2_000`` and ``2,000`` accepted)."""
    def parse(text: str) -> int:
        try:
            value = int(str(text).strip().replace("_", "").replace(",", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:,} to {hi:,}, got {_short(text)}") from None
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:,} to {hi:,}, got {_short(text)}")
        return value
    parse.__name__ = "int"  # argparse names the type in some messages
    return parse


def float_in(lo: float, hi: float, what: str = "a number"):
    """An argparse ``type``: a finite number from ``lo`` to ``hi`` inclusive (nan, inf and 1e999 refused)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:g} to {hi:g}, got {_short(text)}")
        return value
    parse.__name__ = "float"
    return parse


def threads_arg():
    """``--threads N``: 1 to ``MAX_THREADS``."""
    return int_in(1, MAX_THREADS, "a number of threads")


def say(prog: str, message: str) -> int:
    """Print ``prog: error: message`` on one line to stderr; return 2 (the exit status for bad input)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)
    return 2
