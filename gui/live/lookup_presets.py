"""The n-gram apprentice's own presets on the Live page: prompts whose answer repeats the prompt.

Prompt lookup (``model/ngram.py``) copies its guesses from the request's own text, so it pays where the answer
writes the prompt again (more lines of a doctest, a renamed variable), and little on free writing, where its
guesses are kept mostly when the answer loops. So the catalog lists such prompts apart (``model.catalog``'s
``LookupPreset``: prompt, label, its own sampling, guesses per trip), and this module puts them to work:

* the prompt box offers them among the presets, each under its label ("↻ ...: the answer repeats the prompt");
* picking one switches the session to the n-gram apprentice at the preset's k and sampling (the engine is told),
  and one line over the readout says why, with the speed-up ``bench/lookup_bench.py`` measured for it
  (``model.catalog.lookup_measured``), or that it was not measured;
* picking any other prompt (a free-writing preset, typed text) puts back what free writing had: the apprentice
  chosen for it (the start-up check's, or the visitor's pick, ``gui.live.apprentice_choice``), its k and the
  model's sampling.

The session (``gui.live.state.SessionState``) stays the one owner of the state: this collaborator only changes it
through its setters, in answer to its ``prompt`` changes.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal

from gui.i18n import tr_window as _tr
from model import catalog

LOOKUP_ROLE = Qt.UserRole + 1  # the prompt box's items of lookup presets hold their catalog key in this role


def preset_label(preset: catalog.LookupPreset) -> str:
    """The label the prompt box shows for ``preset``, in the current language (the catalog's English otherwise)."""
    return {"doctest": _tr("↻ more of a doctest: the answer repeats the prompt"),
            }.get(preset.key, preset.label)


def sampling_words(preset: catalog.LookupPreset) -> str:
    """The preset's sampling in words: "copying text: greedy, temperature 0" or "temperature 0.6 · top-p 0.95"."""
    if preset.greedy:
        return _tr("copying text: greedy, temperature 0")
    return _tr("temperature {t} · top-p {p}").format(t=f"{preset.temperature:g}", p=f"{preset.top_p:g}")


def measured_words(figures: dict | None) -> str:
    """``model.catalog.lookup_measured``'s figures in one sentence, or that there are none."""
    if not figures:
        return _tr("Its speed-up is not measured yet (python -m bench.lookup_bench).")
    rounds = [float(x) for x in figures.get("round_speedups") or []] or [float(figures["speedup"])]
    acc = figures.get("acceptance")
    return _tr("Measured by bench/lookup_bench.py ({date}): {x}× the speed of plain decoding ({lo}–{hi}× over "
               "{n} rounds), {kept} of its guesses kept; {loops} of {answers} answers fell into a loop and were "
               "stopped.").format(
        date=figures.get("date") or "?", x=f"{float(figures['speedup']):.2f}", lo=f"{min(rounds):.2f}",
        hi=f"{max(rounds):.2f}", n=len(rounds), kept=f"{float(acc) * 100:.0f}%" if acc is not None else "–",
        loops=int(figures.get("loops") or 0), answers=int(figures.get("answers") or 0))


class LookupPresets(QObject):
    """The lookup presets of the model writing now, in the prompt box and at work (a collaborator of
    ``MainWindow``; see the module doc). ``changed`` fires when the line over the readout may have changed
    (``gui.live.readout_view.LiveReadout`` follows it).

    Args:
        session: the Live session's state (its prompt, model key, draft kind and k, sampling).
        controller: the ``LiveController`` (``set_draft_kind``: the session's and the engine's; k follows the
            session).
        page: the ``LivePage`` (its prompt box).
        apprentice_choice: the Details view's ``ApprenticeChoice`` (shows the apprentice in use).
        spec_meter: the ``SpecMeter`` (reset when the apprentice changes).
        measured: ``model.catalog.lookup_measured`` (a test passes its own figures).
    """

    changed = Signal()  # the line over the readout may have changed

    def __init__(self, session, controller, page, apprentice_choice, spec_meter, measured=catalog.lookup_measured):
        super().__init__(page)
        self.session = session
        self.controller = controller
        self.page = page
        self.apprentice_choice = apprentice_choice
        self.spec_meter = spec_meter
        self._measured = measured
        self.active: catalog.LookupPreset | None = None
        self.free: dict | None = None  # what free writing had while a lookup preset runs: kind, k, sampling
        session.subscribe(lambda c: self._follow_prompt(c.value), "prompt")
        session.subscribe(lambda _c: self._follow_prompt(self.session.prompt), "model_key")

    # ---- the prompt box -------------------------------------------------------------------------------------------
    def presets(self) -> tuple[catalog.LookupPreset, ...]:
        """The lookup presets of the model writing now (none for a user's own model)."""
        try:
            return catalog.by_key(self.session.model_key).lookup_presets
        except KeyError:
            return ()

    def offer(self) -> None:
        """Add the model's lookup presets to the prompt box, after its other presets (``LivePage.set_presets``
        clears the box first), each under its label with its prompt as the item's data."""
        box = self.page.prompt_box
        for p in self.presets():
            if box.findData(p.key, LOOKUP_ROLE) < 0:
                box.addItem(preset_label(p), p.prompt)
                box.setItemData(box.count() - 1, p.key, LOOKUP_ROLE)
        self._follow_prompt(self.session.prompt)

    def retranslate(self) -> None:
        """The labels in the current language (the item shown keeps its prompt: the box's text is its label)."""
        box = self.page.prompt_box
        by_key = {p.key: p for p in self.presets()}
        for i in range(box.count()):
            key = box.itemData(i, LOOKUP_ROLE)
            if key in by_key and box.itemText(i) != preset_label(by_key[key]):
                box.setItemText(i, preset_label(by_key[key]))
                if i == box.currentIndex():
                    box.setEditText(preset_label(by_key[key]))

    # ---- at work --------------------------------------------------------------------------------------------------
    def _follow_prompt(self, prompt: str) -> None:
        preset = next((p for p in self.presets() if p.prompt == prompt), None)
        if preset == self.active:
            return
        if preset is None:
            self._back_to_free_writing()
        else:
            self._use(preset)
        self.changed.emit()

    def _use(self, preset: catalog.LookupPreset) -> None:
        s = self.session
        if self.free is None:
            self.free = {"kind": s.draft_kind, "k": s.draft_k, "temperature": s.sampling.temperature,
                         "top_p": s.sampling.top_p, "greedy": s.sampling.greedy}
        self.active = preset
        s.set_sampling(temperature=preset.temperature, top_p=preset.top_p, greedy=preset.greedy)
        self.reapply()
        s.set_draft_k(preset.k)  # the slider and the engine follow the session (``SessionControls``)

    def reapply(self) -> None:
        """While a lookup preset runs: the n-gram apprentice in the session, the Details view and the engine (also
        after a restarted engine said which apprentice it has)."""
        if self.active is None:
            return
        if self.controller.set_draft_kind("ngram") or self.apprentice_choice.kind() != "ngram":
            self.spec_meter.reset()
        self.apprentice_choice.set_kind("ngram")

    def _back_to_free_writing(self) -> None:
        free, self.free, self.active = self.free, None, None
        if free is None:
            return
        s = self.session
        s.set_sampling(temperature=free["temperature"], top_p=free["top_p"], greedy=free["greedy"])
        if self.controller.set_draft_kind(free["kind"]):
            self.spec_meter.reset()
        self.apprentice_choice.set_kind(free["kind"])
        s.set_draft_k(free["k"])

    def free_writing_kind(self, kind: str) -> bool:
        """The start-up check chose ``kind`` for free writing: while a lookup preset runs, it is kept for when
        free writing comes back (True: kept, the caller leaves the apprentice as it is)."""
        if self.active is None or self.free is None:
            return False
        self.free["kind"] = kind
        return True

    def slower_reason(self) -> str:
        """Why the page may measure the lookup preset slower than plain decoding, in words: the benchmark's figure
        against the few trips on the page (the start-up check measured free writing, not this prompt)."""
        figures = self._measured(self.active.key) if self.active is not None else None
        if not figures:
            return _tr("the runs with and without it overlap: no clear difference on this busy machine")
        n = len(figures.get("round_speedups") or []) or 1
        return _tr("only on these few trips; bench/lookup_bench.py measured it {x}× as fast over {n} "
                   "rounds").format(x=f"{float(figures['speedup']):.2f}", n=n)

    def line(self) -> str:
        """The line over the readout while a lookup preset runs: why the n-gram apprentice, at what sampling, and
        its measured speed-up; "" otherwise."""
        p = self.active
        if p is None:
            return ""
        return _tr("This answer copies its prompt, so the apprentice copies too: the n-gram apprentice, {k} "
                   "guesses per trip, {sampling}. {measured}").format(
            k=p.k, sampling=sampling_words(p), measured=measured_words(self._measured(p.key)))
