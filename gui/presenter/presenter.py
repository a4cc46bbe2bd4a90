"""Presenter keys (what a clicker sends) and ``--presenter`` mode (large captions, fewer controls).

``Presenter(window).install()`` adds the keys to ``window.actions`` (taking each key away from any other action
that had it, so no shortcut is ambiguous). What each key does depends on the page shown:

The clicker walks one deck (``gui.presenter.deck``: by default tour pages 1–15, the Live page, the game, the terms,
the end):

| key | tour shown | Live page shown |
|---|---|---|
| → / PageDown | next item of the deck (on the game: press, until a sentence is finished) | one trip (exactly one forward pass), until the answer is complete; then the next item |
| Space | same as → | run / pause; once the answer is complete, the next item |
| ← / PageUp | previous item of the deck | previous item of the deck |
| Home | first item of the deck | same |
| 1–9, 0 | tour sections 1–10 | same |
| B | black screen; any key or click brings the picture back | same |
| F | fullscreen on the chosen screen, and back | same |
| + / − | tour pace faster / slower (a line on screen says the pace) | trip on screen shorter / longer (said on screen) |
| R | reset the run | same |
| V | record this page for 10 s as an MP4 into the videos folder (``gui.presenter.record_key``; a line says where) | same |
| C | the code view: the engine's own source of this page's step (``gui.code_view``), and back | the code view in the details view, following the trip |
| H / F1 | the help overlay: every key above on one card (``gui.presenter.presenter_help``); the next key closes it | same |

The window is a ``gui.live.host.LiveHost``: the presenter changes the Live session through ``window.session`` and
calls only the window actions that interface lists.
Keys reach the presenter whatever widget has the focus, except while a text field is being edited
(``gui.kiosk.focus.FocusGuard``: Enter or Esc hands the focus back).
``install(presenter_mode=True)`` also hides the controls a speaker does not use and enlarges the captions.
"""  # noqa: E501 - the key table is one row per key, as the README shows it

from __future__ import annotations

import logging
import math

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QFont, QKeySequence
from PySide6.QtWidgets import QLabel, QWidget

from animations.typescale import TypeScale, set_role
from gui.kiosk.focus import FocusGuard
from gui.kiosk.kiosk import ScreenKeeper
from gui.live.state import TRIP_SECONDS_RANGE
from gui.presenter.cover import Cover
from gui.presenter.deck import Deck, deck_or_default, deck_problem
from gui.presenter.presenter_help import KeysOverlay

log = logging.getLogger(__name__)

# + and − step along these tables: about 2^(1/4) apart (a fourth of a doubling), rounded to values a speaker
# can say, and symmetric in log scale, so that − then + always lands back where it was (1.00 included).
PACES = (0.25, 0.3, 0.35, 0.42, 0.5, 0.6, 0.7, 0.84, 1.0, 1.19, 1.41, 1.68, 2.0)  # tour animation speed, ×
TRIP_SECONDS = (0.25, 0.3, 0.35, 0.42, 0.5, 0.6, 0.7, 0.84, 1.0, 1.19, 1.41, 1.68, 2.0, 2.38, 2.83)  # s on screen
PACE_NOTE_MS = 1800  # how long the pace line stays on screen after the last + or −
DECK_NOTE_MS = 8000  # how long a bad deck setting is said on screen at the start of presenter mode
# Widgets (MainWindow attribute names) a speaker with a clicker does not need.

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
    "record_page": ("V",),
    "keys_help": ("H", "F1"),
    "code_view": ("C",),
}


class BlankOverlay(Cover):
    """A black cover over the whole window (B). Any key or click while it is up only takes it down."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("blankOverlay")
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet("QWidget#blankOverlay { background: #000000; }")

    def show_blank(self) -> None:
        self.cover()

    def hide_blank(self) -> None:
        self.uncover()


class Presenter(QObject):
    """Clicker keys on ``window`` (a ``MainWindow``); see the module's table.

    Args:
        window: the main window; its ``actions`` dict receives the new actions.
        screens: the ``ScreenKeeper`` for F (kiosk passes its own); default: one for screen ``screen``.
    """

    def __init__(self, window, screens: ScreenKeeper | None = None, screen: int = 0, deck: str | None = None):
        super().__init__(window)
        self.window = window
        self.screens = screens or ScreenKeeper(window, screen)
        self.blank = BlankOverlay(window)
        self.keys_help = KeysOverlay(window, window.font_family)
        self.deck = Deck(window, deck_or_default(deck))
        self.deck_problem = deck_problem(deck)  # said on screen once presenter mode starts (and logged)
        self.deck_text = str(deck or "")[:60]
        self.pace_note = PaceNote(window)
        self.focus_guard = FocusGuard(self)
        self.presenter_mode = False
        self.recorder = None  # a gui.presenter.record_key.PageRecorder, made on the first V
        self._caption_filter_installed = False

    # ---- install ----------------------------------------------------------------------------------------------
    def install(self, presenter_mode: bool = False) -> Presenter:
        w = self.window
        slots = {"next_beat": self.next_beat, "space": self.space, "prev_beat": self.prev_beat,
                 "first_section": self.first, "blank": self.toggle_blank,
                 "faster": self.faster, "slower": self.slower, "live_page": self.show_live,
                 "tour_page": self._show_tour, "record_page": self.record_page,
                 "keys_help": self.keys_help.toggle, "code_view": self.toggle_code}
        for name, keys in KEYS.items():
            self._add(name, [QKeySequence(k) for k in keys], slots[name])
        for digit in range(10):
            index = 9 if digit == 0 else digit - 1
            self._add(f"section_{digit}", [QKeySequence(str(digit))], lambda _=False, i=index: self.jump(i))
        fullscreen = w.actions.get("fullscreen")
        if fullscreen is not None and w.kiosk_controller is None:
            fullscreen.triggered.disconnect()
            fullscreen.triggered.connect(self.screens.toggle)
        w.presenter = self
        self.focus_guard.install()
        w.destroyed.connect(self.focus_guard.uninstall)
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
        return bool(self.window.is_tour_visible())

    def _show_tour(self):
        tour = self.window.tour
        if not self.tour_shown():
            self.window.show_tour()
        return tour

    def show_live(self) -> None:
        """The Live page (L): the clicker's way back from the tour to the running model."""
        self.window.show_live()

    def _deck_ready(self) -> bool:
        return True  # the window hosts the tour (``LiveHost.tour``): the deck walks it and the Live page

    def next_beat(self) -> None:
        """→ / PageDown: the next beat of the deck. The game presses until a sentence is finished on this visit;
        the Live page takes one trip until its answer is complete; then the deck moves on."""
        if not self._deck_ready():
            self.window.step_once()
            return
        if self.tour_shown():
            tour = self.window.tour
            if tour.pages_key() == "game" and not self.deck.game_done():
                tour.game_press()
                return
            self._deck_next()
            return
        self.deck.sync()
        if self.deck.live_done():
            self._deck_next()
        else:
            self.window.step_once()

    def _deck_next(self) -> None:
        if not self.deck.next():  # the last item: say so, rather than do nothing
            self.pace_note.say(QCoreApplication.translate(
                "Presenter", "The end of the deck: ← goes back, Home to its start."))

    def space(self) -> None:
        """Space: as → on the tour; run / pause on the Live page, the next item once its answer is complete."""
        if not self._deck_ready():
            self.window.toggle_run()
            return
        if self.tour_shown():
            self.next_beat()
            return
        self.deck.sync()
        if self.deck.live_done():
            self._deck_next()
        else:
            self.window.toggle_run()

    def prev_beat(self) -> None:
        """← / PageUp: the previous item of the deck."""
        if not self._deck_ready():
            self._show_tour()
            return
        self.deck.prev()

    def first(self) -> None:
        """Home: the first item of the deck."""
        if self._deck_ready():
            self.deck.first()
        else:
            self.jump(0)

    def jump(self, index: int) -> None:
        """Show the tour at section ``index`` (0-based, clamped)."""
        tour = self._show_tour()
        if tour is not None:
            tour.goto(min(index, tour.section_count - 1))

    def toggle_code(self) -> None:
        """C: the engine's own source of the page on screen (``gui.code_view``), and back."""
        view = getattr(self.window, "code_view", None)
        if view is not None:
            view.toggle()

    def record_page(self) -> None:
        """V: record the page on screen as a clip in the user's videos folder (``gui.presenter.record_key``); not in a
        kiosk."""
        if self.window.kiosk_controller is not None:
            return  # a visitor must not fill the kiosk's disk
        from gui.presenter.record_key import PageRecorder
        self.recorder = self.recorder or PageRecorder(self)
        self.recorder.record()

    def toggle_blank(self) -> None:
        if self.blank.isVisible():
            self.blank.hide_blank()
        else:
            self.blank.show_blank()

    def is_blank(self) -> bool:
        return self.blank.isVisible()

    def faster(self) -> None:
        self._pace(+1)

    def slower(self) -> None:
        self._pace(-1)

    def _pace(self, direction: int) -> None:
        """``direction`` +1: faster (+), −1: slower (−). Tour: the tour's animation speed, one step of ``PACES``;
        Live page: the seconds one trip takes on screen, one step of ``TRIP_SECONDS``. Says the new value on
        screen for ``PACE_NOTE_MS``."""
        tr = QCoreApplication.translate
        if self.tour_shown():
            clock = self.window.tour.clock
            clock.speed = step_table(PACES, clock.speed, direction)
            log.info("tour animation speed %.2f", clock.speed)
            self.pace_note.say(tr("Presenter", "pace {x}×").format(x=f"{clock.speed:.2f}"))
            return
        session = self.window.session
        lo, hi = TRIP_SECONDS_RANGE
        session.set_trip_seconds(min(hi, max(lo, step_table(TRIP_SECONDS, session.trip_seconds, -direction))))
        seconds = session.trip_seconds
        self.pace_note.say(tr("Presenter", "one trip on screen: {s} s").format(s=f"{seconds:.2f}"))

    # ---- presenter mode -------------------------------------------------------------------------------------
    def enter_presenter_mode(self) -> None:
        """Hide what a speaker does not need, enlarge the captions, keep keyboard focus off text fields."""
        w = self.window
        self.presenter_mode = True
        for widget in w.presenter_hidden():
            widget.hide()
        w.prompt_box.setFocusPolicy(Qt.ClickFocus)  # a clicker's Space must not type into the prompt
        w.view.setFocusPolicy(Qt.StrongFocus)
        w.view.setFocus()
        self.focus_guard.presenter = True  # a click anywhere else takes the focus out of a text field
        self._enlarge()
        tour = w.tour
        if self._deck_ready():
            self.deck.first()  # --presenter opens on the deck's first item (by default tour page 1)
        if self.deck_problem:
            self.pace_note.say(QCoreApplication.translate(
                "Presenter", "Deck setting “{deck}” not understood: using the default deck (the log says why).")
                .format(deck=self.deck_text), ms=DECK_NOTE_MS)
        if not self._caption_filter_installed:
            tour.installEventFilter(self)  # the tour resets its fonts on a language change
            w.installEventFilter(self)  # the caption's size follows the window's height
            self._caption_filter_installed = True

    def _enlarge(self) -> None:
        w = self.window
        # the Live page: every text one type step larger (``TypeScale(presenter=True)``), its hierarchy kept and
        # its sizes following the window's height; fixed pixel sizes here (34 px readout, 38 px answer) were too
        # large at 720 lines (the readout took two lines and squeezed the stage) and too small at 1080
        w.set_presenter_mode(True)
        w.tour.set_presenter(True)  # the tour's title, caption and controls one type step larger, its hierarchy kept

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if event.type() in (QEvent.LanguageChange, QEvent.Resize) and self.presenter_mode:
            QTimer.singleShot(0, self._enlarge)  # the tour resets its fonts on a language change; sizes follow height
        return False


def step_table(table: tuple[float, ...], value: float, direction: int) -> float:
    """The value one step from ``value`` along ``table`` (ascending): ``direction`` +1 up, −1 down, clamped at
    the ends. A value between entries first snaps to the nearest entry (in log scale)."""
    if value <= 0:
        return table[0]
    nearest = min(range(len(table)), key=lambda i: abs(math.log(table[i] / value)))
    if abs(math.log(table[nearest] / value)) > 1e-3:
        # off the table: the next entry in the asked direction
        if direction > 0:
            above = [i for i, v in enumerate(table) if v > value]
            return table[above[0]] if above else table[-1]
        below = [i for i, v in enumerate(table) if v < value]
        return table[below[-1]] if below else table[0]
    return table[max(0, min(len(table) - 1, nearest + (1 if direction > 0 else -1)))]


class PaceNote(QLabel):
    """A transient line at the top of the window ("pace 1.19×", "one trip on screen: 1.41 s") while + or −
    changes the pace; it hides ``PACE_NOTE_MS`` after the last change."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("paceNote")
        set_role(self, "readout")
        self.setAttribute(Qt.WA_TransparentForMouseEvents, True)
        self.setAlignment(Qt.AlignCenter)
        self.setStyleSheet("QLabel#paceNote { background: rgba(15, 20, 25, 225); color: #ffc94a; "
                           "border: 2px solid #ffc94a; border-radius: 10px; padding: 6px 18px; }")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.window_ = parent  # placed over it: only its size is read
        self.hide()

    def say(self, text: str, ms: int = PACE_NOTE_MS) -> None:
        font = QFont(self.font())
        font.setPixelSize(max(12, round(TypeScale(max(1, self.window_.height())).px("heading"))))
        self.setFont(font)
        self.setText(text)
        self.setWordWrap(True)
        self.setMaximumWidth(max(200, int(self.window_.width() * 0.9)))
        self.adjustSize()
        self.move(max(0, (self.window_.width() - self.width()) // 2), max(0, self.window_.height() // 5))
        self.show()
        self.raise_()
        self._timer.start(ms)

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._timer.stop()  # hidden with its window (closed): nothing left to time
        super().hideEvent(event)
