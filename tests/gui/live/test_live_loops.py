"""No loops on stage: a looping model (the fake engine with ``fake_loop``: " of the number" again and again, never
stopped by the engine itself) is stopped by the page, which shows two copies at most and says why it stopped."""

from __future__ import annotations

import pytest

from model.loops import find_loop

pytestmark = pytest.mark.filterwarnings("error")


def _shown(w) -> list[str]:
    """Every text the page shows of the answers: the big answer box (and its mirrors), the answer, the seats."""
    seats = w.live_page.seats
    boxes = [seats.answer, *seats.mirrors]
    return ([b.toPlainText() for b in boxes] + [w.answer_text]
            + [s["answer"] for s in seats.seat_list()])


def test_a_looping_answer_is_stopped_and_shown_twice_at_most(qtbot, make_window):
    w = make_window(options={"fake_loop": True}, trip_s=0.01)
    w.main_new_tokens = 40
    w.set_prompt("def fibonacci(n):")
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=20_000):
        pass
    qtbot.wait(100)
    assert w.answer_text == " of the number of the number"  # two copies, the third never
    assert w.loop_phrase == "of the number"
    for text in _shown(w):
        assert find_loop(text) is None, text
    status = w.status_line.text()
    assert "repeat" in status and "of the number" in status
    # stopped: the engine was told to drop it, and no trip of the loop is counted on
    assert w.reports_received < 15
    assert w.is_session_done()


def test_a_looping_seat_shows_two_copies_at_most(qtbot, make_window):
    w = make_window(options={"fake_loop": True}, batch=3, trip_s=0.01)
    w.main_new_tokens = 40
    w.set_batch(3)
    w.set_prompt("for i in range(10):")
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=20_000):
        pass
    qtbot.wait(100)
    seats = w.live_page.seats.seat_list()
    assert len(seats) == 3
    for seat in seats:
        assert find_loop(seat["answer"]) is None, seat
    for text in _shown(w):
        assert find_loop(text) is None, text


def test_an_answer_without_a_loop_runs_to_its_end(qtbot, make_window):
    w = make_window(trip_s=0.01)
    w.main_new_tokens = 40
    w.set_prompt("def fibonacci(n):")
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=20_000):
        pass
    assert w.loop_phrase is None
    assert w.reports_received == 40
    assert "Done" in w.status_line.text()
