import math

import pytest

from animations import easing

CURVES = [easing.linear, easing.smooth, easing.ease_in_cubic, easing.ease_out_cubic, easing.ease_in_out_cubic,
          easing.ease_out_back, easing.ease_in_out_sine, easing.step_end]


@pytest.mark.parametrize("curve", CURVES, ids=lambda f: f.__name__)
def test_curves_start_at_zero_and_end_exactly_at_one(curve):
    assert curve(0.0) == pytest.approx(0.0, abs=1e-12)
    assert curve(1.0) == 1.0 or math.isclose(curve(1.0), 1.0, abs_tol=1e-12)


def test_smooth_is_symmetric_and_monotonic():
    xs = [i / 100 for i in range(101)]
    ys = [easing.smooth(x) for x in xs]
    assert all(b >= a for a, b in zip(ys, ys[1:]))
    assert easing.smooth(0.5) == pytest.approx(0.5)
    for x in xs:
        assert easing.smooth(1 - x) == pytest.approx(1 - easing.smooth(x))


def test_ease_out_back_overshoots_then_settles():
    assert max(easing.ease_out_back(i / 100) for i in range(101)) > 1.0
    assert easing.ease_out_back(1.0) == pytest.approx(1.0)


def test_there_and_back_returns_to_start():
    assert easing.there_and_back(0.0) == pytest.approx(0.0)
    assert easing.there_and_back(0.5) == pytest.approx(1.0)
    assert easing.there_and_back(1.0) == pytest.approx(0.0)


def test_clamp01_handles_out_of_range_and_nan():
    assert easing.clamp01(-2) == 0.0
    assert easing.clamp01(3) == 1.0
    assert easing.clamp01(float("nan")) == 0.0
    assert easing.clamp01(0.25) == 0.25
