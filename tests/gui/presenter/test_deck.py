"""One deck for a talk, focus that never traps a key, the pace said on screen (issue #18).

Keys are real key events sent to the widget that has (or would have) the focus (``qtbot.keyClick``)."""

from __future__ import annotations

import logging

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit, QSlider

from gui.presenter.deck import DEFAULT_DECK, LIVE, deck_or_default, format_deck, parse_deck
from gui.presenter.presenter import PACES, TRIP_SECONDS, Presenter, step_table


# ---- the deck as data ---------------------------------------------------------------------------------------
def test_parse_deck():
    assert parse_deck(DEFAULT_DECK) == list(range(1, 16)) + [LIVE, 16, 17, 18]
    assert parse_deck("3-1, live; game, terms,end") == [3, 2, 1, LIVE, 16, 17, 18]
    assert format_deck(parse_deck("1-15, live, 16, 17, 18")) == "1-15, live, 16-18"
    for bad, word in (("", "empty"), ("1-19", "19"), ("0", "0"), ("1, slides", "slides")):
        with pytest.raises(ValueError, match=word):
            parse_deck(bad)


def test_bad_deck_falls_back_with_a_logged_line(caplog):
    with caplog.at_level(logging.WARNING, logger="gui.presenter.deck"):
        assert deck_or_default("1-5, lve") == parse_deck(DEFAULT_DECK)
    assert "lve" in caplog.text and "default" in caplog.text
    from gui.settings import Settings
    assert deck_or_default(Settings().deck) == parse_deck(DEFAULT_DECK)
    assert deck_or_default(Settings(deck="2, 4, live").deck) == [2, 4, LIVE]


def test_a_bad_deck_is_said_on_screen_in_presenter_mode(qtbot, make_window):
    window = make_window(trip_s=0.02)
    presenter = Presenter(window, deck="1-15, livee").install(presenter_mode=True)
    assert presenter.pace_note.isVisible() and "livee" in presenter.pace_note.text()
    assert window.is_tour_visible() and window.tour.current_index == 0  # the default deck, from page 1
    presenter.pace_note.hide()
    window.close()


def test_deck_setting_round_trips_through_the_ini(tmp_path):
    from PySide6.QtCore import QSettings

    from gui import settings as app_settings
    qs = QSettings(str(tmp_path / "x.ini"), QSettings.IniFormat)
    qs.setValue("presenter/deck", "14, 15, live, 16")
    qs.sync()
    assert parse_deck(app_settings.load(qsettings=qs).deck) == [14, 15, LIVE, 16]  # unquoted: QSettings splits it


def test_pace_tables_come_back_to_one():
    for table in (PACES, TRIP_SECONDS):
        assert 1.0 in table and list(table) == sorted(table)
        value = 1.0
        for _ in range(len(table)):  # all the way down, past the end
            value = step_table(table, value, -1)
        assert value == table[0]
        for _ in range(table.index(1.0)):
            value = step_table(table, value, +1)
        assert value == 1.0
    assert step_table(PACES, 1.29, +1) == 1.41 and step_table(PACES, 1.29, -1) == 1.19  # off the table: snaps


# ---- the clicker on a real window -----------------------------------------------------------------------------
@pytest.fixture
def talk(qtbot, make_window):
    window = make_window(trip_s=0.02)
    window.main_new_tokens = 3  # a short answer, so the Live item completes in a few clicks
    presenter = Presenter(window, deck="14, 15, live, 16, 17").install(presenter_mode=True)
    window.activateWindow()
    yield window, presenter, window.tour
    presenter.blank.hide_blank()
    presenter.pace_note._timer.stop()
    window.close()


def test_presenter_starts_on_the_first_item_and_the_clicker_walks_the_deck(qtbot, talk):
    window, presenter, tour = talk
    assert window.is_tour_visible() and tour.current_index == 13  # page 14, not the Live page
    qtbot.keyClick(window, Qt.Key_PageDown)
    assert tour.current_index == 14
    qtbot.keyClick(window, Qt.Key_PageDown)  # page 15 → the Live page, with no trip run yet
    assert not window.is_tour_visible() and window.reports_received == 0
    for _ in range(40):  # each "next" is one trip until the answer is complete
        if window.is_tour_visible():
            break
        received = window.reports_received
        qtbot.keyClick(window, Qt.Key_PageDown)
        if not window.is_tour_visible():
            qtbot.waitUntil(lambda: window.reports_received > received or window.is_session_done(), timeout=5000)
            qtbot.waitUntil(lambda: window.runner._grants_outstanding == 0, timeout=5000)
    assert window.is_tour_visible() and tour.pages_key() == "game"
    assert 1 <= window.reports_received <= 4 and window.answer_text  # the answer was written, trip by trip
    trips = tour.game.trips
    qtbot.keyClick(window, Qt.Key_Right)  # on the game, "next" presses
    assert tour.game.trips == trips + 1 and tour.pages_key() == "game"
    qtbot.keyClick(window, Qt.Key_Space)
    assert tour.game.trips == trips + 2
    for _ in range(30):
        if tour.pages_key() != "game":
            break
        qtbot.keyClick(window, Qt.Key_PageDown)
    assert tour.pages_key() == "metaphors" and tour.game.sentences_done >= 1
    qtbot.keyClick(window, Qt.Key_PageDown)  # the last item: stays, and says so
    assert tour.pages_key() == "metaphors" and presenter.pace_note.isVisible() and "Home" in presenter.pace_note.text()
    qtbot.keyClick(window, Qt.Key_PageUp)
    qtbot.keyClick(window, Qt.Key_PageUp)  # back through the game to the Live page
    assert not window.is_tour_visible()
    qtbot.keyClick(window, Qt.Key_Left)
    assert window.is_tour_visible() and tour.current_index == 14
    qtbot.keyClick(window, Qt.Key_Home)
    assert tour.current_index == 13


# ---- focus ---------------------------------------------------------------------------------------------------
def _shown(qtbot, tour, cls, name=None):
    """The first control of class ``cls`` (and object name ``name``) the tour shows now."""
    def found():
        return [w for w in tour.controls.findChildren(cls)
                if w.isVisible() and (name is None or w.objectName() == name)]
    qtbot.waitUntil(lambda: bool(found()), timeout=2000)
    return found()[0]


def _focus(qtbot, widget):
    widget.setFocus(Qt.MouseFocusReason)
    qtbot.waitUntil(widget.hasFocus, timeout=2000)


def test_enter_in_your_question_hands_the_focus_back_and_keys_turn_pages(qtbot, talk):
    window, presenter, tour = talk
    edit = tour.prompt_edit
    qtbot.mouseClick(edit, Qt.LeftButton)
    _focus(qtbot, edit)
    edit.clear()
    qtbot.keyClicks(edit, "why so slow")
    qtbot.keyClick(edit, Qt.Key_Space)  # typed, not a page turn
    qtbot.keyClick(edit, Qt.Key_B)  # typed, not a blank screen
    assert edit.text() == "why so slow b" and tour.current_index == 13 and not presenter.is_blank()
    qtbot.keyClick(edit, Qt.Key_Return)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert tour.prompt == "why so slow b"
    assert not isinstance(QApplication.focusWidget(), QLineEdit)
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key_Right)
    assert tour.current_index == 14
    window.show_live()  # the Live page and back: the learner's question stays
    window.show_tour()
    assert tour.prompt == "why so slow b" and tour.prompt_edit.text() == "why so slow b"


def test_escape_restores_the_field_and_releases_the_focus(qtbot, talk):
    window, presenter, tour = talk
    edit = tour.prompt_edit
    before = edit.text()
    _focus(qtbot, edit)
    qtbot.keyClicks(edit, " and more")
    qtbot.keyClick(edit, Qt.Key_Home)  # the field's own cursor key while it is edited
    assert tour.current_index == 13 and edit.cursorPosition() == 0
    qtbot.keyClick(edit, Qt.Key_Escape)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert edit.text() == before
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key_PageDown)
    assert tour.current_index == 14


def test_enter_in_the_live_prompt_box_hands_the_focus_back(qtbot, talk):
    window, presenter, tour = talk
    window.show_live()
    edit = window.prompt_box.lineEdit()
    _focus(qtbot, edit)
    edit.clear()
    qtbot.keyClicks(edit, "for i in")
    qtbot.keyClick(edit, Qt.Key_Space)  # typed while the field is edited
    assert edit.text().startswith("for i in ") and not window.is_running()
    qtbot.keyClick(edit, Qt.Key_Return)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=2000)
    assert window.prompt().startswith("for i in")  # (the combo box may complete it to its preset)
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key_Space)  # the presenter's Space again: run
    assert window.is_running()
    window.pause()
    qtbot.waitUntil(lambda: window.runner._grants_outstanding == 0, timeout=5000)


def test_a_click_elsewhere_takes_the_focus_out_of_a_field_in_presenter_mode(qtbot, talk):
    window, presenter, tour = talk
    _focus(qtbot, tour.prompt_edit)
    qtbot.mouseClick(tour.view.viewport(), Qt.LeftButton)
    qtbot.waitUntil(lambda: not tour.prompt_edit.hasFocus(), timeout=2000)


def test_a_focused_slider_takes_the_arrows_and_shows_it(qtbot, talk):
    window, presenter, tour = talk
    tour.goto(5)  # sampling: temperature, top-p, top-k
    slider = _shown(qtbot, tour, QSlider)
    assert "QSlider:focus" in tour.styleSheet()  # the focus ring
    _focus(qtbot, slider)
    value = slider.value()
    qtbot.keyClick(slider, Qt.Key_Right)
    assert slider.value() > value and tour.current_index == 5
    qtbot.keyClick(slider, Qt.Key_PageDown)  # the clicker's key is still the clicker's: the deck's next page
    assert tour.current_index == 13
    tour.goto(5)
    slider = _shown(qtbot, tour, QSlider)
    _focus(qtbot, slider)
    qtbot.keyClick(slider, Qt.Key_Escape)
    qtbot.waitUntil(lambda: not slider.hasFocus(), timeout=2000)
    value = slider.value()
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key_Right)
    assert tour.current_index == 13 and slider.value() == value


def test_a_slider_without_a_focus_ring_leaves_the_arrows_to_the_clicker(qtbot, talk):
    from gui.kiosk.focus import shows_focus_ring
    window, presenter, tour = talk
    window.show_live()
    slider = window.batch_slider
    _focus(qtbot, slider)
    value = slider.value()
    presenter.deck.sync()
    qtbot.keyClick(slider, Qt.Key_Right)
    assert slider.value() == value or shows_focus_ring(slider)  # moves only where the ring is drawn


def test_space_after_clicking_press_presses_again(qtbot, talk):
    window, presenter, tour = talk
    tour.goto(15)
    presenter.deck.sync()
    press = _shown(qtbot, tour, type(tour.next_button), "gamePress")
    qtbot.mouseClick(press, Qt.LeftButton)
    assert tour.game.trips == 1
    press.setFocus()
    qtbot.keyClick(press, Qt.Key_Space)
    assert tour.game.trips == 2 and tour.pages_key() == "game"


# ---- the pace -----------------------------------------------------------------------------------------------
def test_pace_is_said_on_screen_and_comes_back_to_one(qtbot, talk):
    window, presenter, tour = talk
    assert tour.clock.speed == 1.0
    qtbot.keyClick(window, Qt.Key_Plus)
    assert tour.clock.speed == 1.19
    assert presenter.pace_note.isVisible() and "1.19×" in presenter.pace_note.text()
    for _ in range(6):
        qtbot.keyClick(window, Qt.Key_Minus)
    for _ in range(5):
        qtbot.keyClick(window, Qt.Key_Plus)
    assert tour.clock.speed == 1.0 and "1.00×" in presenter.pace_note.text()
    window.show_live()
    window.speed_slider.setValue(100)
    for _ in range(12):  # down to the shortest trip and back up
        qtbot.keyClick(window, Qt.Key_Plus)
    assert window.speed_slider.value() == 25
    for _ in range(8):
        qtbot.keyClick(window, Qt.Key_Minus)
    assert window.speed_slider.value() == 100 and "1.00 s" in presenter.pace_note.text()
    qtbot.waitUntil(lambda: not presenter.pace_note.isVisible(), timeout=5000)  # it goes away by itself
