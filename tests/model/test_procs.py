"""model.procs.sigint_deferred: a Ctrl+C never lands inside a lock that a later call needs.

The hang it prevents (CI, ``generate --tp 2`` interrupted): CPython runs a pending signal handler right after a
lock's C acquire returns, so a KeyboardInterrupt raised inside ``Condition.__enter__`` of a
``multiprocessing.Queue.put`` leaves the queue's lock held, and the runner's "shutdown" put then waits for ever.
The tests send SIGINT to this process at exactly that moment (after the acquire), which a real Ctrl+C hits by
chance once in thousands of steps.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading

import pytest

from model.procs import sigint_deferred


@pytest.fixture
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in this test, whatever the test runner set (xdist workers may ignore it)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


class _UnluckyCondition(threading.Condition):
    """A condition whose first ``__enter__`` is hit by Ctrl+C right after its lock is taken, the unlucky moment."""

    armed = True

    def __enter__(self):
        entered = super().__enter__()
        if self.armed:
            self.armed = False
            _ctrl_c()
        return entered


def _unlucky_queue():
    q = mp.get_context("spawn").Queue()
    q._notempty = _UnluckyCondition(threading.Lock())  # the stdlib's own field: the lock put() takes
    return q


def _lock_is_free(cond: threading.Condition) -> bool:
    if not cond.acquire(timeout=0.5):
        return False
    cond.release()
    return True


def _close(q, cond: threading.Condition) -> None:
    if cond._lock.locked():  # left held by the interrupt: closing the queue would wait on it for ever
        cond._lock.release()
    q.cancel_join_thread()
    q.close()


def test_without_the_block_a_ctrl_c_in_put_leaves_the_queue_lock_held(ctrl_c_raises):
    """The hazard itself, so that the next test means something: this is what hung the sharded run."""
    q = _unlucky_queue()
    unlucky = q._notempty
    with pytest.raises(KeyboardInterrupt):
        q.put("forward")
    assert not _lock_is_free(unlucky)  # the next put, or the queue's close, would now wait for ever
    _close(q, unlucky)


def test_inside_the_block_put_finishes_and_the_ctrl_c_comes_after(ctrl_c_raises):
    q = _unlucky_queue()
    unlucky = q._notempty
    done = []
    with pytest.raises(KeyboardInterrupt):
        with sigint_deferred():
            q.put("forward")
            done.append("put")
    assert done == ["put"]
    assert _lock_is_free(unlucky)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back
    _close(q, unlucky)


def test_a_plain_lock_is_released_before_the_interrupt(ctrl_c_raises):
    lock = threading.Lock()
    with pytest.raises(KeyboardInterrupt):
        with sigint_deferred():
            lock.acquire()
            _ctrl_c()
            sum(range(10_000))  # many of CPython's signal checks
            lock.release()
    assert not lock.locked()


def test_no_ctrl_c_no_interrupt(ctrl_c_raises):
    with sigint_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_ignored_ctrl_c_stays_ignored():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with sigint_deferred():
            _ctrl_c()
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


def test_off_the_main_thread_it_changes_nothing(ctrl_c_raises):
    seen = []

    def body():
        with sigint_deferred():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [signal.default_int_handler]  # no handler swapped from a thread (it could not be)
