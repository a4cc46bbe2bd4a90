"""Operator settings: one small dataclass, read from an INI file with QSettings, overridden by the command line.

Where the file is: ``$ONE_TRIP_CONFIG_DIR`` if set (tests point it at a tmp dir), else
``platformdirs.user_config_dir("one-trip")``; inside it ``One Trip/One Trip.ini`` (QSettings' own layout for the
organisation and application names). ``configure_qsettings()`` makes that INI the default for every plain
``QSettings()`` in the app, so the window's remembered language and these settings share one file that an
operator can edit by hand::

    [General]
    language=zh

    [kiosk]
    idle_seconds=60
    screen=0
    operator_chord=Ctrl+Alt+Shift+Q
    trip_seconds=1.0
    section_seconds=8
    prompts=Once upon a time, a little robot | 从前有一座山，山里有一座庙，

Command-line values win for that run only (``--idle-seconds 5`` for a test does not stick); ``save()`` writes a
whole ``Settings`` back, and ``run_app`` writes the keys that are missing so the file documents itself.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

log = logging.getLogger(__name__)

ENV_CONFIG_DIR = "ONE_TRIP_CONFIG_DIR"
ORG_NAME = APP_NAME = "One Trip"
PROMPT_SEPARATOR = " | "
MAX_PROMPT_CHARS = 200  # a configured attract prompt is short: it has to be written in a few seconds


def config_dir() -> Path:
    """The directory that holds the settings file (``$ONE_TRIP_CONFIG_DIR`` or the user's config dir)."""
    env = os.environ.get(ENV_CONFIG_DIR)
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_config_dir("one-trip", appauthor=False))


def configure_qsettings() -> Path:
    """Make every ``QSettings()`` of this process read and write ``config_dir()/One Trip/One Trip.ini``.

    Call before the first ``QSettings()``; returns the file's path.
    """
    from PySide6.QtCore import QCoreApplication, QSettings
    QCoreApplication.setOrganizationName(ORG_NAME)
    QCoreApplication.setApplicationName(APP_NAME)
    QSettings.setDefaultFormat(QSettings.IniFormat)
    QSettings.setPath(QSettings.IniFormat, QSettings.UserScope, str(config_dir()))
    return settings_path()


def settings_path() -> Path:
    """The INI file ``QSettings()`` uses once ``configure_qsettings()`` ran."""
    return config_dir() / ORG_NAME / f"{APP_NAME}.ini"


@dataclass
class Settings:
    """What an operator sets for a kiosk or a stage. Keys in the INI file are the field names (under [kiosk],
    except ``language``, which the window also remembers at the top level)."""

    language: str = "zh"  # the visitor's language: a kiosk returns to it after every visitor
    idle_seconds: float = 60.0  # no input this long starts the attract loop (kiosk)
    screen: int = 0  # index into QGuiApplication.screens() for fullscreen
    operator_chord: str = "Ctrl+Alt+Shift+Q"  # the only way out of a kiosk (besides SIGTERM)
    trip_seconds: float = 1.0  # slow motion: seconds one trip of the weights takes on screen
    section_seconds: float = 8.0  # attract loop: seconds per tour section
    prompts: list[str] = field(default_factory=list)  # attract loop prompts; empty: the built-in presets
    deck: str = "1-15, live, 16, 17, 18"  # [presenter] the talk's order; gui.deck checks it (logged fallback)

    def __post_init__(self) -> None:
        self.language = self.language if self.language in ("zh", "en") else "zh"
        self.idle_seconds = max(0.2, float(self.idle_seconds))
        self.screen = max(0, int(self.screen))
        self.operator_chord = str(self.operator_chord).strip() or "Ctrl+Alt+Shift+Q"
        self.trip_seconds = min(3.0, max(0.05, float(self.trip_seconds)))
        self.section_seconds = max(0.5, float(self.section_seconds))
        self.prompts = [p[:MAX_PROMPT_CHARS] for p in (str(p).strip() for p in self.prompts) if p]


_KEYS = {"language": "language", "deck": "presenter/deck"}  # everything else lives under [kiosk]


def _key(name: str) -> str:
    return _KEYS.get(name, f"kiosk/{name}")


def _parse(name: str, raw, default):
    if name == "deck" and isinstance(raw, (list, tuple)):  # QSettings splits an unquoted comma list
        return ", ".join(str(r) for r in raw)
    if name == "prompts":
        if isinstance(raw, (list, tuple)):  # QSettings splits an unquoted comma list itself
            raw = ", ".join(str(r) for r in raw)
        return [p for p in str(raw).split(PROMPT_SEPARATOR.strip()) if p.strip()]
    if isinstance(default, bool):
        return str(raw).lower() in ("1", "true", "yes", "on")
    if isinstance(default, int):
        return int(float(raw))
    if isinstance(default, float):
        return float(raw)
    return str(raw)


def load(args=None, qsettings=None) -> Settings:
    """Settings from the INI file, then the command line's ``lang``, ``idle_seconds``, ``screen``,
    ``operator_chord`` and ``trip_seconds`` where given (not None). A bad value in the file is logged and
    replaced by its default; never raises."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    defaults = Settings()
    values = {}
    for f in fields(Settings):
        default = getattr(defaults, f.name)
        raw = qs.value(_key(f.name))
        if raw is None or raw == "":
            continue
        try:
            values[f.name] = _parse(f.name, raw, default)
        except (TypeError, ValueError):
            log.warning("settings: bad %s=%r in %s; using %r", _key(f.name), raw, qs.fileName(), default)
    overrides = {"language": "lang", "idle_seconds": "idle_seconds", "screen": "screen",
                 "operator_chord": "operator_chord", "trip_seconds": "trip_seconds"}
    for name, arg in overrides.items():
        value = getattr(args, arg, None) if args is not None else None
        if value is not None:
            values[name] = value
    try:
        return Settings(**values)
    except (TypeError, ValueError) as exc:
        log.warning("settings: %s; using the defaults", exc)
        return Settings()


def save(settings: Settings, qsettings=None, only_missing: bool = False) -> None:
    """Write ``settings`` to the INI file (``only_missing``: only keys the file does not have yet)."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    for f in fields(Settings):
        key = _key(f.name)
        if only_missing and qs.contains(key):
            continue
        value = getattr(settings, f.name)
        if f.name == "prompts":
            value = PROMPT_SEPARATOR.join(value)
        qs.setValue(key, value)
    qs.sync()
