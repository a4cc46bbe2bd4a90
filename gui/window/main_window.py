"""The main window: a thin shell holding the Live page and the tour, the keys, the language and the type scale.

The Live session's state is one Qt-free object, ``self.session`` (``gui.live.state.SessionState``): the
controls write to it and follow its events, and the presenter, the deck and the kiosk read and change it (the
window is their ``gui.live.host.LiveHost``). The Live page's behaviour is in composed collaborators under
``gui/live``, each holding the session and the parts it needs, each given them in its constructor (built in
the order they depend on each other; where two would need each other, one follows the session or a signal):
``LiveController`` (``controller``: the engine's settings), ``LiveRunner`` (``session``: Run, Pause, Step, Reset
and the pacing of trips; the answer's progress it records in the session), ``LookupPresets``
(``lookup_presets``), ``ApprenticeVerdicts`` (``apprentice_choice``), ``LiveReadout`` (``readout_view``: the
readout, the plots and the extras' lines, rendered from the session), ``EngineEventHandler`` (``engine_events``:
the engine's lifecycle as changes of the session) with its ``StatusLine``, ``SessionControls`` and
``ExtrasControls`` (``session_view``: the sliders and boxes, and the extras' controls and the stage's sharding,
as views of the session), ``ModelSwitcher`` (``model_choice``) and ``ExhibitActions``
(``exhibit``). The window builds them, lays out the pages and keeps the public methods (``run``, ``step_once``,
``set_batch``...) that the app, tests and tools call.

Two clocks stay apart: the engine's measured wall time per pass (ms, from the report) and the animation's
clock (``trip_duration_s`` on screen). The readout names both.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QStackedWidget, QVBoxLayout, QWidget

from animations.typescale import TypeScale, set_role
from gui import i18n
from gui.engine_link.bridge import EngineBridge
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import ApprenticeVerdicts
from gui.live.controller import LiveController
from gui.live.engine_events import EngineEventHandler, StatusLine
from gui.live.exhibit import ExhibitActions
from gui.live.lookup_presets import LookupPresets
from gui.live.meters import ShardMeter, SpecMeter
from gui.live.model_choice import CUSTOM, ModelChoice, ModelSwitcher, presets_for
from gui.live.page import LivePage
from gui.live.readout_view import LiveReadout
from gui.live.session import LiveRunner
from gui.live.session_view import ExtrasControls, SessionControls
from gui.live.state import MAX_BATCH, MAX_DRAFT_K, Sampling, SessionState
from gui.live.typeset import apply_type_scale, font_for, style_sheet
from gui.widgets import FrameCounter, FrameOverlay, PaintCounter
from gui.window.top_bar import TopBar

log = logging.getLogger(__name__)

MAIN_NEW_TOKENS = 64  # tokens the visitor's own answer may take


# The Live page's widgets, kept as attributes of the window under these names (kiosk, presenter, tests).
LIVE_WIDGETS = ("view", "prompt_caption", "prompt_box", "run_button", "pause_button", "step_button", "reset_button",
                "trip_plot", "rate_plot", "trip_plot_title", "rate_plot_title", "batch_caption", "batch_slider",
                "batch_value", "speed_caption", "speed_slider", "speed_value", "real_time_box", "status_line",
                "apprentice", "tear")


class MainWindow(QMainWindow):
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
    kiosk_controller = None  # a gui.kiosk.kiosk.KioskController once the kiosk installs itself
    presenter = None  # a gui.presenter.presenter.Presenter once installed

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
        custom_model_dir: str | None = self.bridge.options.get("model_dir") or None
        if custom_model_dir:
            found = catalog.identify(custom_model_dir)
            model_key = found.key if found else CUSTOM
        else:
            model_key = catalog.for_language(lang).key
            self.bridge.options["model_dir"] = str(catalog.by_key(model_key).path())
        bundled = catalog.by_key(model_key) if model_key != CUSTOM else catalog.CODE
        # the Live session's state: one owner, read and changed by the widgets, stage, presenter, deck and kiosk
        self.session = SessionState(batch=max(1, min(MAX_BATCH, int(self.bridge.options.get("max_batch", 1)))),
                                    model_key=model_key,
                                    sampling=Sampling(temperature=bundled.temperature, top_p=bundled.top_p))
        self.session.set_weights(str(self.bridge.options.get("weights") or "default"))
        self._custom_model_dir = custom_model_dir  # for the ModelSwitcher, built with the page's collaborators
        self.spec_meter, self.shard_meter = SpecMeter(), ShardMeter()  # what the apprentice, the torn book measure
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
        self.live_page = LivePage(self.scene, presets_for(self.session.model_key),
                                  int(self.bridge.options.get("max_batch", 1)),
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
        self.frame_jobs = page.frame_jobs  # trip-boundary work, after the paint
        if hasattr(self.scene, "seat_redraw_budget"):
            self.scene.seat_redraw_budget = 4  # sixteen changed seat cards: four per frame, after the paint
        self.frame_overlay = FrameOverlay(self.frame_counter, self.view)
        set_role(self.frame_overlay, "overlay")
        self.frame_overlay.move(10, 10)
        from gui.code_view.live import CodeView
        self.code_view = CodeView(self)  # the engine's own source of the stage on screen (a toggle, key C)
        self._apply_type_scale()

    def _build_pages(self, central: QWidget) -> None:
        """The "Live" | "Tour" switch (and the language button) at the top, the two pages under it (the tour is
        built when first shown)."""
        root = QVBoxLayout(central)
        root.setContentsMargins(12, 3, 12, 0)
        root.setSpacing(0)
        key = self.session.model_key
        self.model_choice = ModelChoice(key, self._custom_model_dir if key == CUSTOM else None)
        self.top_bar = TopBar(self.model_choice)
        bar = self.top_bar
        self.live_tab, self.tour_tab, self.details_button, self.lang_button = (
            bar.live_tab, bar.tour_tab, bar.details_button, bar.lang_button)
        root.addWidget(self.top_bar)
        self.pages = QStackedWidget()
        self.pages.setObjectName("pages")
        self.pages.addWidget(self.live_page)
        root.addWidget(self.pages, 1)
        self.live_tab.clicked.connect(self.show_live)
        self.tour_tab.clicked.connect(self.show_tour)

    def set_presenter_mode(self, on: bool) -> None:
        """Presenter mode: every text of the Live page one type step larger (``TypeScale(presenter=True)``)."""
        if self.live_page.presenter_mode != bool(on):
            self.live_page.set_presenter(on)
        self._apply_type_scale()

    def _apply_type_scale(self, height: int | None = None) -> None:
        """Fonts of the Live page and the top bar for a window ``height`` px tall (default: the window's)."""
        height = self.height() if height is None else int(height)
        presenter = self.presenter is not None and self.presenter.presenter_mode
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
        """Build the collaborators, each given what it needs, in the order they depend on each other (the
        session's followers run in this order too), and wire the window's buttons."""
        session, b, page = self.session, self.bridge, self.live_page
        self.status = StatusLine(self.status_line)
        self.controller = LiveController(session, b)  # the one commander of the engine's settings
        self.runner = LiveRunner(session, b, self.controller, self.scene, page, self.frame_jobs, self.spec_meter,
                                 self.status, self.presets, self.session_finished.emit, MAIN_NEW_TOKENS)
        self.lookup = LookupPresets(session, self.controller, page, self.apprentice_choice, self.spec_meter)
        self.apprentice_verdicts = ApprenticeVerdicts(session, b.apprentice, self.controller, self.apprentice_choice,
                                                      self.model_choice.greedy_box, self.spec_meter, self.lookup)
        self.live_readout = LiveReadout(session, page, self.scene, self.spec_meter, self.shard_meter, self.lookup,
                                        self.apprentice_verdicts)
        self.engine = EngineEventHandler(session, b, self.controller, self.scene, page, self.runner, self.status,
                                         self.shard_meter, self.lookup, self.live_readout, self.auto_restart)
        self.controls = SessionControls(session, page, self.model_choice, self.status, self.lookup)
        self.extras_controls = ExtrasControls(session, page, self.scene)  # what the engine offers, on the controls
        custom = self._custom_model_dir
        self.models = ModelSwitcher(session, b, custom, bool(custom), self.model_choice, page, self.lookup,
                                    lambda: self._tour, self._restart_on_new_model)
        self.exhibit_actions = ExhibitActions(session, page, self.details_button, self.model_choice, self.scene,
                                              self.live_readout)
        self.exhibit_actions.set_details(False)
        r = self.runner
        for signal, slot in ((b.accepted, r.on_accepted), (b.step, r.on_step), (b.finished, r.on_finished),
                             (b.idle, r.on_idle), (self.clock.tick, r.on_tick),
                             (self.scene.trip_finished, r.on_trip_finished), (self.run_button.clicked, r.run),
                             (self.pause_button.clicked, r.pause), (self.step_button.clicked, r.step_once),
                             (self.reset_button.clicked, r.reset),
                             (self.lang_button.clicked, self._toggle_language)):
            signal.connect(slot)
        self.model_choice.weights_chosen.connect(self.models.choose_weights)  # the thinner book (int8), in the details
        page.place_beside_real_time(self.model_choice.int8_box)

    # ---- the Live answer (``LiveRunner``) and the session --------------------------------------------------------
    def start(self) -> None:
        """Start the engine process and the animation clock."""
        self.status.set_status("Loading the model…")
        self.engine.engine_starting()
        self.bridge.start()
        if not self.clock.is_running():
            self.clock.start()

    def stop(self) -> None:
        """Stop the clock, every timer and the engine process (asked to stop and waited for,
        ``EngineBridge.shutdown``)."""
        for stop in (self.clock.stop, self.frame_jobs.clear, self.frame_overlay.stop, self.trip_plot.stop_redraws,
                     self.rate_plot.stop_redraws, self.engine.stop_timers):
            stop()
        if self._tour is not None:
            self._tour.clock.stop()
        self.bridge.shutdown()

    def run(self) -> None:
        """Run: start a new answer if none is in progress, then keep granting trips."""
        self.runner.run()

    def pause(self) -> None:
        """Stop granting trips (the trip on stage finishes)."""
        self.runner.pause()

    def toggle_run(self) -> None:
        """Space: run if paused, pause if running."""
        self.runner.toggle_run()

    def step_once(self) -> None:
        """Step: exactly one real forward pass (``LiveRunner.step_once``)."""
        self.runner.step_once()

    def run_trips(self, n: int) -> bool:
        """Grant ``n`` trips at once (screenshots, benchmarks); False if the engine is not ready or no prompt."""
        return self.runner.run_trips(n)

    def reset(self) -> None:
        """Abort every request and clear the answer, the chips and the plots."""
        self.runner.reset()

    def set_real_time(self, on: bool) -> None:
        """Real-time mode: the engine runs freely and the stage shows trips at their measured pace."""
        self.runner.set_real_time(on)

    def is_running(self) -> bool:
        """True while trips are being granted (``session.run_state == "running"``)."""
        return self.session.is_running()

    def is_session_done(self) -> bool:
        """True when no answer is in progress (never started, complete, or reset) and nothing is left to show."""
        return self.runner.is_session_done()

    def prompt(self) -> str:
        """The prompt to run (``session.prompt``)."""
        return self.session.prompt

    def set_prompt(self, text: str) -> None:
        """Put ``text`` in the prompt box (as if typed)."""
        self.session.set_prompt(text)  # cut to MAX_PROMPT_CHARS

    def set_batch(self, n: int) -> None:
        """``n`` seats share the table (clamped to 1–16); the slider follows the session."""
        self.session.set_batch(max(1, min(MAX_BATCH, int(n))))

    def set_draft_k(self, k: int) -> None:
        """The apprentice guesses ``k`` tokens (clamped to 0–8; ignored while no draft model is usable)."""
        if self.session.apprentice_available:
            self.session.set_draft_k(max(0, min(MAX_DRAFT_K, int(k))))

    def set_sharding(self, mode: str, n: int) -> None:
        """Move the "tear the book" controls to ``mode`` ("tp"/"pp") and ``n`` desks (the engine answers later)."""
        self.tear.set_value(mode, n)

    def sharding(self) -> tuple[str, int]:
        """The sharding in force, as the engine last confirmed it: (mode, n)."""
        return self.session.sharding

    def set_details(self, on: bool) -> None:
        """Open (True) or close the details view: every slider, the plots, the token chips, the status line."""
        self.exhibit_actions.set_details(on)

    def apprentice_pays_when(self) -> str | None:
        """"sampling" | "greedy" | None for the apprentice in use, from the last measured verdicts."""
        return self.apprentice_verdicts.apprentice_pays_when()

    def engine_ready(self) -> bool:
        """True once the engine said ``ready`` (and has not died or failed since)."""
        return self.session.engine_info is not None

    def model_failed(self) -> str | None:
        """Why no model could be loaded (the engine's message), or None."""
        return self.session.engine_error

    # what tools (screenshot, audit) read of the answer and the engine: the session's values
    engine_info = property(lambda self: self.session.engine_info, doc="The engine's ``ready`` info, or None.")
    reports_received = property(lambda self: self.session.reports_received, doc="Step reports received.")
    last_report = property(lambda self: self.session.last_trip, doc="The last step report of this answer.")
    answer_text = property(lambda self: self.session.answer.text, doc="The visitor's answer so far.")
    answer_token_ids = property(lambda self: list(self.session.answer.token_ids), doc="Its token ids.")
    loop_phrase = property(lambda self: self.session.answer.loop_phrase,
                           doc="The phrase the answer was stopped for repeating.")

    @property
    def main_new_tokens(self) -> int:
        """Tokens the visitor's answer may take (the kiosk's attract loop shortens it)."""
        return self.runner.main_new_tokens

    @main_new_tokens.setter
    def main_new_tokens(self, n: int) -> None:
        self.runner.main_new_tokens = int(n)

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

    def built_tour(self):
        """The tour page if it has been built, else None."""
        return self._tour

    def show_tour(self) -> None:
        """Show the tour page (the live answer pauses; it goes on when the live page is shown again)."""
        tour = self.tour
        if self.pages.currentWidget() is not tour:
            self._resume_after_tour = self.session.is_running()
            if self._resume_after_tour:
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
        if not self.models.pinned:  # the language's own model: poems for Chinese, code for English
            from model import catalog
            self.choose_model(catalog.for_language(self.lang).key)

    # ---- which model writes (``ModelSwitcher``) -----------------------------------------------------------------
    @property
    def model_key(self) -> str:
        return self.session.model_key

    def presets(self) -> list[str]:
        """Prompts the model writing now continues well."""
        return self.models.presets()

    def choose_model(self, key: str) -> None:
        """Let model ``key`` ("code", "poems", "custom") write (``ModelSwitcher.choose_model``)."""
        self.models.choose_model(key)

    def _restart_on_new_model(self) -> None:
        """Another model was chosen while an engine runs: reset the answer and start an engine on it."""
        self.reset()
        self.engine.restart_engine()
        self.status.set_status("Loading the model…")

    def presenter_hidden(self) -> list[QWidget]:
        """The Live page's controls a speaker does not use (hidden in presenter mode)."""
        return [self.prompt_caption, self.pause_button, self.step_button, self.reset_button, self.lang_button]

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
        self.lang_button.setText("English" if self.lang == "zh" else "中文")
        self.lang_button.setToolTip(_tr("Switch language"))
        self.rate_plot_title.setText(_tr("Tokens per second"))
        self.view.setToolTip(_tr("F: full screen · F12: frame times"))
        self.controls.retranslate()
        self.live_readout.update_readout()
        self.live_readout.retranslate_engine_texts()
        self.status.retranslate()
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
        self.live_readout.update_extras()

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
