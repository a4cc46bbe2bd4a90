"""Touch input, in one place for the tour and the Live page: swipe, tap, tap-to-reveal, and their guards.

``install_touch(host, kiosk=False, force=False)`` turns it on for a top-level widget (the ``MainWindow``, or a
``TourWidget`` shown alone) when touch mode applies (``touch_mode_wanted``: kiosk mode, ``--touch``, or a touch
screen among Qt's input devices). It then owns every touch that lands on the host's window, before Qt would turn
it into mouse events:

- **tap** (one finger, moved less than ``TAP_SLOP`` of the window's height): the control under the finger gets a
  click (a slider's handle jumps to the finger; a combo box opens its list of presets); a widget or a scene text
  with a tooltip shows it as a card (``TipCard``) where the finger is, closed by the next tap or after
  ``gui.kiosk.touch_card.CARD_S``; a tapped glossary term in a caption opens its card too. On the Live page a
  tap on the stage starts a trip when nothing runs.
- **swipe** on a tour page: the stage follows the finger; released after a mostly horizontal drag of at least
  ``SWIPE_FRACTION`` of the window's width it turns the page (right to left: next), otherwise it springs back.
- **drag** on a slider: the handle follows the finger; a mostly vertical drag in a scroll area marked
  ``fingerScroll`` (the Live page's column of sliders, ``gui.live.page.ControlsScroll``) scrolls it instead.
- **guards**: a second finger or a palm (several points at once) cancels the gesture (nothing is pressed, the
  stage springs back); at most one page turn per ``PAGE_COOLDOWN_S``; taps closer than ``TAP_COOLDOWN_S`` are
  dropped; nothing is queued, so a storm of taps leaves no work behind.
- **kiosk**: the first touch after the attract loop only wakes the exhibit (``IdleWatcher.touched``); every touch
  counts as input for the idle timer.

Mouse, keyboard and clicker input are never touched here: the desktop and presenter mode behave as before.
Target sizes for a finger are ``gui.kiosk.touch_targets``.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import (
    QCoreApplication,
    QEasingCurve,
    QEvent,
    QObject,
    QPoint,
    QPointF,
    QPropertyAnimation,
    Qt,
    QTimer,
)
from PySide6.QtGui import QInputDevice, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSlider,
    QApplication,
    QComboBox,
    QGraphicsView,
    QLabel,
    QStyle,
    QStyleOptionSlider,
    QWidget,
)

from gui.kiosk.touch_card import TipCard, tooltip_at
from gui.kiosk.touch_card import within as _inside
from gui.live.host import LiveHost
from gui.live.state import SessionState

log = logging.getLogger(__name__)

SWIPE_FRACTION = 0.15  # a page turn needs a drag of at least this much of the window's width...
SWIPE_RATIO = 1.5  # ...and this many times more sideways than up or down
TAP_SLOP = 0.02  # a finger that moved less than this fraction of the window's height has tapped
PAGE_COOLDOWN_S = 0.35  # at most one page turn in this time, whatever the fingers do
TAP_COOLDOWN_S = 0.06  # taps closer than this are a bounce, not a visitor
SPRING_MS = 220  # the stage's way back after a short swipe


def touch_screen_present() -> bool:
    """True when Qt reports a touch screen among the input devices."""
    return any(d.type() == QInputDevice.DeviceType.TouchScreen for d in QInputDevice.devices())


def touch_mode_wanted(kiosk: bool = False, force: bool = False) -> bool:
    """Touch mode applies in kiosk mode, with ``--touch`` (``force``), or when a touch screen is present."""
    return bool(kiosk or force or touch_screen_present())


def finger_scroll_area(widget: QWidget | None) -> QAbstractScrollArea | None:
    """The nearest scroll area around ``widget`` that a finger scrolls (property ``fingerScroll``) and that has
    somewhere to scroll to; else None."""
    w = widget
    while w is not None:
        if isinstance(w, QAbstractScrollArea) and w.property("fingerScroll") and w.verticalScrollBar().maximum() > 0:
            return w
        w = w.parentWidget()
    return None


def slider_value_at(slider: QAbstractSlider, pos: QPoint) -> int:
    """The value a finger at ``pos`` (slider coordinates) points at: the handle's centre goes there."""
    opt = QStyleOptionSlider()
    slider.initStyleOption(opt)
    style = slider.style()
    groove = style.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderGroove, slider)
    handle = style.subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderHandle, slider)
    if slider.orientation() == Qt.Horizontal:
        span = max(1, groove.width() - handle.width())
        offset = pos.x() - groove.x() - handle.width() // 2
    else:
        span = max(1, groove.height() - handle.height())
        offset = pos.y() - groove.y() - handle.height() // 2
    return QStyle.sliderValueFromPosition(slider.minimum(), slider.maximum(), max(0, min(span, offset)), span,
                                          opt.upsideDown)


class TouchRouter(QObject):
    """Owns the touches of ``host``'s window (an event filter on its ``QWindow``); see the module docstring.

    ``taps``, ``page_turns``, ``runs_started`` and ``cancelled`` count what it did (tests, the soak).
    """

    def __init__(self, host: QWidget):
        super().__init__(host)
        self.host = host
        # the window hosting the Live page and the tour (a ``LiveHost``: it carries the Live session), or None
        # for a tour shown alone (``isinstance(host, LiveHost)`` would build the tour to look for it)
        self.live: LiveHost | None = host if isinstance(getattr(host, "session", None), SessionState) else None
        self.card = TipCard(host)
        self.taps = self.page_turns = self.runs_started = self.cancelled = 0
        self._window = None
        self._primary: int | None = None
        self._mode = "idle"  # idle | pending | swipe | slider | scroll | cancelled | woken | other
        self._scroll_from = 0  # the scroll bar's value when a finger began to scroll
        self._start = QPointF()
        self._target: QWidget | None = None
        self._moved: QWidget | None = None  # the stage following the finger
        self._home = QPoint()
        self._last_tap = -1e9
        self._last_turn = -1e9
        self._page_before = None  # the tour page before a tap's click (a page turned by a tap starts the cooldown)
        self._spring = QPropertyAnimation(self)
        self._spring.setPropertyName(b"pos")
        self._spring.setDuration(SPRING_MS)
        self._spring.setEasingCurve(QEasingCurve.OutBack)
        self._labels: set[int] = set()  # caption labels whose term links open cards
        host.installEventFilter(self)
        self._attach()
        controller = self.live.kiosk_controller if self.live is not None else None
        idle = controller.idle if controller is not None else None
        if idle is not None:  # woken by a touch (the idle watcher sees it first and drops it): where to begin
            idle.woken.connect(lambda: QTimer.singleShot(0, self._show_where_to_begin))

    # ---- wiring ---------------------------------------------------------------------------------------------
    def is_idle(self) -> bool:
        """True when no finger is being followed (no tap, swipe, drag or scroll in progress)."""
        return self._mode == "idle"

    def _attach(self) -> None:
        handle = self.host.windowHandle()
        if handle is None or handle is self._window:
            return
        if self._window is not None:
            try:
                self._window.removeEventFilter(self)
            except RuntimeError:
                pass
        self._window = handle
        handle.installEventFilter(self)

    def _tour(self):
        """The tour when it is the page on screen (the host itself when it is a tour shown alone)."""
        if self.live is not None:
            return self.live.tour if self.live.is_tour_visible() else None
        host = self.host  # a tour shown alone
        return host if hasattr(host, "section_changed") and hasattr(host, "next") else None

    # ---- events ---------------------------------------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if obj is self.host:
            if kind in (QEvent.Show, QEvent.WinIdChange):
                self._attach()
            elif kind == QEvent.Hide:
                self._reset(spring=False)
            return False
        if obj is not self._window or kind not in (QEvent.TouchBegin, QEvent.TouchUpdate, QEvent.TouchEnd,
                                                  QEvent.TouchCancel):
            return False
        event.accept()  # ours: Qt does not turn it into mouse events as well
        if kind == QEvent.TouchCancel:
            self._reset(spring=True)
            return True
        self._on_points(event)
        return True

    def _on_points(self, event) -> None:
        points = event.points()
        pressed = [p for p in points if p.state() == p.State.Pressed]
        down = [p for p in points if p.state() != p.State.Released]
        if self._primary is None:
            if not pressed:
                return
            first = pressed[0]
            self._primary = first.id()
            self._start = self._local(first)
            self._target = self.host.childAt(self._start.toPoint())
            self._mode = "pending"
            if len(pressed) > 1:  # a palm, or two fingers at once: no tap, no swipe
                self._cancel()
            elif self._wakes():
                self._mode = "woken"
                QTimer.singleShot(0, self._show_where_to_begin)
        elif pressed and self._mode not in ("cancelled", "woken"):
            self._cancel()  # a second finger while the first is down
        primary = next((p for p in points if p.id() == self._primary), None)
        if primary is not None and self._mode in ("pending", "swipe", "slider", "scroll"):
            self._follow(self._local(primary))
        if primary is not None and primary.state() == primary.State.Released:
            self._release(self._local(primary))
        if not down:
            self._reset(spring=self._mode == "swipe")

    def _local(self, point) -> QPointF:
        return QPointF(self.host.mapFromGlobal(point.globalPosition().toPoint()))

    def _wakes(self) -> bool:
        """Every touch is input for the kiosk's idle timer; True when this one only woke the exhibit."""
        controller = self.live.kiosk_controller if self.live is not None else None
        return bool(controller is not None and controller.idle.touched())

    def _show_where_to_begin(self) -> None:
        """After the wake-up touch: a card by the tour's Next button says how to go on."""
        tour = self._tour()
        button = getattr(tour, "next_button", None) if tour is not None else None
        if button is None or not button.isVisible():
            return
        at = button.mapTo(self.host, QPoint(button.width() // 2, 0))
        self.card.open_at(QCoreApplication.translate("Touch", "Swipe to the left, or tap Next ▶, to begin"), at)

    def _cancel(self) -> None:
        if self._mode != "cancelled":
            self.cancelled += 1
        self._spring_back()
        self._mode = "cancelled"

    def _reset(self, spring: bool) -> None:
        if spring or self._mode == "swipe":
            self._spring_back()
        self._primary = None
        self._mode = "idle"
        self._target = None

    # ---- moving fingers -------------------------------------------------------------------------------------
    def _follow(self, pos: QPointF) -> None:
        delta = pos - self._start
        slop = max(6.0, self.host.height() * TAP_SLOP)
        if self._mode == "pending" and max(abs(delta.x()), abs(delta.y())) > slop:
            slider = _inside(self._target, QAbstractSlider)
            tour = self._tour()
            area = finger_scroll_area(self._target)
            if area is not None and abs(delta.y()) > abs(delta.x()):
                self._mode = "scroll"
                self._scroll_from = area.verticalScrollBar().value()
            elif slider is not None and slider.isEnabled():
                self._mode = "slider"
            elif tour is not None and tour.isAncestorOf(self._target) and abs(delta.x()) > abs(delta.y()):
                self._mode = "swipe"
                self._moved = getattr(tour, "stage_stack", None) or getattr(tour, "view", None)
                if self._moved is not None:
                    if self._spring.state() == QPropertyAnimation.Running:  # caught mid-spring: home is its end
                        self._spring.stop()
                        self._moved.move(self._spring.endValue())
                    self._home = self._moved.pos()
            else:
                self._mode = "other"  # a drag that means nothing here: no tap either
        if self._mode == "scroll":
            area = finger_scroll_area(self._target)
            if area is not None:  # the content follows the finger
                area.verticalScrollBar().setValue(self._scroll_from - int(delta.y()))
        elif self._mode == "slider":
            slider = _inside(self._target, QAbstractSlider)
            slider.setValue(slider_value_at(slider, slider.mapFrom(self.host, pos.toPoint())))
        elif self._mode == "swipe" and self._moved is not None:
            self._moved.move(self._home.x() + int(delta.x()), self._home.y())

    def _spring_back(self) -> None:
        w = self._moved
        if w is None:
            return
        self._moved = None
        if w.pos() == self._home or not w.isVisible():
            w.move(self._home)
            return
        self._spring.stop()
        self._spring.setTargetObject(w)
        self._spring.setStartValue(w.pos())
        self._spring.setEndValue(self._home)
        self._spring.start()

    def _release(self, pos: QPointF) -> None:
        delta = pos - self._start
        if self._mode == "swipe":
            w = self.host.width()
            if abs(delta.x()) >= SWIPE_FRACTION * w and abs(delta.x()) >= SWIPE_RATIO * abs(delta.y()):
                if self._moved is not None:
                    self._moved.move(self._home)
                    self._moved = None
                self._turn(+1 if delta.x() < 0 else -1)
            else:
                self._spring_back()
            self._mode = "done"
        elif self._mode == "pending":
            self._mode = "done"
            self._tap(pos.toPoint())

    def _turn(self, step: int) -> None:
        now = time.monotonic()
        tour = self._tour()
        if tour is None or now - self._last_turn < PAGE_COOLDOWN_S:
            return
        self._last_turn = now
        self.page_turns += 1
        tour.next() if step > 0 else tour.prev()

    # ---- taps -----------------------------------------------------------------------------------------------
    def _tap(self, pos: QPoint) -> None:
        now = time.monotonic()
        card_was_open = self.card.isVisible()
        if card_was_open:
            self.card.hide()
        target = self._target
        if target is None or target is self.card or now - self._last_tap < TAP_COOLDOWN_S:
            return
        self._last_tap = now
        tour = self._tour()
        if tour is not None and tour.isAncestorOf(target) and _inside(target, QAbstractButton) is not None \
                and now - self._last_turn < PAGE_COOLDOWN_S:
            return  # a storm on Next or on the chips: one page per cooldown, never two
        self.taps += 1
        local = target.mapFrom(self.host, pos)
        tip = tooltip_at(target, local, stop=self.host)
        slider = _inside(target, QAbstractSlider)
        combo = _inside(target, QComboBox)
        view = _inside(target, QGraphicsView)
        if slider is not None:
            if slider.isEnabled():
                slider.setValue(slider_value_at(slider, slider.mapFrom(self.host, pos)))
        elif combo is not None:
            if combo.isEnabled():
                combo.showPopup()
        elif view is not None and tour is None and self.live is not None and view is self.live.view:
            if self._stage_tap(view, local, tip):
                return
        elif view is None:
            self._watch_links(target)
            self._click(target, local)
        if tip and not (card_was_open and self.card.text() == tip):
            self.card.open_at(tip, pos)

    def _page_of(self, tour):
        return getattr(tour, "current_index", None)

    def _stage_tap(self, view: QGraphicsView, local: QPoint, tip: str) -> bool:
        """The Live stage: a trip starts when nothing runs; True when that happened."""
        live = self.live
        item_tip = tip and tip != view.toolTip()
        if item_tip or live is None or live.session.is_running() or not live.engine_ready():
            return False
        live.run()
        self.runs_started += 1
        return True

    def _click(self, target: QWidget, local: QPoint) -> None:
        """A click at ``local`` of ``target``, as the mouse would give it (press, then release)."""
        tour = self._tour()
        self._page_before = self._page_of(tour) if tour is not None else None
        button = _inside(target, QAbstractButton)
        if button is not None:  # the whole widget is the finger's target (a check box's text and the air by it)
            if button.isEnabled():
                button.click()
            if tour is not None and self._page_of(tour) != self._page_before:
                self._last_turn = time.monotonic()
            return
        glob = QPointF(target.mapToGlobal(local))
        for kind, buttons in ((QEvent.MouseButtonPress, Qt.LeftButton), (QEvent.MouseButtonRelease, Qt.NoButton)):
            event = QMouseEvent(kind, QPointF(local), glob, Qt.LeftButton, buttons, Qt.NoModifier)
            QApplication.sendEvent(target, event)
        if tour is not None and self._page_of(tour) != self._page_before:
            self._last_turn = time.monotonic()

    def _watch_links(self, target: QWidget) -> None:
        """A caption's glossary term, tapped, opens its card (the tour's own line under the caption stays)."""
        label = _inside(target, QLabel)
        if label is None or id(label) in self._labels or not label.textInteractionFlags() & Qt.LinksAccessibleByMouse:
            return
        self._labels.add(id(label))
        label.linkActivated.connect(self._on_link)

    def _on_link(self, link: str) -> None:
        if not link.startswith("term:"):
            return
        from gui.tour import glossary
        term = glossary.BY_KEY.get(link.split(":", 1)[1])
        if term is None:
            return
        at = self._start.toPoint()
        QTimer.singleShot(0, lambda: self.card.open_at(
            f"{glossary.term_name(term)}: {glossary.explanation(term)}", at))


def install_touch(host: QWidget, kiosk: bool = False, force: bool = False) -> TouchRouter | None:
    """Turn touch mode on for ``host`` (a top-level widget) when ``touch_mode_wanted(kiosk, force)``: finger-sized
    targets (``gui.kiosk.touch_targets``) and the ``TouchRouter``. Returns the router, or None when touch mode is off
    (nothing is changed then). Installing twice returns the first router."""
    existing = getattr(host, "touch_router", None)
    if existing is not None:
        return existing
    if not touch_mode_wanted(kiosk, force):
        return None
    from gui.kiosk.touch_targets import TargetSizer
    host.touch_sizer = TargetSizer(host)
    host.touch_router = TouchRouter(host)
    if kiosk:
        from gui.kiosk.touch_targets import presets_only
        presets_only(host)
    log.info("touch mode on (kiosk: %s, --touch: %s, touch screen present: %s)", bool(kiosk), bool(force),
             touch_screen_present())
    return host.touch_router
