"""Presenter keys do what the README's key table says, on the tour and on the Live page; presenter mode."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from animations.typescale import TypeScale
from gui.presenter.presenter import Presenter
from tests.gui.tour_host import ensure_tour


@pytest.fixture
def stage(qtbot, make_window):
    window = make_window(trip_s=0.02)
    tour = ensure_tour(qtbot, window)
    presenter = Presenter(window).install()
    window.show_tour()
    window.activateWindow()
    window.setFocus()
    yield window, presenter, tour
    presenter.blank.hide_blank()
    window.close()


def test_tour_keys(qtbot, stage):
    window, _, tour = stage
    assert tour.current_index == 0
    for key, expected in ((Qt.Key_Right, 1), (Qt.Key_PageDown, 2), (Qt.Key_Space, 3), (Qt.Key_Left, 2),
                          (Qt.Key_PageUp, 1), (Qt.Key_5, 4), (Qt.Key_9, 8), (Qt.Key_0, 9), (Qt.Key_1, 0),
                          (Qt.Key_Home, 0)):
        if key == Qt.Key_Home:
            tour.goto(6)
        qtbot.keyClick(window, key)
        assert tour.current_index == expected, Qt.Key(key).name
    speed = tour.clock.speed
    qtbot.keyClick(window, Qt.Key_Plus)
    assert tour.clock.speed > speed
    qtbot.keyClick(window, Qt.Key_Minus)
    qtbot.keyClick(window, Qt.Key_Minus)
    assert tour.clock.speed < speed


def test_live_keys(qtbot, stage):
    window, _, tour = stage
    window.show_live()
    qtbot.keyClick(window, Qt.Key_Space)  # Space on the Live page: run
    assert window.is_running()
    qtbot.waitUntil(lambda: window.reports_received > 0, timeout=5000)
    qtbot.keyClick(window, Qt.Key_Space)  # and pause
    assert not window.is_running()
    qtbot.waitUntil(lambda: window.runner._grants_outstanding == 0, timeout=5000)  # the trip in flight lands
    received = window.reports_received
    qtbot.keyClick(window, Qt.Key_Right)  # → on the Live page: exactly one trip
    qtbot.waitUntil(lambda: window.reports_received == received + 1, timeout=5000)
    qtbot.wait(100)
    assert window.reports_received == received + 1
    assert not window.is_running()
    window.speed_slider.setValue(150)
    trip = window.scene.trip_duration_s  # 1.5 s on screen per trip
    qtbot.keyClick(window, Qt.Key_Plus)  # + : faster, a shorter trip on screen
    assert window.scene.trip_duration_s < trip
    qtbot.keyClick(window, Qt.Key_Minus)
    qtbot.keyClick(window, Qt.Key_Minus)
    assert window.scene.trip_duration_s > trip
    qtbot.keyClick(window, Qt.Key_R)  # reset the run
    assert window.is_session_done() and window.answer_text == ""
    qtbot.keyClick(window, Qt.Key_Left)  # ← on the Live page: back to the tour
    assert window.is_tour_visible()
    window.show_live()
    qtbot.keyClick(window, Qt.Key_3)  # a number shows the tour at that section
    assert window.is_tour_visible() and tour.current_index == 2
    qtbot.keyClick(window, Qt.Key_L)  # L: from the tour to the Live page
    assert not window.is_tour_visible()
    qtbot.keyClick(window, Qt.Key_T)  # T: and back to the tour, where it was
    assert window.is_tour_visible() and tour.current_index == 2


def test_blank_and_fullscreen(qtbot, stage):
    window, presenter, tour = stage
    qtbot.keyClick(window, Qt.Key_B)
    assert presenter.is_blank()
    assert presenter.blank.geometry() == window.rect()
    qtbot.keyClick(window, Qt.Key_Right)  # any key restores the picture, and only that
    assert not presenter.is_blank()
    assert tour.current_index == 0
    qtbot.keyClick(window, Qt.Key_B)
    qtbot.keyClick(window, Qt.Key_B)
    assert not presenter.is_blank()
    assert not window.isFullScreen()
    qtbot.keyClick(window, Qt.Key_F)
    qtbot.waitUntil(window.isFullScreen, timeout=2000)
    qtbot.keyClick(window, Qt.Key_F)
    qtbot.waitUntil(lambda: not window.isFullScreen(), timeout=2000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_help_overlay_lists_every_key_readably_and_closes_on_the_next_key(qtbot, stage, lang):
    """H shows every presenter key (V, the recording key, included) on one card that fits the window, in body
    text no smaller than the room's floor; the next key only closes the card."""
    from PySide6.QtCore import QRect

    from gui import i18n
    from gui.presenter.presenter import KEYS
    from gui.presenter.presenter_help import ROWS

    window, presenter, tour = stage
    i18n.set_language(lang)
    try:
        window.resize(1280, 720)
        qtbot.waitUntil(lambda: window.height() == 720, timeout=2000)
        qtbot.keyClick(window, Qt.Key_H)
        card = presenter.keys_help
        assert card.isVisible()
        assert QRect(0, 0, 1280, 720).contains(card.geometry())
        keys_shown = " ".join(label.text() for label in card.key_labels)
        for name in ("record_page", "blank", "live_page", "faster", "keys_help"):
            assert KEYS[name][0] in keys_shown, name
        texts = [label.text() for label in card.what_labels]
        assert len(texts) == len(ROWS) and all(texts)
        if lang == "zh":
            assert any("\u4e00" <= ch <= "\u9fff" for ch in "".join(texts))  # translated, not the English
        for label in [card.title, *card.key_labels, *card.what_labels]:
            assert label.font().pixelSize() >= 720 / 40
            assert card.rect().contains(label.geometry())  # nothing cut off by the card
        qtbot.keyClick(window, Qt.Key_Right)  # the next key closes the card, and does nothing else
        assert not card.isVisible()
        assert tour.current_index == 0
        qtbot.keyClick(window, Qt.Key_F1)
        assert card.isVisible()
        qtbot.keyClick(window, Qt.Key_F1)
        assert not card.isVisible()
    finally:
        i18n.set_language("en")


def test_no_key_is_ambiguous(stage):
    window, _, _ = stage
    owners: dict[str, str] = {}
    for name, action in window.actions.items():
        for seq in action.shortcuts():
            assert seq.toString() not in owners, f"{seq.toString()} on {name} and {owners.get(seq.toString())}"
            owners[seq.toString()] = name


def test_presenter_mode_hides_controls_and_enlarges_captions(qtbot, stage):
    window, presenter, tour = stage
    window.show_live()
    presenter.enter_presenter_mode()
    assert window.is_tour_visible() and tour.current_index == 0  # presenter mode opens on the deck's first item
    window.show_live()
    assert not window.step_button.isVisibleTo(window) and not window.lang_button.isVisibleTo(window)
    assert window.run_button.isVisibleTo(window)
    # the Live page one type step larger by the type scale (not fixed pixel sizes), its big buttons in one row
    from gui.live.typeset import font_for
    big = TypeScale(window.height(), True)
    for widget, role in ((window.readout, "readout"), (window.live_page.exhibit.answer, "big-answer")):
        assert widget.font().pixelSize() == font_for(role, big, None).pixelSize() > \
            font_for(role, TypeScale(window.height()), None).pixelSize()
    ex = window.live_page.exhibit
    rows = {ex.grid.getItemPosition(ex.grid.indexOf(b))[0] for b in (window.run_button, ex.share_button,
                                                                    ex.tear_button)}
    assert rows == {0}
    body, big_body = TypeScale(window.height()).px("body"), TypeScale(window.height(), True).px("body")
    assert tour.caption.font().pixelSize() == round(big_body) > round(body)  # one type step larger
    assert tour.title_label.font().pixelSize() >= 1.6 * tour.caption.font().pixelSize()  # the hierarchy kept
    tour.set_language("zh")  # the tour resets its fonts on a language change; presenter mode keeps them large
    qtbot.waitUntil(lambda: tour.caption.font().pixelSize() == round(big_body), timeout=2000)
    qtbot.keyClick(window, Qt.Key_Space)  # a clicker's Space does not type into the prompt
    assert window.is_running()
    window.pause()


def test_a_presenter_screenshot_of_a_tour_page_is_one_type_step_larger(qtbot):
    """``screenshot --section N --presenter`` shows the tour as presenter mode does: title and caption one step up."""
    from gui.capture.tour_shot import open_section
    sizes = {}
    for presenter in (False, True):
        w = open_section(7, "en", (1280, 720), live=False, presenter=presenter)
        sizes[presenter] = (w.title_label.font().pixelSize(), w.caption.font().pixelSize())
        w.close()
        w.deleteLater()
    assert sizes[False] == (round(TypeScale(720).px("title")), round(TypeScale(720).px("body")))
    assert sizes[True] == (round(TypeScale(720, True).px("title")), round(TypeScale(720, True).px("body")))
    assert sizes[True][0] >= 1.6 * sizes[True][1]
