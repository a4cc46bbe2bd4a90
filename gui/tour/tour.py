"""``TourWidget``: the guided tour, one page per section of the source, with a progress strip and captions.

Layout, top to bottom: a strip of clickable section chips (the progress strip), the section's animated scene
(a ``QGraphicsView`` that fits the scene), the caption (the source's words, at least 24 px), and a row with the
section's own controls, the visitor's question and previous/next buttons.

Live numbers: with an ``EngineBridge`` the widget asks the engine process for one ``analyze`` of kind
``"tour"`` per question (``model/analysis.py``) and redraws when the answer arrives; until then, and without an
engine, the scenes show illustrative numbers, badged as such. The GUI process never imports torch.

The lead hosts the widget and wires presenter keys to ``next()``, ``prev()`` and ``goto(i)`` (0-based).
"""

from __future__ import annotations

import itertools
import logging
import random
import statistics
from collections import deque

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QPainter
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from animations.clock import AnimationClock
from animations.scenes import base as scene_base
from animations.scenes.base import T
from gui.game import GpuGame
from gui.tour.data import DEFAULT_PROMPTS, TourData
from gui.tour.sections import PAGES, caption_text, chip_text, page_title

log = logging.getLogger(__name__)

CAPTION_PX = 24  # at 1080p: readable from two metres (the brief asks for at least 20 px)
CONTROL_PX = 20

STYLE = """
QWidget#tour { background: #0f1419; color: #eef3f8; }
QLabel { color: #eef3f8; }
QLabel#caption { color: #eef3f8; padding: 6px 18px; }
QPushButton { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px;
              padding: 6px 14px; min-height: 34px; }
QPushButton:hover { border-color: #86aad3; }
QPushButton:checked { background: #4a74a3; border-color: #ffc94a; }
QPushButton:disabled { color: #6b7a8a; border-color: #253240; }
QPushButton#chip { min-width: 44px; padding: 4px 8px; min-height: 30px; }
QPushButton#chip:checked { background: #ffc94a; color: #1b1d21; border-color: #ffc94a; }
QLineEdit { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px; padding: 4px 8px; }
QSlider::groove:horizontal { height: 8px; background: #33465b; border-radius: 4px; }
QSlider::handle:horizontal { width: 26px; margin: -10px 0; background: #ffc94a; border-radius: 13px; }
"""


class _View(QGraphicsView):
    """Shows a scene scaled to fit, keeping its aspect ratio."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setStyleSheet("background: #0f1419;")
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def fit(self) -> None:
        if self.scene() is not None:
            self.fitInView(self.scene().sceneRect(), Qt.KeepAspectRatio)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.fit()


class TourWidget(QWidget):
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
        scene_base.set_font_family(font_family, lang)
        self.prompt = DEFAULT_PROMPTS.get(lang, DEFAULT_PROMPTS["en"])
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
        self.game = GpuGame(seed=7)
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
        scene_base.set_font_family(self.font_family, lang)
        self._apply_fonts()
        i18n.set_language(lang)  # Qt sends LanguageChange: retranslate() redraws
        self.retranslate()

    def set_prompt(self, text: str) -> None:
        """Use ``text`` as the visitor's question everywhere, and ask the engine to measure it."""
        text = (text or "").strip() or DEFAULT_PROMPTS.get(self.lang, DEFAULT_PROMPTS["en"])
        if text == self.prompt and self.data.analysis is not None:
            return
        self.prompt = text
        self.prompt_edit.setText(text)
        self.data.analysis = None
        self._request_analysis()
        self._rebuild(replay=True)

    def finish_animation(self) -> None:
        """Jump the current scene to the end of its intro (screenshots)."""
        self.current_scene.finish()

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
        """The dict the current scene is drawn from (see ``TourData.context``)."""
        return {**self._context(), "live_workers": self.live_workers()}

    def _context(self) -> dict:
        return self.data.context(
            self.prompt, self.lang, attn_layer=self.attn_layer, attn_head=self.attn_head,
            sampling={"temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                      "drawn": self.drawn}, kv_tokens=self.kv_tokens, game=self.game.snapshot(),
            game_source={"live": self.game_live, "reason": self.live_draft_reason(), "trip": self._game_trip,
                         "waiting": self._game_wait is not None})

    def live_draft_reason(self) -> str | None:
        """Why the game's "live draft model" switch is disabled (translated), or None when it can be used."""
        if self.bridge is None:
            return T("no engine is running here")
        info = getattr(self.bridge, "info", None) or self.data.engine_info
        if not info:
            return T("the engine is still starting")
        if not info.get("draft"):
            return T("no draft model is loaded") + (f" ({info['draft_error']})" if info.get("draft_error") else "")
        return None

    # ---- UI -----------------------------------------------------------------------------------------------
    def _font(self, px: int, bold: bool = False) -> QFont:
        return scene_base.font(px, bold)

    def _build_ui(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(4)
        strip = QHBoxLayout()
        strip.setSpacing(4)
        self.chips: list[QPushButton] = []
        self._chip_group = QButtonGroup(self)
        self._chip_group.setExclusive(True)
        for i, page in enumerate(PAGES):
            b = QPushButton()
            b.setObjectName("chip")
            b.setCheckable(True)
            b.setFont(self._font(18))
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(lambda _=False, i=i: self.goto(i))
            self._chip_group.addButton(b, i)
            strip.addWidget(b, 1)
            self.chips.append(b)
        outer.addLayout(strip)
        self.view = _View(self)
        outer.addWidget(self.view, 1)
        self.caption = QLabel()
        self.caption.setObjectName("caption")
        self.caption.setWordWrap(True)
        self.caption.setFont(self._font(CAPTION_PX))
        self.caption.setMinimumHeight(int(CAPTION_PX * 1.5 * 3 + 12))
        self.caption.setAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        outer.addWidget(self.caption)
        bottom = QHBoxLayout()
        self.controls = QWidget()
        self.controls_layout = QHBoxLayout(self.controls)
        self.controls_layout.setContentsMargins(0, 0, 0, 0)
        bottom.addWidget(self.controls, 3)
        self.prompt_label = QLabel()
        self.prompt_label.setFont(self._font(CONTROL_PX))
        bottom.addWidget(self.prompt_label)
        self.prompt_edit = QLineEdit(self.prompt)
        self.prompt_edit.setFont(self._font(CONTROL_PX))
        self.prompt_edit.setMaxLength(400)
        self.prompt_edit.returnPressed.connect(lambda: self.set_prompt(self.prompt_edit.text()))
        bottom.addWidget(self.prompt_edit, 2)
        self.prev_button = QPushButton()
        self.next_button = QPushButton()
        for b, slot in ((self.prev_button, self.prev), (self.next_button, self.next)):
            b.setFont(self._font(CONTROL_PX, True))
            b.clicked.connect(slot)
            bottom.addWidget(b)
        outer.addLayout(bottom)

    def _apply_fonts(self) -> None:
        for chip in self.chips:
            chip.setFont(self._font(18))
        self.caption.setFont(self._font(CAPTION_PX))
        for w in (self.prompt_label, self.prompt_edit):
            w.setFont(self._font(CONTROL_PX))
        for b in (self.prev_button, self.next_button):
            b.setFont(self._font(CONTROL_PX, True))

    def retranslate(self) -> None:
        """Re-apply every string in the current language."""
        for page, chip in zip(PAGES, self.chips):
            chip.setText(chip_text(page))
            chip.setToolTip(page_title(page))
        self.prompt_label.setText(T("Your question:"))
        self.prev_button.setText(T("◀ Back"))
        self.next_button.setText(T("Next ▶"))
        self._rebuild(replay=False)

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
            if not chip.text():
                chip.setText(chip_text(PAGES[i]))
                chip.setToolTip(page_title(PAGES[i]))
        if not self.prev_button.text():
            self.prompt_label.setText(T("Your question:"))
            self.prev_button.setText(T("◀ Back"))
            self.next_button.setText(T("Next ▶"))
        self.caption.setText(caption_text(page))
        scene.build(self.context())
        if not replay:
            scene.finish()
        if self.view.scene() is not scene:
            self.view.setScene(scene)
        self.view.fit()
        self._build_controls(page.key)
        self._update_clock()

    def _update_clock(self) -> None:
        if self.isVisible() and not self.current_scene.settled:
            self.clock.start()
        else:
            self.clock.stop()

    def _on_tick(self, dt_s: float) -> None:
        scene = self.current_scene
        scene.advance(dt_s)
        if scene.settled:
            self.clock.stop()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.view.fit()
        self._update_clock()

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.clock.stop()
        super().hideEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        self.clock.stop()
        super().closeEvent(event)

    # ---- section controls ---------------------------------------------------------------------------------
    def _clear_controls(self) -> None:
        while self.controls_layout.count():
            item = self.controls_layout.takeAt(0)
            w = item.widget()
            if w is not None:
                w.hide()
                w.deleteLater()

    def _button(self, text: str, slot, checkable: bool = False, checked: bool = False) -> QPushButton:
        b = QPushButton(text)
        b.setFont(self._font(CONTROL_PX, True))
        b.setCheckable(checkable)
        b.setChecked(checked)
        b.clicked.connect(slot)
        self.controls_layout.addWidget(b)
        return b

    def _slider(self, label: str, lo: int, hi: int, value: int, slot) -> QSlider:
        lab = QLabel(label)
        lab.setFont(self._font(CONTROL_PX))
        self.controls_layout.addWidget(lab)
        s = QSlider(Qt.Horizontal)
        s.setRange(lo, hi)
        s.setValue(value)
        s.setMinimumWidth(120)
        s.valueChanged.connect(slot)
        self.controls_layout.addWidget(s, 1)
        return s

    def _build_controls(self, key: str) -> None:
        self._clear_controls()
        if key == "prefill":
            a = (self.data.analysis or {}).get("attention") or {}
            n_layer = int(a.get("n_layer") or self.data.config.get("n_layer") or 1)
            n_head = int(a.get("n_head") or self.data.config.get("n_head") or 1)
            self._button(T("Layer {i} of {n}").format(i=self.attn_layer + 1, n=n_layer),
                         lambda: self._set_attn((self.attn_layer + 1) % n_layer, self.attn_head))
            self._button(T("Head {i} of {n}").format(i=self.attn_head + 1, n=n_head),
                         lambda: self._set_attn(self.attn_layer, (self.attn_head + 1) % n_head))
        elif key == "sampling":
            self._slider(T("Temperature"), 0, 200, int(self.temperature * 100),
                         lambda v: self._set_sampling(temperature=v / 100))
            self._slider(T("top-p"), 5, 100, int(self.top_p * 100), lambda v: self._set_sampling(top_p=v / 100))
            self._slider(T("top-k"), 0, 50, self.top_k, lambda v: self._set_sampling(top_k=v))
            self._button(T("Draw"), self._draw)
        elif key == "kv_size":
            for n in (2000, 100_000):
                self._button(T("{n:,} tokens").format(n=n), lambda _=False, n=n: self._set_kv_tokens(n), True,
                             self.kv_tokens == n)
        elif key == "game":
            for mode, label in (("alone", T("Alone")), ("apprentice", T("With the apprentice")),
                                ("shared", T("Sharing the table"))):
                self._button(label, lambda _=False, m=mode: self._game_mode(m), True, self.game.mode == mode)
            press = self._button(T("Press: one trip"), self._game_press)
            press.setMinimumWidth(200)
            self._button(T("Start over"), lambda: self._game_mode(self.game.mode))
            if self.game.mode == "apprentice":
                reason = self.live_draft_reason()
                self._button(T("Guesses: random"), lambda: self._game_set_live(False), True, not self.game_live)
                live = self._button(T("Guesses: live draft"), lambda: self._game_set_live(True), True,
                                    self.game_live)
                live.setEnabled(reason is None)
                live.setToolTip(T("Disabled: {reason}").format(reason=reason) if reason else
                                T("Each press asks the engine for one real verify trip of the bundled draft model"))
        self.controls_layout.addStretch(1)

    def _refresh(self) -> None:
        self._rebuild(replay=False)

    def _set_attn(self, layer: int, head: int) -> None:
        self.attn_layer, self.attn_head = layer, head
        self._refresh()

    def _set_sampling(self, **kw) -> None:
        for k, v in kw.items():
            setattr(self, k, v)
        self.drawn = None
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _draw(self) -> None:
        """Draw one token from the reshaped top-50 (seeded: the n-th draw is the same every time)."""
        from animations.scenes.trips import reshape
        probs = reshape(self.context())
        self.draw_seed += 1
        rng = random.Random(self.draw_seed)
        r, acc = rng.random(), 0.0
        self.drawn = None
        for i, p in enumerate(probs):
            acc += p
            if p > 0 and r <= acc:
                self.drawn = i
                break
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _set_kv_tokens(self, n: int) -> None:
        self.kv_tokens = n
        self._refresh()

    def _game_mode(self, mode: str) -> None:
        live = self.game_live and self.live_draft_reason() is None
        self.game = GpuGame(mode=mode, seed=7, accept_source=(lambda k: self._game_accepted) if live else None)
        self._game_text = self.prompt
        self._game_wait = None
        self._game_trip = None
        self._refresh()

    def _game_set_live(self, on: bool) -> None:
        """The apprentice's switch: random illustration (False) or the live draft model (True, when loaded)."""
        self.game_live = bool(on) and self.live_draft_reason() is None
        self._game_mode(self.game.mode)

    def _game_press(self) -> None:
        """One trip. With the live draft model, a trip with guesses first asks the engine for one real verify
        trip over the running text; the game presses when the answer arrives (``_on_game_trip``)."""
        if self._game_wait is not None:
            return  # the last live trip is still being measured
        k = self.game.next_guesses()
        if self.game.accept_source is not None and k and self.bridge is not None:
            aid = f"game-{next(self._ids)}"
            if self.bridge.analyze(aid, "speculative_trip", self._game_text or self.prompt, k=k):
                self._game_wait = aid
                return
        self._game_after_press()

    def _game_after_press(self) -> None:
        self.game.press()
        if self.game.last and self.game.last[0].get("done"):
            self._game_text = self.prompt  # a new person, a new question
        scene = self.current_scene
        scene.build(self.context())
        scene.finish()

    def _on_game_trip(self, event: dict) -> None:
        self._game_wait = None
        data = event.get("data") or {}
        if event.get("error") or not data.get("available"):
            log.warning("game: live trip failed (%s)", event.get("error") or "no draft model")
            self.game_live = False
            self._game_mode(self.game.mode)  # back to the illustration, with the switch's reason shown
            return
        self._game_trip = data
        self._game_accepted = int(data.get("accepted", 0))
        self._game_text = (self._game_text or self.prompt) + str(data.get("text", ""))
        self._game_after_press()

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
