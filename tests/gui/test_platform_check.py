"""Before the QApplication: a missing system library of Qt's xcb platform is one line and exit 2, not an abort."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui import platform_check as pc

ROOT = Path(__file__).resolve().parents[2]

LDD_OUTPUT = """\
\tlinux-vdso.so.1 (0x00007ffc1d5f2000)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f3a1c000000)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-cursor.so.0 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a1bc00000)
"""


@pytest.mark.parametrize("env, argv, expected", [
    ({"DISPLAY": ":0"}, [], "xcb"),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, [], "offscreen"),
    ({"QT_QPA_PLATFORM": "xcb"}, [], "xcb"),
    ({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, [], "wayland"),
    ({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, [], "wayland"),
    ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, ["main.py", "-platform", "xcb"], "xcb"),
    ({}, [], None),  # no display: nothing to check (screenshot goes offscreen)
])
def test_the_platform_qt_will_try(env, argv, expected):
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    assert pc.platform_to_use(env, argv) == expected


def test_ldd_output_gives_the_missing_sonames(monkeypatch, tmp_path):
    monkeypatch.setattr(pc.subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, LDD_OUTPUT, ""))
    assert pc.missing_libraries(tmp_path / "libqxcb.so") == ["libxcb-cursor.so.0", "libxcb-icccm.so.4"]


def test_the_message_names_the_package_on_each_distribution():
    line = pc.message(["libxcb-cursor.so.0"])
    assert "\n" not in line
    assert "sudo apt install libxcb-cursor0" in line
    assert "sudo dnf install xcb-util-cursor" in line and "sudo pacman -S xcb-util-cursor" in line
    assert pc.packages_for(["libxcb-cursor.so.0", "libxcb-randr.so.0", "libfoo.so.3"])[0] == [
        "libxcb-cursor0", "libxcb-randr0", "libfoo.so.3"]


@pytest.mark.skipif(not sys.platform.startswith("linux") or pc.xcb_plugin() is None, reason="Linux PySide6 wheel")
def test_the_real_plugin_check_agrees_with_the_loader():
    """On this machine: every soname ldd calls missing is one the loader cannot find either."""
    missing = pc.missing_libraries(pc.xcb_plugin())
    for soname in missing:
        name = soname.split(".so")[0].removeprefix("lib")
        assert ctypes.util.find_library(name) is None, soname
    assert ("libxcb-cursor.so.0" in missing) == (ctypes.util.find_library("xcb-cursor") is None)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is for Linux (xcb)")
@pytest.mark.parametrize("command", [[], ["screenshot", "--out", "x.png"]])
def test_main_says_which_package_and_exits_2_before_any_qt(command, tmp_path):
    code = ("import sys, main\nfrom gui import platform_check\n"
            "platform_check.missing_libraries = lambda plugin: ['libxcb-cursor.so.0']\n"
            "platform_check.xcb_plugin = lambda: 'libqxcb.so'\n"
            "rc = main.main(sys.argv[1:])\n"
            "assert not [m for m in sys.modules if m.startswith(('PySide6.', 'gui.app'))], 'Qt was loaded'\n"
            "sys.exit(rc)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QT_QPA", "WAYLAND", "XDG_SESSION"))}
    env.update(DISPLAY=":99", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code, *command], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "sudo apt install libxcb-cursor0" in lines[0], proc.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is for Linux")
def test_no_display_is_told_apart_from_a_missing_library(tmp_path):
    """Issue 38 item 5: `one-trip` with DISPLAY and WAYLAND_DISPLAY unset (an SSH session) printed Qt's
    xcb-cursor hint and aborted with status 134 although every library was there. Now one line that says
    there is no display and names what to do, status 2, and Qt never loaded."""
    code = ("import sys, main\n"
            "rc = main.main(sys.argv[1:])\n"
            "assert not [m for m in sys.modules if m.startswith(('PySide6.', 'gui.app'))], 'Qt was loaded'\n"
            "sys.exit(rc)\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("QT_QPA", "WAYLAND", "XDG_SESSION")) and k != "DISPLAY"}
    env.update(PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "no display" in lines[0] and "screenshot" in lines[0] and "record" in lines[0]
    assert "xcb" not in lines[0] and "install" not in lines[0]  # not the missing-library line


@pytest.mark.parametrize("env, told", [
    ({}, True), ({"DISPLAY": ":0"}, False), ({"WAYLAND_DISPLAY": "wayland-0"}, False),
    ({"QT_QPA_PLATFORM": "offscreen"}, False), ({"QT_QPA_PLATFORM": "vnc"}, False),
])
def test_display_problem_only_without_any_display(env, told):
    if not sys.platform.startswith("linux"):
        pytest.skip("Linux only")
    assert (pc.display_problem(env, []) is not None) == told
