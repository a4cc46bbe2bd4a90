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


@contextmanager
def sigint_deferred():
    """Run the block without Ctrl+C breaking into it: a SIGINT that comes meanwhile takes effect when it ends.

    For code that takes a lock another call needs later. ``multiprocessing.Queue.put`` takes its condition lock in
    ``Condition.__enter__``; CPython runs a pending signal handler right after the lock's C call returns, so a
    KeyboardInterrupt raised there leaves the lock held for ever, and the next put on that queue (the runner's
    "shutdown" on the way out) or its closing finalizer blocks for ever. That is how a Ctrl+C once hung
    ``generate --tp 2`` in CI; tests/model/test_procs.py shows the lock left held without this block.

    Python-level, not a signal mask: a signal blocked in the main thread is still taken by any other thread that
    has it unblocked (the queues' feeder threads, torch's), and CPython then runs the handler in the main thread
    at its next check, inside the block. Here the handler is swapped for one that only notes the signal; on
    leaving, the old handler is put back and, if a SIGINT came, called (``default_int_handler`` raises
    KeyboardInterrupt; SIG_DFL is re-raised; SIG_IGN drops it). A no-op off the main thread (handlers run only
    there, and only it may change them) or when the handler was not set from Python (it could not be put back).
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    came: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if came:
            if callable(old):
                old(signal.SIGINT, None)
            elif old == signal.SIG_DFL:
                signal.raise_signal(signal.SIGINT)
