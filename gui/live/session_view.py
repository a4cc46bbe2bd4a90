"""The Live page's controls as views of the session: each control writes its change to the session
(``gui.live.state.SessionState``) and shows the session's value when the session says it changed, so a change
from anywhere (the slider, the idea toggles, the presenter's +/−, the kiosk, a test) looks and acts the same.

    slider moved -> session.set_batch(n) -> Change("batch") -> the slider and its value (and, through
    ``LiveController``, the engine; through ``LiveRunner``, the seats)

``SessionControls`` shows the settings; ``ExtrasControls`` shows what the engine offers of the two extras (the
apprentice: speculative decoding; tearing: sharding) and the sharding in force, on the controls and the stage:

    engine ready -> EngineEventHandler -> session.set_apprentice_offer(...) -> Change("apprentice_offer") ->
    the apprentice's slider (enabled or not, the reason) and its choice of kinds
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gui.live.state import MAX_PROMPT_CHARS


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


def _show_guesses(apprentice, k: int) -> None:
    """The apprentice's slider (an ``ApprenticeControl``) shows ``k`` guesses without sending ``k_changed`` (the
    session's value would come back)."""
    if apprentice.value() != k:
        apprentice.blockSignals(True)
        apprentice.set_value(k)
        apprentice.blockSignals(False)


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
        _show_guesses(self.page.apprentice, k)
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


class ExtrasControls:
    """The extras' controls and the stage's sharding as views of the session (a collaborator of ``MainWindow``):
    they show what the engine offers and what is in force, whoever set it (the engine's events through
    ``EngineEventHandler``, a test, a tool).

    Follows ``apprentice_offer`` and ``apprentice_available`` (the apprentice's slider enabled or disabled with
    the reason, its choice's kinds, the session's guesses shown once there is an apprentice), ``draft_kind`` (the
    choice shows it), ``sharding_offer`` (the degrees the tearing control offers), ``sharding`` and
    ``worker_layers`` (the tearing control confirms it; the stage draws it) and ``sharding_asked`` (the tearing
    control waits for the engine's answer, or shows the sharding in force again).

    Args:
        session: the Live session's state.
        page: the ``LivePage`` (its ``apprentice``, an ``ApprenticeControl`` with its ``choice``, and ``tear``, a
            ``TearControl``).
        scene: the stage (``set_sharding``: the workers' desks).
    """

    def __init__(self, session, page, scene):
        self.session = session
        self.apprentice = page.apprentice
        self.tear = page.tear
        self.scene = scene
        s = session
        s.subscribe(lambda _c: self._show_apprentice(), "apprentice_offer")
        s.subscribe(lambda _c: self._show_apprentice(), "apprentice_available")
        s.subscribe(lambda c: self.apprentice.choice.set_kind(c.value), "draft_kind")
        s.subscribe(lambda c: self.tear.configure(c.value), "sharding_offer")
        s.subscribe(self._show_sharding, "sharding")
        s.subscribe(lambda _c: self._draw_sharding(), "worker_layers")
        s.subscribe(self._show_asked, "sharding_asked")

    def _show_apprentice(self) -> None:
        """The apprentice's slider and choice from the session's offer: enabled (with the draft model's error as
        a note, if any) or disabled with the reason; before any engine offered one, it waits as it is."""
        offer, ok = self.session.apprentice_offer, self.session.apprentice_available
        if offer is None:
            return
        self.apprentice.set_available(ok, offer.draft_error)
        self.apprentice.choice.set_kinds(list(offer.kinds))
        if ok and self.session.draft_k:
            _show_guesses(self.apprentice, self.session.draft_k)  # set while there was no apprentice to show it

    def _show_sharding(self, change) -> None:
        """The sharding in force changed: the tearing control confirms it, the stage draws it."""
        self.tear.confirm(*change.value)
        self._draw_sharding()

    def _show_asked(self, change) -> None:
        """A sharding asked of the engine: the tearing control waits for it; none (answered, refused, given up):
        it shows the sharding in force."""
        if change.value is None:
            self.tear.confirm(*self.session.sharding)
        else:
            self.tear.show_pending(*change.value)

    def _draw_sharding(self) -> None:
        """The stage draws the session's sharding: by chapters over several workers only with their layers."""
        (mode, n), layers = self.session.sharding, self.session.worker_layers
        if hasattr(self.scene, "set_sharding") and (mode == "tp" or n == 1 or layers):
            self.scene.set_sharding(mode, n, list(layers) or None)
