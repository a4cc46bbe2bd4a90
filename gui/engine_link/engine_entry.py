"""The first code the engine process runs. It imports no Qt: only the engine module named in ``target``.

Kept apart from ``gui.engine_link.bridge`` (which imports Qt) so that the spawned child never loads Qt.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import traceback

PARENT_CHECK_S = 0.5  # how often the engine process checks that the GUI process still exists


def _exit_when_orphaned() -> None:
    """End this process soon after the GUI process is gone (killed, crashed), whatever the engine is doing."""
    parent = mp.parent_process()
    ppid = os.getppid()
    while True:
        time.sleep(PARENT_CHECK_S)
        if os.getppid() != ppid or (parent is not None and not parent.is_alive()):
            os._exit(0)


def run_engine(target: str, commands, events, options: dict) -> None:
    """Import ``target`` ("package.module:function") and run it as ``function(commands, events, options)``.

    An import failure or an uncaught exception becomes one ``{"type": "fatal"}`` event with a one-line message,
    so the GUI can say what went wrong instead of only seeing a dead process.
    """
    # Ctrl+C in a terminal reaches the whole process group; the GUI handles it and sends "shutdown".
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, name="orphan-watch", daemon=True).start()
    if os.environ.get("ONE_TRIP_LOG_DIR"):  # the app set up its log there: write ours beside it (gui.logs)
        from gui.logs import setup_logging
        setup_logging("engine")
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
        _quick_exit(events, 1)
    _quick_exit(events, 0)


def _quick_exit(events, code: int) -> None:
    """Flush what is queued for the GUI, then leave at once.

    A normal interpreter shutdown with torch loaded takes seconds on a busy machine (module teardown, thread
    pools); the GUI must be able to exit within two, so the engine skips it once its messages are out.
    """
    try:
        events.close()
        events.join_thread()  # the GUI drains the queue while it waits for us
    except Exception:  # noqa: BLE001 - nothing more to deliver
        pass
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
