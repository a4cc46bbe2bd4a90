"""Presenter keys (what a clicker sends) and ``--presenter`` mode (large captions, fewer controls).

``Presenter(window).install()`` adds the keys to ``window.actions`` (taking each key away from any other action
that had it, so no shortcut is ambiguous). What each key does depends on the page shown:

| key | tour shown | Live page shown |
|---|---|---|
| → / PageDown | next section | one trip (exactly one forward pass) |
| Space | next section | run / pause |
| ← / PageUp | previous section | back to the tour |
| Home, 1–9, 0 | first section, sections 1–10 (shows the tour) | same |
| B | black screen; any key or click brings the picture back | same |
| F | fullscreen on the chosen screen, and back | same |
| + / − | tour animation faster / slower | trip on screen shorter / longer |
| R | reset the run | same |

Without a hosted tour (``window.tour`` absent) every key acts as on the Live page.
``install(presenter_mode=True)`` also hides the controls a speaker does not use and enlarges the captions.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QWidget

from gui.kiosk import ScreenKeeper, tour_of

log = logging.getLogger(__name__)

SPEED_FACTOR = 1.5  # one press of + or − changes the pace by this factor
PRESENTER_CAPTION_PX = 36
PRESENTER_READOUT_PX = 34
PRESENTER_ANSWER_PX = 38
# Widgets (MainWindow attribute names) a speaker with a clicker does not need.
PRESENTER_HIDDEN = ("prompt_caption", "pause_button", "step_button", "reset_button", "lang_button")

KEYS = {
    "next_beat": ("Right", "PgDown"),
    "space": ("Space",),
    "prev_beat": ("Left", "PgUp"),
    "first_section": ("Home",),
    "blank": ("B",),
    "faster": ("+", "="),
    "slower": ("-", "_"),
    "live_page": ("L",),
    "tour_page": ("T",),
}


class BlankOverlay(QWidget):
    """A black cover over the whole window (B). Any key or click while it is up only takes it down."""

    def __init__(self, window: QWidget):
        super().__init__(window)
        self.setObjectName("blankOverlay")
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet("QWidget#blankOverlay { background: #000000; }")
        self.window_ = window
        window.installEventFilter(self)
        self.hide()

    def show_blank(self) -> None:
        self.setGeometry(self.window_.rect())
        self.show()
        self.raise_()
        QApplication.instance().installEventFilter(self)

    def hide_blank(self) -> None:
        QApplication.instance().removeEventFilter(self)
        self.hide()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if obj is self.window_ and kind == QEvent.Resize:
            self.setGeometry(self.window_.rect())
            return False
        if not self.isVisible():
            return False
        if kind in (QEvent.KeyPress, QEvent.ShortcutOverride, QEvent.MouseButtonPress, QEvent.TouchBegin):
            if kind == QEvent.KeyPress and event.isAutoRepeat():
                return True
            event.accept()
            if kind != QEvent.ShortcutOverride:  # the KeyPress that follows an accepted override restores
                self.hide_blank()
            return True
        return False


class Presenter(QObject):
    """Clicker keys on ``window`` (a ``MainWindow``); see the module's table.

    Args:
        window: the main window; its ``actions`` dict receives the new actions.
        screens: the ``ScreenKeeper`` for F (kiosk passes its own); default: one for screen ``screen``.
    """

    def __init__(self, window, screens: ScreenKeeper | None = None, screen: int = 0):
        super().__init__(window)
        self.window = window
        self.screens = screens or ScreenKeeper(window, screen)
        self.blank = BlankOverlay(window)
        self.presenter_mode = False
        self._caption_filter_installed = False

    # ---- install ----------------------------------------------------------------------------------------------
    def install(self, presenter_mode: bool = False) -> "Presenter":
        w = self.window
        slots = {"next_beat": self.next_beat, "space": self.space, "prev_beat": self.prev_beat,
                 "first_section": lambda: self.jump(0), "blank": self.toggle_blank,
                 "faster": self.faster, "slower": self.slower, "live_page": self.show_live,
                 "tour_page": self._show_tour}
        for name, keys in KEYS.items():
            self._add(name, [QKeySequence(k) for k in keys], slots[name])
        for digit in range(10):
            index = 9 if digit == 0 else digit - 1
            self._add(f"section_{digit}", [QKeySequence(str(digit))], lambda _=False, i=index: self.jump(i))
        fullscreen = w.actions.get("fullscreen")
        if fullscreen is not None and getattr(w, "kiosk_controller", None) is None:
            fullscreen.triggered.disconnect()
            fullscreen.triggered.connect(self.screens.toggle)
        w.presenter = self
        if presenter_mode:
            self.enter_presenter_mode()
        return self

    def _add(self, name: str, sequences: list[QKeySequence], slot) -> None:
        w = self.window
        mine = {s.toString() for s in sequences}
        for other_name, other in w.actions.items():  # one action per key, or Qt calls it ambiguous
            keep = [s for s in other.shortcuts() if s.toString() not in mine]
            if len(keep) != len(other.shortcuts()):
                log.debug("presenter: %s takes %s from %s", name, mine, other_name)
                other.setShortcuts(keep)
        action = QAction(w)
        action.setObjectName(f"presenter_{name}")
        action.setShortcuts(sequences)
        action.setShortcutContext(Qt.WindowShortcut)
        action.triggered.connect(slot)
        w.addAction(action)
        w.actions[name] = action

    # ---- what the keys do ----------------------------------------------------------------------------------
    def tour_shown(self) -> bool:
        tour = tour_of(self.window)
        if tour is None:
            return False
        visible = getattr(self.window, "is_tour_visible", None)
        return bool(visible()) if callable(visible) else tour.isVisible()

    def _show_tour(self):
        tour = tour_of(self.window)
        if tour is not None and not self.tour_shown():
            show = getattr(self.window, "show_tour", None)
            if callable(show):
                show()
        return tour

    def show_live(self) -> None:
        """The Live page (L): the clicker's way back from the tour to the running model."""
        show = getattr(self.window, "show_live", None)
        if callable(show):
            show()

    def next_beat(self) -> None:
        if self.tour_shown():
            tour_of(self.window).next()
        else:
            self.window.step_once()

    def space(self) -> None:
        if self.tour_shown():
            tour_of(self.window).next()
        else:
            self.window.toggle_run()

    def prev_beat(self) -> None:
        if self.tour_shown():
            tour_of(self.window).prev()
        else:
            self._show_tour()

    def jump(self, index: int) -> None:
        """Show the tour at section ``index`` (0-based, clamped)."""
        tour = self._show_tour()
        if tour is not None:
            tour.goto(min(index, tour.section_count - 1))

    def toggle_blank(self) -> None:
        if self.blank.isVisible():
            self.blank.hide_blank()
        else:
            self.blank.show_blank()

    def is_blank(self) -> bool:
        return self.blank.isVisible()

    def faster(self) -> None:
        self._pace(1.0 / SPEED_FACTOR)

    def slower(self) -> None:
        self._pace(SPEED_FACTOR)

    def _pace(self, factor: float) -> None:
        """``factor`` > 1: slower. Live page: the trip-on-screen slider; tour: the tour's animation clock."""
        if self.tour_shown():
            clock = tour_of(self.window).clock
            clock.slow_down(SPEED_FACTOR) if factor > 1 else clock.speed_up(SPEED_FACTOR)
            log.info("tour animation speed %.2f", clock.speed)
            return
        slider = getattr(self.window, "speed_slider", None)
        if slider is not None:
            slider.setValue(int(round(slider.value() * factor)))  # clamped to its range by the slider
        else:
            self.window.scene.trip_duration_s *= factor

    # ---- presenter mode -------------------------------------------------------------------------------------
    def enter_presenter_mode(self) -> None:
        """Hide what a speaker does not need, enlarge the captions, keep keyboard focus off text fields."""
        w = self.window
        self.presenter_mode = True
        for name in PRESENTER_HIDDEN:
            widget = getattr(w, name, None)
            if widget is not None:
                widget.hide()
        box = getattr(w, "prompt_box", None)
        if box is not None:
            box.setFocusPolicy(Qt.ClickFocus)  # a clicker's Space must not type into the prompt
        view = getattr(w, "view", None)
        if view is not None:
            view.setFocusPolicy(Qt.StrongFocus)
            view.setFocus()
        self._enlarge()
        tour = tour_of(w)
        if tour is not None and not self._caption_filter_installed:
            tour.installEventFilter(self)  # the tour resets its fonts on a language change
            self._caption_filter_installed = True

    def _enlarge(self) -> None:
        w = self.window
        for name, px in (("readout", PRESENTER_READOUT_PX), ("answer", PRESENTER_ANSWER_PX)):
            widget = getattr(w, name, None)
            if widget is not None:
                font = widget.font()
                font.setPixelSize(px)
                widget.setFont(font)
        tour = tour_of(w)
        caption = getattr(tour, "caption", None) if tour is not None else None
        if caption is not None:
            font = caption.font()
            font.setPixelSize(PRESENTER_CAPTION_PX)
            caption.setFont(font)
            caption.setMinimumHeight(int(PRESENTER_CAPTION_PX * 1.4 * 3 + 12))

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.LanguageChange and self.presenter_mode:
            QTimer.singleShot(0, self._enlarge)
        return False
