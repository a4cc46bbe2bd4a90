"""The Live page's parts: every seat's words reach the window, the answer box keeps the prompt in view, the
readout says only what is measured, and its words follow the controls on screen."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from gui.live.readout import model_text, readout_text, sharding_why, speedup_why
from gui.live.seats import AnswerBox, summary
from tests.gui.fake_engine import fake_tokens


def test_every_seat_gets_its_own_prompt_and_answer(qtbot, make_window):
    w = make_window(batch=4)
    shown = []
    w.scene.show_requests = shown.append  # what the window hands the stage (StageScene.show_requests)
    w.set_prompt("Once upon a time")
    w.set_batch(4)
    start = w.reports_received
    assert w.run_trips(6)
    qtbot.waitUntil(lambda: w.reports_received - start >= 6, timeout=20_000)
    w.set_real_time(True)  # write every waiting trip
    seats = w.live_page.seats
    assert len(seats.order) == 4 and seats.seat_row.isVisibleTo(seats)  # in the details view
    for rid in seats.order:
        seat = seats.seats[rid]
        # the fake engine writes a known text for each prompt: each seat has the start of its own
        assert seat.answer and "".join(fake_tokens(seat.prompt, 64)).startswith(seat.answer)
    other = seats.order[2]
    seats.seat_buttons[other].click()
    assert seats.shown == other
    # the box keeps a code prompt's line breaks; the seat's one-line summary is the same words
    assert " ".join(seats.answer.toPlainText().split()).startswith(summary(seats.seats[other].prompt)[:10])
    assert shown and {s["request_id"] for s in shown[-1]} == set(seats.order)
    assert [s["main"] for s in shown[-1]].count(True) == 1


def test_one_seat_shows_no_seat_buttons(qtbot, make_window):
    w = make_window(batch=1)
    w.set_prompt("Once upon a time")
    assert w.run_trips(2)
    qtbot.waitUntil(lambda: bool(w.live_page.seats.order), timeout=10_000)
    assert not w.live_page.seats.seat_row.isVisibleTo(w.live_page.seats)


def test_answer_box_keeps_the_prompt_and_the_newest_words(qtbot):
    from PySide6.QtGui import QFont
    box = AnswerBox()
    qtbot.addWidget(box)
    font = QFont()
    font.setPixelSize(14)
    box.setFont(font)
    box.resize(360, 100)
    box.show()
    QApplication.processEvents()
    prompt = "def fibonacci(n): " * 6
    answer = "".join(f" word{i}" for i in range(200))
    box.show_text(prompt, answer)
    text = box.toPlainText()
    assert text.startswith("def fibonac")  # the start of the prompt stays in view (a one-line summary)
    assert text.endswith("word199")  # and the newest words
    assert box.document().size().height() <= box.viewport().height() + 1  # nothing hidden below: no scroll bar
    assert not box.verticalScrollBar().isVisible()


def test_readout_says_nothing_is_measured_before_the_model_loads():
    text = readout_text(None, loaded=False, real_time=False, trip_s=1.0)
    assert "loading" in text.lower() and not any(ch.isdigit() for ch in text)


def test_readout_counts_tokens_per_trip_in_the_right_number():
    one = readout_text({"wall": 5.0, "tokens": 1, "batch": 1}, True, False, 1.0)
    four = readout_text({"wall": 5.0, "tokens": 4, "batch": 4}, True, False, 1.0)
    # a trip's tokens said as the stage's headline says them (animations.stage.style.trip_tokens): in and out
    assert "This trip:" in one and "1 token in, 1 out ·" in one and "tokens" not in one
    assert "4 tokens in, 4 out ·" in four
    assert "200× slower" in one  # 1 s on screen for a 5 ms trip


def test_model_line_names_the_model_not_its_folder():
    info = {"model": {"name": "target", "parameters": 4_321_000, "n_layer": 4, "weight_bytes": 17_400_000},
            "memory_bandwidth_bytes_per_s": 10e9, "device": "cpu", "threads": 1}
    text = model_text(info, None)
    assert "target" not in text and "code model" in text and "4.3M parameters" in text and "CPU" in text
    assert "1 thread" in text and "threads" not in text
    assert "FP" not in text  # an engine that does not say its precision: the line does not guess it


@pytest.mark.parametrize("weights, words", [("fp32", "FP32"), ("fp16", "FP16"), ("int8", "INT8")])
def test_model_line_names_the_precision_in_use_and_its_bytes(weights, words):
    """The words of tour page 14's bars (FP16, ...) beside the bytes the engine really holds (model/weight_mm.py)."""
    info = {"model": {"name": "target", "parameters": 4_321_000, "n_layer": 4, "weight_bytes": 8_706_048,
                      "weights": weights}, "device": "cpu", "threads": 1}
    assert f"8.7 MB of {words} weights" in model_text(info, None)


def test_why_lines_only_when_the_measurement_goes_against_the_claim():
    reason = "its guesses are kept too rarely to pay for its own passes"
    assert speedup_why(0.8, reason) == f"Slower here: {reason}."
    assert not speedup_why(1.3, reason) and not speedup_why(None, reason)
    assert not speedup_why(0.8, "")  # no measured reason, no line: never a canned one
    assert sharding_why(4.0, 11.0) and not sharding_why(4.0, 1.0)


def test_paused_status_matches_the_buttons_on_screen(qtbot, make_window):
    w = make_window()
    w.set_prompt("Once upon a time")
    w.run()
    w.pause()
    assert "Step" in w.status_line.text()
    w.run()
    w.step_button.hide()  # presenter mode hides Step
    w.pause()
    assert "Step" not in w.status_line.text()


def test_seat_buttons_never_outgrow_the_table(qtbot):
    from gui.live.seats import MAX_SEAT_BUTTONS, SeatPanel
    panel = SeatPanel()
    qtbot.addWidget(panel)
    panel.add_request("main", "Once upon a time", main=True)
    for i in range(40):  # seats that finish and are taken again (continuous batching)
        panel.add_request(f"seat{i}", f"prompt {i}")
        panel.finish(f"seat{i}")
    assert len(panel.seat_buttons) == MAX_SEAT_BUTTONS
    assert "main" in panel.seats and panel.shown == "main"
    assert panel.seat_buttons["seat39"].text() == "41"  # numbered in the order they sat down


def test_token_chips_say_how_many_older_tokens_are_hidden(qtbot):
    from gui.widgets import TokenChips
    chips = TokenChips()
    qtbot.addWidget(chips)
    chips.resize(300, 80)
    chips.show()
    for i in range(3):
        chips.add(f"t{i}", i)
    qtbot.waitUntil(lambda: all(c.isVisible() for c in chips.chips), timeout=2000)
    assert not chips._more.isVisible()  # everything fits: no marker
    for i in range(3, 40):
        chips.add(f"word{i}", 1000 + i)
    hidden = sum(not c.isVisible() for c in chips.chips)
    assert hidden > 0 and chips._more.isVisible()
    assert f"+{hidden}" in chips._more.text() and str(hidden) in chips._more.toolTip()
    assert chips.chips[-1].isVisible()  # the newest is always shown
    shown = [c for c in chips.chips if c.isVisible()]
    right = max(c.geometry().right() for c in shown)
    assert chips._more.geometry().right() < min(c.geometry().left() for c in shown)
    assert right <= chips.viewport().width()
    chips.clear()
    assert not chips._more.isVisible()
