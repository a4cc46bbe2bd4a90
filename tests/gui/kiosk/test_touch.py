"""Touch first: a kiosk window driven with ``QTest.touchEvent`` on a touch-screen device only (no mouse, no keys).

Swipe through every tour page and back, tap every control of the Live page and see it react, open and close a
glossary card, wake the attract loop without pressing what lies under the finger, and a storm (five fingers, 50
taps in a second) with nothing stuck and nothing doubled. Points are sent in window coordinates through
``QTest.touchEvent(window, device)``, which maps them to global screen positions; the offscreen screen is
1280x720 (tests/conftest.py), so the 1280x720 window lies on it.
"""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QInputDevice
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QGraphicsView

from gui.audit.controls_audit import collect_controls, target_problems
from gui.kiosk import touch, touch_card
from gui.kiosk.kiosk import KioskController
from gui.kiosk.touch import install_touch
from gui.kiosk.touch_targets import target_px
from gui.settings import Settings

_DEVICE = []


def screen():
    """The touch-screen device (created once per process: Qt keeps every device it is told of)."""
    if not _DEVICE:
        _DEVICE.append(QTest.createTouchDevice(QInputDevice.DeviceType.TouchScreen))
    return _DEVICE[0]


def center(window, widget) -> QPoint:
    return widget.mapTo(window, widget.rect().center())


def tap(window, pos: QPoint, finger: int = 0) -> None:
    QTest.touchEvent(window, screen(), False).press(finger, pos, window).commit()
    QTest.touchEvent(window, screen(), False).release(finger, pos, window).commit()


def drag(window, start: QPoint, end: QPoint, steps: int = 8) -> None:
    QTest.touchEvent(window, screen(), False).press(0, start, window).commit()
    for i in range(1, steps + 1):
        p = start + (end - start) * (i / steps)
        QTest.touchEvent(window, screen(), False).move(0, p, window).commit()
    QTest.touchEvent(window, screen(), False).release(0, end, window).commit()


@pytest.fixture
def kiosk(qtbot, make_window):
    """A 1280x720 kiosk window (fake engine) in touch mode; the attract loop waits an hour unless told."""
    def make(idle_seconds: float = 3600.0, options: dict | None = None):
        window = make_window(trip_s=0.02, options=options)
        settings = Settings(language="en", idle_seconds=idle_seconds, section_seconds=0.25,
                            prompts=["Once upon a time"])
        controller = KioskController(window, settings).install()
        controller.screens.fullscreen = lambda: None  # stay a window (the 1080p audit resizes it)
        window.resize(1280, 720)
        router = install_touch(window, kiosk=True)
        window.show()
        qtbot.waitExposed(window)
        made.append(controller)
        return window, controller, router
    made: list = []
    yield make
    for controller in made:
        controller.release()


def test_touch_mode_is_off_on_a_desktop_without_a_touch_screen(qtbot, make_window, monkeypatch):
    window = make_window()
    monkeypatch.setattr(touch, "touch_screen_present", lambda: False)
    assert install_touch(window) is None and not hasattr(window, "touch_router")
    assert window.run_button.minimumHeight() < target_px(720)  # nothing changed: the mouse's sizes


def test_swipe_through_every_tour_page_and_back_and_a_short_drag_springs_back(qtbot, kiosk, monkeypatch):
    monkeypatch.setattr(touch, "PAGE_COOLDOWN_S", 0.0)
    window, _, router = kiosk()
    window.show_tour()
    tour = window.tour
    qtbot.waitUntil(lambda: tour.isVisible())
    stage = tour.stage_stack
    y = stage.mapTo(window, stage.rect().center()).y()
    w = window.width()
    home = stage.pos()
    drag(window, QPoint(int(w * 0.5), y), QPoint(int(w * 0.45), y))  # 5 %: short of a page
    assert tour.current_index == 0
    qtbot.waitUntil(lambda: stage.pos() == home, timeout=2000)  # sprang back
    # a slow drag follows the finger before it is released
    QTest.touchEvent(window, screen(), False).press(0, QPoint(int(w * 0.6), y), window).commit()
    QTest.touchEvent(window, screen(), False).move(0, QPoint(int(w * 0.5), y), window).commit()
    assert stage.pos().x() < home.x() - w * 0.05
    QTest.touchEvent(window, screen(), False).release(0, QPoint(int(w * 0.5), y), window).commit()
    qtbot.waitUntil(lambda: stage.pos() == home, timeout=2000)
    for page in range(1, tour.section_count):
        drag(window, QPoint(int(w * 0.8), y), QPoint(int(w * 0.2), y))
        assert tour.current_index == page
        assert stage.pos() == home
    drag(window, QPoint(int(w * 0.8), y), QPoint(int(w * 0.2), y))  # the last page stays
    assert tour.current_index == tour.section_count - 1
    for page in range(tour.section_count - 2, -1, -1):
        drag(window, QPoint(int(w * 0.2), y), QPoint(int(w * 0.8), y))
        assert tour.current_index == page
    drag(window, QPoint(int(w * 0.3), y - 200), QPoint(int(w * 0.6), y + 200))  # mostly vertical: no page
    assert tour.current_index == 0
    assert window.isVisible() and not window.live_page.isVisible()


def tap_widget(window, widget, at: QPoint | None = None, finger: int = 0) -> None:
    """A tap on ``widget`` at ``at`` (its own coordinates; its centre by default): the point goes through the
    screen (``mapToGlobal``) into the window's coordinates, where the touch lands, as a finger's would."""
    spot = window.mapFromGlobal(widget.mapToGlobal(at if at is not None else widget.rect().center()))
    QTest.touchEvent(window, screen(), False).press(finger, spot, window).commit()
    QTest.touchEvent(window, screen(), False).release(finger, spot, window).commit()


def _live_controls(window) -> list:
    """Every control a visitor sees on the Live page (its top bar included), as the layout audit lists them."""
    from PySide6.QtWidgets import QWidget

    from gui.kiosk.touch_targets import is_control
    return [w for w in window.centralWidget().findChildren(QWidget) if is_control(w) and w.isVisible()]


def _slider_end(slider) -> QPoint:
    """The end of ``slider``'s track away from its handle (a tap there moves the handle: a visible change)."""
    far_low = slider.value() > (slider.minimum() + slider.maximum()) / 2
    return QPoint(int(slider.width() * (0.05 if far_low else 0.95)), slider.height() // 2)


class _Tapper:
    """Taps one control at a time with a finger and waits for its reaction; keeps the names it tapped and those
    that lay under the card (tooltip) of the tap before."""

    def __init__(self, qtbot, window, router) -> None:
        self.qtbot, self.window, self.router = qtbot, window, router
        self.tapped: list[str] = []
        self.covered: list[str] = []  # controls under the card of the tap before

    def tap_and_see(self, widget, reacted, at: QPoint | None = None, name: str | None = None) -> None:
        qtbot, window, router = self.qtbot, self.window, self.router
        name = name or widget.objectName()
        assert widget.isVisible() and widget.isEnabled(), name
        assert not reacted(), f"{name}: the reaction is there before the tap"
        qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)  # a tap closer to the last is a bounce
        spot = widget.mapTo(window, at if at is not None else widget.rect().center())
        if router.card.isVisible() and window.childAt(spot) is router.card:
            # the last tap's card (its tooltip, where that finger was) lies over this control: a tap on the card
            # closes it and presses nothing under it
            tap_widget(window, widget, at)
            assert not router.card.isVisible() and not reacted(), name
            qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
            self.covered.append(name)
        tap_widget(window, widget, at)
        qtbot.waitUntil(reacted, timeout=3000)
        self.tapped.append(name)

    def pick_in_list(self, combo) -> None:
        """The combo's list is open: a tap on its current item closes it and keeps the choice."""
        view = combo.view()
        index = combo.currentIndex()
        popup = view.window()  # a window of its own: the touch lands there, and the list takes it as a click
        spot = popup.mapFromGlobal(view.viewport().mapToGlobal(view.visualRect(view.model().index(index, 0)).center()))
        QTest.touchEvent(popup, screen(), False).press(0, spot, popup).commit()
        QTest.touchEvent(popup, screen(), False).release(0, spot, popup).commit()
        self.qtbot.waitUntil(lambda: not view.isVisible(), timeout=2000)
        assert combo.currentIndex() == index


def _tap_the_visitors_view(t: _Tapper, qtbot, window) -> None:
    """Every control of the visitor's view: the toggles, Run, Pause, Step, Reset, the model list, the language
    both ways, and the tabs there and back."""
    page, ex, mc = window.live_page, window.live_page.exhibit, window.model_choice
    words = page.exhibit.answer
    expected = {"liveTab", "tourTab", "modelBox", "detailsButton", "langButton", "shareButton",
                "apprenticeButton", "tearButton", "runButton", "pauseButton", "stepButton", "resetButton"}
    shown = {w.objectName() for w in _live_controls(window)}
    assert shown == expected, f"untested: {shown - expected}, gone: {expected - shown}"
    assert all(w.isEnabled() for w in _live_controls(window))
    t.tap_and_see(ex.share_button, lambda: ex.share_button.isChecked() and window.batch_slider.value() == 4)
    t.tap_and_see(ex.apprentice_button, lambda: ex.apprentice_button.isChecked() and window.apprentice.value() == 4)
    t.tap_and_see(ex.tear_button, lambda: window.sharding() == ("tp", 2) and ex.tear_button.isChecked())
    t.tap_and_see(window.run_button, lambda: window.is_running() and window.reports_received >= 2)
    t.tap_and_see(window.pause_button, lambda: not window.is_running())
    before = window.reports_received
    qtbot.wait(200)
    assert window.reports_received <= before + 1  # paused: at most the trip already granted arrives
    before = window.reports_received
    t.tap_and_see(window.step_button, lambda: window.reports_received == before + 1)
    qtbot.wait(200)
    assert window.reports_received == before + 1  # one trip, no more
    assert words.toPlainText().strip()
    t.tap_and_see(window.reset_button, lambda: not words.toPlainText().strip() and not window.is_running())
    t.tap_and_see(mc.combo, lambda: mc.combo.view().isVisible(), name="modelBox")
    t.pick_in_list(mc.combo)
    t.tap_and_see(window.lang_button, lambda: window.lang == "zh" and window.lang_button.text() == "English")
    t.tap_and_see(window.lang_button, lambda: window.lang == "en" and window.lang_button.text() == "中文")
    t.tap_and_see(window.tour_tab, lambda: window.is_tour_visible() and window.tour_tab.isChecked())
    t.tap_and_see(window.live_tab, lambda: page.isVisible() and window.live_tab.isChecked())


def _tap_the_settings(t: _Tapper, window) -> None:
    """The Details view's settings: greedy, the prompt list, the three sliders, real time, the apprentice's kind
    and the torn book's ways and degree."""
    ex, mc = window.live_page.exhibit, window.model_choice
    choice, tear = window.apprentice_choice, window.tear
    greedy = mc.greedy_box.isChecked()
    t.tap_and_see(mc.greedy_box, lambda: mc.greedy_box.isChecked() != greedy)
    t.tap_and_see(window.prompt_box, lambda: window.prompt_box.view().isVisible())
    t.pick_in_list(window.prompt_box)
    for slider in (window.batch_slider, window.speed_slider, window.apprentice.slider):
        value = slider.value()
        t.tap_and_see(slider, lambda s=slider, v=value: s.value() != v, at=_slider_end(slider))
    assert ex.share_button.isChecked() == (window.batch_slider.value() > 1)  # the toggle follows the slider
    assert window.scene.trip_duration_s == pytest.approx(window.speed_slider.value() / 100)
    real = window.real_time_box.isChecked()
    t.tap_and_see(window.real_time_box, lambda: window.real_time_box.isChecked() != real)
    t.tap_and_see(choice.buttons["model"], lambda: choice.kind() == "model")
    t.tap_and_see(choice.buttons["ngram"], lambda: choice.kind() == "ngram")
    t.tap_and_see(tear.pp_button, lambda: window.sharding() == ("pp", 2) and tear.isEnabled()
                  and tear.pp_button.isEnabled())
    t.tap_and_see(tear.tp_button, lambda: window.sharding() == ("tp", 2) and tear.tp_button.isEnabled())
    t.tap_and_see(tear.slider, lambda: window.sharding() == ("tp", 1) and tear.slider.isEnabled(),
                  at=_slider_end(tear.slider))
    assert not ex.tear_button.isChecked()  # the toggle follows the torn book


def _tap_the_details_view(t: _Tapper, qtbot, window) -> None:
    """Open the Details view, tap every control it adds (int8 on and off included), Run and Reset once more
    there, and close it."""
    page, mc = window.live_page, window.model_choice
    words = page.exhibit.answer
    t.tap_and_see(window.details_button, lambda: page.strip.isVisible() and window.details_button.isChecked())
    expected = {"liveTab", "tourTab", "modelBox", "greedyBox", "detailsButton", "langButton", "promptBox",
                "batchSlider", "speedSlider", "realTimeBox", "int8Box", "draftSlider", "apprentice_ngram",
                "apprentice_model", "tpButton", "ppButton", "tearSlider", "shareButton", "apprenticeButton",
                "tearButton", "runButton", "pauseButton", "stepButton", "resetButton"}
    shown = {w.objectName() for w in _live_controls(window)}
    assert shown == expected, f"untested: {shown - expected}, gone: {expected - shown}"
    _tap_the_settings(t, window)
    # the thinner book: a fresh engine with int8 weights, then back to fp32
    t.tap_and_see(mc.int8_box, lambda: mc.int8_box.isChecked() and window.bridge.options.get("weights") == "int8")
    qtbot.waitUntil(lambda: window.engine_info is not None, timeout=10_000)
    t.tap_and_see(mc.int8_box, lambda: not mc.int8_box.isChecked() and window.bridge.options.get("weights") is None)
    qtbot.waitUntil(lambda: window.engine_info is not None and window.tear.isEnabled(), timeout=10_000)
    # the controls the visitor's view shares with this one were tapped there; once more here, where they sit
    # in one row: Run and Reset (the other five toggle state the taps above set)
    t.tap_and_see(window.run_button, lambda: window.is_running())
    t.tap_and_see(window.reset_button, lambda: not window.is_running() and not words.toPlainText().strip())
    t.tap_and_see(window.details_button, lambda: not page.strip.isVisible() and page.view.isVisible())


@pytest.mark.qt_log_ignore("This plugin does not support raise", "This plugin does not support grabbing",
                           "This plugin does not support propagateSizeHints")  # a popup, offscreen
def test_tap_every_control_of_the_live_page_and_see_it_react(qtbot, kiosk):
    """Every control on screen in the visitor's view, then in the Details view (opened by a tap), is tapped once
    with a finger and must change what the page shows: a toggle turns, a slider's handle moves, a list opens and
    a tap on its item closes it, Run runs, Pause stops, Step makes one trip, Reset empties the answer, the
    language flips and back. The engine offers the apprentice and the torn book (``fake_extras``), so no control
    is disabled; a control the test does not know fails it (a new control needs its reaction here)."""
    window, _, router = kiosk(options={"fake_extras": True})
    qtbot.waitUntil(lambda: window.engine_info is not None and window.apprentice.is_available()
                    and window.tear.isEnabled(), timeout=5000)
    window.main_new_tokens = 400  # a run outlasts the test's taps
    t = _Tapper(qtbot, window, router)
    _tap_the_visitors_view(t, qtbot, window)
    _tap_the_details_view(t, qtbot, window)
    # one routed tap per control (the taps on the lists' items go to the list's own window); a tap on a card
    # only closed it
    assert router.taps == len(t.tapped), (router.taps, t.tapped, t.covered)
    # every tooltip is reachable by a tap: the last control's shows as a card (or the card closed on the tap)
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    tap_widget(window, window.reset_button)
    qtbot.wait(100)
    assert router.card.isVisible() and router.card.text() == window.reset_button.toolTip()


def test_a_tap_on_the_stage_starts_one_trip_when_nothing_runs(qtbot, kiosk):
    window, _, router = kiosk()
    window.main_new_tokens = 200
    stage = window.view
    spot = stage.mapTo(window, QPoint(stage.width() // 2, stage.height() // 3))
    assert not window.is_running()
    tap(window, spot)
    assert window.is_running() and router.runs_started == 1
    session = window.session.answer_number
    for _ in range(5):
        qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
        tap(window, spot)
    assert router.runs_started == 1 and window.session.answer_number == session  # running: a tap starts nothing more
    qtbot.waitUntil(lambda: window.reports_received > 0, timeout=5000)


def test_a_glossary_card_opens_where_the_finger_is_and_closes_on_a_tap_outside_or_by_itself(qtbot, kiosk,
                                                                                         monkeypatch):
    window, _, router = kiosk()
    window.show_tour()
    tour = window.tour
    tour.goto(6)  # decode: "memory-bound" in its scene
    qtbot.wait(50)
    view: QGraphicsView = tour.view
    items = [i for i in view.scene().items() if i.toolTip() and i.isVisible()
             and view.viewport().rect().contains(view.mapFromScene(i.sceneBoundingRect().center()))]
    assert items, "no scene text with a glossary tooltip on this page"
    item = items[0]
    spot = view.viewport().mapTo(window, view.mapFromScene(item.sceneBoundingRect().center()))
    tap(window, spot)
    assert router.card.isVisible() and router.card.text() == item.toolTip()
    assert router.card.geometry().adjusted(-80, -80, 80, 80).contains(spot)  # where the finger is
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    tap(window, QPoint(10, window.height() // 2))  # outside the card
    assert not router.card.isVisible()
    monkeypatch.setattr(touch_card, "CARD_S", 0.2)
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    tap(window, spot)
    assert router.card.isVisible()
    qtbot.waitUntil(lambda: not router.card.isVisible(), timeout=2000)  # closed by itself


def test_the_first_touch_wakes_the_attract_loop_and_presses_nothing(qtbot, kiosk):
    window, controller, router = kiosk(idle_seconds=0.3)
    qtbot.waitUntil(controller.is_attracting, timeout=3000)
    banner = controller.invite
    assert banner.isVisible() and banner.lines() == ("触摸开始", "Touch to start")
    assert banner.height() >= window.height() * 0.2  # big: read across the room
    start = banner.progress
    qtbot.waitUntil(lambda: banner.progress != start, timeout=1000)  # the cart moves
    window.show_tour()
    tour = window.tour
    qtbot.waitUntil(lambda: tour.next_button.isVisible(), timeout=2000)
    tour.goto(3)
    clicks = []
    tour.next_button.clicked.connect(lambda: clicks.append(1))
    tap(window, center(window, tour.next_button))
    assert not controller.is_attracting() and not banner.isVisible()
    assert clicks == [] and tour.current_index == 0  # woken, back at the start; Next was not pressed
    controller.idle.set_seconds(3600)  # awake now: a loaded machine must not fall idle again before the next tap
    qtbot.waitUntil(router.card.isVisible, timeout=1000)  # where to begin
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    tap(window, center(window, tour.next_button))
    assert clicks == [1] and tour.current_index == 1  # awake: a tap is a tap


def test_a_storm_of_fingers_and_taps_skips_no_pages_and_starts_no_second_run(qtbot, kiosk):
    window, _, router = kiosk()
    window.show_tour()
    tour = window.tour
    qtbot.waitUntil(lambda: tour.next_button.isVisible(), timeout=2000)
    turns: list[float] = []
    tour.section_changed.connect(lambda _i: turns.append(time.monotonic()))
    nxt = center(window, tour.next_button)
    seq = QTest.touchEvent(window, screen(), False)  # five fingers (a palm) on Next at once
    for f in range(5):
        seq.press(f, nxt + QPoint(6 * f, 0), window)
    seq.commit()
    seq = QTest.touchEvent(window, screen(), False)
    for f in range(5):
        seq.release(f, nxt + QPoint(6 * f, 0), window)
    seq.commit()
    assert turns == [] and router.cancelled == 1
    t0 = time.monotonic()
    for i in range(50):  # 50 taps in a second on Next
        tap(window, nxt, finger=i % 3)
        qtbot.wait(20)
    elapsed = time.monotonic() - t0
    gaps = [b - a for a, b in zip(turns, turns[1:])]
    assert all(g >= touch.PAGE_COOLDOWN_S * 0.95 for g in gaps), gaps  # never two pages at once
    assert 1 <= len(turns) <= elapsed / touch.PAGE_COOLDOWN_S + 1
    window.show_live()
    stage = window.view
    spot = stage.mapTo(window, QPoint(stage.width() // 2, stage.height() // 3))
    window.main_new_tokens = 200
    for i in range(50):
        tap(window, spot, finger=i % 5)
        qtbot.wait(20)
    assert router.runs_started == 1
    assert router._primary is None and router._mode == "idle"  # nothing stuck
    assert router._spring.state() != router._spring.State.Running
    # Afterwards the window still animates (issue 25.6 asks for 60 fps after the storm; its speed is measured in
    # bench/window_bench.py, docs/benchmarks-touch.md, never asserted here): the animation clock keeps ticking and
    # moving time on, the stage keeps painting frames, trips keep arriving one at a time, and no work the storm
    # left behind waits to run (no deferred after-paint jobs piling up, nothing granted ahead but one trip).
    ticks: list[float] = []
    window.clock.tick.connect(ticks.append)
    window.frame_counter.reset()
    reports = window.reports_received
    qtbot.waitUntil(lambda: len(ticks) >= 20 and window.frame_counter.stats_ms()[2] >= 20
                    and window.reports_received >= reports + 2, timeout=10_000)
    assert window.clock.is_running() and sum(ticks) > 0
    assert window.runner._grants_outstanding <= 1  # the engine is one trip ahead, never more
    qtbot.waitUntil(lambda: window.frame_jobs.pending() == 0, timeout=2000)  # after-paint work drains
    assert router.runs_started == 1 and router._mode == "idle"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_every_control_is_finger_sized_in_kiosk_mode(qtbot, kiosk, lang, size):
    window, _, _ = kiosk()
    window.set_language(lang)
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=2000)
    qtbot.wait(50)
    pages = [("live", None)] + [("tour", i) for i in (0, 5, 15, 16)]
    for page, index in pages:
        if page == "live":
            window.show_live()
        else:
            window.show_tour()
            window.tour.goto(index)
        try:  # the layout settles within a few events of the page change
            qtbot.waitUntil(lambda: not target_problems(collect_controls(window), window.height()), timeout=1500)
        except Exception:  # noqa: BLE001 - say which control fails
            pass
        controls = collect_controls(window)
        assert len(controls) >= 3
        problems = target_problems(controls, window.height())
        assert problems == [], f"{page} {index}: " + "\n".join(problems)


def _first_term_link(label) -> QPoint:
    """Where the caption paints its first underlined term (label coordinates): its text laid out as QLabel does
    (rich text, word-wrapped in the contents rect, vertically centred)."""
    from PySide6.QtGui import QTextDocument
    doc = QTextDocument()
    doc.setDefaultFont(label.font())
    doc.setDocumentMargin(0)
    doc.setHtml(label.text())
    box = label.contentsRect()
    doc.setTextWidth(box.width())
    top = box.top() + (box.height() - doc.size().height()) / 2
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            frag = it.fragment()
            if frag.charFormat().isAnchor():
                pos = frag.position() + frag.length() // 2 - block.position()
                line = block.layout().lineForTextPosition(pos)
                x = line.cursorToX(pos)[0] if isinstance(line.cursorToX(pos), tuple) else line.cursorToX(pos)
                y = doc.documentLayout().blockBoundingRect(block).top() + line.y() + line.height() / 2
                return QPoint(int(box.left() + x), int(top + y))
            it += 1
        block = block.next()
    raise AssertionError("no term in the caption")


def test_a_tapped_term_in_the_caption_opens_its_card(qtbot, kiosk):
    from gui.tour import glossary
    window, _, router = kiosk()
    window.show_tour()
    tour = window.tour
    tour.goto(5)  # sampling: softmax, temperature, top-p, top-k
    qtbot.wait(100)
    first = glossary.BY_KEY[tour.caption_terms()[0]]
    spot = tour.caption.mapTo(window, _first_term_link(tour.caption))
    tap(window, spot)
    qtbot.waitUntil(router.card.isVisible, timeout=1000)
    assert router.card.text().startswith(glossary.term_name(first))
    assert tour.term_line.isVisible()  # the tour's own line under the caption as well, as a click gives


def test_the_game_names_no_key_in_a_kiosk_only_the_button(qtbot, kiosk):
    """A kiosk has no keyboard: the game's "how to press" line names the button and no key; on a desktop the
    keys are named too."""
    from gui.tour.sections import PAGES

    def press_line(tour) -> str:
        texts = [it.toPlainText() for it in tour.current_scene.items() if hasattr(it, "toPlainText")]
        return next(t for t in texts if "Press: one trip" in t)

    window, _, _ = kiosk()
    window.show_tour()
    tour = window.tour
    tour.goto([p.key for p in PAGES].index("game"))
    line = press_line(tour)
    assert "PageDown" not in line and "Space" not in line
    tour.keyboard_hints = True  # the same page on a desktop
    tour.goto(0)
    tour.goto([p.key for p in PAGES].index("game"))
    assert "PageDown" in press_line(tour)
