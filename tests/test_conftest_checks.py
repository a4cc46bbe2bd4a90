"""The suite's own guard (tests/conftest.py ``no_running_timers``) still catches what it promises: a test that leaves
an animation clock or a thread running fails, even when nothing owns it (no parent, so no ``findChildren`` finds
it), and a test that stops what it started passes. Run on a copy of the conftest in a separate pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

INNER = '''
KEEP = []


def test_a_parentless_clock_left_running(qapp):
    from animations.clock import AnimationClock
    clock = AnimationClock()
    clock.start()
    KEEP.append(clock)


def test_a_parentless_thread_left_running(qapp):
    from PySide6.QtCore import QThread
    thread = QThread()
    thread.start()
    KEEP.append(thread)


def test_a_clock_stopped_in_time(qapp):
    from animations.clock import AnimationClock
    clock = AnimationClock()
    clock.start()
    clock.stop()
    KEEP.append(clock)


def test_cleanup(qapp):
    for obj in KEEP:
        if hasattr(obj, "quit"):
            obj.quit()
            obj.wait(5000)
        else:
            obj.stop()
'''


def test_a_thread_or_clock_left_running_fails_its_test(pytester):
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=4, errors=2)
    out = result.stdout.str()
    assert "ERROR at teardown of test_a_parentless_clock_left_running" in out
    assert "ERROR at teardown of test_a_parentless_thread_left_running" in out
    assert "left running after the test: AnimationClock" in out
    assert "left running after the test: QThread" in out


def test_a_test_marked_serial_outside_the_one_list_is_refused(pytester):
    """The serial run reads only the files of tests/conftest.py SERIAL: a test marked serial in its own file alone
    would run in neither of scripts/test.sh's two runs, so the suite refuses to start."""
    pytester.makeconftest(CONFTEST.read_text(encoding="utf-8"))
    pytester.makepyfile(test_inner="import pytest\n\n\n@pytest.mark.serial\ndef test_timed():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-m", "not serial")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "test_inner.py::test_timed is marked serial but not listed" in result.stderr.str()
