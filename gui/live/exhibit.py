"""What a visitor meets under the stage: the answer being written, in large type, and the few big controls.

    ┌ answer (large type: the newest words, the prompt greyed) ┐ [Run] [Pause] [Step] [Reset]
    └──────────────────────────────────────────────────────────┘ [Sharing a table] [Apprentice] [Tear the book]

The three ideas are toggles: "sharing a table" seats 4 requests (1 when off), "the apprentice" guesses 4 tokens
(off: 0), "tear the book" splits the model 2 ways (by pages, TP, where the engine allows it, else by chapters).
Their exact values are on the sliders of the details view (``MainWindow`` keeps both in step). A toggle the
engine cannot honour is disabled, with the reason as its tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QPushButton, QSizePolicy, QWidget

from animations.typescale import set_role
from gui.i18n import tr_window as _tr
from gui.live.seats import AnswerBox

SHARE_SEATS = 4  # seats at the table when "sharing a table" is on
APPRENTICE_GUESSES = 4  # the apprentice's guesses per trip when it is on
TEAR_WAYS = 2  # desks when the book is torn


def idea_button(name: str) -> QPushButton:
    b = QPushButton()
    b.setObjectName(name)
    b.setCheckable(True)
    b.setFocusPolicy(Qt.TabFocus)
    b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
    set_role(b, "big-button")
    return b


class ExhibitRow(QWidget):
    """The big answer (``answer``, a mirror of the seat being read) beside the visitor's controls. The page's
    run/pause/step/reset buttons are placed here (``place_buttons``); the three idea toggles are its own."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.answer = AnswerBox()
        self.answer.setObjectName("bigAnswer")
        set_role(self.answer, "big-answer")
        self.share_button = idea_button("shareButton")
        self.apprentice_button = idea_button("apprenticeButton")
        self.tear_button = idea_button("tearButton")
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(6)
        self.grid.setVerticalSpacing(4)
        for i, b in enumerate((self.share_button, self.apprentice_button, self.tear_button)):
            self.grid.addWidget(b, 1, i * 4, 1, 4)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(10)
        row.addWidget(self.answer, 1)
        row.addLayout(self.grid, 1)

    def place_buttons(self, buttons: list[QPushButton]) -> None:
        """Put run, pause, step and reset in the top row (three columns each, over the ideas' four)."""
        self._actions = list(buttons)
        for b in buttons:
            b.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Preferred)
            set_role(b, "big-button")
        self.set_one_row(False)

    def set_one_row(self, on: bool) -> None:
        """All seven buttons in one row (the details view, where the answer box with its chips is above) or in
        two (beside the big answer)."""
        ideas = [self.share_button, self.apprentice_button, self.tear_button]
        for b in self._actions + ideas:
            self.grid.removeWidget(b)
        if on:  # the buttons shown (presenter mode hides Pause, Step and Reset): no hole where one is hidden
            shown = [b for b in self._actions if not b.isHidden()] + ideas
            for i, b in enumerate(shown):
                self.grid.addWidget(b, 0, i * 12, 1, 12)
            for b in self._actions:
                if b not in shown:
                    self.grid.addWidget(b, 1, 0, 1, 1)  # hidden, out of the row
        else:
            for i, b in enumerate(self._actions):
                self.grid.addWidget(b, 0, i * 3, 1, 3)
            for i, b in enumerate(ideas):
                self.grid.addWidget(b, 1, i * 4, 1, 4)

    def retranslate(self) -> None:
        self.share_button.setText(_tr("Sharing a table"))
        self.share_button.setToolTip(_tr("Batching: {n} requests share every trip of the weights").format(
            n=SHARE_SEATS))
        self.apprentice_button.setText(_tr("The apprentice"))
        self.tear_button.setText(_tr("Tear the book"))
        self.tear_button.setToolTip(_tr("Run the model on {n} worker processes, each with part of every trip's "
                                        "work").format(n=TEAR_WAYS))


class ExhibitActions:
    """The idea toggles and the details toggle of the Live page (a collaborator of ``MainWindow``).

    Args:
        session: the Live session's state (``gui.live.state.SessionState``): the toggles change it and follow it.
        page: the ``LivePage`` (its ``exhibit`` toggles, ``apprentice`` and ``tear`` controls, ``set_details``).
        details_button: the top bar's "Details" toggle.
        model_choice: the top bar's ``ModelChoice`` (its sampling settings show only in the details view).
        scene: the stage (``set_details`` when it has it).
        readout: the ``LiveReadout`` (``gui.live.readout_view``): its extras are written again when the details
            view opens or closes (the why line gives way to the verdict lines there); each time they are
            (``extras_shown``: the apprentice's availability, the tearing in progress), the toggles follow.
    """

    def __init__(self, session, page, details_button, model_choice, scene, readout):
        self.session = session
        self.live_page = page
        self.apprentice = page.apprentice
        self.tear = page.tear
        self.details_button = details_button
        self.model_choice = model_choice
        self.scene = scene
        self.readout = readout
        ex = page.exhibit
        ex.share_button.clicked.connect(self._on_share_clicked)
        ex.apprentice_button.clicked.connect(self._on_apprentice_clicked)
        ex.tear_button.clicked.connect(self._on_tear_clicked)
        self.details_button.toggled.connect(self.set_details)
        session.subscribe(lambda _change: self.sync_ideas(), "batch")
        session.subscribe(lambda _change: self.sync_ideas(), "draft_k")
        readout.extras_shown.connect(self.sync_ideas)

    def set_batch(self, n: int) -> None:
        self.session.set_batch(n)

    def set_draft_k(self, k: int) -> None:
        if self.session.apprentice_available:
            self.session.set_draft_k(k)

    def set_sharding(self, mode: str, n: int) -> None:
        self.tear.set_value(mode, n)  # a request: the engine's answer changes the session's sharding

    def set_details(self, on: bool) -> None:
        """Open (True) or close the details view: every slider, the plots, the token chips, the status line."""
        if self.details_button.isChecked() != bool(on):
            self.details_button.setChecked(bool(on))  # -> toggled -> here again
            return
        self._show_details(bool(on))

    def _show_details(self, on: bool) -> None:
        mc = self.model_choice
        for w in (mc.caption, mc.greedy_box, mc.int8_box, mc.sampling_label):  # the engineer's settings
            w.setVisible(on)
        if hasattr(self.scene, "set_details"):
            self.scene.set_details(on)
        self.live_page.set_details(on)
        self.readout.update_extras()  # the why line gives way to the verdict lines that say it in the details

    def _on_share_clicked(self, on: bool) -> None:
        self.set_batch(SHARE_SEATS if on else 1)
        self.sync_ideas()

    def _on_apprentice_clicked(self, on: bool) -> None:
        self.set_draft_k(APPRENTICE_GUESSES if on else 0)
        self.sync_ideas()

    def _tear_mode(self) -> str | None:
        """"tp" when the engine can tear the book 2 ways by pages, else "pp" when by chapters, else None."""
        for mode in ("tp", "pp"):
            if TEAR_WAYS in self.tear.degrees(mode):
                return mode
        return None

    def _on_tear_clicked(self, on: bool) -> None:
        mode = self._tear_mode()
        if mode is not None and self.tear.isEnabled():
            self.set_sharding(mode if on else self.tear.mode(), TEAR_WAYS if on else 1)
        self.sync_ideas()

    def sync_ideas(self) -> None:
        """The toggles show what is in force (or asked for): a slider moved in the details view moves them too."""
        ex = self.live_page.exhibit
        states = ((ex.share_button, True, self.session.batch > 1, ""),
                  (ex.apprentice_button, self.session.apprentice_available, self.session.draft_k > 0,
                   self.apprentice.reason()),
                  (ex.tear_button, self.tear.isEnabled() and self._tear_mode() is not None and not
                   self.tear.is_pending(), self.tear.value() > 1, ""))
        for button, enabled, checked, why in states:
            button.blockSignals(True)
            button.setEnabled(enabled)
            button.setChecked(checked)
            button.blockSignals(False)
            if button is ex.apprentice_button:
                tip = _tr("Speculative decoding: a small draft model guesses {k} tokens, the model checks them "
                          "all in one trip").format(k=APPRENTICE_GUESSES)
                button.setToolTip(tip if not why else why)
