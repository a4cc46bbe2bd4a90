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
