"""``one-trip desktop-entry``: put One Trip in the desktop's application menu (freedesktop.org). No Qt.

Writes ``$XDG_DATA_HOME/applications/one-trip.desktop`` (default ``~/.local/share``) from the bundled
``assets/one-trip.desktop``, with ``Exec`` set to the absolute path of the command that runs now (the
``one-trip`` script of a pip/pipx install, or this interpreter with ``main.py``), and copies the icon to
``$XDG_DATA_HOME/icons/hicolor/{scalable,256x256}/apps/``. ``--print`` writes the entry to stdout instead.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path

import assets
from model.argtypes import command_name

NAME = "one-trip"


def exec_line(extra: list[str]) -> str:
    """The ``Exec`` value that starts this install of the app: the console script that is running, else
    ``python main.py``; both absolute, quoted for the desktop entry's shell-like syntax."""
    argv0 = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.is_file() and argv0.suffix != ".py" and argv0.name.startswith(NAME):
        cmd = [str(argv0)]
    else:
        cmd = [sys.executable, str(Path(__import__("main").__file__).resolve())]
    return " ".join(shlex.quote(part) for part in cmd + extra)


def entry_text(extra: list[str]) -> str:
    """The bundled desktop entry with ``Exec`` pointing at this install."""
    lines = (assets.root() / f"{NAME}.desktop").read_text(encoding="utf-8").splitlines()
    return "\n".join(f"Exec={exec_line(extra)}" if line.startswith("Exec=") else line for line in lines) + "\n"


def install(data_home: Path, extra: list[str]) -> list[Path]:
    """Write the entry and the icons under ``data_home``; returns the files written."""
    written = []
    for src, sub in ((assets.ICONS / f"{NAME}.svg", "scalable"), (assets.ICONS / f"{NAME}.png", "256x256")):
        dest = data_home / "icons" / "hicolor" / sub / "apps" / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
        written.append(dest)
    entry = data_home / "applications" / f"{NAME}.desktop"
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(entry_text(extra), encoding="utf-8")
    written.append(entry)
    return written


def desktop_entry_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog=command_name("desktop-entry"), description=__doc__.splitlines()[0])
    p.add_argument("--print", action="store_true", help="write the entry to stdout, install nothing")
    p.add_argument("args", nargs="*", metavar="ARG", help="options the menu entry starts the app with (after --)")
    args = p.parse_args(argv)
    if args.print:
        sys.stdout.write(entry_text(args.args))
        return 0
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    for path in install(data_home, args.args):
        print(path)
    return 0
