"""``TourWidget``: the guided tour, one page per section of the source, with a progress strip and captions.

Layout, top to bottom: a strip of clickable section chips (the progress strip), the section's animated scene
(a ``QGraphicsView`` that fits the scene), the caption (the source's words, at least 24 px), and a row with the
section's own controls, the visitor's question and previous/next buttons.

Live numbers: with an ``EngineBridge`` the widget asks the engine process for one ``analyze`` of kind
``"tour"`` per question (``model/teaching/analysis.py``) and redraws when the answer arrives; until then, and without an
engine, the scenes show illustrative numbers, badged as such. The GUI process never imports torch.

The lead hosts the widget and wires presenter keys to ``next()``, ``prev()`` and ``goto(i)`` (0-based).

The widget is split by concept: ``layout.py`` (the frame, the chips, sizes), ``terms.py`` (caption, terms,
model line, glossary), ``controls.py`` (each page's controls and the game); this module holds the page flow.
"""

from __future__ import annotations

import itertools
import logging
import statistics
from collections import deque
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QWidget

from animations.clock import AnimationClock
from animations.scenes import look as scene_look
from animations.scenes.look import T
from gui.tour.controls import GAME_SENTENCES, TourControls
from gui.tour.data import TourData, default_prompt, tour_prompt_for
from gui.tour.game import GpuGame
from gui.tour.layout import CHIP_PX, CONTROL_PX, STYLE, TourLayout
from gui.tour.sections import PAGES, caption_text, chip_text, page_title
from gui.tour.terms import MODEL_OUTPUT_PAGES, TourTerms

__all__ = ["TourWidget", "CONTROL_PX", "CHIP_PX", "MAX_INTRO_S", "GAME_SENTENCES",
           "MODEL_OUTPUT_PAGES"]

log = logging.getLogger(__name__)

MAX_INTRO_S = 6.0  # no page's intro takes longer than this at pace 1: a longer one plays faster


class TourWidget(TourLayout, TourTerms, TourControls, QWidget):
    """The tour. ``goto(i)``/``next()``/``prev()`` move between the ``section_count`` pages (0-based index).

    Args:
        bridge: an ``EngineBridge`` for live measurements, or None (illustrative numbers).
        data: a ``TourData`` (default: the bundled model's), e.g. with ``analysis`` already filled.
        lang: "en" or "zh" (only picks the default question; the language itself is the application's, see
            ``set_language``).
        font_family: the family for every text (one with Chinese glyphs).
    Signals: ``section_changed(int)``.
    """

    section_changed = Signal(int)

    def __init__(self, bridge=None, data: TourData | None = None, lang: str = "en", font_family: str | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("tour")
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet(STYLE)
        self.bridge = bridge
        self.data = data or TourData()
        self.lang = lang
        self.font_family = font_family
        scene_look.set_font_family(font_family, lang)
        self.prompt = default_prompt(self.data.model_dir, lang)  # what this model continues with words
        self._learner_prompt = False  # the learner typed their own question here (it stays until they change it)
        self._offered_prompt: str | None = None  # the Live page's prompt last offered through set_prompt
        self._index = 0
        self._ids = itertools.count(1)
        self._pending: str | None = None
        # section state
        self.attn_layer = 0
        self.attn_head = 0
        self.temperature = 1.0
        self.top_p = 1.0
        self.top_k = 0
        self.draw_seed = 0
        self.drawn: int | None = None
        self.kv_tokens = 2000
        self.game = GpuGame(seed=7, sentences=self.game_sentences())
        self.game_live = False  # the apprentice's guesses: False = random illustration, True = live draft model
        self._game_text = ""  # the running text the live apprentice continues
        self._game_wait: str | None = None  # analysis id of the live trip being measured
        self._game_accepted = 0  # the accepted count of the last live trip (the game's accept source)
        self._game_trip: dict | None = None  # the last live trip's data
        self._sharding: dict = {"mode": "tp", "n": 1}  # what the Live page's tearing slider has in force
        self._worker_steps: deque[list[dict]] = deque(maxlen=20)  # per-worker timings of recent sharded trips
        self.scenes = [page.scene() for page in PAGES]
        self.clock = AnimationClock(self)
        self.clock.tick.connect(self._on_tick)
        self._build_ui()
        self._rebuild(replay=True)
        if bridge is not None:
            bridge.analysis.connect(self._on_analysis)
            bridge.ready.connect(self._on_ready)
            if hasattr(bridge, "sharding"):
                bridge.sharding.connect(self._on_sharding)
            if hasattr(bridge, "step"):
                bridge.step.connect(self._on_step)
            if getattr(bridge, "info", None):
                self._on_ready(bridge.info)

    # ---- public API -----------------------------------------------------------------------------------------
    @property
    def section_count(self) -> int:
        """Pages in the tour: 15 sections, the game, the metaphor table, the three questions."""
        return len(PAGES)

    @property
    def current_index(self) -> int:
        """The page shown (0-based)."""
        return self._index

    def pages_key(self) -> str:
        """The stable key of the current page ("request" … "questions")."""
        return PAGES[self._index].key

    @property
    def current_scene(self):
        return self.scenes[self._index]

    def goto(self, index: int) -> None:
        """Show page ``index`` (0-based, clamped) and play its intro."""
        index = max(0, min(self.section_count - 1, int(index)))
        changed = index != self._index
        self._index = index
        self._rebuild(replay=True)
        if changed:
            self.section_changed.emit(index)

    def next(self) -> None:
        """The next page (stays on the last)."""
        self.goto(self._index + 1)

    def prev(self) -> None:
        """The previous page (stays on the first)."""
        self.goto(self._index - 1)

    def set_language(self, lang: str) -> None:
        """Switch the application's language ("en"/"zh") and redraw every text of the tour."""
        from gui import i18n
        self.lang = lang
        scene_look.set_font_family(self.font_family, lang)
        self._apply_fonts()
        i18n.set_language(lang)  # Qt sends LanguageChange: retranslate() redraws
        self.retranslate()

    def set_prompt(self, text: str) -> None:
        """Use ``text`` as the visitor's question everywhere, and ask the engine to measure it.

        The learner's own question (typed in "Your question" and confirmed with Enter) stays: the same Live
        prompt offered again (the host calls this each time the tour is shown) does not replace it; a Live
        prompt that changed does."""
        offered = (text or "").strip()
        if self._learner_prompt and offered == self._offered_prompt:
            return
        self._offered_prompt = offered
        self._learner_prompt = False
        self._use_prompt(tour_prompt_for(offered, self.data.model_dir, self.lang))

    def _ask_own_question(self) -> None:
        """Enter in "Your question": the learner's question, kept until they change it; the focus goes back to
        the page (so the next key turns the page, not the field's cursor)."""
        self._use_prompt(self.prompt_edit.text())
        self._learner_prompt = True
        self.focus_home()

    def focus_home(self) -> None:
        """Give the keyboard focus to the page (its stage), out of any field."""
        self.view.setFocus(Qt.OtherFocusReason)

    def game_press(self) -> None:
        """One press of the game (page 16): the clicker's "next" there, and the "Press: one trip" button."""
        self._game_press()

    def _use_prompt(self, text: str) -> None:
        text = (text or "").strip() or default_prompt(self.data.model_dir, self.lang)
        if text == self.prompt and self.data.analysis is not None:
            return
        self.prompt = text
        self.prompt_edit.setText(text)
        self.data.analysis = None
        self._request_analysis()
        self._rebuild(replay=True)

    @property
    def data(self) -> TourData:
        """The loaded model's facts (``TourData``). Setting another model's data (the window's model switch)
        also switches the question to what that model continues well, unless the learner typed their own."""
        return self._data

    def use_model(self, model_dir: str | Path) -> None:
        """The window switched its model to ``model_dir``: the tour reads that model's facts (``data``)."""
        self.data = TourData(model_dir)

    @data.setter
    def data(self, data: TourData) -> None:
        old = getattr(self, "_data", None)
        self._data = data
        if old is None or getattr(old, "model_dir", None) == getattr(data, "model_dir", None) or \
                self._learner_prompt:
            return
        # the Live page puts the new model's presets in its box too: what it offered before was for the old one
        self._offered_prompt = None
        self.prompt = default_prompt(data.model_dir, self.lang)
        self.prompt_edit.setText(self.prompt)
        self._request_analysis()
        self._rebuild(replay=False)

    def finish_animation(self) -> None:
        """Jump the current scene to the end of its intro (screenshots), fitted with everything it drew, once the
        layout has settled and the scene is built for its view (``settle``)."""
        self.settle()
        self.current_scene.finish()
        self.view.fit()  # items the intro added past the scene's rect are shown whole, a little smaller

    def live_workers(self) -> dict | None:
        """Medians of the worker timings (ms) over the recent sharded trips of the Live page, or None while the
        book is whole: {"mode", "n", "trips", "compute_ms", "comm_ms", "bubble_ms"}."""
        n = int(self._sharding.get("n", 1) or 1)
        steps = [w for w in self._worker_steps if len(w) == n]
        if n < 2 or not steps:
            return None
        def median(key):
            return statistics.median(x.get(key, 0.0) for w in steps for x in w)
        return {"mode": self._sharding.get("mode", "tp"), "n": n, "trips": len(steps),
                "compute_ms": median("compute_ms"), "comm_ms": median("comm_ms"), "bubble_ms": median("bubble_ms")}

    def _on_sharding(self, event: dict) -> None:
        self._sharding = dict(event)
        self._worker_steps.clear()

    def _on_step(self, report: dict) -> None:
        workers = report.get("workers") or []
        if workers:
            self._worker_steps.append(list(workers))
            if self.pages_key() == "parallel" and len(self._worker_steps) % 5 == 1:
                self._rebuild(replay=False)

    def context(self) -> dict:
        """The dict the current scene is drawn from (see ``TourData.context``); "keyboard" is False in a kiosk
        (``gui.kiosk.touch_targets.presets_only``): pages then name only what a finger can press."""
        return {**self._context(), "live_workers": self.live_workers(),
                "keyboard": bool(getattr(self, "keyboard_hints", True))}

    def _context(self) -> dict:
        return self.data.context(
            self.prompt, self.lang, attn_layer=self.attn_layer, attn_head=self.attn_head,
            sampling={"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                      "drawn": self.drawn}, kv_tokens=self.kv_tokens, game=self.game.snapshot(),
            game_source={"live": self.game_live, "reason": self.live_draft_reason(), "trip": self._game_trip,
                         "waiting": self._game_wait is not None})

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    # ---- drawing ------------------------------------------------------------------------------------------
    def _rebuild(self, replay: bool) -> None:
        """Redraw the current page from the current data. ``replay``: play the intro from the start, else show
        the end state (a control moved, the language changed, a measurement arrived)."""
        page = PAGES[self._index]
        scene = self.scenes[self._index]
        for i, chip in enumerate(self.chips):
            chip.setChecked(i == self._index)
            if not chip.toolTip():
                chip.setToolTip(page_title(PAGES[i]))
        if not any(self.chip_strip.full_labels):
            self.chip_strip.set_labels([chip_text(p) for p in PAGES])
        if not self.prev_button.text():
            self.prompt_label.setText(T("Your question:"))
            self.prev_button.setText(T("◀ Back"))
            self.next_button.setText(T("Next ▶"))
        self.title_label.setText(page_title(page))
        self._set_caption(caption_text(page))
        # the words and controls around the stage first, placed at once: the view has its size for this page
        # before the scene is built for it (look.fit_factor), not one build per row that arrives
        self._update_model_line(page.key)
        if page.key != "metaphors" and self.stage_stack.currentWidget() is not self.view:
            self.stage_stack.setCurrentWidget(self.view)
        self._build_controls(page.key)
        self.layout().activate()
        if self.view.scene() is not scene:
            self.view.setScene(scene)
        scene.build(self.context())
        if not replay:
            scene.finish()
        self._annotate_scene(scene)
        self.view.fit()
        self._refit_scene()
        self._update_clock()

    def _update_clock(self) -> None:
        if self.isVisible() and not self.current_scene.settled:
            self.clock.start()
        else:
            self.clock.stop()

    def _on_tick(self, dt_s: float) -> None:
        scene = self.current_scene
        if scene.t < scene.duration and scene.duration > MAX_INTRO_S:
            dt_s *= scene.duration / MAX_INTRO_S  # a long intro (the end's closing line) plays within 6 s
        scene.advance(dt_s)
        if scene.settled:
            self.clock.stop()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.clock.stop()
        self._refit_timer.stop()
        super().hideEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.clock.stop()
        self._refit_timer.stop()
        super().closeEvent(event)

    # ---- engine -------------------------------------------------------------------------------------------
    def _on_ready(self, info: dict) -> None:
        self.data.engine_info = info
        self._request_analysis()
        if self.pages_key() == "game":
            self._build_controls("game")  # the live switch may have become available

    def _request_analysis(self) -> None:
        if self.bridge is None:
            return
        aid = f"tour-{next(self._ids)}"
        if self.bridge.analyze(aid, "tour", self.prompt):
            self._pending = aid

    def _on_analysis(self, event: dict) -> None:
        if self._game_wait is not None and event.get("analysis_id") == self._game_wait:
            self._on_game_trip(event)
            return
        if event.get("analysis_id") != self._pending:
            return
        self._pending = None
        if event.get("error"):
            log.warning("tour analysis failed: %s", event["error"])
            return
        self.data.analysis = event.get("data")
        self._rebuild(replay=False)
