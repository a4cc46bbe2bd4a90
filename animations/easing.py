"""Easing curves: plain ``float -> float`` functions of progress.

Every curve maps progress ``t`` in [0, 1] (unitless) to eased progress, with ``f(0) == 0``
and ``f(1) == 1`` exactly (``there_and_back`` returns to 0 by design), so an animation's end state is exact
whatever curve it uses. Some curves (``ease_out_back``) overshoot
above 1 in between; the caller decides whether that makes sense for the property it drives.
"""

from __future__ import annotations

import math


def clamp01(t: float) -> float:
    """``t`` limited to [0, 1]; NaN becomes 0."""
    if not t > 0.0:  # also catches NaN
        return 0.0
    return 1.0 if t > 1.0 else t


def linear(t: float) -> float:
    """Constant speed."""
    return t


def ease_in_cubic(t: float) -> float:
    """Starts slowly, ends fast."""
    return t * t * t


def ease_out_cubic(t: float) -> float:
    """Starts fast, settles slowly."""
    u = 1.0 - t
    return 1.0 - u * u * u


def ease_in_out_cubic(t: float) -> float:
    """Slow at both ends, fast in the middle: the default for things that move."""
    if t < 0.5:
        return 4.0 * t * t * t
    u = -2.0 * t + 2.0
    return 1.0 - u * u * u / 2.0


smooth = ease_in_out_cubic


def ease_out_back(t: float, overshoot: float = 1.70158) -> float:
    """Runs a little past 1 and comes back: a "pop" for things that appear."""
    c3 = overshoot + 1.0
    u = t - 1.0
    return 1.0 + c3 * u * u * u + overshoot * u * u


def ease_in_out_sine(t: float) -> float:
    """A gentle S-curve."""
    return 0.5 - 0.5 * math.cos(math.pi * t)


def there_and_back(t: float) -> float:
    """0 → 1 → 0, smoothly: for a flash or a pulse (ends where it started)."""
    return smooth(1.0 - abs(2.0 * t - 1.0))


def step_end(t: float) -> float:
    """0 until the very end, then 1: a switch that flips when its window closes."""
    return 1.0 if t >= 1.0 else 0.0


__all__ = [
    "clamp01",
    "linear",
    "ease_in_cubic",
    "ease_out_cubic",
    "ease_in_out_cubic",
    "smooth",
    "ease_out_back",
    "ease_in_out_sine",
    "there_and_back",
    "step_end",
]
