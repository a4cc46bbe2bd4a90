"""The model picker and the sampling switch of the top bar: which bundled model writes, and how it draws a token.

The bundled models (``model.catalog``: the code model for English, the poetry model for Chinese) are listed by
their display names, and a ``--model DIR`` of the user's as "Your model". The window samples by default (the
model's temperature and top-p, with the seed of each answer shown) so that a visitor never watches a greedy
loop; "Greedy" is one switch away (always the most likely token; what the apprentice's exactness demo uses).

``model.catalog`` imports only the standard library: no torch comes into the window's process.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QWidget

from animations.textset import keep_together
from animations.typescale import set_role
from model import catalog

log = logging.getLogger("gui.window.main_window")  # the model switch logs as the window did

CUSTOM = "custom"  # the key of a --model DIR that is not a bundled model


def _tr(text: str) -> str:
    return QCoreApplication.translate("ModelChoice", text)


def display_name(key: str, custom_dir: str | Path | None = None) -> str:
    """The visitor's name of a model key: "One Trip poetry model", or "Your model: <folder>"."""
    if key == CUSTOM:
        return _tr("Your model: {name}").format(name=Path(custom_dir).name if custom_dir else "?")
    names = {"code": _tr("One Trip code model (English)"), "poems": _tr("One Trip poetry model (Chinese)"),
             "code-pocket": _tr("Pocket code model (English)"),
             "poems-pocket": _tr("Pocket poetry model (Chinese)")}
    return names.get(key, key)


class ModelChoice(QWidget):
    """A combo box of the models and a "Greedy" switch with the sampling in force beside it.

    Signals: ``model_chosen(key)`` when the visitor picks another model (not when ``set_current`` is called);
    ``sampling_changed()`` when Greedy is switched.
    """

    model_chosen = Signal(str)
    sampling_changed = Signal()
    weights_chosen = Signal(str)  # "int8" or "default": the visitor switched the thinner book on or off

    def __init__(self, current: str, custom_dir: str | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.custom_dir = custom_dir
        self.seed: int | None = None  # the seed of the answer being written, shown beside the switch
        self.shown: tuple[float, float] | None = None  # (temperature, top-p) in force, when not the model's own
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(6)
        self.caption = QLabel()
        set_role(self.caption, "caption")
        self.combo = QComboBox()
        self.combo.setObjectName("modelBox")
        self.combo.setFocusPolicy(Qt.TabFocus)
        # the zh names are not the en ones: refit on a language switch
        self.combo.setSizeAdjustPolicy(QComboBox.AdjustToContents)
        set_role(self.combo, "button")
        keys = [m.key for m in catalog.BUNDLED] + ([CUSTOM] if custom_dir else [])
        for key in keys:
            self.combo.addItem("", key)
        self.greedy_box = QCheckBox()
        self.greedy_box.setObjectName("greedyBox")
        self.greedy_box.setFocusPolicy(Qt.TabFocus)
        set_role(self.greedy_box, "caption")
        self.int8_box = QCheckBox()  # the thinner book (issue 34): the engine restarts with int8 weights; placed by
        # the window among the details' controls
        self.int8_box.setObjectName("int8Box")
        self.int8_box.setFocusPolicy(Qt.TabFocus)
        set_role(self.int8_box, "caption")
        self.sampling_label = QLabel()
        self.sampling_label.setObjectName("samplingLabel")
        set_role(self.sampling_label, "caption")
        # two lines rather than a top bar wider than a 4:3 screen (1024x768: the Details view in English); each
        # setting stays whole on its line ("top-p 0.95" never breaks at its hyphen)
        self.sampling_label.setWordWrap(True)
        for w in (self.caption, self.combo, self.greedy_box, self.sampling_label):
            lay.addWidget(w)  # int8_box is not in the top bar (a 4:3 screen has no room): the window places it
        self.set_current(current)
        self.combo.installEventFilter(self)  # a new font (the type scale) refits its width
        self.combo.activated.connect(self._on_activated)
        self.greedy_box.toggled.connect(self._on_greedy)
        self.int8_box.toggled.connect(lambda on: self.weights_chosen.emit("int8" if on else "default"))
        self.retranslate()

    # ---- state ---------------------------------------------------------------------------------------------
    @property
    def current(self) -> str:
        return str(self.combo.currentData())

    def set_current(self, key: str) -> None:
        """Show ``key`` as the chosen model without emitting ``model_chosen``."""
        i = self.combo.findData(key)
        if i >= 0:
            self.combo.setCurrentIndex(i)

    def bundled(self) -> catalog.BundledModel:
        """The catalog entry of the chosen model (a user's own model takes the code model's presets)."""
        key = self.current
        return catalog.by_key(key) if key != CUSTOM else catalog.CODE

    @property
    def greedy(self) -> bool:
        return self.greedy_box.isChecked()

    def sampling(self, seed: int) -> dict:
        """The sampling of a request: keyword arguments of ``EngineBridge.submit`` (temperature, top_p, seed)."""
        if self.greedy:
            return {"temperature": 0.0, "top_p": 1.0, "seed": None}
        m = self.bundled()
        return {"temperature": m.temperature, "top_p": m.top_p, "seed": int(seed)}

    def set_seed(self, seed: int | None) -> None:
        self.seed = seed
        self._update_label()

    def show_sampling(self, temperature: float, top_p: float) -> None:
        """The temperature and top-p in force (the session's: a lookup preset brings its own), shown beside the
        switch."""
        m = self.bundled()
        shown = None if (temperature, top_p) == (m.temperature, m.top_p) else (float(temperature), float(top_p))
        if shown != self.shown:
            self.shown = shown
            self._update_label()

    # ---- text ----------------------------------------------------------------------------------------------
    def retranslate(self) -> None:
        self.caption.setText(_tr("Model"))
        for i in range(self.combo.count()):
            self.combo.setItemText(i, display_name(str(self.combo.itemData(i)), self.custom_dir))
        self.combo.setToolTip(_tr("Which model writes. The poetry model learned Tang and Song poems; the code "
                                  "model learned Python's documentation and source."))
        self._fit_combo()
        self.greedy_box.setText(_tr("Greedy"))
        self.int8_box.setText(_tr("int8"))
        self.int8_box.setToolTip(_tr("A thinner book: the model's weights as int8, about a quarter of the bytes. The "
                                     "engine restarts with them; the readout then measures the trip again."))
        self.greedy_box.setToolTip(_tr("Greedy: always the most likely token (the same answer every time). Off: a "
                                       "token is drawn from the probabilities, with the seed shown."))
        self._update_label()

    def _fit_combo(self) -> None:
        """Wide enough for the longest model name in this language and font, beside the drop-down arrow (its
        size hint is computed once, in the first language, and a style sheet's padding is not in it)."""
        fm = QFontMetrics(self.combo.font())
        text_w = max((fm.horizontalAdvance(self.combo.itemText(i)) for i in range(self.combo.count())), default=0)
        arrow = self.combo.style().pixelMetric(self.combo.style().PixelMetric.PM_ScrollBarExtent, None, self.combo)
        self.combo.setMinimumWidth(text_w + max(arrow, fm.height()) + 2 * fm.averageCharWidth() + 12)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.combo and event.type() == QEvent.FontChange:
            self._fit_combo()
        return False

    def _update_label(self) -> None:
        if self.greedy:
            self.sampling_label.setText(_tr("always the most likely token"))
            return
        m = self.bundled()
        t, p = self.shown or (m.temperature, m.top_p)
        text = _tr("temperature {t} · top-p {p}").format(t=f"{t:g}", p=f"{p:g}")
        if self.seed is not None:
            text += " · " + _tr("seed {n}").format(n=self.seed)
        self.sampling_label.setText(" · ".join(keep_together(part) for part in text.split(" · ")))

    def _on_activated(self, _index: int) -> None:
        self._update_label()
        self.model_chosen.emit(self.current)

    def _on_greedy(self, _on: bool) -> None:
        self._update_label()
        self.sampling_changed.emit()


def bundled_for(key: str):
    """The catalog's model for ``key`` ("code", "poems"...; a user's own model, "custom", is the code model's)."""
    return catalog.by_key(key) if key != CUSTOM else catalog.CODE


def presets_for(key: str) -> list[str]:
    """Prompts model ``key`` continues well (a user's own model gets the code model's)."""
    return list(bundled_for(key).presets)


class ModelSwitcher:
    """Which model writes (a collaborator of ``MainWindow``): presets, and a fresh engine on the model picked.

    Args:
        session: the Live session's state: its ``model_key`` and the model's sampling (temperature, top-p).
        bridge: the ``EngineBridge`` (its ``options["model_dir"]`` says which weights the next engine loads).
        custom_model_dir: a ``--model DIR`` that is not a bundled model's, or None.
        pinned: True when a language switch must not change the model (a ``--model DIR``, or the visitor chose).
        model_choice: the top bar's ``ModelChoice`` (the visitor's pick).
        page: the ``LivePage`` (its prompt box gets the model's presets).
        lookup: the ``LookupPresets`` (the new model's lookup presets are offered after its others).
        tour: returns the tour page, or None while it is not built.
        restart: resets the answer and starts an engine on the new model.
    """

    def __init__(self, session, bridge, custom_model_dir: str | None, pinned: bool, model_choice: ModelChoice, page,
                 lookup, tour, restart):
        self.session = session
        self.bridge = bridge
        self.custom_model_dir = custom_model_dir
        self._model_pinned = pinned
        self.model_choice = model_choice
        self.live_page = page
        self.lookup = lookup
        self._tour = tour
        self._restart = restart
        model_choice.model_chosen.connect(self._on_model_picked)

    @property
    def model_key(self) -> str:
        return self.session.model_key

    @property
    def pinned(self) -> bool:
        return self._model_pinned

    def presets(self) -> list[str]:
        """Prompts the chosen model continues well (a user's own model gets the code model's)."""
        return presets_for(self.model_key)

    def _bundled(self):
        return bundled_for(self.model_key)

    def _on_model_picked(self, key: str) -> None:
        self._model_pinned = True  # the visitor chose: a language switch no longer changes it
        self.choose_model(key)

    def choose_weights(self, kind: str) -> None:
        """Run the model with ``kind`` weights (``gui.live.state.WEIGHTS``; "default": the machine's measured choice,
        fp16 where it is faster): the session's ``weights``, the engine service's ``weights`` option (None for the
        default), and a fresh engine when one runs (as ``choose_model`` restarts it for another model)."""
        if kind == self.session.weights:
            return
        self.session.set_weights(kind)  # ValueError for another kind
        self.bridge.options["weights"] = None if kind == "default" else kind
        log.info("weights: %s", kind)
        if self.bridge.is_running():
            self._restart()

    def choose_model(self, key: str) -> None:
        """Let model ``key`` ("code", "poems", or "custom" for --model DIR) write: its presets in the prompt box,
        and, when an engine is running, a fresh engine on it (the answer so far is reset; the readout says that
        the model is loading until it is ready)."""
        if key == self.model_key:
            return
        if key == CUSTOM and not self.custom_model_dir:
            return
        self.session.set_model_key(key)
        bundled = self._bundled()
        self.session.set_sampling(temperature=bundled.temperature, top_p=bundled.top_p, seed=None)
        path = self.custom_model_dir if key == CUSTOM else str(catalog.by_key(key).path())
        self.bridge.options["model_dir"] = path
        self.bridge.options["draft_model_dir"] = None  # a bundled model brings its own draft
        self.model_choice.set_current(key)
        self.live_page.set_presets(self.presets())
        self.lookup.offer()  # the new model's lookup presets, after its others
        tour = self._tour()
        if tour is not None:
            tour.use_model(path)
        log.info("model: %s (%s)", key, path)
        if self.bridge.is_running():
            self._restart()
