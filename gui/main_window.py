"""The main window: the stage on top, the words and live numbers below, the controls at the bottom.

Pacing. In paced mode (the default) the window grants the engine one forward pass at a time: only when the
stage has finished showing the previous trip and no report is waiting. Each step report is then shown as one
trip on the stage, and its tokens are written when that trip ends. Step grants exactly one pass. In real-time
mode the engine runs freely ("free_run") and the stage shows the trips as they come.

Two clocks stay apart: the engine's measured wall time per pass (ms, from the report) and the animation's
clock (``trip_duration_s`` on screen). The readout names both.
"""

from __future__ import annotations

import logging
import time
from collections import deque

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QMainWindow, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from animations.typescale import TypeScale, set_role
from gui import i18n
from gui.bridge import EngineBridge
from gui.live.page import MAX_BATCH, MAX_PROMPT_CHARS, LivePage
from gui.live.readout import fmt_ms, model_text, readout_text, sharding_why, speedup_why
from gui.live.typeset import apply_type_scale, font_for, style_sheet
from gui.live_controls import ShardMeter, SpecMeter
from gui.widgets import FrameCounter, FrameOverlay

log = logging.getLogger(__name__)

MAIN_NEW_TOKENS = 64  # tokens the visitor's own answer may take
GRANT_WATCHDOG_S = 10.0  # a grant unanswered this long is given up (the engine may have dropped it)
SHARDING_WATCHDOG_MS = 30_000  # workers that have not answered by then: the tearing slider goes back
RESTART_DELAY_MS = 400

# The bundled model learned from the Python documentation and standard library (assets/models/README.md),
# so code and documentation prose come first; Chinese shows how the tokenizer cuts what it never learned.
PRESET_PROMPTS = [
    "def fibonacci(n):",
    "This module provides",
    "import os\n\ndef read_lines(path):",
    "The function returns",
    "class Stack:\n    def __init__(self):",
    "To open a file, use",
    "for i in range(10):",
    "The best way to learn Python is",
    "从前有一座山，",
    "Once upon a time, a little robot",
]


def _tr(text: str) -> str:
    return QCoreApplication.translate("MainWindow", text)


# The Live page's widgets, kept as attributes of the window under these names (kiosk, presenter, tests).
LIVE_WIDGETS = ("view", "prompt_caption", "prompt_box", "run_button", "pause_button", "step_button", "reset_button",
                "trip_plot", "rate_plot", "trip_plot_title", "rate_plot_title", "batch_caption", "batch_slider",
                "batch_value", "speed_caption", "speed_slider", "speed_value", "real_time_box", "status_line",
                "apprentice", "tear")


class _PaintCounter(QObject):
    """Counts the stage view's real paints (frames) into a FrameCounter."""

    def __init__(self, counter: FrameCounter, parent: QObject):
        super().__init__(parent)
        self.counter = counter

    def eventFilter(self, obj, event):  # noqa: N802 - Qt override
        if event.type() == QEvent.Paint:
            self.counter.frame()
        return False


class MainWindow(QMainWindow):
    """The One Trip window.

    Args:
        bridge: the engine bridge (not started; ``start()`` starts it and the animation clock).
        scene: a ``StageScene``; default: a new ``animations.stage.StageScene``.
        clock: an ``AnimationClock``; default: a new ``animations.clock.AnimationClock``.
        lang: "en" or "zh".
        font_family: the family for all text (one with Chinese glyphs, from ``gui.fonts.register_fonts``).
        auto_restart: start a new engine when the engine process dies.
    """

    session_finished = Signal()  # the visitor's answer is complete (all its trips shown)

    def __init__(self, bridge: EngineBridge, scene=None, clock=None, lang: str = "en",
                 font_family: str | None = None, auto_restart: bool = True, parent: QWidget | None = None):
        super().__init__(parent)
        if scene is None:
            from animations.stage import StageScene
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
        self.main_new_tokens = MAIN_NEW_TOKENS
        self._prompt_text = ""
        self._restarts: deque[float] = deque(maxlen=6)
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
        self.live_page = LivePage(self.scene, PRESET_PROMPTS, int(self.bridge.options.get("max_batch", 1)),
                                  float(getattr(self.scene, "trip_duration_s", 1.0)))
        self._build_pages(central)
        page = self.live_page
        for name in LIVE_WIDGETS:  # the page's widgets, by the names the rest of the app and the tests use
            setattr(self, name, getattr(page, name))
        self.readout = page.readout_panel.readout
        self.model_label = page.readout_panel.model_label
        self.extra_readout = page.readout_panel.extra_readout
        self.answer = page.seats.answer
        self.chips = page.seats.chips
        self._paint_counter = _PaintCounter(self.frame_counter, self)
        self.view.viewport().installEventFilter(self._paint_counter)
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
        root.setContentsMargins(12, 6, 12, 0)
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
        top.addStretch(1)
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

    def set_presenter_mode(self, on: bool) -> None:
        """Presenter mode: every text of the Live page one type step larger (``TypeScale(presenter=True)``)."""
        self.live_page.presenter_mode = bool(on)
        self._apply_type_scale()

    def _apply_type_scale(self) -> None:
        presenter = getattr(getattr(self, "presenter", None), "presenter_mode", False)
        if presenter and not self.live_page.presenter_mode:
            self.live_page.presenter_mode = True
        scale = TypeScale(max(1, self.height()), self.live_page.presenter_mode)
        key = (self.height(), self.live_page.presenter_mode, self.font_family)
        if key == getattr(self, "_type_key", None):
            return
        self._type_key = key
        apply_type_scale(self.top_bar, scale, self.font_family)
        self.frame_overlay.setFont(font_for("overlay", scale, self.font_family))
        self.live_page.apply_type_scale(self.height(), self.font_family)
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
        self.tear.requested.connect(self._on_tear_requested)
        self.clock.tick.connect(self._on_tick)
        self.scene.trip_finished.connect(self._on_trip_finished)
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

    # ---- public controls -------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the engine process and the animation clock."""
        self._set_status("Loading the model…")
        self.bridge.start()
        if not self.clock.is_running():
            self.clock.start()

    def stop(self) -> None:
        """Stop the clock, every timer and the engine process (waits at most about 1.5 s)."""
        self.clock.stop()
        self.frame_overlay.stop()
        self.trip_plot.stop_redraws()
        self.rate_plot.stop_redraws()
        self._restart_timer.stop()
        self._sharding_timer.stop()
        if self._tour is not None:
            self._tour.clock.stop()
        self.bridge.shutdown(timeout=1.5)

    def prompt(self) -> str:
        """The prompt to run: the chosen preset's full text, or what was typed (at most MAX_PROMPT_CHARS)."""
        text = self.prompt_box.currentText()
        index = self.prompt_box.findText(text)
        if index >= 0 and self.prompt_box.itemData(index):
            text = self.prompt_box.itemData(index)
        return text[:MAX_PROMPT_CHARS]

    def set_prompt(self, text: str) -> None:
        """Put ``text`` in the prompt box (as if typed)."""
        self.prompt_box.setEditText(text[:MAX_PROMPT_CHARS])

    def run(self) -> None:
        """Run: start a new answer if none is in progress, then keep granting trips."""
        if self.engine_info is None:
            self._want_run = self._fatal is None
            if self._fatal is None:
                self._set_status("Loading the model…")
            else:
                self._set_status("The model is not available.")
            return
        if self._main_done:
            if not self._start_session():
                return
        self._running = True
        if self.real_time_box.isChecked():
            self.bridge.free_run(True)
        self._set_status("Running.")
        self._pump()

    def pause(self) -> None:
        """Stop granting trips (the trip on stage finishes)."""
        self._want_run = False
        self._running = False
        if self.real_time_box.isChecked():
            self.bridge.free_run(False)
        if not self._main_done:
            if self.step_button.isHidden():  # presenter mode: no Step button, the keys step
                self._set_status("Paused. Space goes on; → makes one trip.")
            else:
                self._set_status("Paused. Press Run to go on, or Step for one trip.")

    def toggle_run(self) -> None:
        """Space: run if paused, pause if running."""
        if self._running or self._want_run:
            self.pause()
        else:
            self.run()

    def step_once(self) -> None:
        """Step: exactly one real forward pass (starting a new answer if needed)."""
        if self.engine_info is None:
            return
        if self._running:
            self.pause()
        if self._main_done and not self._start_session():
            return
        if self._active:
            self.bridge.grant(1)
            self._grants_outstanding += 1
            self._grant_time = time.monotonic()
            self._set_status("One trip.")

    def run_trips(self, n: int) -> bool:
        """Grant ``n`` trips at once (screenshots, benchmarks), starting a new answer if none is in progress.

        Returns False if the engine is not ready or the prompt is empty.
        """
        if self.engine_info is None:
            return False
        self._running = False
        if self._main_done and not self._start_session():
            return False
        self.bridge.grant(n)
        self._grants_outstanding += n
        self._grant_time = time.monotonic()
        self._set_status("Running.")
        return True

    def reset(self) -> None:
        """Abort every request and clear the answer, the chips and the plots."""
        self._running = False
        self._want_run = False
        self.bridge.free_run(False)
        self.bridge.reset()
        self._end_session()
        if hasattr(self.scene, "reset"):
            self.scene.reset()
        self._trip_count = 0
        self.trip_plot.clear_trips()
        self.rate_plot.clear_trips()
        self._readout_args = None
        self._update_readout()
        self._set_status("Reset. Choose a prompt and press Run.")

    def set_real_time(self, on: bool) -> None:
        """Real-time mode: the engine runs freely and the stage shows trips at their measured pace."""
        if self.real_time_box.isChecked() != on:
            self.real_time_box.setChecked(on)  # re-enters through the toggled signal
            return
        self.scene.real_time = on
        if on:
            self._flush_pending()
        if self._running:
            self.bridge.free_run(on)
        self._update_readout()

    def set_batch(self, n: int) -> None:
        """Move the "sharing a table" slider to ``n`` seats (1–16)."""
        self.batch_slider.setValue(max(1, min(MAX_BATCH, int(n))))

    def set_draft_k(self, k: int) -> None:
        """Move the "apprentice guesses" slider to ``k`` (0 = off; ignored while no draft model is usable)."""
        self.apprentice.set_value(k)

    def set_sharding(self, mode: str, n: int) -> None:
        """Move the "tear the book" controls to ``mode`` ("tp"/"pp") and ``n`` desks (the engine answers later)."""
        self.tear.set_value(mode, n)

    def sharding(self) -> tuple[str, int]:
        """The sharding in force, as the engine last confirmed it: (mode, n)."""
        return self._sharding

    # ---- pages: live and tour ----------------------------------------------------------------------------------
    @property
    def tour(self):
        """The tour page (``gui.tour.TourWidget``), built on first use with this window's engine bridge."""
        if self._tour is None:
            from gui.tour.tour import TourWidget
            self._tour = TourWidget(bridge=self.bridge, lang=self.lang, font_family=self.font_family)
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
            QSettings().setValue("language", self.lang)
        if hasattr(self.scene, "set_language"):
            self.scene.set_language(self.lang)
        if self._tour is not None:
            self._tour.set_language(self.lang)
        self.retranslate()

    def toggle_fullscreen(self) -> None:
        """F: full screen on and off."""
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    def is_running(self) -> bool:
        """True while trips are being granted (Run pressed and not paused, answer not complete)."""
        return self._running

    def is_session_done(self) -> bool:
        """True when no answer is in progress (never started, complete, or reset)."""
        return self._main_done and self._on_stage is None and not self._pending

    # ---- sessions ----------------------------------------------------------------------------------------------
    def _start_session(self) -> bool:
        prompt = self.prompt()
        if not prompt.strip():
            self._set_status("Type a prompt first.")
            return False
        self.bridge.reset()  # seats left over from the last answer go
        self._end_session()
        self._session += 1
        self._main_id = f"s{self._session}-main"
        self._main_done = False
        self._prompt_text = prompt
        self.answer_text = ""
        self.answer_token_ids = []
        self.bridge.set_max_batch(self.batch_slider.value())
        self.spec_meter.reset()
        if self.apprentice.value() == 0:
            self.spec_meter.start_plain(self._spec_key(prompt))
        self._submit(self._main_id, prompt, self.main_new_tokens, main=True)
        self._fill_seats()
        return True

    def _end_session(self) -> None:
        self._main_done = True
        self._main_id = None
        self._active.clear()
        self._pending.clear()
        self._on_stage = None
        self._grants_outstanding = 0
        self.answer_text = ""
        self.answer_token_ids = []
        self._prompt_text = ""
        self.live_page.seats.clear()
        self._show_requests()

    def _submit(self, request_id: str, prompt: str, max_new_tokens: int, main: bool = False) -> None:
        if self.bridge.submit(request_id, prompt, max_new_tokens, temperature=0.0):
            self._active.add(request_id)
            self.live_page.seats.add_request(request_id, prompt, main=main)
            self._show_requests()

    def _show_requests(self) -> None:
        """Every seat's prompt and answer, as plain data, to the stage."""
        show = getattr(self.scene, "show_requests", None)
        if show is not None:  # TODO(stage): StageScene.show_requests(seats) is being added by the stage helper
            try:
                show(self.live_page.seats.seat_list())
            except Exception:  # noqa: BLE001 - a drawing problem must not stop the words and numbers
                log.exception("the stage could not show the seats")

    def _fill_seats(self) -> None:
        """Fill empty seats at the table with preset prompts, up to the batch slider's value."""
        if self._main_done:
            return
        while len(self._active) < self.batch_slider.value():
            self._seat_count += 1
            prompt = PRESET_PROMPTS[self._preset_cursor % len(PRESET_PROMPTS)]
            self._preset_cursor += 1
            # different lengths, so seats free up at different trips (continuous batching at work)
            n_new = 16 + (self._seat_count * 11) % 40
            before = len(self._active)
            self._submit(f"s{self._session}-seat{self._seat_count}", prompt, n_new)
            if len(self._active) == before:  # the engine is gone; do not loop
                return

    def _in_session(self, request_id: str) -> bool:
        return self._main_id is not None and request_id.startswith(f"s{self._session}-")

    # ---- pacing ------------------------------------------------------------------------------------------------
    def _on_tick(self, dt_s: float) -> None:
        self.scene.advance(dt_s)
        self._pump()

    def _pump(self) -> None:
        """Grant one trip when the stage is free and nothing is waiting (paced mode)."""
        if not self._running or self.real_time_box.isChecked() or self.engine_info is None:
            return
        if self._grants_outstanding > 0:
            if time.monotonic() - self._grant_time < GRANT_WATCHDOG_S:
                return
            log.warning("no report for a granted trip in %.0f s; granting again", GRANT_WATCHDOG_S)
            self._grants_outstanding = 0
        if self._pending or self._on_stage is not None or self.scene.busy() or not self._active:
            return
        if self.bridge.grant(1):
            self._grants_outstanding += 1
            self._grant_time = time.monotonic()

    def _show_next(self) -> None:
        if self._on_stage is not None or not self._pending or self.scene.busy():
            return
        report = self._pending.popleft()
        self._on_stage = report
        self.scene.show_trip(report)
        self._update_readout_from(report)
        if self.scene.real_time or not self.scene.busy():  # nothing to wait for: write now
            self._write_trip()

    def _write_trip(self) -> None:
        """Write the tokens of the trip on stage: answer text and chips."""
        report, self._on_stage = self._on_stage, None
        if report is None:
            return
        tokens = report.get("tokens", [])
        for tok in tokens:
            if tok.get("request_id") == self._main_id:
                self.answer_text += tok.get("text", "")
                self.answer_token_ids.append(int(tok.get("token_id", -1)))
        if self.live_page.seats.add_tokens(tokens):
            self._show_requests()
        if self._main_done and not self._pending:
            self._set_status("Done. Press Run for a new answer.")
            self.session_finished.emit()

    def _flush_pending(self) -> None:
        """Write every waiting trip at once (used when switching to real time)."""
        if self._on_stage is not None:
            self._write_trip()
        while self._pending:
            self._on_stage = self._pending.popleft()
            self._write_trip()

    def _on_trip_finished(self) -> None:
        self._write_trip()
        self._show_next()
        self._pump()

    # ---- engine events -----------------------------------------------------------------------------------------
    def _on_ready(self, info: dict) -> None:
        self.engine_info = info
        self._fatal = None
        model = info.get("model", {})
        layer_bytes = list(model.get("layer_weight_bytes", []))
        try:
            dictionary = int(model.get("weight_bytes") or 0) - sum(layer_bytes)  # embeddings and final norm
            self.scene.configure(layer_bytes, int(info.get("kv_bytes_per_block", 0)),
                                 int(info.get("num_blocks", 0)), str(model.get("name", "GPT-2")), dictionary)
        except Exception:  # noqa: BLE001 - a drawing problem must not stop the words and numbers
            log.exception("stage could not be configured")
        bandwidth = float(info.get("memory_bandwidth_bytes_per_s") or 0)
        weight_bytes = float(model.get("weight_bytes") or 0)
        self.floor_ms = weight_bytes / bandwidth * 1000.0 if bandwidth > 0 and weight_bytes > 0 else None
        self.bridge.set_max_batch(self.batch_slider.value())
        self._configure_extras(info)
        self._retranslate_engine_texts()
        restart_session = not self._main_done
        if restart_session:  # the engine was restarted mid-answer: start the answer again
            self._main_done = True
        self._set_status("Ready. Choose a prompt and press Run.")
        if self._want_run or (restart_session and self._running):
            self._want_run = False
            self.run()

    def _on_accepted(self, event: dict) -> None:
        rid = event.get("request_id", "")
        if rid == self._main_id and event.get("notice"):
            self._set_status_text(str(event["notice"]))  # e.g. the prompt was cut to fit the context
        if self._in_session(rid):
            self.live_page.seats.add_prompt_chips(rid, list(event.get("prompt_labels", [])),
                                                  list(event.get("prompt_token_ids", [])))

    def _on_step(self, report: dict) -> None:
        self.reports_received += 1
        self._grants_outstanding = max(0, self._grants_outstanding - 1)
        if self._main_done or not any(self._in_session(r) for r in report.get("request_ids", [])):
            return  # a report for an answer that was reset or is already complete
        self._trip_count += 1
        self.last_report = report
        wall = float(report.get("wall_ms", 0.0))
        self.trip_plot.add_trip(self._trip_count, wall, report.get("phase") in ("prefill", "mixed"))
        if wall > 0:
            tokens = int(report.get("tokens_out", len(report.get("tokens", []))))
            self.rate_plot.add_trip(self._trip_count, tokens / wall * 1000.0)
        self._measure_extras(report)
        if self.real_time_box.isChecked():
            # Real time: the stage queues (and, when far behind, drops) trips itself; words appear at once.
            self._flush_pending()
            self.scene.show_trip(report)
            self._update_readout_from(report)
            self._on_stage = report
            self._write_trip()
            return
        self._pending.append(report)
        self._show_next()

    def _on_finished(self, event: dict) -> None:
        rid = event.get("request_id", "")
        if not self._in_session(rid):
            return
        self._active.discard(rid)
        self.live_page.seats.finish(rid)
        if rid == self._main_id:
            self._main_done = True
            self._running = False
            if self.real_time_box.isChecked():
                self.bridge.free_run(False)
            self.bridge.reset()  # the other seats stop with the visitor's answer
            self._active.clear()
            if self._on_stage is None and not self._pending:
                self._set_status("Done. Press Run for a new answer.")
                self.session_finished.emit()
        else:
            self._fill_seats()

    def _on_idle(self) -> None:
        self._grants_outstanding = 0

    def _on_error(self, message: str) -> None:
        self._set_status_text(_tr("The engine says: {message}").format(message=message))

    def _on_fatal(self, message: str) -> None:
        self._fatal = message
        self.scene.show_notice(lambda: _tr("No model could be loaded, so no trips today: the reason is below."))
        self.engine_info = None
        self._running = False
        self._set_status_text(_tr("The model could not be loaded: {message}").format(message=message))

    def _on_engine_died(self, code: int) -> None:
        self.engine_info = None
        self._grants_outstanding = 0
        self._pending.clear()
        self._on_stage = None
        if self._fatal is not None or not self.auto_restart:
            return
        now = time.monotonic()
        self._restarts.append(now)
        if len(self._restarts) == self._restarts.maxlen and now - self._restarts[0] < 60:
            self._set_status("The engine keeps stopping; it will not be restarted. See the log.")
            return
        self._set_status_text(_tr("The engine stopped (code {code}). Starting a new one…").format(code=code))
        self._restart_timer.start(RESTART_DELAY_MS)

    def _restart_engine(self) -> None:
        self._want_run = self._want_run or self._running
        self.bridge.restart()

    # ---- the apprentice and the torn book ---------------------------------------------------------------------
    def _configure_extras(self, info: dict) -> None:
        """From ``ready``: is there a usable draft model, which degrees may the book be torn into; and after an
        engine restart, ask again for what the sliders show."""
        draft_ok = info.get("draft") is not None and not info.get("draft_error")
        k = self.apprentice.value()
        self.apprentice.set_available(draft_ok, info.get("draft_error") or ("" if draft_ok else None))
        if draft_ok and k:
            self.apprentice.blockSignals(True)
            self.apprentice.set_value(k)
            self.apprentice.blockSignals(False)
            self.bridge.set_draft_k(k)
        sharding = info.get("sharding") or {}
        self._sharding = (str(sharding.get("mode", "tp")), int(sharding.get("n", 1) or 1))
        wanted = (self.tear.mode(), self.tear.value())
        self.tear.confirmed = self._sharding
        self.tear.configure(list(sharding.get("degrees_tp") or [1]), int(sharding.get("max_pp") or 1))
        if hasattr(self.scene, "set_sharding"):
            self.scene.set_sharding(*self._sharding)
        if wanted[1] > 1 and wanted != self._sharding:  # a restarted engine: tear the book again
            self.tear.set_value(*wanted)
        self._update_extra_readout()

    def _spec_key(self, prompt: str | None = None) -> tuple:
        """What "the same prompt" means for the speed-up: prompt, table size and sharding."""
        return (prompt if prompt is not None else self._prompt_text, self.batch_slider.value(), self._sharding)

    def _measure_extras(self, report: dict) -> None:
        self.spec_meter.add(report, self._spec_key())
        self.shard_meter.add(report)
        self._update_extra_readout()

    def _update_extra_readout(self) -> None:
        lines = []
        k = self.apprentice.value()
        if k > 0 and self.apprentice.is_available():
            lines.append(self.spec_meter.text(self._spec_key(), k))
        mode, n = self._sharding
        if n > 1:
            lines.append(self.shard_meter.text(mode, n))
        why = ""
        if k > 0 and self.apprentice.is_available() and self.spec_meter.trips:
            why = speedup_why(self.spec_meter.speedup(self._spec_key()))
        if n > 1 and not why:
            why = sharding_why(self.shard_meter.compute_ms(), self.shard_meter.comm_ms())
        if self.tear.is_pending():
            lines.append(_tr("Starting the workers… the book is being torn (a few seconds)"))
        self.live_page.readout_panel.set_extras(lines, why)

    def _on_draft_k_changed(self, k: int) -> None:
        self.spec_meter.reset()
        if self.engine_info is not None:
            self.bridge.set_draft_k(k)
        if k:
            self._set_status_text(_tr("The apprentice now guesses {k} tokens before every trip.").format(k=k))
        else:
            self._set_status("The apprentice rests: one trip, one token.")
        self._update_extra_readout()

    def _on_tear_requested(self, mode: str, n: int) -> None:
        if self.engine_info is None or not self.bridge.set_sharding(mode, n):
            self.tear.give_up()
            return
        self._sharding_timer.start(SHARDING_WATCHDOG_MS)
        if n > 1:
            self._set_status("Starting the workers… the book is being torn (a few seconds)")
        else:
            self._set_status("Putting the book back together on one desk…")
        self._update_extra_readout()

    def _on_sharding(self, event: dict) -> None:
        mode, n = str(event.get("mode", "tp")), int(event.get("n", 1) or 1)
        asked = (self.tear.mode(), self.tear.value())
        self._sharding_timer.stop()
        self._sharding = (mode, n)
        self.tear.confirm(mode, n)
        self.shard_meter.reset()
        layers = [tuple(w["layers"]) for w in event.get("workers") or [] if w.get("layers")]
        if hasattr(self.scene, "set_sharding"):
            self.scene.set_sharding(mode, n, layers or None)
        if (mode, n) == asked or n > 1:  # after a fallback the engine's own calm message stays on screen
            if n > 1:
                how = _tr("by pages (TP)") if mode == "tp" else _tr("by chapters (PP)")
                self._set_status_text(_tr("The book is torn {n} ways {how}: {n} desks work on every trip.").format(
                    n=n, how=how))
            else:
                self._set_status("The book is whole again: one desk.")
        self._update_extra_readout()

    def _on_sharding_timeout(self) -> None:
        if self.tear.is_pending():
            self.tear.give_up()
            self._set_status("The workers did not answer; the book stays as it was.")
            self._update_extra_readout()

    # ---- text on screen ----------------------------------------------------------------------------------------
    def _update_readout_from(self, report: dict) -> None:
        wall = float(report.get("wall_ms", 0.0))
        tokens = int(report.get("tokens_out", len(report.get("tokens", []))))
        self._readout_args = {"wall": wall, "tokens": tokens, "batch": int(report.get("batch", 1))}
        self._update_readout()

    def _update_readout(self) -> None:
        text = readout_text(self._readout_args, self.engine_info is not None, self.real_time_box.isChecked(),
                            float(getattr(self.scene, "trip_duration_s", 1.0)))
        if self.readout.text() != text:  # a changed text relayouts the page: only when it changes
            self.readout.setText(text)

    def _retranslate_engine_texts(self) -> None:
        self.model_label.setText(model_text(self.engine_info, self._fatal))
        title = _tr("Measured ms per trip (orange: reading the question · blue: writing)")
        if self.engine_info is None or self.floor_ms is None:
            self.trip_plot.set_floor(None)
        else:
            self.trip_plot.setToolTip(_tr("Red line: the floor, weights ÷ measured memory bandwidth; no trip can be "
                                          "faster on this computer"))
            self.trip_plot.set_floor(self.floor_ms)
            title += " · " + _tr("red dashes: the floor, {ms} ms").format(ms=fmt_ms(self.floor_ms))
        self.trip_plot_title.setText(title)

    def _set_status(self, english: str) -> None:
        """Show a calm one-line message (an English source string, translated now and on language change)."""
        self._status_key = (english, {})
        self.status_line.setText(_tr(english))
        log.info("status: %s", english)

    def _set_status_text(self, text: str) -> None:
        self._status_key = None
        self.status_line.setText(text)
        log.info("status: %s", text)

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
            self.status_line.setText(_tr(self._status_key[0]))
        self.frame_overlay.refresh()
        self.live_tab.setText(_tr("Live"))
        self.live_tab.setToolTip(_tr("The real model writing, one trip per token"))
        self.tour_tab.setText(_tr("Tour"))
        self.tour_tab.setToolTip(_tr("The guided tour: fifteen sections, the game, the metaphor table"))
        self.apprentice.retranslate()
        self.tear.retranslate()
        self.live_page.seats.retranslate()
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
