"""No worker outlives its engine: kill -9 the process that runs the engine (the app's engine process under
`screenshot`, or `generate` itself) while its tensor-parallel workers start or run, and within 5 s none of them,
nor the forkserver they were forked from, nor multiprocessing's resource tracker, is still running (issue 38
item 1: they used to be re-parented to PID 1 and live on)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]
GRACE_S = 5.0  # the bound: no worker outlives its engine by more than this


def _family(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def _is_forkserver(p: psutil.Process) -> bool:
    try:
        return "multiprocessing.forkserver" in " ".join(p.cmdline())
    except psutil.Error:
        return False


def _engine_with_workers(top: psutil.Process, n_workers: int, timeout: float = 240.0) -> tuple[psutil.Process,
                                                                                             list[psutil.Process]]:
    """The process (``top`` or one of its descendants) whose own descendants hold the forkserver and at least
    ``n_workers`` processes forked from it; returns (engine, its descendants)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for candidate in [top, *_family(top)]:
            below = _family(candidate)
            servers = [p for p in below if _is_forkserver(p) and p.ppid() == candidate.pid]
            if servers and len(_family(servers[0])) >= n_workers:
                return candidate, below
        if top.status() == psutil.STATUS_ZOMBIE or not top.is_running():
            break
        time.sleep(0.1)
    raise AssertionError(f"no process with {n_workers} workers appeared")


def _alive(procs: list[psutil.Process]) -> list[str]:
    left = []
    for p in procs:
        try:
            status = p.status()
            if p.is_running() and status not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
                left.append(f"{p.pid} ({status}, parent {p.ppid()}) {' '.join(p.cmdline())[:90]}")
        except psutil.Error:
            pass
    return left


def _kill_engine_and_count(argv: list[str], n_workers: int, delay_s: float, tmp_path: Path) -> list[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "main.py", *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    top = psutil.Process(proc.pid)
    family: list[psutil.Process] = []
    try:
        engine, family = _engine_with_workers(top, n_workers)
        time.sleep(delay_s)
        family = [p for p in {p.pid: p for p in family + _family(engine)}.values()]
        # a crash in the middle of a step: the engine stops reading (the workers' step results, a batch's logits,
        # fill the result pipe), then dies without a word
        engine.send_signal(signal.SIGSTOP)
        time.sleep(1.5)
        engine.kill()
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline and _alive(family):
            time.sleep(0.1)
        return _alive(family)
    finally:
        for p in [*family, top]:
            try:
                p.kill()
            except psutil.Error:
                pass
        proc.wait(30)


def test_screenshot_engine_killed_leaves_no_worker(tmp_path):
    """The app's engine process (the window's own, here under `screenshot`) killed mid-run."""
    argv = ["screenshot", "--out", str(tmp_path / "s.png"), "--steps", "300", "--tp", "2", "--batch", "16"]
    assert _kill_engine_and_count(argv, 2, 1.0, tmp_path) == []


def test_generate_killed_leaves_no_worker(tmp_path):
    """`generate` is its own engine: the command itself killed mid-decode (8 prompts: a step's logits fill the
    result pipe)."""
    argv = ["generate", *"abcdefgh", "--max-new-tokens", "400", "--tp", "2", "--threads", "1"]
    assert _kill_engine_and_count(argv, 2, 2.0, tmp_path) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's parent-death signal is Linux's")
def test_stopped_workers_die_with_their_engine(tmp_path):
    """Workers that cannot run a line of their own (SIGSTOP, as a wedged process) still end with their engine on
    Linux: the forkserver dies with the engine (model/parallel/forkserver_guard.py) and each worker with the
    forkserver (PR_SET_PDEATHSIG, SIGKILL), all by the kernel."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "main.py", "generate", *"abcdefgh", "--max-new-tokens", "400", "--tp",
                             "2", "--threads", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    top = psutil.Process(proc.pid)
    family: list[psutil.Process] = []
    try:
        engine, family = _engine_with_workers(top, 2)
        time.sleep(1.0)
        family = list({p.pid: p for p in family + _family(engine)}.values())
        server = next(p for p in family if _is_forkserver(p) and p.ppid() == engine.pid)
        workers = _family(server)
        for w in workers:
            w.send_signal(signal.SIGSTOP)
        engine.kill()
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline and _alive(family):
            time.sleep(0.1)
        assert _alive(family) == []
    finally:
        for p in [*family, top]:
            try:
                p.kill()
            except psutil.Error:
                pass
        proc.wait(30)
