"""Which apprentice the Live page uses, and where it runs: the engine's start-up verdict put to work.

The engine process measures at start-up (``model/service.py``, the "apprentice" event) both apprentices (the
draft model, when one is loaded, and the n-gram one: prompt lookup) against plain decoding, under the window's
sampling and under greedy (``model.teaching.lesson_runs.apprentice_verdicts``). From that event:

* the apprentice switched on is the event's ``chosen`` one;
* the visitor's sampling stays as it is when the apprentice joins (speculative sampling keeps the target's
  distribution exactly); when the apprentice pays only under greedy (``pays_when == "greedy"``), one line says
  so in words (which temperature it needs, and the measured shares of guesses kept at both), and the answer
  keeps its temperature;
* ``ApprenticeChoice`` (Details view) lets the visitor pick either apprentice and shows both measured verdicts
  (speed-up = plain ms ÷ apprentice ms, medians; share of guesses kept; number of runs), with the measured
  reason (``model.teaching.lessons.why_not``'s key) where one does not pay.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QButtonGroup, QLabel, QRadioButton, QVBoxLayout, QWidget

from animations.typescale import set_role
from gui.i18n import tr_window as _tr
from model.teaching import lessons

KINDS = ("ngram", "model")


def kind_name(kind: str) -> str:
    return _tr("n-gram apprentice") if kind == "ngram" else _tr("draft model")


def why_text(key: str | None, v: dict | None = None) -> str:
    """The measured reason (a ``model.teaching.lessons.why_not`` key, or "unclear" for runs that overlap) in words.
    With the verdict ``v``, an apprentice whose guesses are kept but whose trips cost too much says what a trip
    costs, from the trips' own timers (``model.teaching.lesson_runs.trip_costs``): a guess and the check, in plain
    trips."""
    costs = (v or {}).get("trip_costs")
    if key == "speculative_overhead" and costs and costs.get("check"):
        check = f"{costs['check']:.1f}"
        if costs.get("guess") is not None and costs["guess"] >= 0.05:
            return _tr("its guesses are kept, but each costs {guess} of a plain trip and the check "
                       "{check} trips").format(guess=f"{costs['guess']:.2f}", check=check)
        return _tr("its guesses are kept, but the check costs {check} plain trips").format(check=check)
    return {"no_guess": _tr("it found nothing in the text to copy a guess from"),
            "speculative_acceptance": _tr("its guesses are kept too rarely to pay for its own passes"),
            "speculative_overhead": _tr("its guesses are kept, but its own passes cost more than the trips saved"),
            "small_gain": _tr("it saves too little to show through the noise of a few trips"),
            }.get(key or "", _tr("the runs with and without it overlap: no clear difference on this busy machine"))


def _pays(v: dict | None) -> bool:
    """The engine's rule (``model.teaching.lessons.pays``): guesses kept, a median speed-up a page can show through its
    noise, faster than plain decoding in (nearly) every round of the check."""
    return lessons.pays(v)


def _why_key(v: dict) -> str | None:
    """``model.teaching.lessons.why_not``'s key, or "no_guess" when the apprentice made no guess at all (the n-gram one
    found nothing to copy): then no share was kept or lost, and the engine's key would say overhead; or
    "small_gain" when it was faster but by less than ``model.teaching.lessons.PAYS_MIN_SPEEDUP``."""
    if v.get("acceptance") is None:
        return "no_guess"
    if v.get("why_not") is None and 1.0 < float(v.get("speedup") or 0) < lessons.PAYS_MIN_SPEEDUP:
        return "small_gain"
    return v.get("why_not")


def check_for(event: dict | None, kind: str, greedy: bool) -> dict | None:
    """The start-up verdict (``speculative_times``' dict) of apprentice ``kind`` under greedy or under the
    window's sampling, from an "apprentice" event; None before the check or when it was not measured."""
    for check in (event or {}).get("checks") or []:
        if (float((check.get("sampling") or {}).get("temperature", 0)) == 0) == bool(greedy):
            return (check.get("verdicts") or {}).get(kind)
    return None


def slower_reason(event: dict | None, kind: str, greedy: bool, acceptance: float | None) -> str:
    """Why the apprentice in use measured slower than plain decoding on the page, in words: the start-up check's
    measured reason for this apprentice at this setting (``why_text``), or, where that check found it paying,
    its figure against the few trips on the page; before any check, ``model.teaching.lessons.why_not`` on the page's own
    share of guesses kept."""
    v = check_for(event, kind, greedy)
    if v and v.get("speedup"):
        if not _pays(v):
            return why_text(_why_key(v), v)
        return _tr("only on these few trips; the start-up check measured it {x}× as fast over {n} runs").format(
            x=f"{v['speedup']:.2f}", n=int(v.get("runs") or 0))
    if acceptance is None:
        return why_text("no_guess")
    return why_text(lessons.why_not("speculative", {"verdict": {"holds": False}, "acceptance": acceptance}))


def verdict_line(v: dict | None, greedy: bool) -> str:
    """One measured verdict (``speculative_times``' dict) in a few words: where, speed-up (plain ÷ with, medians),
    share of guesses kept, runs."""
    where = _tr("greedy") if greedy else _tr("sampling")
    if not v or not v.get("available", True) or not v.get("speedup"):
        return _tr("{where}: not measured").format(where=where)
    acc = v.get("acceptance")
    return _tr("{where} {x}×, {kept} kept, {n} runs").format(
        where=where, x=f"{v['speedup']:.2f}", kept=f"{acc * 100:.0f}%" if acc is not None else "–",
        n=int(v.get("runs") or v.get("with", {}).get("n") or 0))


def verdict_text(checks: list[dict], kind: str) -> str:
    """``kind``'s verdicts under each checked sampling (the one in use, then greedy) on one line, then, where it
    does not pay, one line with the measured reason (``why_text``) of the first setting where it does not."""
    figures, why = [], ""
    for _i, check in enumerate(checks):
        greedy = float((check.get("sampling") or {}).get("temperature", 0)) == 0
        v = (check.get("verdicts") or {}).get(kind)
        figures.append(verdict_line(v, greedy))
        if not why and v and v.get("speedup") and not _pays(v):
            why = _tr("does not pay here, {where}: {why}").format(where=_tr("greedy") if greedy else _tr("sampling"),
                                                                  why=why_text(_why_key(v), v))
    text = " · ".join(figures) or _tr("not measured")
    return f"{text}\n{why}" if why else text


class ApprenticeChoice(QWidget):
    """Two-way choice, n-gram apprentice or draft model, each with its measured verdicts.
    ``kind_chosen(str)`` ("ngram" | "model") when the visitor picks one."""

    kind_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("apprenticeChoice")
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        self.group = QButtonGroup(self)
        self.buttons: dict[str, QRadioButton] = {}
        self.lines: dict[str, QLabel] = {}
        for kind in KINDS:
            b = QRadioButton()
            b.setObjectName(f"apprentice_{kind}")
            set_role(b, "caption")
            line = QLabel()
            line.setObjectName(f"apprenticeVerdict_{kind}")
            line.setTextFormat(Qt.PlainText)
            line.setWordWrap(True)
            set_role(line, "reason")
            col.addWidget(b)
            col.addWidget(line)
            self.group.addButton(b)
            self.buttons[kind], self.lines[kind] = b, line
            b.toggled.connect(lambda on, k=kind: on and self._picked(k))
        self.event: dict | None = None
        self._kinds: list[str] = ["ngram"]
        self._quiet = False
        self.set_kind("ngram")
        self.retranslate()

    def kind(self) -> str:
        return next((k for k, b in self.buttons.items() if b.isChecked()), "ngram")

    def has_kind(self, kind: str) -> bool:
        """True if the engine has apprentice ``kind`` ("ngram", "model")."""
        return kind in self._kinds

    def set_kinds(self, kinds: list[str]) -> None:
        """The apprentices the engine has (``ready``'s ``draft_kinds``); the draft model's button is disabled
        without one."""
        self._kinds = [k for k in KINDS if k in (kinds or ["ngram"])] or ["ngram"]
        for k, b in self.buttons.items():
            b.setEnabled(k in self._kinds)
        if self.kind() not in self._kinds:
            self.set_kind(self._kinds[0])

    def set_kind(self, kind: str) -> None:
        """Check ``kind``'s button without emitting ``kind_chosen``."""
        if kind in self.buttons:
            self._quiet = True
            self.buttons[kind].setChecked(True)
            self._quiet = False

    def set_event(self, event: dict | None) -> None:
        """Show the verdicts of an "apprentice" event and check its ``chosen`` apprentice (quietly)."""
        self.event = event
        if event and event.get("chosen") in self.buttons:
            self.set_kind(event["chosen"])
        self.retranslate()

    def verdict_text(self, kind: str) -> str:
        return self.lines[kind].text()

    def _picked(self, kind: str) -> None:
        if not self._quiet:
            self.kind_chosen.emit(kind)

    def retranslate(self) -> None:
        for kind, b in self.buttons.items():
            b.setText(kind_name(kind))
            if self.event is None:
                text = _tr("measuring at start-up…")
            elif kind not in self._kinds:
                text = _tr("no draft model loaded")
            else:
                text = verdict_text(self.event.get("checks") or [], kind)
            self.lines[kind].setText(text)


class ApprenticeVerdicts(QObject):
    """The apprentice's measured verdicts (the bridge's ``apprentice`` event) and the apprentice that pays under
    the sampling in use: a collaborator of ``MainWindow``. ``changed`` fires when a verdict or the apprentice
    changes what the readout says (``gui.live.readout_view.LiveReadout`` follows it).

    Args:
        session: the Live session's state: its ``draft_kind`` and ``draft_k``, and its sampling's ``greedy``
            (never changed for the apprentice; a greedy an older page turned on is turned off).
        verdicts: the bridge's ``apprentice`` signal (the engine's measured verdicts).
        controller: the ``LiveController`` (``set_draft_kind``: the session's and the engine's).
        apprentice_choice: the Details view's ``ApprenticeChoice`` (n-gram apprentice or draft model).
        greedy_box: the top bar's "Greedy" switch (the apprentice that pays under the new setting follows it).
        spec_meter: the ``SpecMeter`` (reset when the apprentice changes).
        lookup: the ``LookupPresets`` (``gui.live.lookup_presets``): while one runs, the free-writing choice waits.
    """

    changed = Signal()  # what the readout says of the apprentice changed

    def __init__(self, session, verdicts, controller, apprentice_choice, greedy_box, spec_meter, lookup):
        super().__init__(apprentice_choice)
        self.session = session
        self.controller = controller
        self.apprentice_choice = apprentice_choice
        self.spec_meter = spec_meter
        self.lookup = lookup
        self._greedy_for_apprentice = False  # an older page turned greedy on for the apprentice (turned off here)
        self._apprentice_picked = False  # the visitor picked an apprentice themselves (the Details view)
        session.subscribe(lambda c: self.apply_apprentice_sampling(c.value), "draft_k")
        verdicts.connect(self._on_apprentice_verdict)
        apprentice_choice.kind_chosen.connect(self._on_apprentice_kind_chosen)
        greedy_box.toggled.connect(self._on_greedy_toggled)

    def _on_apprentice_verdict(self, event: dict) -> None:
        kind = event.get("chosen")
        if kind in KINDS and self.lookup.free_writing_kind(kind):
            kind = None  # a lookup preset runs the n-gram apprentice; free writing gets ``chosen`` back later
            event = {**event, "chosen": None}
        self.apprentice_choice.set_event(event)
        if kind in KINDS:
            self.session.set_draft_kind(kind)
        self.apply_apprentice_sampling(self.session.draft_k)
        self.changed.emit()

    def _on_apprentice_kind_chosen(self, kind: str) -> None:
        """The visitor picked an apprentice in the Details view: the engine switches (and keeps the slider)."""
        self.controller.set_draft_kind(kind)
        self._apprentice_picked = True  # their choice stands when the sampling changes
        self.spec_meter.reset()
        self.apply_apprentice_sampling(self.session.draft_k)
        self.changed.emit()

    def apprentice_pays_when(self) -> str | None:
        """"sampling" | "greedy" | None for the apprentice in use, from the last event's checks."""
        event = self.apprentice_choice.event or {}
        kind = self.apprentice_choice.kind()
        for check in event.get("checks") or []:
            if _pays((check.get("verdicts") or {}).get(kind)):
                return "greedy" if float((check.get("sampling") or {}).get("temperature", 0)) == 0 else "sampling"
        return None

    def apply_apprentice_sampling(self, k: int) -> None:
        """The apprentice never changes the visitor's sampling (speculative sampling is exact at any temperature,
        ``model/speculative.py``): where it pays only greedy, ``greedy_line`` says so in words instead. A greedy
        that an older page turned on for the apprentice is turned off again."""
        if self._greedy_for_apprentice:
            self._greedy_for_apprentice = False
            self.session.set_greedy(False)

    def _on_greedy_toggled(self, on: bool) -> None:
        if not on:  # the visitor turned greedy off: their choice stands
            self._greedy_for_apprentice = False
        self._follow_setting(on)

    def _follow_setting(self, greedy: bool) -> None:
        """The sampling changed: switch to the apprentice that the start-up check found paying under it (the
        check measured each setting, ``check_for``), unless the visitor picked one."""
        event = self.apprentice_choice.event
        if self._apprentice_picked or not event or self.lookup.active is not None:
            return
        check = next((c for c in event.get("checks") or []
                      if (float((c.get("sampling") or {}).get("temperature", 0)) == 0) == bool(greedy)), None)
        best = (check or {}).get("best")
        if best in KINDS and best != self.apprentice_choice.kind() and self.apprentice_choice.has_kind(best):
            self.apprentice_choice.set_kind(best)
            self.controller.set_draft_kind(best)
            self.spec_meter.reset()
        self.changed.emit()

    def greedy_line(self) -> str:
        """While the apprentice runs under sampling where the start-up check found it paying only greedy: which
        temperature it needs and why, in words, with both measured shares of guesses kept ("" otherwise)."""
        s = self.session
        if s.draft_k <= 0 or s.sampling.greedy or self.apprentice_pays_when() != "greedy" or \
                self.lookup.active is not None:  # a lookup preset says its own line
            return ""
        event, kind = self.apprentice_choice.event, self.apprentice_choice.kind()
        sampled, greedy = check_for(event, kind, False), check_for(event, kind, True)
        t = next((float((c.get("sampling") or {}).get("temperature", 0)) for c in (event or {}).get("checks") or []
                  if float((c.get("sampling") or {}).get("temperature", 0)) > 0), 0.0)
        kept = [f"{v['acceptance'] * 100:.0f}%" if v and v.get("acceptance") is not None else "–"
                for v in (sampled, greedy)]
        return _tr("It pays only at temperature 0 (greedy): at temperature {t} it keeps {kept_t} of its guesses, "
                   "greedy {kept_g}; a drawn token is harder to guess than the likeliest. The answer keeps "
                   "temperature {t}.").format(t=f"{t:g}", kept_t=kept[0], kept_g=kept[1])
