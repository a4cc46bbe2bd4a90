"""The live decode's two extra controls and what they measure.

- ``ApprenticeControl``: "apprentice guesses" 0–8 (speculative decoding, 0 = off); disabled, with the reason
  shown, when the engine has no usable draft model.
- ``TearControl``: "tear the book" 1, 2, 4 with a TP/PP switch (tensor / pipeline parallel over worker
  processes); offers only the degrees the engine allows; waits calmly while the workers start. Its caption has a
  line of its own, the switch, slider and value the next: the switch's words are never cut (``FitButton``).

What they measure (acceptance, tokens per trip, speed-up, per-worker compute and communication) is kept by
``gui.live.meters``.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QPushButton, QSlider, QVBoxLayout, QWidget

from animations.typescale import set_role
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import ApprenticeChoice
from gui.live.draft_reason import draft_reason  # noqa: F401  (kept importable from here)
from gui.live.state import MAX_DRAFT_K, SHARDING_MODES, ShardingOffer


class FitButton(QPushButton):
    """A push button never narrower than its words: its minimum width follows its text and font.

    A layout may squeeze a widget to its explicit minimum width, and touch mode (``gui.kiosk.touch_targets``) sets one
    (the finger's target, 44 px at 720 lines) under a word's width: "TP · pages" showed as "• pag". The minimum
    here is the larger of the two; touch mode leaves a minimum above its target as it is."""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self.fit_text()

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() in (QEvent.FontChange, QEvent.StyleChange):
            self.fit_text()

    def fit_text(self) -> None:
        want = max(self.sizeHint().width(), int(self.property("touchMinPx") or 0))
        if self.minimumWidth() != want:
            self.setMinimumWidth(want)


class _Row(QWidget):
    """A row of controls (``self.row``) with room for a wrapped line under it (``self.col``).

    ``font`` is optional: on the Live page the type scale sets every font from the labels' roles.
    """

    def __init__(self, font: QFont | None = None, parent=None):
        super().__init__(parent)
        self._f = font
        self.col = QVBoxLayout(self)
        self.col.setContentsMargins(0, 0, 0, 0)
        self.col.setSpacing(0)
        self.row = QHBoxLayout()
        self.row.setContentsMargins(0, 0, 0, 0)
        self.row.setSpacing(6)
        self.col.addLayout(self.row)

    def label(self, name: str = "", role: str = "caption") -> QLabel:
        lab = QLabel()
        if self._f is not None:
            lab.setFont(self._f)
        if name:
            lab.setObjectName(name)
        set_role(lab, role)
        return lab


class ApprenticeControl(_Row):
    """"Apprentice guesses" 0–8. ``k_changed(int)`` when the visitor moves it."""

    k_changed = Signal(int)

    def __init__(self, font: QFont | None = None, parent=None):
        super().__init__(font, parent)
        self.caption = self.label()
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setObjectName("draftSlider")
        self.slider.setRange(0, MAX_DRAFT_K)
        self.slider.setPageStep(1)
        self.slider.setMinimumWidth(60)
        self.value_label = self.label(role="value")
        self.reason_label = self.label("reasonLabel", role="reason")
        self.reason_label.setWordWrap(True)  # a narrow window wraps the reason instead of cutting it off
        self.row.addWidget(self.caption)
        self.row.addWidget(self.slider, 1)
        self.row.addWidget(self.value_label)
        self.col.addWidget(self.reason_label)
        self.choice = ApprenticeChoice()  # n-gram apprentice or draft model, with both measured verdicts
        self.col.addWidget(self.choice)
        self._error: str | None = None
        self._available = False
        self.slider.valueChanged.connect(self._on_value)
        self.set_available(False, None, waiting=True)
        self.retranslate()

    def value(self) -> int:
        return self.slider.value()

    def set_value(self, k: int) -> None:
        """Move the slider to ``k`` guesses (ignored while there is no usable draft model)."""
        if self._available:
            self.slider.setValue(max(0, min(MAX_DRAFT_K, int(k))))

    def is_available(self) -> bool:
        return self._available

    def reason(self) -> str:
        """Why the slider is disabled ("" when it is enabled)."""
        return self.reason_label.text() if not self._available else ""

    def set_available(self, ok: bool, error: str | None, waiting: bool = False) -> None:
        """Enable the slider (a usable draft model, or the n-gram apprentice) or disable it and show why.
        Enabled with an ``error`` (the draft model did not load, the n-gram apprentice guesses instead): the
        reason is still shown, as a note."""
        self._available = bool(ok)
        self._error = (error or None) if ok else (error or "")
        self._waiting = waiting
        self.slider.setEnabled(self._available)
        if not ok:
            self.slider.blockSignals(True)
            self.slider.setValue(0)
            self.slider.blockSignals(False)
        self.retranslate()

    def _on_value(self, k: int) -> None:
        self.retranslate()
        self.k_changed.emit(k)

    def retranslate(self) -> None:
        self.caption.setText(_tr("Apprentice guesses"))
        tip = _tr("Speculative decoding: a small draft model guesses this many tokens, the big model checks them "
                  "all in one trip (0 = off)")
        self.slider.setToolTip(tip)
        self.caption.setToolTip(tip)
        k = self.slider.value()
        self.value_label.setText(str(k) if k else _tr("off"))
        if self._available and self._error:
            self.reason_label.setText(_tr("No draft model ({why}): the apprentice copies its guesses from the "
                                          "text so far").format(why=draft_reason(self._error)))
            self.reason_label.setToolTip(self._error)
        elif self._available:
            self.reason_label.setText("")
            self.reason_label.setToolTip("")
        elif self._waiting:
            self.reason_label.setText("")
        else:
            self.reason_label.setText(_tr("No apprentice: {why}").format(why=draft_reason(self._error)))
            self.reason_label.setToolTip(self._error or "")
        self.reason_label.setVisible(bool(self.reason_label.text()))
        self.choice.retranslate()


class TearControl(_Row):
    """"Tear the book" 1/2/4 with a TP/PP switch. ``requested(mode, n)`` when the visitor changes either."""

    requested = Signal(str, int)

    def __init__(self, font: QFont | None = None, parent=None):
        super().__init__(font, parent)
        self.caption = self.label()
        self.tp_button = FitButton()
        self.pp_button = FitButton()
        group = QButtonGroup(self)
        for b, name in ((self.tp_button, "tpButton"), (self.pp_button, "ppButton")):
            b.setObjectName(name)
            b.setCheckable(True)
            if self._f is not None:
                b.setFont(self._f)
            set_role(b, "button")
            b.setFocusPolicy(Qt.TabFocus)
            group.addButton(b)
        self.tp_button.setChecked(True)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setObjectName("tearSlider")
        self.slider.setPageStep(1)
        self.slider.setMinimumWidth(40)
        self.value_label = self.label(role="value")
        self.col.insertWidget(0, self.caption)  # a line of its own: the row under it keeps the switch's words whole
        self.row.addWidget(self.tp_button)
        self.row.addWidget(self.pp_button)
        self.row.addWidget(self.slider, 1)
        self.row.addWidget(self.value_label)
        self._degrees = {"tp": [1], "pp": [1]}
        self._pending = False
        self.confirmed: tuple[str, int] = ("tp", 1)
        self.slider.setRange(0, 0)
        self.slider.valueChanged.connect(self._on_slider)
        self.tp_button.clicked.connect(lambda: self._on_mode("tp"))
        self.pp_button.clicked.connect(lambda: self._on_mode("pp"))
        self.setEnabled(False)
        self.retranslate()

    # ---- state ---------------------------------------------------------------------------------------------
    def mode(self) -> str:
        return "pp" if self.pp_button.isChecked() else "tp"

    def degrees(self, mode: str | None = None) -> list[int]:
        return list(self._degrees[mode or self.mode()])

    def value(self) -> int:
        """The degree the slider shows (1, 2 or 4)."""
        options = self.degrees()
        return options[min(self.slider.value(), len(options) - 1)]

    def is_pending(self) -> bool:
        """True while workers are starting (between a request and the engine's answer)."""
        return self._pending

    def configure(self, offer: ShardingOffer) -> None:
        """The degrees the engine allows (a ``ShardingOffer``, from ``ready``'s ``sharding``), of those the page
        offers (``ShardingOffer.degrees``)."""
        self._degrees = {mode: list(offer.degrees(mode)) for mode in SHARDING_MODES}
        self.setEnabled(True)
        self._show(*self.confirmed)

    def set_value(self, mode: str, n: int) -> None:
        """Move the controls to ``mode``/``n`` as the visitor would (sends ``requested`` if it changes)."""
        if mode != self.mode():
            (self.pp_button if mode == "pp" else self.tp_button).setChecked(True)
            self._on_mode(mode, n)
        else:
            self._move_slider(n, emit=True)

    def confirm(self, mode: str, n: int) -> None:
        """The engine's answer: this sharding is in force now (also after a fallback to one process)."""
        self._pending = False
        self.confirmed = (mode, int(n))
        self._show(mode, int(n))
        self.slider.setEnabled(True)
        self.tp_button.setEnabled(True)
        self.pp_button.setEnabled(True)

    def give_up(self) -> None:
        """No answer came: back to the sharding last confirmed."""
        self.confirm(*self.confirmed)

    def show_pending(self, mode: str, n: int) -> None:
        """``mode``/``n`` was asked of the engine and is not answered yet: the controls show it, disabled, and
        its value "…" (nothing is sent)."""
        if self._pending and (self.mode(), self.value()) == (mode, int(n)):
            return
        self._set_pending()
        self._show(mode, int(n))

    # ---- internals -----------------------------------------------------------------------------------------
    def _show(self, mode: str, n: int) -> None:
        for w in (self.slider, self.tp_button, self.pp_button):
            w.blockSignals(True)
        (self.pp_button if mode == "pp" else self.tp_button).setChecked(True)
        options = self._degrees[mode]
        self.slider.setRange(0, len(options) - 1)
        self.slider.setValue(options.index(n) if n in options else 0)
        for w in (self.slider, self.tp_button, self.pp_button):
            w.blockSignals(False)
        self.retranslate()

    def _move_slider(self, n: int, emit: bool) -> None:
        options = self.degrees()
        index = options.index(n) if n in options else max(i for i, d in enumerate(options) if d <= max(1, n))
        if index != self.slider.value():
            self.slider.setValue(index)  # -> _on_slider
        elif emit and (self.mode(), self.value()) != self.confirmed:
            self._request()

    def _on_slider(self, _index: int) -> None:
        self.retranslate()
        self._request()

    def _on_mode(self, mode: str, n: int | None = None) -> None:
        want = self.value() if n is None else n
        options = self._degrees[mode]
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(options) - 1)
        fit = [i for i, d in enumerate(options) if d <= want]
        self.slider.setValue(fit[-1] if fit else 0)
        self.slider.blockSignals(False)
        self.retranslate()
        if (mode, self.value()) != self.confirmed and not (self.value() == 1 and self.confirmed[1] == 1):
            self._request()
        elif self.value() == 1:
            self.confirmed = (mode, 1)

    def _request(self) -> None:
        mode, n = self.mode(), self.value()
        if (mode, n) == self.confirmed:
            return
        self._set_pending()
        self.retranslate()
        self.requested.emit(mode, n)

    def _set_pending(self) -> None:
        self._pending = True
        self.slider.setEnabled(False)
        self.tp_button.setEnabled(False)
        self.pp_button.setEnabled(False)

    def retranslate(self) -> None:
        self.caption.setText(_tr("Tear the book"))
        tip = _tr("Run the model on several worker processes: TP cuts every page (chapter) into strips, one per "
                  "desk; PP gives each desk a run of whole chapters")
        for w in (self.caption, self.slider):
            w.setToolTip(tip)
        self.tp_button.setText(_tr("TP · pages"))
        self.tp_button.setToolTip(_tr("Tensor parallel: every chapter split by attention heads over the desks"))
        self.pp_button.setText(_tr("PP · chapters"))
        self.pp_button.setToolTip(_tr("Pipeline parallel: contiguous chapters per desk"))
        self.value_label.setText("…" if self._pending else str(self.value()))
