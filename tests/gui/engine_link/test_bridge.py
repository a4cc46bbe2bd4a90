"""EngineBridge: reports flow for granted trips, batch changes take effect, a dead engine is noticed, no
child process is left behind."""

from __future__ import annotations

import psutil
import pytest

from gui.engine_link.bridge import EngineBridge
from tests.gui.conftest import FAKE_TARGET

pytestmark = pytest.mark.filterwarnings("error")


def _children() -> set[int]:
    return {p.pid for p in psutil.Process().children(recursive=True) if p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE}


@pytest.fixture
def bridge(qtbot):
    made = []

    def make(target=FAKE_TARGET, **options):
        opts = {"model_dir": None, "device": "cpu", "threads": 1, "max_batch": 1, "layer_timing": True}
        opts.update(options)
        b = EngineBridge(opts, target=target)
        made.append(b)
        with qtbot.waitSignal(b.ready, timeout=60_000):
            b.start()
        return b

    yield make
    for b in made:
        b.shutdown()


def _collect_steps(qtbot, bridge, n, timeout=30_000):
    reports = []
    bridge.step.connect(reports.append)
    qtbot.waitUntil(lambda: len(reports) >= n, timeout=timeout)
    return reports


def test_n_grants_give_n_reports_fake(qtbot, bridge):
    b = bridge()
    before = _children()
    b.submit("a", "hello there", max_new_tokens=50)
    b.grant(5)
    reports = _collect_steps(qtbot, b, 5)
    qtbot.wait(150)  # no sixth report may come
    assert len(reports) == 5
    assert [r["batch"] for r in reports] == [1] * 5
    pid = b.pid
    b.shutdown()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert pid not in _children() and _children() <= before


def test_real_engine_grants_and_batch(qtbot, bridge, tiny_model_dir):
    """The lead's engine: N grants -> N reports; set_max_batch changes the batch of later reports."""
    b = bridge("model.service:engine_main", model_dir=str(tiny_model_dir), max_batch=1)
    info = b.info
    assert info["model"]["n_layer"] == 2 and info["memory_bandwidth_bytes_per_s"] > 0
    for i in range(3):
        b.submit(f"r{i}", ["Once upon a time", "def fibonacci(n):", "从前有一座山"][i], max_new_tokens=40)
    b.grant(4)
    reports = _collect_steps(qtbot, b, 4)
    qtbot.wait(200)
    assert len(reports) == 4
    assert all(r["batch"] == 1 for r in reports)
    b.set_max_batch(3)
    b.grant(3)
    qtbot.waitUntil(lambda: len(reports) >= 7, timeout=30_000)
    assert reports[-1]["batch"] == 3
    assert all(len(r["layer_ms"]) == 2 for r in reports)


def test_dead_engine_is_noticed(qtbot, bridge):
    b = bridge(die_after_steps=2)
    b.submit("a", "hello", max_new_tokens=10)
    with qtbot.waitSignal(b.engine_died, timeout=5_000) as blocker:
        b.grant(5)
    assert blocker.args == [3]
    assert not b.is_running()
    assert not b.send({"op": "grant", "n": 1})  # dropped, no exception


def test_fatal_from_a_broken_target(qtbot):
    b = EngineBridge({}, target="tests.gui.no_such_module:engine_main")
    fatal = []
    b.fatal.connect(fatal.append)
    with qtbot.waitSignal(b.engine_died, timeout=30_000):
        b.start()
    assert fatal and "no_such_module" in fatal[0]
    b.shutdown()


def test_shutdown_kills_a_stuck_engine(qtbot):
    b = EngineBridge({}, target="tests.gui.stuck_engine:engine_main")
    b.start()
    qtbot.wait(300)
    pid = b.pid
    import time
    t0 = time.monotonic()
    b.shutdown(timeout=0.3)
    assert time.monotonic() - t0 < 2.0
    assert pid not in _children()
