"""Kiosk mode: fullscreen on one screen, an attract loop when nobody touches it, locked down for visitors.

``KioskController(window, settings).install()`` does it all to a built ``MainWindow``; nothing in the window
itself knows about kiosks. The pieces, each usable alone:

- ``ScreenKeeper``: fullscreen exactly on ``QGuiApplication.screens()[N]``, again after F, and on a remaining
  screen when that one is unplugged (``screenRemoved``).
- ``IdleWatcher``: an application-wide event filter; ``idle`` after S seconds without a key, click, touch or
  wheel; while ``waking`` is set, the first input is swallowed and ``woken`` is emitted instead.
- ``AttractLoop``: plays the tour by itself (one section every ``section_seconds``) with a real decode on the
  Live page every few sections; with no tour in the window, live decodes one after another.
- the lock: the window refuses to close (Escape, Alt+F4, a window manager's close) unless the operator chord
  (default Ctrl+Alt+Shift+Q) or a signal (SIGTERM/SIGINT, ``close_for_good``) asks; no context menus, no links
  that open a browser, short typed prompts.

Window-manager shortcuts that never reach the app (Alt+Tab, a Super key) can only be turned off by the kiosk's
session itself (a single-app compositor such as cage, or a WM without them); the app stays on top and
fullscreen and takes focus back when it loses it.
"""

from __future__ import annotations

import itertools
import logging
import math

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from gui.live.host import LiveHost
from gui.settings import Settings

log = logging.getLogger(__name__)

KIOSK_PROMPT_CHARS = 200  # what a visitor may type
ATTRACT_NEW_TOKENS = 24  # a live decode in the attract loop is short: people walk past
LIVE_EVERY_SECTIONS = 3  # a live decode after every this many tour sections
LIVE_MAX_S = 60.0  # a live decode that takes longer than this is cut short
AFTER_LIVE_S = 2.5  # the finished answer stays on screen this long
REFOCUS_MS = 300

INPUT_EVENTS = frozenset({QEvent.KeyPress, QEvent.ShortcutOverride, QEvent.MouseButtonPress,
                          QEvent.MouseButtonDblClick, QEvent.TouchBegin, QEvent.Wheel, QEvent.TabletPress})


def key_matches(event, sequence: QKeySequence) -> bool:
    """True if the key event is the (single-chord) ``sequence``."""
    if sequence.isEmpty():
        return False
    mods = event.modifiers() & (Qt.ShiftModifier | Qt.ControlModifier | Qt.AltModifier | Qt.MetaModifier)
    combo = sequence[0]
    return combo.key() == Qt.Key(event.key()) and combo.keyboardModifiers() == mods


# ---- screens --------------------------------------------------------------------------------------------------
class ScreenKeeper(QObject):
    """Keeps ``top`` (a top-level widget) fullscreen on screen ``index`` (or the primary screen if there is no
    such screen)."""

    def __init__(self, top: QWidget, index: int = 0, keep_fullscreen: bool = False):
        super().__init__(top)
        self.window = top  # any top-level widget: only placed and made fullscreen
        self.index = int(index)
        self.keep_fullscreen = keep_fullscreen  # kiosk: F re-places instead of leaving fullscreen
        self._screen = None
        app = QGuiApplication.instance()
        app.screenRemoved.connect(self._on_screen_removed)

    def target_screen(self):
        screens = QGuiApplication.screens()
        if self._screen is not None and self._screen in screens:
            return self._screen
        if 0 <= self.index < len(screens):
            return screens[self.index]
        if self.index:
            log.warning("no screen %s (there are %s); using the primary screen", self.index, len(screens))
        return QGuiApplication.primaryScreen()

    def fullscreen(self) -> None:
        """Fullscreen on the target screen (moves the window there first)."""
        screen = self.target_screen()
        if screen is None:
            self.window.showFullScreen()
            return
        self._screen = screen
        self.window.winId()  # make sure the native window (QWindow) exists
        handle = self.window.windowHandle()
        if handle is not None and handle.screen() is not screen:
            handle.setScreen(screen)
        if self.window.isFullScreen():
            self.window.showNormal()
        self.window.setGeometry(screen.geometry())
        self.window.showFullScreen()
        log.info("fullscreen on screen %s (%s, %s)", QGuiApplication.screens().index(screen), screen.name(),
                 screen.geometry().getRect())

    def toggle(self) -> None:
        """F: fullscreen on the chosen screen and back (in kiosk mode it only re-places the window)."""
        if self.window.isFullScreen() and not self.keep_fullscreen:
            self.window.showNormal()
        else:
            self.fullscreen()

    def _on_screen_removed(self, screen) -> None:
        if screen is not self._screen:
            return
        log.warning("screen %s was removed; moving to a remaining screen", screen.name())
        self._screen = None
        self.index = 0
        if self.window.isFullScreen() or self.keep_fullscreen:
            QTimer.singleShot(0, self.fullscreen)


# ---- idle -----------------------------------------------------------------------------------------------------
class IdleWatcher(QObject):
    """Emits ``idle`` after ``seconds`` without input anywhere in the application.

    While ``waking`` is True (the attract loop plays), the first input is swallowed (it does not press the
    button under the finger) and ``woken`` is emitted; ``exempt`` is a key sequence that is never swallowed
    (the operator chord). In kiosk mode (``lock``) context menus are swallowed too.
    """

    idle = Signal()
    woken = Signal()

    def __init__(self, seconds: float, parent: QObject | None = None, lock: bool = False):
        super().__init__(parent)
        self.waking = False
        self.lock = lock
        self.exempt = QKeySequence()
        self._timer = QTimer(self)
        self._timer.setObjectName("idleTimer")
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.idle)
        self.set_seconds(seconds)

    def set_seconds(self, seconds: float) -> None:
        """Idle time in seconds, held to 0.1 s .. one day (QTimer takes at most 2**31 - 1 ms); nan, inf or a
        non-number keeps the current interval and logs a WARNING (callers check their values first)."""
        try:
            value = float(seconds)
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            log.warning("kiosk: idle time %r is not a number of seconds; keeping %.1f s", seconds,
                        self._timer.interval() / 1000)
            return
        self._timer.setInterval(int(min(86_400.0, max(0.1, value)) * 1000))

    def start(self) -> None:
        QApplication.instance().installEventFilter(self)
        self._timer.start()

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self)
        self._timer.stop()

    def restart(self) -> None:
        """Count the idle time again from now."""
        self._timer.start()

    def touched(self) -> bool:
        """A touch that ``gui.kiosk.touch`` took before Qt made mouse events of it: input, as ``eventFilter`` counts it.
        True when it woke the exhibit (the caller drops that touch: it presses nothing)."""
        self._timer.start()
        if not self.waking:
            return False
        self.waking = False
        self.woken.emit()
        return True

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if self.lock and kind == QEvent.ContextMenu:
            return True
        if kind not in INPUT_EVENTS:
            return False
        if kind in (QEvent.KeyPress, QEvent.ShortcutOverride) and key_matches(event, self.exempt):
            return False
        if kind == QEvent.ShortcutOverride and not self.waking:
            return False  # the KeyPress (or the shortcut) that follows counts
        self._timer.start()
        if self.waking:
            self.waking = False
            event.accept()
            self.woken.emit()
            return True
        return False


# ---- the attract loop -----------------------------------------------------------------------------------------
class AttractLoop(QObject):
    """Plays the tour by itself, with a real decode on the Live page every ``LIVE_EVERY_SECTIONS`` sections.

    ``beat(str)`` is emitted on every step: ``"section N"`` (0-based) or ``"live"``; tests and the soak
    benchmark count them.
    """

    beat = Signal(str)

    def _next_prompt(self) -> str:
        """The settings' attract prompts in turn, else the presets of the model writing now (they follow the
        language: the poetry model's first lines in Chinese, the code model's prompts in English)."""
        if self._fixed_prompts is not None:
            return next(self._fixed_prompts)
        presets = self.host.presets() or ["def fibonacci(n):"]
        self._preset_cursor += 1
        return presets[(self._preset_cursor - 1) % len(presets)]

    def __init__(self, host: LiveHost, settings: Settings, prompts: list[str] | None = None):
        super().__init__(host)
        self.host = host  # the window as a ``LiveHost``: the session, the tour, run/reset, nothing else
        self.settings = settings
        self._fixed_prompts = itertools.cycle(settings.prompts or prompts) if (settings.prompts or prompts) else None
        self._preset_cursor = 0
        self.running = False
        self.live_runs = 0
        self._sections_since_live = 0
        self._phase = "tour"
        self._saved_tokens: int | None = None
        self._timer = QTimer(self)
        self._timer.setObjectName("attractTimer")
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._next_beat)
        self._live_guard = QTimer(self)
        self._live_guard.setObjectName("attractLiveGuard")
        self._live_guard.setSingleShot(True)
        self._live_guard.timeout.connect(self._end_live)

    def start(self) -> None:
        if self.running:
            return
        log.info("attract loop starts")
        self.running = True
        w = self.host
        if w.lang != self.settings.language:
            w.set_language(self.settings.language)
        w.reset()
        self._saved_tokens = w.main_new_tokens
        w.main_new_tokens = ATTRACT_NEW_TOKENS
        w.session_finished.connect(self._on_session_finished)
        self._sections_since_live = 0
        self._show_section(0)

    def stop(self) -> None:
        if not self.running:
            return
        log.info("attract loop stops")
        self.running = False
        self._timer.stop()
        self._live_guard.stop()
        try:
            self.host.session_finished.disconnect(self._on_session_finished)
        except (RuntimeError, TypeError):
            pass
        self.host.reset()
        if self._saved_tokens is not None:
            self.host.main_new_tokens = self._saved_tokens
            self._saved_tokens = None

    # ---- beats ----------------------------------------------------------------------------------------------
    def _show_section(self, index: int) -> None:
        self._phase = "tour"
        self.host.show_tour()
        tour = self.host.tour
        tour.goto(index)
        self.beat.emit(f"section {tour.current_index}")
        self._timer.start(int(self.settings.section_seconds * 1000))

    def _next_beat(self) -> None:
        if not self.running:
            return
        tour = self.host.tour
        self._sections_since_live += 1
        live_ok = self.host.engine_ready()
        if live_ok and self._sections_since_live >= LIVE_EVERY_SECTIONS:
            self._go_live()
            return
        at_end = tour.current_index >= tour.section_count - 1
        self._show_section(0 if at_end else tour.current_index + 1)

    def _go_live(self) -> None:
        w = self.host
        self._sections_since_live = 0
        if not w.engine_ready():  # no model (yet): keep to the tour, or wait and try again
            self._phase = "tour"
            self._timer.start(int(self.settings.section_seconds * 1000))
            return
        self._phase = "live"
        w.show_live()
        w.reset()
        w.session.set_prompt(self._next_prompt())
        w.run()
        self.live_runs += 1
        self.beat.emit("live")
        self._live_guard.start(int(LIVE_MAX_S * 1000))

    def _on_session_finished(self) -> None:
        if self.running and self._phase == "live":
            self._live_guard.stop()
            self._phase = "live_done"
            self._timer.start(int(AFTER_LIVE_S * 1000))

    def _end_live(self) -> None:
        if self.running and self._phase == "live":
            log.info("attract: live decode cut short after %.0f s", LIVE_MAX_S)
            self.host.pause()
            self._phase = "live_done"
            self._timer.start(0)


# ---- the controller -------------------------------------------------------------------------------------------
class KioskController(QObject):
    """Everything kiosk mode does to ``window``; ``install()`` applies it, ``quit()`` is the only way out.

    Args:
        window: a built ``MainWindow`` (shown or not).
        settings: idle time, screen, operator chord, language, trip seconds, attract prompts.
        attract: start the idle watch and the attract loop (False: only lock down and place the window).
    """

    def __init__(self, window, settings: Settings, attract: bool = True):
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.attract_enabled = attract
        self.may_close = False
        self.screens = ScreenKeeper(window, settings.screen, keep_fullscreen=True)
        self.idle = IdleWatcher(settings.idle_seconds, self, lock=True)
        self.idle.exempt = QKeySequence(settings.operator_chord)
        self.attract = AttractLoop(window, settings)
        self.idle.idle.connect(self._on_idle)
        self.idle.woken.connect(self._on_woken)
        from gui.kiosk.invite import InviteBanner  # "Touch to start / 触摸开始" while the attract loop plays
        self.invite = InviteBanner(window, self.idle)
        self._refocus = QTimer(self)
        self._refocus.setObjectName("kioskRefocus")
        self._refocus.setSingleShot(True)
        self._refocus.timeout.connect(self._take_focus)
        self.operator_action: QAction | None = None

    def install(self) -> KioskController:
        w = self.window
        w.kiosk_controller = self
        w.setWindowFlag(Qt.WindowStaysOnTopHint, True)
        w.setWindowFlag(Qt.FramelessWindowHint, True)
        w.installEventFilter(self)
        action = QAction(w)
        action.setObjectName("operatorQuit")
        action.setShortcut(QKeySequence(self.settings.operator_chord))
        action.setShortcutContext(Qt.ApplicationShortcut)
        action.triggered.connect(self.quit)
        w.addAction(action)
        self.operator_action = action
        w.actions["operator_quit"] = action
        fullscreen = w.actions.get("fullscreen")
        if fullscreen is not None:  # F re-places the window on its screen, never leaves fullscreen
            fullscreen.triggered.disconnect()
            fullscreen.triggered.connect(self.screens.toggle)
        self._lock_widgets()
        code_view = getattr(w, "code_view", None)
        if code_view is not None:  # the engine's source: only where the operator's settings file asks for it
            code_view.set_allowed(bool(getattr(self.settings, "code_view", False)))
        if self.attract_enabled:
            self.idle.start()
        log.info("kiosk: screen %s, idle %.1f s, operator chord %s, language %s", self.settings.screen,
                 self.settings.idle_seconds, self.settings.operator_chord, self.settings.language)
        return self

    def show(self) -> None:
        """Show the window fullscreen on its screen."""
        self.screens.fullscreen()

    def _lock_widgets(self) -> None:
        w = self.window
        w.prompt_box.lineEdit().setMaxLength(KIOSK_PROMPT_CHARS)
        w.tour.prompt_edit.setMaxLength(KIOSK_PROMPT_CHARS)
        for label in w.findChildren(QLabel):
            label.setOpenExternalLinks(False)

    # ---- idle and waking ------------------------------------------------------------------------------------
    def _on_idle(self) -> None:
        if not self.attract.running:
            self.idle.waking = True
            self.attract.start()

    def _on_woken(self) -> None:
        """A visitor: back to the start, in the kiosk's language."""
        self.attract.stop()
        w = self.window
        if w.lang != self.settings.language:
            w.set_language(self.settings.language)
        w.show_tour()
        w.tour.goto(0)
        self.idle.restart()

    def is_attracting(self) -> bool:
        return self.attract.running

    # ---- the lock -------------------------------------------------------------------------------------------
    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is not self.window:
            return False
        kind = event.type()
        if kind == QEvent.Close and not self.may_close:
            log.info("kiosk: close refused (use the operator chord)")
            event.ignore()
            return True
        if kind == QEvent.KeyPress and event.key() == Qt.Key_Escape:
            return True
        if kind == QEvent.WindowDeactivate and not self.may_close:
            self._refocus.start(REFOCUS_MS)
        return False

    def _take_focus(self) -> None:
        if not self.may_close and self.window.isVisible():
            self.window.raise_()
            self.window.activateWindow()

    def quit(self) -> None:
        """The operator chord (or a signal): stop everything and close the window for good."""
        log.info("kiosk: leaving")
        self.may_close = True
        self.release()
        self.window.close()

    def release(self) -> None:
        """Stop the idle watch, the attract loop and the refocusing (the window may close after this)."""
        self.may_close = True
        self.idle.stop()
        self.invite.end()
        self._refocus.stop()
        if self.attract.running:
            self.attract.stop()


def close_for_good(window) -> None:
    """Close ``window`` even in kiosk mode (SIGTERM, SIGINT)."""
    controller = window.kiosk_controller
    if controller is not None:
        controller.quit()
    else:
        window.close()
