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

import html

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QCursor, QFont, QPainter
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGraphicsSimpleTextItem,
    QGraphicsTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSlider,
    QStackedWidget,
    QTextBrowser,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from animations.clock import AnimationClock
from animations.scenes import base as scene_base
from animations.scenes.base import T
from gui.game import GpuGame
from animations.typescale import TypeScale, set_role
from gui.tour import glossary
from gui.tour.data import DEFAULT_PROMPTS, TourData
from gui.tour.flow import flow_widget
from gui.tour.sections import PAGES, caption_text, chip_text, page_title

log = logging.getLogger(__name__)

CAPTION_PX = 24  # the least a caption gets: readable from two metres at 720p (the brief asks for at least 20 px)
CONTROL_PX = 20  # the least a control's text gets
CHIP_PX = 18  # the least a chip's number gets
# Above those floors, sizes follow the window height (animations.typescale): caption "body", controls and chips
# "label", so that a 4K screen gets 49 px captions and no text is under height / 60.
MAX_INTRO_S = 6.0  # no page's intro takes longer than this at pace 1: a longer one plays faster
# Pages whose scene shows what the loaded model writes: they say in one line what that model is.
MODEL_OUTPUT_PAGES = ("sampling", "decode", "streaming", "reasoning", "speculative", "questions")
# What the game's people write, one sentence each in turn (translated; see game_sentences).
GAME_SENTENCES = ("One trip of the book writes one token.", "The cheat sheet keeps what was read.",
                  "Sharing the table costs no extra trip.")
TERM_COLOR = "#9fd0ff"  # underlined terms in a caption: hover for a tooltip, click or tap for the line below
NO_BREAK_HYPHEN = "\u2011"  # a term is never broken at its hyphen ("top-" / "p"); the bundled fonts have it

STYLE = """
QWidget#tour { background: #0f1419; color: #eef3f8; }
QLabel { color: #eef3f8; }
QLabel#caption { color: #eef3f8; padding: 6px 18px; }
QPushButton { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px;
              padding: 6px 14px; min-height: 34px; }
QPushButton:hover { border-color: #86aad3; }
QPushButton:checked { background: #4a74a3; border-color: #ffc94a; }
QPushButton:disabled { color: #6b7a8a; border-color: #253240; }
QPushButton#chip { min-width: 0px; padding: 4px 4px; min-height: 30px; }
QPushButton#chip:checked { background: #ffc94a; color: #1b1d21; border-color: #ffc94a; }
QPushButton:focus { border-color: #ffc94a; }
QLineEdit { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px; padding: 4px 8px; }
QLineEdit:focus { border-color: #ffc94a; }
QLabel#termLine { color: #9fd0ff; padding: 2px 18px; }
QLabel#modelLine { color: #aab7c4; padding: 2px 18px; }
QTextBrowser#glossary { background: #0f1419; color: #eef3f8; border: none; padding: 8px 18px; }
QSlider { border: 2px solid transparent; border-radius: 8px; padding: 0px 4px; min-height: 34px; }
QSlider:focus { border: 2px solid #ffc94a; }
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


class _ChipStrip(QWidget):
    """The progress strip: one chip per page, laid out by hand so that it never asks for more width than the
    window has. Where the full labels ("Game", "Terms", "The end") do not fit, every chip shows its page number
    (the title stays in its tooltip); chips then shrink to their numbers' width."""

    SPACING = 4

    def __init__(self, parent=None):
        super().__init__(parent)
        self.chips: list[QPushButton] = []
        self.full_labels: list[str] = []
        self.compact = False
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def add(self, chip: QPushButton) -> None:
        chip.setParent(self)
        self.chips.append(chip)
        self.full_labels.append(chip.text())

    def set_labels(self, labels: list[str]) -> None:
        self.full_labels = list(labels)
        self._layout()

    def _widths(self, labels: list[str]) -> list[int]:
        out = []
        for chip, label in zip(self.chips, labels):
            fm = chip.fontMetrics()
            out.append(max(fm.horizontalAdvance(label) + 24, fm.height() + 16))  # padding 4+4, border 2+2, air
        return out

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        widths = self._widths(self.full_labels)
        return QSize(sum(widths) + self.SPACING * max(0, len(widths) - 1), self._height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        numbers = [str(i + 1) for i in range(len(self.chips))]
        widths = self._widths(numbers)
        return QSize(sum(widths) + self.SPACING * max(0, len(widths) - 1), self._height())

    def _height(self) -> int:
        return max((c.sizeHint().height() for c in self.chips), default=30)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._layout()

    def _layout(self) -> None:
        if not self.chips:
            return
        full = self._widths(self.full_labels)
        gaps = self.SPACING * (len(self.chips) - 1)
        self.compact = sum(full) + gaps > self.width()
        labels = [str(i + 1) for i in range(len(self.chips))] if self.compact else self.full_labels
        widths = self._widths(labels)
        extra = max(0, self.width() - gaps - sum(widths))
        # share what is left in proportion, so the strip fills the width either way
        total = sum(widths) or 1
        widths = [w + extra * w // total for w in widths]
        x, h = 0, self._height()
        for chip, label, w in zip(self.chips, labels, widths):
            chip.setText(label)
            chip.setGeometry(x, 0, w, h)
            x += w + self.SPACING
        self.setFixedHeight(h)


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
        scene_base.set_font_family(self.font_family, lang)
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
        self._use_prompt(text)

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

    def _type_height(self) -> int:
        """The height the type scale follows: the window's (the tour's own when it is not in one yet)."""
        top = self.window()
        return max(1, top.height() if top is not None else self.height())

    def _px(self, role: str) -> int:
        """Pixel size of the tour's ``role`` ("caption", "control", "chip") at the current window height: the
        type scale's "body" / "label", never under the tour's floors (``CAPTION_PX``, ``CONTROL_PX``,
        ``CHIP_PX``)."""
        scale = TypeScale(self._type_height())
        if role == "caption":
            return max(CAPTION_PX, round(scale.px("body")))
        return max(CHIP_PX if role == "chip" else CONTROL_PX, round(scale.px("label")))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self.isVisible():
            self._refit_scene()
        if getattr(self, "_sizes_at", None) is not None and \
                (self._px("caption"), self._px("control")) != self._sizes_for(self._sizes_at):
            self._apply_fonts()  # the window grew or shrank past a type-scale step
            self._build_controls(self.pages_key())

    def _sizes_for(self, height: int) -> tuple[int, int]:
        scale = TypeScale(height)
        return (max(CAPTION_PX, round(scale.px("body"))), max(CONTROL_PX, round(scale.px("label"))))

    def _build_ui(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(4)
        self.chip_strip = _ChipStrip(self)
        self.chips: list[QPushButton] = []
        self._chip_group = QButtonGroup(self)
        self._chip_group.setExclusive(True)
        for i, page in enumerate(PAGES):
            b = QPushButton()
            b.setObjectName("chip")
            b.setCheckable(True)
            b.setFont(self._font(self._px("chip")))
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(lambda _=False, i=i: self.goto(i))
            self._chip_group.addButton(b, i)
            self.chip_strip.add(b)
            self.chips.append(b)
        outer.addWidget(self.chip_strip)
        self.view = _View(self)
        self.view.setFocusPolicy(Qt.StrongFocus)  # the page takes the focus back from a field (focus_home)
        self.glossary_view = QTextBrowser()
        self.glossary_view.setObjectName("glossary")
        self.glossary_view.setOpenLinks(False)
        set_role(self.glossary_view, "legend")
        self.stage_stack = QStackedWidget()
        self.stage_stack.addWidget(self.view)
        self.stage_stack.addWidget(self.glossary_view)
        self.stage_stack.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.stage_stack.setMinimumSize(200, 120)
        outer.addWidget(self.stage_stack, 1)
        self.caption = QLabel()
        self.caption.setObjectName("caption")
        self.caption.setWordWrap(True)
        self.caption.setFont(self._font(self._px("caption")))
        self.caption.setMinimumHeight(int(self._px("caption") * 1.5 * 3 + 12))
        self.caption.setAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        self.caption.setFocusPolicy(Qt.NoFocus)
        self.caption.linkHovered.connect(self._on_term_hovered)
        self.caption.linkActivated.connect(self._on_term_tapped)
        set_role(self.caption, "caption")
        outer.addWidget(self.caption)
        self.term_line = QLabel()  # a tapped term's one-line explanation
        self.term_line.setObjectName("termLine")
        self.term_line.setWordWrap(True)
        self.term_line.setFont(self._font(self._px("control")))
        self.term_line.hide()
        set_role(self.term_line, "caption")
        outer.addWidget(self.term_line)
        self.model_line = QLabel()  # what the model writing on this page is, in one line
        self.model_line.setObjectName("modelLine")
        self.model_line.setWordWrap(True)
        self.model_line.setFont(self._font(self._px("control")))
        set_role(self.model_line, "legend")
        outer.addWidget(self.model_line)
        self.controls, self.controls_layout = flow_widget(8)
        outer.addWidget(self.controls)
        bottom = QHBoxLayout()
        self.prompt_label = QLabel()
        self.prompt_label.setFont(self._font(self._px("control")))
        bottom.addWidget(self.prompt_label)
        self.prompt_edit = QLineEdit(self.prompt)
        self.prompt_edit.setFont(self._font(self._px("control")))
        self.prompt_edit.setMaxLength(400)
        self.prompt_edit.setMinimumWidth(160)
        self.prompt_edit.returnPressed.connect(self._ask_own_question)
        bottom.addWidget(self.prompt_edit, 1)
        self.prev_button = QPushButton()
        self.next_button = QPushButton()
        for b, slot in ((self.prev_button, self.prev), (self.next_button, self.next)):
            b.setFont(self._font(self._px("control"), True))
            b.clicked.connect(slot)
            bottom.addWidget(b)
        outer.addLayout(bottom)
        self._sizes_at = self._type_height()

    def _apply_fonts(self) -> None:
        self._sizes_at = self._type_height()
        for chip in self.chips:
            chip.setFont(self._font(self._px("chip")))
        self.chip_strip.updateGeometry()
        self.chip_strip._layout()
        self.caption.setFont(self._font(self._px("caption")))
        self.caption.setMinimumHeight(int(self._px("caption") * 1.5 * 3 + 12))
        for w in (self.prompt_label, self.prompt_edit, self.term_line, self.model_line):
            w.setFont(self._font(self._px("control")))
        for b in (self.prev_button, self.next_button):
            b.setFont(self._font(self._px("control"), True))

    def retranslate(self) -> None:
        """Re-apply every string in the current language."""
        for page, chip in zip(PAGES, self.chips):
            chip.setToolTip(page_title(page))
        self.chip_strip.set_labels([chip_text(page) for page in PAGES])
        self.prompt_label.setText(T("Your question:"))
        self.prev_button.setText(T("◀ Back"))
        self.next_button.setText(T("Next ▶"))
        self.game.sentences = [tuple(x) for x in self.game_sentences() if x]  # newcomers write in the new language
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
            if not chip.toolTip():
                chip.setToolTip(page_title(PAGES[i]))
        if not any(self.chip_strip.full_labels):
            self.chip_strip.set_labels([chip_text(p) for p in PAGES])
        if not self.prev_button.text():
            self.prompt_label.setText(T("Your question:"))
            self.prev_button.setText(T("◀ Back"))
            self.next_button.setText(T("Next ▶"))
        self._set_caption(caption_text(page))
        scene.build(self.context())
        if not replay:
            scene.finish()
        self._annotate_scene(scene)
        if self.view.scene() is not scene:
            self.view.setScene(scene)
        self.view.fit()
        self._update_model_line(page.key)
        if page.key != "metaphors" and self.stage_stack.currentWidget() is not self.view:
            self.stage_stack.setCurrentWidget(self.view)
        self._build_controls(page.key)
        self._refit_scene()
        self._update_clock()

    # ---- terms and the model line ----------------------------------------------------------------------------
    def _lang(self) -> str:
        from gui import i18n
        current = getattr(i18n, "current_language", None)
        lang = current() if callable(current) else self.lang
        return lang if lang in ("en", "zh") else self.lang

    def _set_caption(self, text: str) -> None:
        """The caption as rich text: every glossary term underlined, a link to its explanation."""
        self._caption_plain = text
        out, pos, seen = [], 0, set()
        for start, end, term in glossary.spans(text, self._lang()):
            if term.key in seen:
                continue  # a term is a link once per caption
            seen.add(term.key)
            out.append(html.escape(text[pos:start]))
            out.append(f'<a href="term:{term.key}" style="color:{TERM_COLOR}; text-decoration: underline;">'
                       f'{html.escape(text[start:end]).replace("-", NO_BREAK_HYPHEN)}</a>')
            pos = end
        out.append(html.escape(text[pos:]))
        self.caption.setText("".join(out))
        self.term_line.hide()
        self.term_line.clear()

    def caption_terms(self) -> list[str]:
        """Keys of the glossary terms underlined in the caption shown."""
        return list(dict.fromkeys(t.key for _, _, t in glossary.spans(getattr(self, "_caption_plain", ""),
                                                                        self._lang())))

    def _term_of(self, link: str):
        return glossary.BY_KEY.get(link.split(":", 1)[-1]) if link else None

    def _on_term_hovered(self, link: str) -> None:
        term = self._term_of(link)
        if term is None:
            QToolTip.hideText()
            return
        QToolTip.showText(QCursor.pos(), f"{glossary.term_name(term)}: {glossary.explanation(term)}", self.caption)

    def _on_term_tapped(self, link: str) -> None:
        """A click or tap on a term: its explanation in the line under the caption (a second tap hides it)."""
        term = self._term_of(link)
        if term is None:
            return
        text = f"{glossary.term_name(term)}: {glossary.explanation(term)}"
        if self.term_line.isVisible() and self.term_line.text() == text:
            self.term_line.hide()
            return
        self.term_line.setText(text)
        self.term_line.show()

    def explain_term(self, key: str) -> None:
        """Show the explanation of glossary term ``key`` under the caption (as a tap on it does)."""
        self._on_term_tapped(f"term:{key}")

    def _annotate_scene(self, scene) -> None:
        """Give every text of the scene that shows a glossary term a tooltip with the term's explanation."""
        lang = self._lang()
        for item in scene.items():
            if isinstance(item, QGraphicsTextItem):
                text = item.toPlainText()
            elif isinstance(item, QGraphicsSimpleTextItem):
                text = item.text()
            else:
                continue
            terms = glossary.find_terms(text, lang)
            if terms:
                item.setToolTip("\n".join(f"{glossary.term_name(t)}: {glossary.explanation(t)}" for t in terms))

    def model_sentence(self) -> str:
        """One line that says what the loaded model is and why it writes as it does (translated)."""
        params = None
        try:
            params = sum(int(getattr(v, "size", 0)) for v in self.data.weights.values()) or None
        except Exception:  # noqa: BLE001 - no weights file: the line without the count
            params = None
        name = self.data.model_dir.name.lower() if getattr(self.data, "model_dir", None) else ""
        poetry = "poem" in name or "poetry" in name
        if params:
            size = (T("{w:.0f} × 10,000").format(w=params / 1e4) if self._lang() == "zh" else
                    T("{m:.1f} million").format(m=params / 1e6))
            text = (T("The model here: a GPT-2 of {size} parameters trained only on classical Chinese poems: it "
                      "continues a poem, it does not answer.") if poetry else
                    T("The model here: a GPT-2 of {size} parameters trained only on Python's documentation: it "
                      "imitates it, it does not answer."))
            return text.format(size=size)
        return T("No model is loaded here: the words on this page are an illustration.")

    def _update_model_line(self, key: str) -> None:
        if key in MODEL_OUTPUT_PAGES:
            self.model_line.setText(self.model_sentence())
            self.model_line.show()
        else:
            self.model_line.hide()

    def glossary_html(self) -> str:
        """Every glossary term and its one-line explanation, in the current language, grouped by section."""
        rows = []
        for term in sorted(glossary.TERMS, key=lambda t: t.section):
            rows.append(f"<tr><td style='padding:2px 12px 2px 0; color:{TERM_COLOR}; white-space:nowrap'>"
                        f"{html.escape(glossary.term_name(term))}</td>"
                        f"<td style='padding:2px 12px 2px 0; color:#aab7c4'>§{term.section}</td>"
                        f"<td style='padding:2px 0'>{html.escape(glossary.explanation(term))}</td></tr>")
        return "<table cellspacing='0'>" + "".join(rows) + "</table>"

    def show_glossary(self, on: bool) -> None:
        """Page 17: the list of every term (on) or the metaphor table (off)."""
        if on:
            self.glossary_view.setFont(self._font(self._px("control")))
            self.glossary_view.setHtml(self.glossary_html())
            self.stage_stack.setCurrentWidget(self.glossary_view)
        else:
            self.stage_stack.setCurrentWidget(self.view)

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

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._refit_scene()
        self._update_clock()

    def _refit_scene(self) -> None:
        """Fit the page's scene to its view; when the view is too small for the type scale (text would fall under
        height/60) or much larger, the scene is built again for this view, at the same moment of its animation."""
        self.view.fit()
        scene = self.view.scene()
        needs = getattr(scene, "needs_rebuild", None)
        if needs is not None and needs(self.view):
            t = scene.t
            scene.build(self.context())
            scene.seek(t)
            self._annotate_scene(scene)
            self.view.fit()

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
        b.setFont(self._font(self._px("control"), True))
        b.setCheckable(checkable)
        b.setChecked(checked)
        b.clicked.connect(slot)
        self.controls_layout.addWidget(b)
        return b

    def _slider(self, label: str, lo: int, hi: int, value: int, slot) -> QSlider:
        lab = QLabel(label)
        lab.setFont(self._font(self._px("control")))
        self.controls_layout.addWidget(lab)
        s = QSlider(Qt.Horizontal)
        s.setRange(lo, hi)
        s.setValue(value)
        s.setMinimumWidth(8 * self._px("control"))  # 160 px at 720p, wider with the type
        s.setFocusPolicy(Qt.StrongFocus)  # arrows move it only while it has the focus (and shows its ring)
        s.valueChanged.connect(slot)
        self.controls_layout.addWidget(s)
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
            press.setObjectName("gamePress")
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
        elif key == "metaphors":
            self.glossary_button = self._button(T("All terms explained ({n})").format(n=len(glossary.TERMS)),
                                                self.show_glossary, True,
                                                self.stage_stack.currentWidget() is self.glossary_view)

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
        self.game = GpuGame(mode=mode, seed=7, accept_source=(lambda k: self._game_accepted) if live else None,
                            sentences=self.game_sentences())
        self._game_text = self.prompt
        self._game_wait = None
        self._game_trip = None
        self._refresh()

    def game_sentences(self) -> list[list[str]]:
        """The sentences the game's people write, as token labels in the current language: English through this
        model's tokenizer (its real pieces, "␣" for a space), Chinese one character a token (the bundled
        tokenizer cuts Chinese into bytes, which a board cannot show); at most 16 tokens each."""
        out = []
        zh = self._lang() == "zh"
        for source in GAME_SENTENCES:
            text = T(source)
            if zh:
                labels = [c for c in text if not c.isspace()]
            else:
                labels = [t["label"] for t in self.data.tokens(text)] if self.data.tokenizer else []
                if not labels:
                    words = text.split()
                    labels = [("␣" if i else "") + w for i, w in enumerate(words)]
            out.append(labels[:16])
        return out

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
