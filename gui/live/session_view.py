"""The Live page's controls as views of the session: each control writes its change to the session
(``gui.live.state.SessionState``) and shows the session's value when the session says it changed, so a change
from anywhere (the slider, the idea toggles, the presenter's +/−, the kiosk, a test) looks and acts the same.

    slider moved -> session.set_batch(n) -> Change("batch") -> the slider and its value (and, through
    ``LiveController``, the engine; through ``LiveRunner``, the seats)
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gui.live.state import MAX_PROMPT_CHARS


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


class SessionControls:
    """Wires the page's controls to the session (a collaborator of ``MainWindow``).

    Args:
        session: the Live session's state.
        page: the ``LivePage`` (batch and speed sliders and their values, the apprentice's slider, the prompt box).
        greedy_box, model_choice: the top bar's "Greedy" switch and the ``ModelChoice`` showing the seed.
        status: the ``StatusLine`` (what the apprentice's new number of guesses means).
        lookup: the ``LookupPresets`` (the n-gram apprentice's own presets, ``gui.live.lookup_presets``), offered in
            the prompt box.
    """

    def __init__(self, session, page, model_choice, status, lookup):
        self.session = session
        self.page = page
        self.model_choice = model_choice
        self.status = status
        self.lookup = lookup
        s = session
        page.batch_slider.valueChanged.connect(s.set_batch)
        page.speed_slider.valueChanged.connect(self._on_speed_changed)
        page.apprentice.k_changed.connect(s.set_draft_k)
        model_choice.greedy_box.toggled.connect(s.set_greedy)
        page.real_time_box.toggled.connect(s.set_real_time)  # the checkbox shows the session's mode
        page.prompt_box.editTextChanged.connect(self._on_prompt_typed)
        s.subscribe(lambda c: self._on_batch_changed(c.value), "batch")
        s.subscribe(lambda c: self._show_draft_k(c.value), "draft_k")
        s.subscribe(self._show_sampling, "sampling")
        s.subscribe(self._show_prompt, "prompt")
        s.subscribe(lambda c: self._show_trip_seconds(c.value), "trip_seconds")
        s.subscribe(lambda c: page.real_time_box.setChecked(c.value), "real_time")
        s.set_prompt(self._box_prompt())
        self.lookup.offer()
        s.set_trip_seconds(page.speed_slider.value() / 100.0)
        self._show_trip_seconds(s.trip_seconds)

    # ---- the table's size -------------------------------------------------------------------------------------
    def _on_batch_changed(self, n: int) -> None:
        """The session's batch changed: the slider and its value follow (the engine: ``LiveController``; the
        seats: ``LiveRunner.fill_seats``)."""
        if self.page.batch_slider.value() != n:
            self.page.batch_slider.setValue(n)
        self._on_batch_label()

    def _on_batch_label(self) -> None:
        self.page.batch_value.setText(str(self.session.batch))

    # ---- seconds per trip on screen ---------------------------------------------------------------------------
    def _on_speed_changed(self, hundredths: int) -> None:
        """The "trip on screen" slider moved: the session's ``trip_seconds``."""
        self.session.set_trip_seconds(hundredths / 100.0)

    def _show_trip_seconds(self, seconds: float) -> None:
        """The session's seconds per trip on screen: the slider and its value follow (the stage's clock:
        ``LiveRunner``; the readout: ``LiveReadout``)."""
        if self.page.speed_slider.value() != round(seconds * 100):
            self.page.speed_slider.setValue(round(seconds * 100))
        self._on_speed_label()

    def _on_speed_label(self) -> None:
        self.page.speed_value.setText(_tr("{s} s").format(s=f"{self.session.trip_seconds:.2f}"))

    # ---- the apprentice and the sampling ----------------------------------------------------------------------
    def _show_draft_k(self, k: int) -> None:
        apprentice = self.page.apprentice
        if apprentice.value() != k:
            apprentice.blockSignals(True)  # the slider shows the session's value; k_changed would come back
            apprentice.set_value(k)
            apprentice.blockSignals(False)
        if k:
            self.status.set_status_text(_tr("The apprentice now guesses {k} tokens before every trip.").format(k=k))
        else:
            self.status.set_status("The apprentice rests: one trip, one token.")

    def _show_sampling(self, change) -> None:
        sampling = change.value
        if self.model_choice.greedy_box.isChecked() != sampling.greedy:
            self.model_choice.greedy_box.setChecked(sampling.greedy)
        if self.model_choice.seed != sampling.seed:
            self.model_choice.set_seed(sampling.seed)
        self.model_choice.show_sampling(sampling.temperature, sampling.top_p)  # a lookup preset has its own

    # ---- the prompt -------------------------------------------------------------------------------------------
    def _box_prompt(self) -> str:
        """What the prompt box says: the chosen preset's full text, or what was typed."""
        box = self.page.prompt_box
        text = box.currentText()
        index = box.findText(text)
        if index >= 0 and box.itemData(index):
            text = box.itemData(index)
        return text[:MAX_PROMPT_CHARS]

    def _on_prompt_typed(self, _text: str = "") -> None:
        self.session.set_prompt(self._box_prompt())

    def _show_prompt(self, change) -> None:
        """The session's prompt changed (the kiosk, the tour, a test): the box shows it."""
        if self._box_prompt() != change.value:
            box = self.page.prompt_box
            index = box.findData(change.value)  # a preset's prompt: the box shows its item (a label, a ⏎)
            if index >= 0:
                box.setCurrentIndex(index)
            else:
                box.setEditText(change.value)

    def retranslate(self) -> None:
        """The controls' words and tooltips in the current language."""
        p = self.page
        p.prompt_caption.setText(_tr("Prompt"))
        p.prompt_box.setToolTip(_tr("Pick a prompt or type your own (up to {n} characters)").format(
            n=MAX_PROMPT_CHARS))
        p.run_button.setText(_tr("Run"))
        p.run_button.setToolTip(_tr("Start writing (Space runs and pauses)"))
        p.pause_button.setText(_tr("Pause"))
        p.pause_button.setToolTip(_tr("Stop after this trip (Space runs and pauses)"))
        p.step_button.setText(_tr("Step one trip"))
        p.step_button.setToolTip(_tr("Exactly one real forward pass (S)"))
        p.reset_button.setText(_tr("Reset"))
        p.reset_button.setToolTip(_tr("Clear the answer, the chips and the plots (R)"))
        p.batch_caption.setText(_tr("Sharing a table"))
        p.batch_slider.setToolTip(_tr("How many requests share each trip of the weights (1–16)"))
        p.speed_caption.setText(_tr("Trip on screen"))
        p.speed_slider.setToolTip(_tr("How long one trip takes on screen, in seconds (0.25–3)"))
        p.real_time_box.setText(_tr("Real time"))
        p.real_time_box.setToolTip(_tr("Show the trips at the speed they were measured"))
        self._on_batch_label()
        self._on_speed_label()
        self.lookup.retranslate()
