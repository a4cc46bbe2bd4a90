"""The animation clock reports elapsed time (never tick counts) and stops cleanly."""

import pytest

from animations.clock import AnimationClock


class FakeTime:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_dt_is_measured_elapsed_time_times_speed(qapp):
    fake = FakeTime()
    clock = AnimationClock(time_source=fake)
    ticks = []
    clock.tick.connect(ticks.append)
    clock.start()
    try:
        fake.now += 0.016
        clock._on_timeout()
        fake.now += 0.050  # a late tick reports the real 50 ms, not "one tick"
        clock._on_timeout()
        clock.speed = 0.5
        fake.now += 0.020
        clock._on_timeout()
        fake.now += 5.0  # a stall is capped
        clock._on_timeout()
    finally:
        clock.stop()
    assert ticks == pytest.approx([0.016, 0.050, 0.010, 0.05])


def test_speed_keys_multiply_and_clamp(qapp):
    clock = AnimationClock()
    assert clock.speed == 1.0
    assert clock.slow_down(2.0) == 0.5
    assert clock.speed_up(4.0) == 2.0
    clock.speed = 1e9
    assert clock.speed == AnimationClock.MAX_SPEED
    clock.speed = 0
    assert clock.speed == AnimationClock.MIN_SPEED


def test_real_ticks_arrive_and_stop_leaves_no_timer(qtbot):
    clock = AnimationClock()
    assert clock._timer.timerType().name == "PreciseTimer"
    # a precise timer still fires up to ~1 ms either side: the interval leaves that much below a 60 Hz frame
    assert clock.interval_ms <= 1000 / 60 - 1
    clock.start()
    assert clock.is_running()
    try:
        with qtbot.waitSignal(clock.tick, timeout=2000) as blocker:
            pass
        assert 0.0 <= blocker.args[0] <= 0.1
    finally:
        clock.stop()
    assert not clock.is_running()
    assert not clock._timer.isActive()


def test_start_twice_is_harmless(qapp):
    clock = AnimationClock()
    clock.start()
    clock.start()
    clock.stop()
    assert not clock.is_running()


def test_stepped_clock_ticks_exactly_the_steps_and_never_reads_the_wall(qapp):
    """Recording: frame i is drawn at i / fps of animation time, whatever the wall clock did meanwhile."""
    fake = FakeTime()
    clock = AnimationClock(time_source=fake)
    ticks = []
    clock.tick.connect(ticks.append)
    clock.set_stepped(True)
    clock.start()
    assert clock.is_running() and not clock._timer.isActive()  # wanted, but no timer runs
    fps = 30
    for i in range(4):
        fake.now += 7.0  # a very slow frame: must change nothing
        assert clock.step_to(i / fps) == pytest.approx(0.0 if i == 0 else 1 / fps)
    assert ticks == pytest.approx([1 / 30, 1 / 30, 1 / 30])  # no tick for the zero step of frame 0
    assert clock.time_s == pytest.approx(3 / 30)
    clock.speed = 0.5
    clock.step_to(4 / fps)
    assert ticks[-1] == pytest.approx(0.5 / 30)
    with pytest.raises(ValueError):
        clock.step_to(0.0)  # a clip never runs backwards
    clock.stop()
    clock.step_to(1.0)
    assert len(ticks) == 4  # stopped (a settled scene): stepping moves time but ticks nobody
    assert not clock.is_running()


def test_step_to_needs_stepped_mode_and_leaving_it_restarts_a_wanted_timer(qapp):
    clock = AnimationClock()
    with pytest.raises(RuntimeError):
        clock.step_to(0.1)
    clock.start()
    clock.set_stepped(True)
    assert clock.is_running() and not clock._timer.isActive()
    clock.set_stepped(False)
    try:
        assert clock._timer.isActive()
    finally:
        clock.stop()
