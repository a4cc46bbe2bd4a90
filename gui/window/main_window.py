"""The main window: a thin shell holding the Live page and the tour, the keys, the language and the type scale.

The Live page is in parts under ``gui/live``: ``page`` (its widgets and layout), ``session`` (Run, Pause, Step,
Reset and the pacing of trips), ``engine_events`` (the engine's answers, the extras, the readout and status),
``readout``, ``seats``, ``plots``, ``meters``, ``model_choice`` and ``typeset``. ``MainWindow`` mixes in
``ModelSwitching``, ``LiveSession`` and ``EngineEvents``.

Two clocks stay apart: the engine's measured wall time per pass (ms, from the report) and the animation's
clock (``trip_duration_s`` on screen). The readout names both.
"""

from __future__ import annotations

import logging
from collections import deque

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QMainWindow, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from animations.typescale import TypeScale, set_role
from gui import i18n
from gui.engine_link.bridge import EngineBridge
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import ApprenticeVerdicts
from gui.live.engine_events import EngineEvents
from gui.live.exhibit import ExhibitActions
from gui.live.frame_jobs import AfterPaint
from gui.live.meters import ShardMeter, SpecMeter
from gui.live.model_choice import CUSTOM, ModelChoice, ModelSwitching
from gui.live.page import MAX_PROMPT_CHARS, LivePage
from gui.live.session import LiveSession
from gui.live.typeset import apply_type_scale, font_for, style_sheet
from gui.widgets import FrameCounter, FrameOverlay, PaintCounter
from model.loops import LoopWatch

log = logging.getLogger(__name__)

MAIN_NEW_TOKENS = 64  # tokens the visitor's own answer may take


# The Live page's widgets, kept as attributes of the window under these names (kiosk, presenter, tests).
LIVE_WIDGETS = ("view", "prompt_caption", "prompt_box", "run_button", "pause_button", "step_button", "reset_button",
                "trip_plot", "rate_plot", "trip_plot_title", "rate_plot_title", "batch_caption", "batch_slider",
                "batch_value", "speed_caption", "speed_slider", "speed_value", "real_time_box", "status_line",
                "apprentice", "tear")


class MainWindow(ModelSwitching, LiveSession, EngineEvents, ExhibitActions, ApprenticeVerdicts, QMainWindow):
    """The One Trip window.

    Args:
        bridge: the engine bridge (not started; ``start()`` starts it and the animation clock).
        scene: a ``StageScene``; default: a new ``animations.stage.scene.StageScene``.
        clock: an ``AnimationClock``; default: a new ``animations.clock.AnimationClock``.
        lang: "en" or "zh".
        font_family: the family for all text (one with Chinese glyphs, from ``animations.fonts.register_fonts``).
        auto_restart: start a new engine when the engine process dies.
    """

    session_finished = Signal()  # the visitor's answer is complete (all its trips shown)

    def __init__(self, bridge: EngineBridge, scene=None, clock=None, lang: str = "en",
                 font_family: str | None = None, auto_restart: bool = True, parent: QWidget | None = None):
        super().__init__(parent)
        if scene is None:
            from animations.stage.scene import StageScene
            scene = StageScene()
        if clock is None:
            from animations.clock import AnimationClock
            clock = AnimationClock()
        self.bridge = bridge
        self.bridge.setParent(self)
        self.scene = scene
        self.scene.setParent(self)
        self.clock = clock
        self.clock.setParent(self)
        self.lang = lang
        self.font_family = font_family
        self.auto_restart = auto_restart
        self.persist_settings = False  # run_app turns it on: remember the language for the next start
        # Which model writes: a --model DIR stays (pinned); otherwise the language's bundled model
        # (Chinese: the poetry model, English: the code model) until the visitor picks one.
        from model import catalog  # the standard library only: no torch in this process
        self.custom_model_dir: str | None = self.bridge.options.get("model_dir") or None
        if self.custom_model_dir:
            found = catalog.identify(self.custom_model_dir)
            self.model_key = found.key if found else CUSTOM
            self._model_pinned = True
        else:
            self.model_key = catalog.for_language(lang).key
            self._model_pinned = False
            self.bridge.options["model_dir"] = str(catalog.by_key(self.model_key).path())

        # engine and session state
        self.engine_info: dict | None = None
        self.floor_ms: float | None = None
        self._fatal: str | None = None
        self._session = 0
        self._main_id: str | None = None
        self._main_done = True
        self._active: set[str] = set()  # submitted, not finished, in this session
        self._seat_count = 0
        self._preset_cursor = 0
        self._running = False
        self._want_run = False  # Run pressed before the engine was ready
        self._grants_outstanding = 0
        self._grant_time = 0.0
        self._pending: deque[dict] = deque()  # reports waiting for the stage (paced mode)
        self._on_stage: dict | None = None  # the report being shown, tokens not yet written
        self._trip_count = 0
        self.reports_received = 0
        self.last_report: dict | None = None
        self.answer_text = ""
        self.answer_token_ids: list[int] = []
        self.loop_phrase: str | None = None  # the phrase the visitor's answer was stopped for repeating
        self._engine_loop_phrase: str | None = None
        self._answer_watch = LoopWatch()
        self.main_new_tokens = MAIN_NEW_TOKENS
        self._prompt_text = ""
        self._restarts: deque[float] = deque(maxlen=6)
        self._rapid_deaths = 0  # engine deaths each within a minute of the one before
        self._status_key: tuple[str, dict] | None = None
        self._readout_args: dict | None = None
        # the apprentice (speculative decoding) and the torn book (sharding): requested and measured
        self.spec_meter = SpecMeter()
        self.shard_meter = ShardMeter()
        self._sharding: tuple[str, int] = ("tp", 1)  # in force, as the engine last said
        self._tour = None  # the tour page, built when first shown
        self._resume_after_tour = False

        if font_family and hasattr(self.scene, "set_font_family"):
            self.scene.set_font_family(font_family)
        self.frame_counter = FrameCounter()
        self._build_ui()
        self._build_actions()
        self._connect()
        self.retranslate()

    # ---- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.setObjectName("MainWindow")
        self.resize(1600, 1000)
        central = QWidget(self)
        central.setObjectName("central")
        self.setCentralWidget(central)
        self.live_page = LivePage(self.scene, self.presets(), int(self.bridge.options.get("max_batch", 1)),
                                  float(getattr(self.scene, "trip_duration_s", 1.0)))
        self._build_pages(central)
        page = self.live_page
        for name in LIVE_WIDGETS:  # the page's widgets, by the names the rest of the app and the tests use
            setattr(self, name, getattr(page, name))
        self.apprentice_choice = page.apprentice.choice  # n-gram apprentice or draft model (Details view)
        self.readout = page.readout_panel.readout
        self.model_label = page.readout_panel.model_label
        self.extra_readout = page.readout_panel.extra_readout
        self.answer = page.seats.answer
        self.chips = page.seats.chips
        self._paint_counter = PaintCounter(self.frame_counter, self)
        self.view.viewport().installEventFilter(self._paint_counter)
        self.frame_jobs = AfterPaint(self.view.viewport(), parent=self)  # trip-boundary work, after the paint
        for plot in (self.trip_plot, self.rate_plot):
            plot.after_paint = self.frame_jobs.defer
        if hasattr(self.scene, "seat_redraw_budget"):
            self.scene.seat_redraw_budget = 4  # sixteen changed seat cards: four per frame, after the paint
        self.frame_overlay = FrameOverlay(self.frame_counter, self.view)
        set_role(self.frame_overlay, "overlay")
        self.frame_overlay.move(10, 10)
        self._sharding_timer = QTimer(self)
        self._sharding_timer.setSingleShot(True)
        self._sharding_timer.timeout.connect(self._on_sharding_timeout)
        self._apply_type_scale()

    def _build_pages(self, central: QWidget) -> None:
        """The "Live" | "Tour" switch (and the language button) at the top, the two pages under it (the tour is
        built when first shown)."""
        root = QVBoxLayout(central)
        root.setContentsMargins(12, 3, 12, 0)
        root.setSpacing(0)
        self.top_bar = QWidget()
        top = QHBoxLayout(self.top_bar)
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(6)
        self.live_tab = QPushButton()
        self.tour_tab = QPushButton()
        self._page_group = QButtonGroup(self)
        for b, name in ((self.live_tab, "liveTab"), (self.tour_tab, "tourTab")):
            b.setObjectName(name)
            b.setCheckable(True)
            b.setFocusPolicy(Qt.TabFocus)
            set_role(b, "tab")
            self._page_group.addButton(b)
            top.addWidget(b)
        self.live_tab.setChecked(True)
        top.addSpacing(18)
        self.model_choice = ModelChoice(self.model_key, self.custom_model_dir if self.model_key == CUSTOM else None)
        self.model_choice.setObjectName("modelChoice")
        top.addWidget(self.model_choice)
        top.addStretch(1)
        self.details_button = QPushButton()
        self.details_button.setObjectName("detailsButton")
        self.details_button.setCheckable(True)
        self.details_button.setFocusPolicy(Qt.TabFocus)
        set_role(self.details_button, "button")
        top.addWidget(self.details_button)
        self.lang_button = QPushButton()
        self.lang_button.setObjectName("langButton")
        self.lang_button.setFocusPolicy(Qt.TabFocus)
        set_role(self.lang_button, "button")
        top.addWidget(self.lang_button)
        root.addWidget(self.top_bar)
        self.pages = QStackedWidget()
        self.pages.setObjectName("pages")
        self.pages.addWidget(self.live_page)
        root.addWidget(self.pages, 1)
        self.live_tab.clicked.connect(self.show_live)
        self.tour_tab.clicked.connect(self.show_tour)
        self.model_choice.model_chosen.connect(self._on_model_picked)

    def set_presenter_mode(self, on: bool) -> None:
        """Presenter mode: every text of the Live page one type step larger (``TypeScale(presenter=True)``)."""
        if self.live_page.presenter_mode != bool(on):
            self.live_page.set_presenter(on)
        self._apply_type_scale()

    def _apply_type_scale(self, height: int | None = None) -> None:
        """Fonts of the Live page and the top bar for a window ``height`` px tall (default: the window's)."""
        height = self.height() if height is None else int(height)
        presenter = getattr(getattr(self, "presenter", None), "presenter_mode", False)
        if presenter and not self.live_page.presenter_mode:
            self.live_page.set_presenter(True)
        scale = TypeScale(max(1, height), self.live_page.presenter_mode)
        key = (height, self.live_page.presenter_mode, self.font_family, self.lang)
        if key == getattr(self, "_type_key", None):
            return
        self._type_key = key
        apply_type_scale(self.top_bar, scale, self.font_family)
        self.frame_overlay.setFont(font_for("overlay", scale, self.font_family))
        self.live_page.apply_type_scale(height, self.font_family)
        self.setStyleSheet(style_sheet(scale))

    def _build_actions(self) -> None:
        """Window-wide keys. Kept in ``self.actions`` by name so kiosk/presenter modes can remap them."""
        self.actions: dict[str, QAction] = {}

        def add(name: str, key, slot) -> None:
            action = QAction(self)
            action.setShortcut(QKeySequence(key))
            action.setShortcutContext(Qt.WindowShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
            self.actions[name] = action

        add("run_pause", Qt.Key_Space, self.toggle_run)
        add("step", Qt.Key_S, self.step_once)
        add("reset", Qt.Key_R, self.reset)
        add("frame_overlay", Qt.Key_F12, self.frame_overlay.toggle)
        add("fullscreen", Qt.Key_F, self.toggle_fullscreen)

    def _connect(self) -> None:
        b = self.bridge
        b.ready.connect(self._on_ready)
        b.accepted.connect(self._on_accepted)
        b.step.connect(self._on_step)
        b.finished.connect(self._on_finished)
        b.idle.connect(self._on_idle)
        b.error.connect(self._on_error)
        b.fatal.connect(self._on_fatal)
        b.engine_died.connect(self._on_engine_died)
        b.sharding.connect(self._on_sharding)
        self.apprentice.k_changed.connect(self._on_draft_k_changed)
        b.apprentice.connect(self._on_apprentice_verdict)
        self.apprentice_choice.kind_chosen.connect(self._on_apprentice_kind_chosen)
        self.model_choice.greedy_box.toggled.connect(self._on_greedy_toggled)
        self.model_choice.weights_chosen.connect(self.choose_weights)  # the thinner book (int8), in the details
        grid = self.live_page.controls_inner.layout()  # beside "Real time", among the engineer's controls
        grid.removeWidget(self.real_time_box)
        grid.addWidget(self.real_time_box, 2, 0)
        grid.addWidget(self.model_choice.int8_box, 2, 1, 1, 2)
        self.tear.requested.connect(self._on_tear_requested)
        self.clock.tick.connect(self._on_tick)
        self.scene.trip_finished.connect(self._on_trip_finished)
        if hasattr(self.scene, "trip_started"):  # the readout follows the trip on stage (issue 24)
            self.scene.trip_started.connect(self._on_stage_trip)
        self.run_button.clicked.connect(self.run)
        self.pause_button.clicked.connect(self.pause)
        self.step_button.clicked.connect(self.step_once)
        self.reset_button.clicked.connect(self.reset)
        self.batch_slider.valueChanged.connect(self._on_batch_changed)
        self.speed_slider.valueChanged.connect(self._on_speed_changed)
        self.real_time_box.toggled.connect(self.set_real_time)
        self.lang_button.clicked.connect(self._toggle_language)
        self._restart_timer = QTimer(self)
        self._restart_timer.setSingleShot(True)
        self._restart_timer.timeout.connect(self._restart_engine)
        self._on_speed_changed(self.speed_slider.value())
        self._connect_exhibit()

    # ---- pages: live and tour ----------------------------------------------------------------------------------
    @property
    def tour(self):
        """The tour page (``gui.tour.TourWidget``), built on first use with this window's engine bridge."""
        if self._tour is None:
            from gui.tour.data import TourData
            from gui.tour.tour import TourWidget
            data = TourData(self.bridge.options.get("model_dir"))  # the model writing now, not always the code one
            self._tour = TourWidget(bridge=self.bridge, data=data, lang=self.lang, font_family=self.font_family)
            self.pages.addWidget(self._tour)
        return self._tour

    def show_tour(self) -> None:
        """Show the tour page (the live answer pauses; it goes on when the live page is shown again)."""
        tour = self.tour
        if self.pages.currentWidget() is not tour:
            self._resume_after_tour = self._running
            if self._running:
                self.pause()
            tour.set_prompt(self.prompt())
            self.pages.setCurrentWidget(tour)
        self.tour_tab.setChecked(True)

    def show_live(self) -> None:
        """Show the live page (and go on with a paused answer that was running when the tour was opened)."""
        self.pages.setCurrentWidget(self.live_page)
        self.live_tab.setChecked(True)
        if self._resume_after_tour:
            self._resume_after_tour = False
            self.run()

    def is_tour_visible(self) -> bool:
        """True while the tour page is shown."""
        return self._tour is not None and self.pages.currentWidget() is self._tour

    def set_language(self, lang: str) -> None:
        """Switch every string on screen to ``lang`` ("en" or "zh") at once."""
        self.lang = i18n.set_language(lang)
        if self.persist_settings:
            from gui.settings import remember_language
            remember_language(self.lang)  # the operator's comments stay
        if hasattr(self.scene, "set_language"):
            self.scene.set_language(self.lang)
        if self._tour is not None:
            self._tour.set_language(self.lang)
        self._apply_type_scale()  # English punctuation is proportional, Chinese full-width (fonts change)
        self.retranslate()
        if not self._model_pinned:  # the language's own model: poems for Chinese, code for English
            from model import catalog
            self.choose_model(catalog.for_language(self.lang).key)

    def toggle_fullscreen(self) -> None:
        """F: full screen on and off."""
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    # ---- language ----------------------------------------------------------------------------------------------
    def _toggle_language(self) -> None:
        self.set_language("en" if self.lang == "zh" else "zh")

    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def retranslate(self) -> None:
        """Re-apply every string in the current language."""
        self.setWindowTitle(_tr("One Trip: watch a real GPT-2 write, one trip per token"))
        if hasattr(self, "model_choice"):
            self.model_choice.retranslate()
        self.prompt_caption.setText(_tr("Prompt"))
        self.prompt_box.setToolTip(_tr("Pick a prompt or type your own (up to {n} characters)").format(
            n=MAX_PROMPT_CHARS))
        self.run_button.setText(_tr("Run"))
        self.run_button.setToolTip(_tr("Start writing (Space runs and pauses)"))
        self.pause_button.setText(_tr("Pause"))
        self.pause_button.setToolTip(_tr("Stop after this trip (Space runs and pauses)"))
        self.step_button.setText(_tr("Step one trip"))
        self.step_button.setToolTip(_tr("Exactly one real forward pass (S)"))
        self.reset_button.setText(_tr("Reset"))
        self.reset_button.setToolTip(_tr("Clear the answer, the chips and the plots (R)"))
        self.batch_caption.setText(_tr("Sharing a table"))
        self.batch_slider.setToolTip(_tr("How many requests share each trip of the weights (1–16)"))
        self.speed_caption.setText(_tr("Trip on screen"))
        self.speed_slider.setToolTip(_tr("How long one trip takes on screen, in seconds (0.25–3)"))
        self.real_time_box.setText(_tr("Real time"))
        self.real_time_box.setToolTip(_tr("Show the trips at the speed they were measured"))
        self.lang_button.setText("English" if self.lang == "zh" else "中文")
        self.lang_button.setToolTip(_tr("Switch language"))
        self.rate_plot_title.setText(_tr("Tokens per second"))
        self.view.setToolTip(_tr("F: full screen · F12: frame times"))
        self._on_batch_label()
        self._on_speed_label()
        self._update_readout()
        self._retranslate_engine_texts()
        if self._status_key is not None:
            self.status_line.setText(_tr(self._status_key[0]).format(**self._status_key[1]))
        self.frame_overlay.refresh()
        self.live_tab.setText(_tr("Live"))
        self.live_tab.setToolTip(_tr("The real model writing, one trip per token"))
        self.tour_tab.setText(_tr("Tour"))
        self.tour_tab.setToolTip(_tr("The guided tour: fifteen sections, the game, Terms and Three questions"))
        self.apprentice.retranslate()
        self.tear.retranslate()
        self.live_page.seats.retranslate()
        self.details_button.setText(_tr("Details"))
        self.details_button.setToolTip(_tr("Everything measured: per-layer timings, plots, token chips, every slider"))
        self.live_page.exhibit.retranslate()
        self.live_page.split_row.retranslate()
        self._update_extra_readout()

    # ---- controls ----------------------------------------------------------------------------------------------
    def _on_batch_changed(self, n: int) -> None:
        self._on_batch_label()
        self.bridge.set_max_batch(n)
        self._fill_seats()

    def _on_batch_label(self) -> None:
        self.batch_value.setText(str(self.batch_slider.value()))

    def _on_speed_changed(self, hundredths: int) -> None:
        self.scene.trip_duration_s = hundredths / 100.0
        self._on_speed_label()
        self._update_readout()

    def _on_speed_label(self) -> None:
        self.speed_value.setText(_tr("{s} s").format(s=f"{self.speed_slider.value() / 100:.2f}"))

    # ---- layout and exit ---------------------------------------------------------------------------------------
    def resize(self, *size) -> None:
        """``resize(w, h)`` or ``resize(QSize)``. The fonts of the new height are set first: the minimum width
        of the old, larger type (a window going from 1920×1080 to 1280×720) must not refuse the new size."""
        target = size[0] if len(size) == 1 else QSize(*size)
        if target.height() > 0 and hasattr(self, "top_bar"):  # built (the constructor sizes the window first)
            self._apply_type_scale(target.height())
            self.layout().activate()
        super().resize(target)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._apply_type_scale()
        self.live_page.fit_stage()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._apply_type_scale()
        self.live_page.fit_stage()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt override
        log.info("window closing")
        self.stop()
        super().closeEvent(event)
