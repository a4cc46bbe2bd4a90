"""Imported by the workers' forkserver only (``set_forkserver_preload``; nothing else imports it): on Linux the
forkserver asks the kernel for SIGKILL when the engine that started it ends (prctl PR_SET_PDEATHSIG), so a
killed engine takes its forkserver with it at once, and the forkserver's death signals each worker (they set
the same signal for the forkserver: ``model.parallel.worker._die_with_parent``). Without it the forkserver only
leaves once its last worker has gone.

The "parent" the kernel watches is the engine thread that started the forkserver; ``runner.fresh_process_context`` asks
for this guard only when that is the main thread (whose end is the engine's end). Standard library only.
"""

from __future__ import annotations

import os
import signal
import sys


def _guard() -> None:
    if not sys.platform.startswith("linux") or not _running_as_forkserver():
        return
    ppid = os.getppid()
    try:
        import ctypes
        ok = ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if ok and os.getppid() != ppid:  # the engine ended before the signal was asked for
        os._exit(0)


def _running_as_forkserver() -> bool:
    """True inside multiprocessing's forkserver (it runs ``-c 'from multiprocessing.forkserver import main...'``,
    so its sys.argv is ["-c"]; its __main__ has no file)."""
    main = sys.modules.get("__main__")
    return sys.argv[:1] == ["-c"] and getattr(main, "__file__", None) is None and \
        "multiprocessing.forkserver" in sys.modules


_guard()
