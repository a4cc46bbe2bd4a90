"""The Live page's Details view in a kiosk window (issues 24/25): everything inside the window at 1280x720.

Finger-sized controls (``gui.kiosk.touch_targets``: 44 px at 720 lines, 8 px apart) made the page taller than the
window: the big buttons and the footer fell below it, and the Tear row's "TP · pages" / "PP · chapters" showed
cut words. Now the strip gives way to the rows, the column of sliders scrolls (``ControlsScroll``) instead of
making the page taller, and the Tear caption has a line of its own.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QWidget

from gui.audit.controls_audit import collect_controls, target_problems
from gui.kiosk.kiosk import KioskController
from gui.kiosk.touch import install_touch
from gui.live.page import PLOT_SHARE
from gui.settings import Settings
from tests.gui.kiosk.test_touch import drag

SIZE = (1280, 720)


@pytest.fixture
def kiosk_details(qtbot, make_window):
    """A 1280x720 kiosk window (fake engine, touch mode) in ``lang``, Details on, after a few trips."""
    made: list = []

    def make(lang: str):
        window = make_window(trip_s=0.02)
        controller = KioskController(window, Settings(language=lang, idle_seconds=3600.0)).install()
        controller.screens.fullscreen = lambda: None  # stay a window of the size asked for
        made.append(controller)
        window.set_language(lang)
        window.resize(*SIZE)
        install_touch(window, kiosk=True)
        window.show()
        qtbot.waitExposed(window)
        qtbot.waitUntil(lambda: window.engine_info is not None, timeout=60_000)
        start = window.reports_received
        assert window.run_trips(3)
        qtbot.waitUntil(lambda: window.reports_received - start >= 3 or window.is_session_done(), timeout=30_000)
        window.set_details(True)
        settle(window)
        return window
    yield make
    for controller in made:
        controller.release()


def settle(window) -> None:
    for _ in range(4):
        QApplication.processEvents()


def _in_scroll_view(w: QWidget, page: QWidget) -> bool:
    """True for a widget shown through a scroll area's viewport (its content may reach past the viewport)."""
    p = w.parentWidget()
    while p is not None and p is not page:
        area = p.parentWidget()
        if isinstance(area, QAbstractScrollArea) and p is area.viewport():
            return True
        p = area
    return False


def outside(window) -> list[str]:
    page = window.live_page
    frame = window.rect()
    out = []
    for w in [page, *page.findChildren(QWidget)]:
        if not w.isVisibleTo(window) or w.isWindow() or w.width() <= 0 or w.height() <= 0 or _in_scroll_view(w, page):
            continue
        r = QRect(w.mapTo(window, QPoint(0, 0)), w.size())
        if not frame.contains(r):
            out.append(f"{type(w).__name__} {w.objectName()!r} {r.getRect()}")
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kiosk_details_fits_the_window_at_1280x720(kiosk_details, lang):
    window = kiosk_details(lang)
    page = window.live_page
    assert (window.width(), window.height()) == SIZE and page.strip.isVisible()
    assert outside(window) == []
    # the rows that fell below the window before: the big buttons and the footer
    for w in (window.run_button, page.exhibit, page.footer, page.tear.pp_button):
        r = QRect(w.mapTo(window, QPoint(0, 0)), w.size())
        assert w.isVisible() and r.bottom() < SIZE[1], (w.objectName(), r.getRect())
    # the Tear switch's words whole, on the row under its caption
    tear = page.tear
    for b in (tear.tp_button, tear.pp_button):
        assert b.fontMetrics().horizontalAdvance(b.text()) <= b.contentsRect().width(), (b.text(), b.width())
        assert b.width() >= b.sizeHint().width(), (b.text(), b.width(), b.sizeHint().width())  # padding too
        assert b.mapTo(tear, QPoint(0, 0)).y() >= tear.caption.mapTo(tear, QPoint(0, 0)).y() + tear.caption.height()
    # each plot a quarter of the window's height (issue 24), with the finger's targets around it
    for plot in (page.trip_plot, page.rate_plot):
        assert plot.height() >= PLOT_SHARE * SIZE[1], plot.height()
    # every control the audit lists meets the finger's target
    problems = target_problems(collect_controls(window), SIZE[1])
    assert problems == [], "\n".join(problems)


def test_kiosk_details_controls_scroll_instead_of_growing_the_page(kiosk_details, qtbot):
    window = kiosk_details("en")
    page = window.live_page
    scroll, bar = page.controls_scroll, page.controls_scroll.verticalScrollBar()
    strip_before = page.strip.height()
    grid = page.controls_inner.layout()
    grid.setRowMinimumHeight(2, 3 * page.height())  # a column far taller than the strip, Tear at its foot
    settle(window)
    qtbot.waitUntil(scroll.scrolls, timeout=2000)
    assert (window.width(), window.height()) == SIZE and page.strip.height() == strip_before
    assert outside(window) == []
    assert bar.isVisible() and bar.value() == 0

    def listed(widget) -> bool:
        text = widget.text() if hasattr(widget, "text") else widget.toolTip()
        return any(c["text"] == text and c["kind"] in ("button", "slider") for c in collect_controls(window))

    # at the top: the table's slider is a target, the Tear switch (scrolled out of view) is not
    assert listed(page.batch_slider) and not listed(page.tear.tp_button)
    assert target_problems(collect_controls(window), SIZE[1]) == []
    # a finger drags the column up (touch mode's router owns the touches): the Tear switch comes into view
    view = scroll.viewport()
    start = view.mapTo(window, QPoint(view.width() // 2, view.height() - 10))
    drag(window, start, start - QPoint(0, view.height() - 20))
    settle(window)
    assert bar.value() > 0
    bar.setValue(bar.maximum())
    settle(window)
    assert listed(page.tear.tp_button) and not listed(page.batch_slider)
    assert target_problems(collect_controls(window), SIZE[1]) == []
    grid.setRowMinimumHeight(2, 0)
    settle(window)
    qtbot.waitUntil(lambda: not scroll.scrolls(), timeout=2000)
    assert not bar.isVisible()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_details_shrinks_back_from_1920x1080_and_fits_4_by_3(qtbot, make_window, lang):
    """A window made big once goes back to 1280x720 (its text shrinks with it: the larger type's minimum once held
    it 1552 px wide), and the Details view fits a 4:3 screen (1024x768: the top bar once needed 1102 px)."""
    window = make_window(trip_s=0.02)
    window.set_language(lang)
    window.model_choice.set_seed(7)  # the top bar's sampling line as a sampled run shows it, seed included
    window.set_details(True)
    for size in ((1920, 1080), (1280, 720), (1920, 1080), (1024, 768)):
        window.resize(*size)
        qtbot.wait(50)
        assert (window.width(), window.height()) == size, (size, window.minimumSizeHint())
