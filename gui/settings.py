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
whole ``Settings`` back. ``run_app`` writes every key only when there is no file yet (so a new file documents
itself); an existing file is never rewritten at start (QSettings would drop the operator's ``;`` comments), and
a file QSettings cannot parse, a binary file or a folder in the file's place is left alone with one WARNING.

Every value, from the file or the command line, is checked: a bad one (not a number, nan, inf, out of
``RANGES``, an unknown language, an operator chord that matches no key) is logged at WARNING with its key, the
bad value and the value used instead (the default).
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

log = logging.getLogger(__name__)

ENV_CONFIG_DIR = "ONE_TRIP_CONFIG_DIR"
ORG_NAME = APP_NAME = "One Trip"
PROMPT_SEPARATOR = " | "
MAX_PROMPT_CHARS = 200  # a configured attract prompt is short: it has to be written in a few seconds
DEFAULT_CHORD = "Ctrl+Alt+Shift+Q"
LANGUAGES = ("zh", "en")
# accepted (lowest, highest) of each number; Qt timers hold at most 2**31 - 1 ms (24.8 days)
RANGES = {"idle_seconds": (0.2, 86_400.0), "screen": (0, 63), "trip_seconds": (0.05, 3.0),
          "section_seconds": (0.1, 3_600.0)}


def chord_problem(text: str) -> str | None:
    """Why ``text`` cannot be the kiosk's exit chord, or None if it can: one key with Ctrl, Alt or Meta (a
    visitor must not be able to type it), written so that Qt knows the key (``QKeySequence("nonsense")`` is
    not empty, but matches no key)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QKeySequence
    seq = QKeySequence(text)
    if seq.count() != 1:
        return "it must be exactly one key combination" if seq.count() else "it is empty"
    combo = seq[0]
    if combo.key() in (Qt.Key_unknown, 0) or combo.key() in (Qt.Key_Control, Qt.Key_Alt, Qt.Key_Shift, Qt.Key_Meta):
        return "Qt knows no such key"
    if not combo.keyboardModifiers() & (Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier):
        return "it needs Ctrl, Alt or Meta, or a visitor could type it"
    return None


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

    # the visitor's language: a kiosk returns to it after every visitor; with nothing saved, the system's
    language: str = field(default_factory=lambda: system_language())
    idle_seconds: float = 60.0  # no input this long starts the attract loop (kiosk), RANGES
    screen: int = 0  # index into QGuiApplication.screens() for fullscreen
    operator_chord: str = DEFAULT_CHORD  # the only way out of a kiosk (besides SIGTERM)
    trip_seconds: float = 1.0  # slow motion: seconds one trip of the weights takes on screen
    section_seconds: float = 8.0  # attract loop: seconds per tour section
    prompts: list[str] = field(default_factory=list)  # attract loop prompts; empty: the built-in presets
    deck: str = "1-15, live, 16, 17, 18"  # [presenter] the talk's order; gui.presenter.deck checks it (logged fallback)

    def __post_init__(self) -> None:
        defaults = {f.name: (f.default_factory() if f.default is MISSING else f.default)
                    for f in fields(self) if f.name != "prompts"}

        def bad(name: str, value, why: str):
            used = defaults[name]
            log.warning("settings: bad %s=%r (%s); using %r", _key(name), value, why, used)
            return used

        if self.language not in LANGUAGES:
            self.language = bad("language", self.language, "expected zh or en")
        for name, (lo, hi) in RANGES.items():
            raw = getattr(self, name)
            kind = int if name == "screen" else float
            try:
                if isinstance(raw, bool):
                    raise TypeError
                value = float(str(raw).strip()) if isinstance(raw, str) else float(raw)
                if kind is int:
                    if not value.is_integer():
                        raise ValueError
                    value = int(value)
            except (TypeError, ValueError, OverflowError):
                setattr(self, name, bad(name, raw, "not a " + ("whole number" if kind is int else "number")))
                continue
            if not (math.isfinite(value) and lo <= value <= hi):
                setattr(self, name, bad(name, raw, f"expected {lo:g} to {hi:g}"))
            else:
                setattr(self, name, value)
        chord = str(self.operator_chord).strip()
        problem = chord_problem(chord)
        self.operator_chord = bad("operator_chord", self.operator_chord,
                                  f"unusable exit chord: {problem}; the default chord works instead") \
            if problem else chord
        if isinstance(self.prompts, str):
            self.prompts = [self.prompts]
        self.prompts = [p[:MAX_PROMPT_CHARS] for p in (str(p).strip() for p in self.prompts) if p]


def system_language(locale=None) -> str:
    """The interface language for a first start, from the system locale: "zh" for any Chinese locale
    (zh_CN, zh_TW, zh_HK, zh_SG...), "en" for anything else. ``locale`` (a ``QLocale``) defaults to
    ``QLocale.system()``, which reads LC_ALL / LC_MESSAGES / LANG on Unix and the user's settings on Windows
    and macOS. A saved choice and ``--lang`` win over it (``gui.app.build_window``)."""
    from PySide6.QtCore import QLocale
    loc = QLocale.system() if locale is None else locale
    return "zh" if loc.language() == QLocale.Language.Chinese else "en"


def saved_language(qsettings=None) -> str | None:
    """The language the window remembered (``language=`` in [General]), or None when none was saved or it is
    not one of ``LANGUAGES``."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    value = qs.value("language")
    return str(value) if value is not None and str(value) in LANGUAGES else None


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
    if isinstance(default, (int, float)):
        return str(raw).strip()  # Settings checks the number and its range, and says what it used
    return str(raw)


def load(args=None, qsettings=None) -> Settings:
    """Settings from the INI file, then the command line's ``lang``, ``idle_seconds``, ``screen``,
    ``operator_chord`` and ``trip_seconds`` where given (not None). A bad value in the file is logged (key, bad
    value, value used) and replaced by its default; a file QSettings cannot parse is logged and ignored; never
    raises."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    if (problem := file_problem(qs.fileName())) is not None:
        log.warning("settings: %s; using the defaults and leaving it as it is", problem)
        return _with_args(Settings(), args)
    if qs.status() == QSettings.FormatError:
        log.warning("settings: %s is not a readable INI file; using the defaults and leaving it as it is",
                    qs.fileName())
        return _with_args(Settings(), args)
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
    try:
        settings = Settings(**values)
    except (TypeError, ValueError) as exc:
        log.warning("settings: %s; using the defaults", exc)
        settings = Settings()
    return _with_args(settings, args)


MAX_INI_BYTES = 1 << 20  # an operator's INI is a few hundred bytes; more is not one


def file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why the settings file at ``path`` cannot be an INI file an operator wrote (a sentence naming it), or None
    (also when there is no file). QSettings reads most binary files without an error, as no keys, and a folder
    as no file: both would be ignored in silence. Checks: a folder or other non-file there; more than
    ``MAX_INI_BYTES``; bytes that are not UTF-8 text (QSettings' encoding for INI files) or hold a NUL."""
    target = Path(path)
    try:
        if not target.exists():
            return None
        if target.is_dir():
            return f"{target} is a folder where the settings file should be"
        if not target.is_file():
            return f"{target} is not a regular file"
        if target.stat().st_size > MAX_INI_BYTES:
            return f"{target} is not a settings file ({target.stat().st_size} bytes)"
        data = target.read_bytes()
    except OSError as exc:
        return f"{target} cannot be read ({exc.strerror or exc})"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return f"{target} is not a text INI file (binary data)"
    if "\x00" in text:
        return f"{target} is not a text INI file (binary data)"
    return None


_OVERRIDES = {"language": "lang", "idle_seconds": "idle_seconds", "screen": "screen",
              "operator_chord": "operator_chord", "trip_seconds": "trip_seconds"}


def _with_args(settings: Settings, args) -> Settings:
    """``settings`` with the command line's values (those not None) in place; each is checked again."""
    from dataclasses import asdict
    values = asdict(settings)
    for name, arg in _OVERRIDES.items():
        value = getattr(args, arg, None) if args is not None else None
        if value is not None:
            values[name] = value
    return Settings(**values)


def write_problem() -> str | None:
    """Why the settings file cannot be written (a sentence), or None when it can. Creates nothing but the
    directory (which QSettings would create too)."""
    path = settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create {path.parent}: {exc.strerror or exc}"
    if path.exists():
        return None if os.access(path, os.W_OK) else f"{path} is read-only"
    return None if os.access(path.parent, os.W_OK) else f"{path.parent} is read-only"


def write_defaults_if_new(settings: Settings, qsettings=None) -> bool:
    """Write every key when the settings file does not exist yet, so a new file lists what an operator may
    set. An existing file is left exactly as it is (QSettings would drop its comments). Returns True if
    written. The language is left out: it is saved only when the user picks one, so that until then each
    start follows the system locale (``system_language``)."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    if os.path.exists(qs.fileName()):
        return False
    save(settings, qs, skip=("language",))
    return qs.status() == QSettings.NoError


def save(settings: Settings, qsettings=None, only_missing: bool = False, skip: tuple[str, ...] = ()) -> None:
    """Write ``settings`` to the INI file (``only_missing``: only keys the file does not have yet; ``skip``:
    field names not to write)."""
    from PySide6.QtCore import QSettings
    qs = qsettings if qsettings is not None else QSettings()
    for f in fields(Settings):
        key = _key(f.name)
        if f.name in skip or (only_missing and qs.contains(key)):
            continue
        value = getattr(settings, f.name)
        if f.name == "prompts":
            value = PROMPT_SEPARATOR.join(value)
        qs.setValue(key, value)
    qs.sync()


def remember_language(language: str, path: str | os.PathLike[str] | None = None) -> bool:
    """Remember the interface language for the next start, keeping the operator's file as it is.

    QSettings rewrites the whole INI file on any write, dropping the operator's ``;`` comments; so in an existing
    file only the ``language=`` line of ``[General]`` is replaced (or added), and every other line stays as
    written. A new file is written by QSettings. Returns False (after one WARNING) when the file cannot be
    written; the window goes on in ``language`` either way.
    """
    target = Path(path) if path is not None else settings_path()
    if target.exists() and (problem := file_problem(target)) is not None:
        log.warning("settings: the language is not remembered: %s", problem)
        return False
    if not target.exists():
        from PySide6.QtCore import QSettings
        qs = QSettings(str(target), QSettings.IniFormat)
        qs.setValue("language", language)
        qs.sync()
        return qs.status() == QSettings.NoError
    try:
        lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("settings: the language is not remembered: %s cannot be read (%s)", target, exc)
        return False
    section, general_at, done = None, None, False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
            if section == "General":
                general_at = i
            continue
        if section in (None, "General") and stripped.split("=", 1)[0].strip() == "language" and "=" in stripped:
            lines[i] = f"language={language}\n"
            done = True
            break
    if not done:
        if general_at is None:
            lines = ["[General]\n", f"language={language}\n", "\n", *lines]
        else:
            lines.insert(general_at + 1, f"language={language}\n")
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text("".join(lines), encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        log.warning("settings: the language is not remembered: %s cannot be written (%s)", target, exc)
        return False
    return True
