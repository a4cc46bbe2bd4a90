"""Starting child processes that a terminal's Ctrl+C must not kill half-started.

Ctrl+C in a terminal sends SIGINT to the whole foreground process group. A child that is still starting (a
spawned interpreter importing ``site``, before its first line can ignore SIGINT) dies of it with "Fatal Python
error: init_import_site", and the parent then reports an engine that "could not start" instead of "interrupted".
Children started inside ``children_ignore_sigint()`` begin life with SIGINT ignored (an ignored signal stays
ignored across fork and exec, and Python keeps it so at start-up), so only the parent decides what Ctrl+C
means, and it stops them itself. No Qt, no torch.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


@contextmanager
def children_ignore_sigint():
    """Start child processes inside this block and they ignore SIGINT from their first instruction.

    This process keeps its own Ctrl+C: SIGINT is blocked in the main thread (held pending) while its
    disposition is "ignore", and a SIGINT the main thread got meanwhile is delivered to the restored handler
    when the block ends. One sent to the whole process may instead be taken by another thread (Qt's), which
    does not block it, and is then dropped: a Ctrl+C in the few ms a child takes to start can be lost (press it
    again). A no-op off the main thread (only it may change handlers) or without ``pthread_sigmask`` (Windows).
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    old_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler if old_handler is not None else signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
