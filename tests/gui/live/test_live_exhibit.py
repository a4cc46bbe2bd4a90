"""The Live page as an exhibit (issue 24): a text budget a visitor can read from three metres in its default
state, the engineer's view one tap away, one count for the seats and one way to say a trip's tokens, and the
reading-versus-paperwork split of each trip (issue 29, item 4)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from gui.audit.layout_audit import collect_layout
from gui.live.readout import readout_text

MAX_TEXTS = 40


def _run(qtbot, w, trips: int) -> None:
    qtbot.waitUntil(lambda: w.engine_info is not None, timeout=60_000)
    start = w.reports_received
    assert w.run_trips(trips)
    qtbot.waitUntil(lambda: w.reports_received - start >= trips or w.is_session_done(), timeout=30_000)
    w.set_real_time(True)  # write every waiting trip now
    w.set_real_time(False)


def _settle(w, size) -> None:
    w.resize(*size)
    for _ in range(3):
        QApplication.processEvents()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_default_live_page_keeps_the_text_budget(qtbot, app_font, make_window, lang, size):
    w = make_window(batch=1)
    w.set_language(lang)
    w.set_prompt("Once upon a time")
    _run(qtbot, w, 6)
    _settle(w, size)
    assert (w.width(), w.height()) == size
    assert not w.details_button.isChecked() and not w.live_page.strip.isVisible()
    items = collect_layout(w, lang)["items"]
    h = size[1]
    assert 10 <= len(items) <= MAX_TEXTS, [i["text"] for i in items]
    small = [(i["text"], i["font_px"]) for i in items if i["font_px"] < h / 48 - 0.25]
    assert not small, f"under height/48 = {h / 48:.1f} px: {small}"
    by_role = {}
    for i in items:
        by_role.setdefault(i["role"], []).append(i["font_px"])
    body = max(by_role["readout"])
    assert body >= h / 40 - 0.25
    assert max(by_role["big-answer"]) >= body  # the answer in large type
    assert max(by_role["headline"]) >= 1.6 * body  # the headline: what this trip shows
    drawn = w.view.mapFromScene(w.scene.sceneRect()).boundingRect()
    assert drawn.width() >= 0.9 * w.width(), f"the stage is drawn {drawn.width()} px wide of {w.width()}"


def test_details_are_one_tap_away(qtbot, app_font, make_window):
    w = make_window(batch=4)
    w.set_prompt("Once upon a time")
    w.set_batch(4)
    _run(qtbot, w, 6)
    _settle(w, (1280, 720))
    closed = collect_layout(w, "en")["items"]
    w.details_button.click()
    _settle(w, (1280, 720))
    page = w.live_page
    assert page.strip.isVisible() and page.footer.isVisible() and w.chips.isVisible()
    assert not w.view.isVisible()  # the stage waits in the visitor's view: squeezed, it would not read
    assert w.batch_slider.isVisible() and w.apprentice.slider.isVisible()
    for plot in (w.trip_plot, w.rate_plot):  # the plots: a quarter of the window's height each
        assert plot.isVisible() and plot.height() >= 720 / 4 - 1
    opened = collect_layout(w, "en")["items"]
    assert any(i["role"] == "plot-title" for i in opened) and not any(i["role"] == "plot-title" for i in closed)
    assert len(opened) > len(closed)
    assert not page.exhibit.answer.isVisible() and w.answer.isVisible()  # one answer box at a time
    w.details_button.click()
    _settle(w, (1280, 720))
    assert not page.strip.isVisible() and page.exhibit.answer.isVisible() and w.view.isVisible()


def test_idea_toggles_move_the_sliders_and_back(qtbot, make_window):
    w = make_window(batch=1)
    qtbot.waitUntil(lambda: w.engine_info is not None, timeout=60_000)
    share = w.live_page.exhibit.share_button
    share.click()
    assert w.batch_slider.value() == 4 and share.isChecked()
    w.set_batch(1)  # the details view's slider moves the toggle too
    assert not share.isChecked()
    w.set_batch(7)
    assert share.isChecked()


def test_big_answer_shows_the_words_of_the_seat_being_read(qtbot, make_window):
    w = make_window(batch=1)
    w.set_prompt("Once upon a time")
    _run(qtbot, w, 5)
    big = w.live_page.exhibit.answer.toPlainText()
    assert big and big == w.answer.toPlainText()


def test_seats_taken_is_the_batch(qtbot, qapp):
    """A table of 4 seated requests, 2 finished ones still shown for reading and 1 waiting: 4 seats taken."""
    from animations.stage.scene import StageScene
    scene = StageScene()
    scene.configure([1000] * 4, 100, 64, "m")
    seats = [{"request_id": f"r{i}", "prompt": "p", "answer": "a", "state": "writing"} for i in range(4)]
    seats += [{"request_id": f"d{i}", "prompt": "p", "answer": "a", "state": "done"} for i in range(2)]
    seats += [{"request_id": "w", "prompt": "p", "answer": "", "state": "waiting"}]
    scene.show_requests(seats)
    header = scene._seats.header.text()
    assert "4" in header and "7" not in header and "6" not in header


def test_one_trip_tokens_are_said_the_same_way_on_stage_and_readout(qtbot, qapp):
    from animations.stage.scene import StageScene
    from animations.stage.style import trip_tokens
    scene = StageScene()
    scene.configure([1000] * 2, 100, 64, "m")
    trip = {"phase": "prefill", "tokens_in": 20, "tokens_out": 1, "wall_ms": 5.0, "layer_ms": [1.0, 1.0],
            "batch": 1, "request_ids": ["a"], "tokens": [{"request_id": "a", "text": "x"}]}
    scene.show_trip(trip)
    said = trip_tokens(20, 1)
    assert "20" in said and "1" in said
    assert said in scene._caption.text()
    assert said in readout_text({"wall": 5.0, "tokens": 1, "tokens_in": 20, "batch": 1}, True, False, 1.0)


@pytest.mark.parametrize("lang, meaning", [("en", "end of text"), ("zh", "文末")])
def test_chips_say_what_a_special_token_means(qtbot, make_window, lang, meaning):
    from gui.widgets import chip_text
    w = make_window(batch=1)
    w.set_language(lang)
    assert chip_text("<|endoftext|>") == meaning
    assert chip_text("␣the") == "␣the" and "\ufffd" not in chip_text("a\ufffdb")
    chip = w.chips.add("<|endoftext|>", 50256)
    assert meaning in chip.text() and "&lt;|" not in chip.text() and "<|" not in chip.text()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_the_stage_sizes_its_fonts_for_the_scale_it_is_drawn_at(qtbot, app_font, make_window, size):
    """fitInView draws the scene into the viewport less a 2 px margin a side, not into the whole view: the stage
    picked its font sizes for the larger view and drew its smallest text at 22.3 px in a 1080 px window with the
    apprentice on (under height/48 = 22.5). Each style's font, at the scale the scene is drawn at, is at least
    height/48 px."""
    w = make_window(batch=1)
    w.set_prompt("Once upon a time")
    w.set_draft_k(4)  # the apprentice's lines under the stage: a shorter stage, the case that went under
    _run(qtbot, w, 3)
    _settle(w, size)
    drawn = w.live_page.view.transform().m11()
    for style in ("small", "label", "body", "heading"):
        px = w.scene._type.font("sans", style).pixelSize() * drawn
        assert px >= size[1] / 48 - 1e-6, (style, px, size[1] / 48)
