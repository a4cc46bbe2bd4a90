"""Logging for the app and its engine process: a rotating file in the user's log directory, and stderr.

Never a dialog: whatever goes wrong is written here and the screen shows at most one calm line.

The directory is ``$ONE_TRIP_LOG_DIR`` if set (tests), else ``platformdirs.user_log_dir("one-trip")``. The GUI
writes ``one-trip.log``; the engine process (spawned, so it inherits the environment, which ``setup_logging``
fills in) writes ``one-trip-engine.log`` beside it, so two processes never rotate the same file. No Qt here:
the engine process imports this module too.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path

ENV_LOG_DIR = "ONE_TRIP_LOG_DIR"
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"
MAX_BYTES = 1_000_000  # per file; with BACKUPS old files a kiosk keeps at most ~6 MB of log
BACKUPS = 5

log = logging.getLogger(__name__)


def log_dir() -> Path:
    """``$ONE_TRIP_LOG_DIR``, else the platform's user log directory for "one-trip"."""
    env = os.environ.get(ENV_LOG_DIR)
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_log_dir("one-trip", appauthor=False))


# this process's log file once setup_logging ran: its path, or "" when none could be opened
_set_up: dict[str, Path | str] = {}


def setup_logging(process: str = "gui", level: int = logging.INFO) -> Path | None:
    """Send the root logger to ``log_dir()/one-trip[-process].log`` (rotating) and stderr.

    Idempotent (a second call changes nothing). Exceptions that reach the top of the GUI thread (e.g. in a
    slot) are logged instead of printed raw. Returns the log file, or None when it could not be opened
    (then only stderr is used: a read-only disk must not stop a kiosk).
    """
    root = logging.getLogger()
    if "log" in _set_up:
        return _set_up["log"] or None
    root.setLevel(level)
    formatter = logging.Formatter(FORMAT)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(formatter)
    root.addHandler(stderr)
    path: Path | None = log_dir() / ("one-trip.log" if process == "gui" else f"one-trip-{process}.log")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                       encoding="utf-8")
        handler.setFormatter(formatter)
        root.addHandler(handler)
        os.environ[ENV_LOG_DIR] = str(path.parent)  # the engine process logs beside us
    except OSError as exc:
        log.warning("no log file (%s); logging to stderr only", exc)
        path = None
    _set_up["log"] = path or ""
    if process == "gui":
        sys.excepthook = _log_uncaught
    return path


def _log_uncaught(exc_type, exc, tb) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    logging.getLogger("uncaught").error("uncaught exception", exc_info=(exc_type, exc, tb))
