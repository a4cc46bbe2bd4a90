"""The first code the engine process runs. It imports no Qt: only the engine module named in ``target``.

Kept apart from ``gui.bridge`` (which imports Qt) so that the spawned child never loads Qt.
"""

from __future__ import annotations

import importlib
import signal
import traceback


def run_engine(target: str, commands, events, options: dict) -> None:
    """Import ``target`` ("package.module:function") and run it as ``function(commands, events, options)``.

    An import failure or an uncaught exception becomes one ``{"type": "fatal"}`` event with a one-line message,
    so the GUI can say what went wrong instead of only seeing a dead process.
    """
    # Ctrl+C in a terminal reaches the whole process group; the GUI handles it and sends "shutdown".
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        module_name, _, func_name = target.partition(":")
        func = getattr(importlib.import_module(module_name), func_name or "engine_main")
        func(commands, events, options)
    except BaseException as exc:  # noqa: BLE001 - report everything, the GUI decides
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        try:
            events.put({"type": "fatal", "message": f"engine stopped: {detail}"})
        except Exception:  # noqa: BLE001 - the queue may already be closed
            pass
        raise SystemExit(1) from None
