"""Timing without a clock: interpolate and seek, then look at the items (manim's test_composition idea)."""

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QGraphicsRectItem

from animations.easing import linear
from animations.timeline import Animation, Fade, Lambda, Move, Scale, Timeline


class Recorder(Animation):
    def __init__(self, rate_func=linear):
        super().__init__(rate_func)
        self.values = []

    def apply(self, progress):
        self.values.append(progress)


def pos(item):
    return (round(item.pos().x(), 9), round(item.pos().y(), 9))


def test_begin_and_finish_are_interpolate_0_and_1():
    rec = Recorder()
    rec.begin()
    rec.finish()
    rec.interpolate(-1)  # clamped
    rec.interpolate(7)
    assert rec.values == [0.0, 1.0, 0.0, 1.0]


def test_move_interpolates_positions_exactly(qapp):
    item = QGraphicsRectItem(0, 0, 10, 10)
    move = Move(item, QPointF(0, 0), QPointF(100, 50), linear)
    move.interpolate(0.2)
    assert pos(item) == (20.0, 10.0)
    move.finish()
    assert pos(item) == (100.0, 50.0)
    move.begin()
    assert pos(item) == (0.0, 0.0)


def _chain(item):
    """A moves right (0–1 s), pause, B moves down (2–3 s), C fades out (2.5–4 s), D scales up (0–4 s)."""
    tl = Timeline()
    tl.add(Move(item, QPointF(0, 0), QPointF(100, 0)), 0.0, 1.0)
    tl.add(Move(item, QPointF(100, 0), QPointF(100, 80)), 2.0, 3.0)
    tl.add(Fade(item, 1.0, 0.0), 2.5, 4.0)
    tl.add(Scale(item, 1.0, 2.0, linear), 0.0, 4.0)
    return tl


def test_timeline_duration_is_the_last_end(qapp):
    assert _chain(QGraphicsRectItem()).duration == 4.0
    assert Timeline().duration == 0.0


@pytest.mark.parametrize("fps", [7, 24, 60, 144, 1000])
def test_seek_states_do_not_depend_on_frame_rate(qapp, fps):
    """Stepping at any frame rate and seeking directly give the same state at start, middle and end."""
    stepped, direct = QGraphicsRectItem(), QGraphicsRectItem()
    tl_stepped, tl_direct = _chain(stepped), _chain(direct)
    t, dt = 0.0, 1.0 / fps
    checkpoints = {0.0: None, 0.5: None, 2.0: None, 2.6: None, 4.0: None}
    tl_stepped.seek(0.0)
    while t < 4.0 + dt:
        t = min(t + dt, 4.0)
        tl_stepped.seek(t)
        if t >= 4.0:
            break
    # end state exact whatever the step
    tl_direct.seek(4.0)
    assert pos(stepped) == pos(direct) == (100.0, 80.0)
    assert stepped.opacity() == direct.opacity() == 0.0
    assert stepped.scale() == direct.scale() == 2.0
    # any time, from any previous time, gives the same state
    for when in checkpoints:
        tl_stepped.seek(when)
        tl_direct.seek(0.0)
        tl_direct.seek(when)
        assert pos(stepped) == pos(direct)
        assert stepped.opacity() == pytest.approx(direct.opacity())


def test_seek_exact_states(qapp):
    item = QGraphicsRectItem()
    tl = _chain(item)
    tl.seek(0.0)
    assert pos(item) == (0.0, 0.0) and item.opacity() == 1.0 and item.scale() == 1.0
    tl.seek(0.5)
    assert pos(item) == (50.0, 0.0)  # smooth(0.5) == 0.5
    tl.seek(1.5)  # between the two moves: A finished, B not started
    assert pos(item) == (100.0, 0.0)
    tl.seek(2.5)
    assert pos(item) == (100.0, 40.0) and item.opacity() == 1.0
    tl.seek(99)  # clamped to the end
    assert pos(item) == (100.0, 80.0) and item.opacity() == 0.0
    tl.seek(0.25)  # backwards
    assert pos(item) == (6.25, 0.0)  # smooth(0.25) == 0.0625; B not started yet, so y is back at 0
    assert item.opacity() == 1.0 and item.scale() == pytest.approx(1.0625)
    tl.seek(-5)
    assert pos(item) == (0.0, 0.0) and item.opacity() == 1.0 and item.scale() == 1.0


def test_not_started_animations_show_the_earliest_start_state(qapp):
    item = QGraphicsRectItem()
    tl = Timeline()
    tl.add(Fade(item, 0.0, 1.0), 1.0, 2.0)  # fade in
    tl.add(Fade(item, 1.0, 0.0), 3.0, 4.0)  # fade out
    tl.seek(0.5)
    assert item.opacity() == 0.0
    tl.seek(2.5)
    assert item.opacity() == 1.0
    tl.seek(4.0)
    assert item.opacity() == 0.0
    tl.seek(0.0)
    assert item.opacity() == 0.0


def test_instant_entries_flip_at_their_time():
    seen = []
    tl = Timeline([(Lambda(seen.append, linear), 1.0, 1.0)])
    tl.seek(0.5)
    tl.seek(1.0)
    assert seen == [0.0, 1.0]


def test_add_lagged_spreads_starts_in_order():
    tl = Timeline()
    recs = [Recorder() for _ in range(4)]
    tl.add_lagged(recs, 0.0, 1.0, lag_ratio=1.0)
    spans = [(start, end) for _, start, end in tl.entries]
    assert spans == [pytest.approx((i / 4, (i + 1) / 4)) for i in range(4)]
    assert tl.duration == pytest.approx(1.0)


def test_timeline_is_an_animation():
    inner = Timeline([(Recorder(), 0.0, 2.0)])
    rec = inner.entries[0][0]
    inner.interpolate(0.5)  # half of its duration: t = 1 s
    assert rec.values[-1] == pytest.approx(0.5)


def test_end_before_start_is_refused():
    with pytest.raises(ValueError):
        Timeline().add(Recorder(), 2.0, 1.0)
