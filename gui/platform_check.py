"""Before any ``QApplication`` exists: can Qt's platform plugin load on this machine? Imports no Qt.

Since Qt 6.5 the xcb (X11) platform plugin needs ``libxcb-cursor.so.0``, which a fresh Linux desktop often
lacks; without it Qt prints a hint and aborts the process (exit 134). ``check()`` finds the libraries the plugin
cannot load (``ldd`` on the plugin, else ``ctypes.util.find_library`` on the known list) and returns one line
naming the system packages to install, so ``main.py`` can print it and exit with status 2 instead.

``display_problem()`` tells the other failure apart: no display at all (no ``DISPLAY``, no ``WAYLAND_DISPLAY``,
no platform asked for: an SSH session, a headless box), where Qt would print the same xcb hint and abort
although every library is installed. Its one line says to run the window on the desktop, or to use
``screenshot``/``record``, which need no display.

Only the xcb platform is checked, and only on Linux: the one Qt picks on an X11 session (``QT_QPA_PLATFORM``,
``-platform`` and ``XDG_SESSION_TYPE`` decide, as in ``QGuiApplication``); offscreen, Wayland, eglfs ... are not.
"""

from __future__ import annotations

import ctypes.util
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

# soname prefix -> (Debian/Ubuntu, Fedora, Arch) package; the xcb plugin's needs as listed in Qt's X11 docs
PACKAGES = {
    "libxcb-cursor.so": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-image.so": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-keysyms.so": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-render-util.so": ("libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    "libxcb-util.so": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxkbcommon-x11.so": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon.so": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libX11-xcb.so": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11.so": ("libx11-6", "libX11", "libx11"),
    "libSM.so": ("libsm6", "libSM", "libsm"),
    "libICE.so": ("libice6", "libICE", "libice"),
    "libEGL.so": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libOpenGL.so": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libfontconfig.so": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libglib-2.0.so": ("libglib2.0-0", "glib2", "glib2"),
}
for _ext in ("randr", "render", "shape", "shm", "sync", "xfixes", "xkb", "xinput", "glx", "xinerama"):
    PACKAGES[f"libxcb-{_ext}.so"] = (f"libxcb-{_ext}0" if _ext not in ("sync", "xkb") else f"libxcb-{_ext}1",
                                     "libxcb", "libxcb")
PACKAGES["libxcb.so"] = ("libxcb1", "libxcb", "libxcb")

# the libraries find_library looks for when there is no ldd (its names: without "lib" and ".so")
KNOWN = ("xcb-cursor", "xcb-icccm", "xcb-image", "xcb-keysyms", "xcb-render-util", "xcb-randr", "xcb-shape",
         "xcb-xkb", "xkbcommon-x11", "xkbcommon", "xcb", "X11-xcb", "fontconfig", "EGL")

_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.MULTILINE)


def platform_to_use(env: dict | None = None, argv: list[str] | None = None) -> str | None:
    """The platform plugin Qt will try first on Linux (e.g. ``"xcb"``, ``"wayland"``, ``"offscreen"``), or
    None off Linux and where Qt would have no display to use (no ``DISPLAY``/``WAYLAND_DISPLAY``, nothing asked)."""
    env = os.environ if env is None else env
    argv = sys.argv if argv is None else argv
    if not sys.platform.startswith("linux"):
        return None
    asked = None
    if "-platform" in argv[:-1]:
        asked = argv[argv.index("-platform") + 1]
    elif env.get("QT_QPA_PLATFORM"):
        asked = env["QT_QPA_PLATFORM"]
    if asked:
        return asked.split(";")[0].split(":")[0].strip() or None
    if env.get("XDG_SESSION_TYPE") == "wayland" and env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return "xcb" if env.get("DISPLAY") else None


def xcb_plugin() -> Path | None:
    """``PySide6/Qt/plugins/platforms/libqxcb.so`` of the PySide6 this interpreter would import, if there."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    plugin = Path(list(spec.submodule_search_locations)[0]) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.is_file() else None


def missing_libraries(plugin: Path) -> list[str]:
    """Sonames the dynamic loader cannot find for ``plugin`` (``ldd``, which follows the plugin's own
    dependencies too), in ldd's order without repeats; without ldd, the libraries of ``KNOWN`` that
    ``ctypes.util.find_library`` cannot find, as ``lib<name>.so``."""
    try:
        out = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return [f"lib{name}.so" for name in KNOWN if ctypes.util.find_library(name) is None]
    return list(dict.fromkeys(_NOT_FOUND.findall(out)))


def packages_for(sonames: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(Debian/Ubuntu, Fedora, Arch) package names that provide ``sonames``; an unknown soname stands as itself."""
    found: list[tuple[str, str, str]] = []
    for soname in sonames:
        prefix = soname.split(".so")[0] + ".so"
        found.append(PACKAGES.get(prefix, (soname, soname, soname)))
    return tuple(list(dict.fromkeys(names)) for names in zip(*found)) if found else ([], [], [])


def message(sonames: list[str]) -> str:
    """The one line to print: what is missing and the install command on Debian/Ubuntu, Fedora and Arch."""
    deb, fedora, arch = packages_for(sonames)
    return (f"one-trip: Qt's X11 (xcb) platform cannot start: {', '.join(sonames)} not found. "
            f"Install: sudo apt install {' '.join(deb)}  (Fedora: sudo dnf install {' '.join(fedora)}; "
            f"Arch: sudo pacman -S {' '.join(arch)})")


def check(env: dict | None = None, argv: list[str] | None = None) -> str | None:
    """None if the platform Qt will use can load (or is not one this checks), else ``message(...)``."""
    if platform_to_use(env, argv) != "xcb":
        return None
    plugin = xcb_plugin()
    if plugin is None:
        return None  # not a PySide6 wheel layout; Qt will say what it lacks
    missing = missing_libraries(plugin)
    return message(missing) if missing else None


def display_problem(env: dict | None = None, argv: list[str] | None = None, prog: str = "one-trip") -> str | None:
    """None if the window has somewhere to open (or this is not Linux, or a platform was asked for), else the
    one line to print: no display here, and what to do instead. ``prog``: the command's name as typed."""
    env = os.environ if env is None else env
    argv = sys.argv if argv is None else argv
    if not sys.platform.startswith("linux") or platform_to_use(env, argv) is not None:
        return None
    if env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None  # a display Qt may reach another way (Wayland without XDG_SESSION_TYPE, ...): let it try
    return (f"{prog}: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are not set: an SSH session or "
            f"a machine without a desktop). Run it on the desktop (or ssh -X), or make pictures and clips without "
            f"a display: {prog} screenshot --out shot.png, {prog} record --out clip.mp4")
