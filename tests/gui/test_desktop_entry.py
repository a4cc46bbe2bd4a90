"""``main.py desktop-entry``: a menu entry whose Exec and Icon point at this install."""

from __future__ import annotations

import configparser
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_desktop_entry_installs_an_entry_that_starts_this_install(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"))
    proc = subprocess.run([sys.executable, "main.py", "desktop-entry", "--", "--lang", "zh"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    entry = tmp_path / "share" / "applications" / "one-trip.desktop"
    assert {Path(line) for line in proc.stdout.split()} == {
        entry, tmp_path / "share/icons/hicolor/scalable/apps/one-trip.svg",
        tmp_path / "share/icons/hicolor/256x256/apps/one-trip.png"}
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(entry, encoding="utf-8")
    desk = parser["Desktop Entry"]
    assert desk["Type"] == "Application" and desk["Icon"] == "one-trip" and desk["Name[zh_CN]"] == "一趟一个字"
    exec_argv = shlex.split(desk["Exec"])
    assert exec_argv[:2] == [sys.executable, str(ROOT / "main.py")] and exec_argv[2:] == ["--lang", "zh"]
    assert (tmp_path / "share/icons/hicolor/256x256/apps/one-trip.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
