"""Animations as functions of progress, and timelines that place them in time (the manim idea).

An ``Animation`` never reads a clock: ``interpolate(alpha)`` puts its items in the state they have at progress
``alpha`` in [0, 1]. ``begin()`` is ``interpolate(0)`` and ``finish()`` is ``interpolate(1)``, so end states are
exact at any frame rate. A ``Timeline`` is a list of ``(animation, start_s, end_s)``; ``seek(t_s)`` puts every
animation in its exact state at time ``t_s`` (seconds), whatever was sought before, so a scene can jump, run
backwards or drop frames and still look right.

Rules ``seek`` follows when several animations drive the same property: animations that have not started yet
show their start state, the earliest of them winning; animations that have started are applied in order of
their start time, so the latest one to start wins. Chained animations (A then B on the same item) thus hand over
cleanly as long as B starts where A ends.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable, Iterable

from PySide6.QtCore import QPointF

from animations.easing import clamp01, linear, smooth

RateFunc = Callable[[float], float]


class Animation:
    """A change of state driven by progress ``alpha`` in [0, 1] (unitless), eased by ``rate_func``."""

    def __init__(self, rate_func: RateFunc = smooth):
        self.rate_func = rate_func

    def interpolate(self, alpha: float) -> None:
        """Put everything this animation drives in its state at progress ``alpha`` (clamped to [0, 1])."""
        self.apply(self.rate_func(clamp01(alpha)))

    def apply(self, progress: float) -> None:
        """Set the state for eased ``progress`` (0 at the start, 1 at the end, may overshoot). Override this."""
        raise NotImplementedError

    def begin(self) -> None:
        """The start state: ``interpolate(0)``."""
        self.interpolate(0.0)

    def finish(self) -> None:
        """The end state: ``interpolate(1)``."""
        self.interpolate(1.0)


def lerp(a: float, b: float, p: float) -> float:
    """The value ``p`` of the way from ``a`` to ``b``."""
    return a + (b - a) * p


def lerp_point(a: QPointF, b: QPointF, p: float) -> QPointF:
    """The point ``p`` of the way from ``a`` to ``b``."""
    return QPointF(a.x() + (b.x() - a.x()) * p, a.y() + (b.y() - a.y()) * p)


class Lambda(Animation):
    """Calls ``fn(progress)``: for anything that is easier to write as a function than as a class."""

    def __init__(self, fn: Callable[[float], None], rate_func: RateFunc = smooth):
        super().__init__(rate_func)
        self.fn = fn

    def apply(self, progress: float) -> None:
        self.fn(progress)


class Move(Animation):
    """Moves ``item`` (anything with ``setPos``) from ``start`` to ``end``, in scene units."""

    def __init__(self, item, start: QPointF, end: QPointF, rate_func: RateFunc = smooth):
        super().__init__(rate_func)
        self.item, self.start, self.end = item, QPointF(start), QPointF(end)

    def apply(self, progress: float) -> None:
        self.item.setPos(lerp_point(self.start, self.end, progress))


class Fade(Animation):
    """Changes ``item``'s opacity (0 transparent … 1 opaque) from ``start`` to ``end``."""

    def __init__(self, item, start: float, end: float, rate_func: RateFunc = smooth):
        super().__init__(rate_func)
        self.item, self.start, self.end = item, start, end

    def apply(self, progress: float) -> None:
        self.item.setOpacity(min(1.0, max(0.0, lerp(self.start, self.end, progress))))


class Scale(Animation):
    """Changes ``item``'s scale factor (1 = natural size) from ``start`` to ``end``."""

    def __init__(self, item, start: float, end: float, rate_func: RateFunc = smooth):
        super().__init__(rate_func)
        self.item, self.start, self.end = item, start, end

    def apply(self, progress: float) -> None:
        self.item.setScale(max(0.0, lerp(self.start, self.end, progress)))


class Timeline(Animation):
    """``(animation, start_s, end_s)`` entries on one time axis (seconds); itself an Animation (linear).

    >>> tl = Timeline([(fade_in, 0.0, 0.3), (move, 0.2, 1.0)])
    >>> tl.seek(0.5)      # every animation in its exact state at t = 0.5 s
    """

    def __init__(self, entries: Iterable[tuple[Animation, float, float]] = ()):
        super().__init__(linear)
        self._entries: list[tuple[float, int, float, Animation]] = []  # (start, order, end, anim), sorted
        for animation, start, end in entries:
            self.add(animation, start, end)

    def add(self, animation: Animation, start_s: float, end_s: float | None = None) -> Animation:
        """Run ``animation`` from ``start_s`` to ``end_s`` (seconds; ``end_s=None`` means an instant).

        Returns the animation, so a caller can keep a handle on it.
        """
        end_s = start_s if end_s is None else end_s
        if end_s < start_s:
            raise ValueError(f"animation ends ({end_s} s) before it starts ({start_s} s)")
        insort(self._entries, (float(start_s), len(self._entries), float(end_s), animation), key=lambda e: e[:2])
        return animation

    def add_lagged(
        self, animations: Iterable[Animation], start_s: float, end_s: float, lag_ratio: float = 0.5
    ) -> None:
        """Spread ``animations`` over [start_s, end_s]: each starts ``lag_ratio`` of one's length after the last.

        ``lag_ratio`` 0 runs them together, 1 one after another.
        """
        animations = list(animations)
        n = len(animations)
        if n == 0:
            return
        span = end_s - start_s
        each = span / (1.0 + lag_ratio * (n - 1))
        for i, animation in enumerate(animations):
            begin = start_s + i * lag_ratio * each
            self.add(animation, begin, min(end_s, begin + each))

    @property
    def entries(self) -> list[tuple[Animation, float, float]]:
        """The ``(animation, start_s, end_s)`` entries, in order of start."""
        return [(anim, start, end) for start, _, end, anim in self._entries]

    def first_added(self, n: int) -> list[tuple[Animation, float, float]]:
        """The ``(animation, start_s, end_s)`` entries of the first ``n`` animations added, in order of start
        (what the timeline was before the later ones: ``Timeline(tl.first_added(len(earlier)))``)."""
        return [(anim, start, end) for start, order, end, anim in self._entries if order < n]

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def duration(self) -> float:
        """Seconds from 0 to the end of the last animation."""
        return max((end for _, _, end, _ in self._entries), default=0.0)

    def seek(self, t_s: float) -> None:
        """Put every animation in its exact state at time ``t_s`` (seconds; clamped to [0, duration])."""
        t = min(max(t_s, 0.0), self.duration)
        entries = self._entries
        # Not started yet: show start states; reversed so the earliest-starting one wins.
        for start, _, _, anim in reversed(entries):
            if start > t:
                anim.interpolate(0.0)
        # Started: in order of start, so the latest-starting one wins.
        for start, _, end, anim in entries:
            if start > t:
                break
            anim.interpolate(1.0 if end <= start else (t - start) / (end - start))

    def apply(self, progress: float) -> None:
        self.seek(progress * self.duration)


__all__ = ["Animation", "Lambda", "Move", "Fade", "Scale", "Timeline", "lerp", "lerp_point", "RateFunc"]
