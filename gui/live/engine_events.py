"""The Live page's answers to the engine: ready, accepted, step, finished, errors, a dead engine, and the two
extras (the apprentice: speculative decoding; the torn book: sharding), and the words and figures they change.

``EngineEventHandler`` (a collaborator of ``MainWindow``) holds what it needs explicitly: the session's state,
the bridge, the stage, the page's widgets, the meters, the ``StatusLine`` and the ``LiveRunner`` (whose answer an
engine restart or failure affects). The answers about the requests themselves (accepted, step, finished, idle)
are the runner's (``gui.live.session``).
"""

from __future__ import annotations

import logging
import time
from collections import deque

from PySide6.QtCore import QTimer

from animations.units import ms_figure
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import slower_reason
from gui.live.readout import model_display_name, model_text, readout_rule, readout_text, sharding_why, speedup_why

log = logging.getLogger("gui.window.main_window")

SHARDING_WATCHDOG_MS = 30_000  # workers that have not answered by then: the tearing slider goes back
RESTART_DELAY_MS = 400
RESTART_MAX_DELAY_MS = 60_000  # an engine that keeps dying is retried at most this far apart, for days


class EngineEventHandler:
    """Slots of the engine bridge's lifecycle signals, the extras' bookkeeping and the readout.

    Args:
        session: the Live session's state (batch, apprentice, sharding, sampling).
        bridge: the ``EngineBridge``; scene: the stage; page: the ``LivePage``.
        controller: the ``LiveController`` (a ready engine is told the session's settings again; the tear
            request).
        runner: the ``LiveRunner`` (its answer starts again after an engine restart).
        status: the ``StatusLine``.
        spec_meter, shard_meter: what the apprentice and the torn book measure.
        verdicts: the ``ApprenticeVerdicts`` (greedy while the apprentice pays only greedy); set after both exist.
        sync_ideas: called after the extras' readout changes (the idea toggles follow).
        auto_restart: start a new engine when the engine process dies.
    """

    def __init__(self, session, bridge, controller, scene, page, runner, status, spec_meter, shard_meter, sync_ideas,
                 auto_restart: bool = True):
        self.session = session
        self.bridge = bridge
        self.controller = controller
        self.scene = scene
        self.live_page = page
        self.runner = runner
        self.apprentice = page.apprentice
        self.apprentice_choice = page.apprentice.choice
        self.tear = page.tear
        self.trip_plot = page.trip_plot
        self.trip_plot_title = page.trip_plot_title
        self.readout = page.readout_panel.readout
        self.model_label = page.readout_panel.model_label
        self.spec_meter = spec_meter
        self.shard_meter = shard_meter
        self.status = status
        self._sync_ideas = sync_ideas
        self.verdicts = None  # the ApprenticeVerdicts, set by the window
        self.lookup = None  # the LookupPresets (gui.live.lookup_presets), set by SessionControls
        self.auto_restart = auto_restart
        self.engine_info: dict | None = None
        self.floor_ms: float | None = None
        self._restarts: deque[float] = deque(maxlen=6)
        self._rapid_deaths = 0  # engine deaths each within a minute of the one before
        self._readout_args: dict | None = None
        self._restart_timer = QTimer(page)
        self._restart_timer.setSingleShot(True)
        self._restart_timer.timeout.connect(self._restart_engine)
        self._sharding_timer = QTimer(page)
        self._sharding_timer.setSingleShot(True)
        self._sharding_timer.timeout.connect(self._on_sharding_timeout)
        for signal, slot in ((bridge.ready, self._on_ready), (bridge.error, self._on_error),
                             (bridge.fatal, self._on_fatal), (bridge.engine_died, self._on_engine_died),
                             (bridge.sharding, self._on_sharding)):
            signal.connect(slot)
        self.tear.requested.connect(self._on_tear_requested)
        if hasattr(scene, "trip_started"):  # the readout follows the trip on stage (issue 24)
            scene.trip_started.connect(self._on_stage_trip)

    def _set_status(self, english: str, **fields) -> None:
        self.status.set_status(english, **fields)

    def _set_status_text(self, text: str) -> None:
        self.status.set_status_text(text)

    @property
    def fatal_error(self) -> str | None:
        """Why no model could be loaded (the engine's ``fatal`` message), or None."""
        return self.session.engine_error

    def is_restarting(self) -> bool:
        """True while a new engine is waited for after the last one died (the restart timer runs)."""
        return self.session.engine_status == "restarting"

    def engine_starting(self) -> None:
        """A new engine is starting: the session's engine is "loading", unless the last one failed (its reason
        stands until an engine is ready)."""
        if self.session.engine_status != "failed":
            self.session.set_engine_status("loading")

    def stop_timers(self) -> None:
        """Stop the restart and the sharding watchdog timers (the window is closing)."""
        self._restart_timer.stop()
        self._sharding_timer.stop()
        if self.session.engine_status == "restarting":
            self.session.set_engine_status("stopped")

    def clear_readout(self) -> None:
        """Forget the last trip's figures: the readout says there is no trip yet."""
        self._readout_args = None
        self.update_readout()

    def greedy_line(self) -> str:
        return self.verdicts.greedy_line() if self.verdicts is not None else ""

    def _apply_apprentice_sampling(self, k: int) -> None:
        if self.verdicts is not None:
            self.verdicts.apply_apprentice_sampling(k)

    # ---- engine events -----------------------------------------------------------------------------------------
    def _on_ready(self, info: dict) -> None:
        self.engine_info = info
        self.session.set_engine_status("ready")
        model = info.get("model", {})
        layer_bytes = list(model.get("layer_weight_bytes", []))
        try:
            dictionary = int(model.get("weight_bytes") or 0) - sum(layer_bytes)  # embeddings and final norm
            name = model_display_name(str(model.get("name", "")))  # "One Trip code model", not "target"
            self.scene.set_device(str(info.get("device") or "cpu"))  # the warehouse names this machine's memory
            self.scene.configure(layer_bytes, int(info.get("kv_bytes_per_block", 0)),
                                 int(info.get("num_blocks", 0)), name, dictionary)
        except Exception:  # noqa: BLE001 - a drawing problem must not stop the words and numbers
            log.exception("stage could not be configured")
        bandwidth = float(info.get("memory_bandwidth_bytes_per_s") or 0)
        weight_bytes = float(model.get("weight_bytes") or 0)
        self.floor_ms = weight_bytes / bandwidth * 1000.0 if bandwidth > 0 and weight_bytes > 0 else None
        self.controller.send_batch()
        self._configure_extras(info)
        self.retranslate_engine_texts()
        self.runner.on_engine_ready()

    def _on_error(self, message: str) -> None:
        self._set_status_text(_tr("The engine says: {message}").format(message=message))

    def _on_fatal(self, message: str) -> None:
        self.session.set_engine_status("failed", message)
        self.scene.show_notice(lambda: _tr("No model could be loaded, so no trips today: the reason is below."))
        self.engine_info = None
        self.runner.on_engine_failed()
        self._set_status_text(_tr("The model could not be loaded: {message}").format(message=message))

    def _on_engine_died(self, code: int) -> None:
        self.engine_info = None
        self.runner.on_engine_lost()
        if self.session.engine_status == "failed":
            return
        if not self.auto_restart:
            self.session.set_engine_status("stopped")
            return
        self.session.set_engine_status("restarting")
        now = time.monotonic()
        rapid = bool(self._restarts) and now - self._restarts[-1] < 60
        self._rapid_deaths = self._rapid_deaths + 1 if rapid else 0
        self._restarts.append(now)
        # a kiosk runs for days: never give up, back off (0.4 s, then doubling after a few quick deaths, to 60 s)
        delay = min(RESTART_MAX_DELAY_MS, RESTART_DELAY_MS * 2 ** max(0, self._rapid_deaths - 2))
        if self._rapid_deaths >= 5:
            log.warning("engine stopped again (code %s), %d times in a row; next try in %.1f s",
                        code, self._rapid_deaths + 1, delay / 1000)
            self._set_status_text(_tr("The engine keeps stopping; trying again in {s} s. See the log.").format(
                s=f"{delay / 1000:.0f}"))
        else:
            self._set_status_text(_tr("The engine stopped (code {code}). Starting a new one…").format(code=code))
        self._restart_timer.start(delay)

    def _restart_engine(self) -> None:
        self.runner.run_again_when_ready()
        self.engine_starting()
        self.bridge.restart()

    # ---- the apprentice and the torn book ---------------------------------------------------------------------
    def _configure_extras(self, info: dict) -> None:
        """From ``ready``: is there a usable draft model, which degrees may the book be torn into; and after an
        engine restart, ask again for what the sliders show."""
        # the apprentice is there with a draft model, or else with the n-gram apprentice (no model: guesses
        # copied from the request's own earlier text)
        draft_ok = bool(info.get("draft_kinds")) or (info.get("draft") is not None and not info.get("draft_error"))
        k = self.session.draft_k
        self.session.set_apprentice_available(draft_ok)
        self.apprentice.set_available(draft_ok, info.get("draft_error") or ("" if draft_ok else None))
        if not draft_ok:
            self.session.set_draft_k(0)  # no apprentice in this engine: its slider shows 0
        self.apprentice_choice.set_kinds(list(info.get("draft_kinds") or ["ngram"]))
        if info.get("draft_kind") in ("ngram", "model"):
            self.apprentice_choice.set_kind(info["draft_kind"])
            self.session.set_draft_kind(info["draft_kind"])
        if self.lookup is not None:
            self.lookup.reapply()  # a lookup preset runs the n-gram apprentice, whatever the engine started with
        if draft_ok and k:
            self.apprentice.blockSignals(True)
            self.apprentice.set_value(k)
            self.apprentice.blockSignals(False)
            self.controller.send_draft_k()
        sharding = info.get("sharding") or {}
        self.session.set_sharding(str(sharding.get("mode", "tp")), int(sharding.get("n", 1) or 1))
        wanted = (self.tear.mode(), self.tear.value())
        self.tear.confirmed = self.session.sharding
        self.tear.configure(list(sharding.get("degrees_tp") or [1]), int(sharding.get("max_pp") or 1))
        layers = [tuple(w["layers"]) for w in sharding.get("workers") or [] if w.get("layers")]
        now = self.session.sharding
        if hasattr(self.scene, "set_sharding") and (now[0] == "tp" or now[1] == 1 or layers):
            self.scene.set_sharding(*now, layers or None)  # torn by chapters: the workers' layers
        if wanted[1] > 1 and wanted != self.session.sharding:  # a restarted engine: tear the book again
            self.tear.set_value(*wanted)
        self.update_extra_readout()

    def spec_key(self, prompt: str | None = None) -> tuple:
        """What "the same prompt" means for the speed-up: prompt, table size, sharding and greedy or not (a
        greedy apprentice is compared with greedy plain decoding)."""
        s = self.session
        return (prompt if prompt is not None else self.runner.prompt_text, s.batch, s.sharding, s.sampling.greedy)

    def measure_extras(self, report: dict) -> None:
        self.spec_meter.add(report, self.spec_key())
        self.shard_meter.add(report)
        self.update_extra_readout()

    def update_extra_readout(self) -> None:
        lines = []
        if self.lookup is not None and (why_lookup := self.lookup.line()):
            lines.append(why_lookup)  # a lookup preset: why the n-gram apprentice, and its measured speed-up
        k = self.session.draft_k
        if k > 0 and self.session.apprentice_available:
            details = getattr(self.live_page, "details", False)
            lines.append(self.spec_meter.text(self.spec_key(), k, short=not details))
            if greedy := self.greedy_line():
                lines.append(greedy)
        mode, n = self.session.sharding
        if n > 1:
            lines.append(self.shard_meter.text(mode, n))
        why = ""
        if k > 0 and self.session.apprentice_available and self.spec_meter.trips:
            reason = (self.lookup.slower_reason() if self.lookup is not None and self.lookup.active is not None else
                      slower_reason(self.apprentice_choice.event, self.apprentice_choice.kind(),
                                    self.session.sampling.greedy, self.spec_meter.acceptance))
            # the details view shows each apprentice's verdict with its reason: one reason on screen, not two
            shown = getattr(self.live_page, "details", False) and \
                reason in self.apprentice_choice.verdict_text(self.apprentice_choice.kind())
            # a speed-up timed on a busy computer is already called unfair on its own line: no "slower" claim on it
            busy = self.spec_meter.busy(self.spec_key())
            why = "" if shown or busy else speedup_why(self.spec_meter.speedup(self.spec_key()), reason)
        if n > 1 and not why:
            why = sharding_why(self.shard_meter.compute_ms(), self.shard_meter.comm_ms())
        if self.tear.is_pending():
            lines.append(_tr("Starting the workers… the book is being torn (a few seconds)"))
        self.live_page.readout_panel.set_extras(lines, why)
        self._sync_ideas()

    def on_draft_k_changed(self, k: int) -> None:
        self.spec_meter.reset()
        self._apply_apprentice_sampling(k)  # the visitor's sampling stays (greedy_line says where it pays only greedy)
        if k:
            self._set_status_text(_tr("The apprentice now guesses {k} tokens before every trip.").format(k=k))
        else:
            self._set_status("The apprentice rests: one trip, one token.")
        self.update_extra_readout()

    def _on_tear_requested(self, mode: str, n: int) -> None:
        if not self.controller.request_sharding(mode, n):
            self.tear.give_up()
            return
        self._sharding_timer.start(SHARDING_WATCHDOG_MS)
        if n > 1:
            self._set_status("Starting the workers… the book is being torn (a few seconds)")
        else:
            self._set_status("Putting the book back together on one desk…")
        self.update_extra_readout()

    def _on_sharding(self, event: dict) -> None:
        mode, n = str(event.get("mode", "tp")), int(event.get("n", 1) or 1)
        asked = (self.tear.mode(), self.tear.value())
        self._sharding_timer.stop()
        self.session.set_sharding(mode, n)
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
        self.update_extra_readout()

    def _on_sharding_timeout(self) -> None:
        if self.tear.is_pending():
            self.tear.give_up()
            self._set_status("The workers did not answer; the book stays as it was.")
            self.update_extra_readout()

    # ---- text on screen ----------------------------------------------------------------------------------------
    def show_on_stage(self, report: dict) -> None:
        """Hand ``report`` to the stage. The readout changes when the stage starts the trip (``trip_started``),
        not now: in real time the stage may still be on an earlier trip, and the readout is of the one it shows
        ("one count, one word": the headline and the readout count the same trip)."""
        self.scene.show_trip(report)
        if not hasattr(self.scene, "trip_started"):  # a stage without the signal: the readout as it arrives
            self._update_readout_from(report)

    def _on_stage_trip(self, trip: dict) -> None:
        """The stage started ``trip``: the readout and the split bar say its figures."""
        self._update_readout_from(trip)

    def _update_readout_from(self, report: dict) -> None:
        wall = float(report.get("wall_ms", 0.0))
        tokens = int(report.get("tokens_out", len(report.get("tokens", []))))
        self._readout_args = {"wall": wall, "tokens": tokens, "batch": int(report.get("batch", 1)),
                              "tokens_in": int(report.get("tokens_in", 0) or 0)}
        self.update_readout()
        self.live_page.split_row.show_trip(report, self.engine_info)  # reading, other work, floor: measured split

    def update_readout(self) -> None:
        text = readout_text(self._readout_args, self.engine_info is not None, self.session.real_time,
                            float(getattr(self.scene, "trip_duration_s", 1.0)))
        if self.readout.text() != text:  # a changed text relayouts the page: only when it changes
            self.readout.setText(text)
        if self._readout_args is None:
            self.live_page.split_row.show_trip(None, None)

    def retranslate_engine_texts(self) -> None:
        self.model_label.setText(model_text(self.engine_info, self.session.engine_error))
        self.readout.setToolTip(readout_rule())  # the same in every trip: set once per language
        title = _tr("Measured ms per trip · orange: reading the question · blue: writing")
        if self.engine_info is None or self.floor_ms is None:
            self.trip_plot.set_floor(None)
        else:
            self.trip_plot.setToolTip(_tr("Red line: the floor, weights ÷ measured memory bandwidth; no trip can be "
                                          "faster on this computer"))
            self.trip_plot.set_floor(self.floor_ms)
            # a no-break space: the wrapped title never puts "ms" on a line of its own, away from its number
            title += " · " + _tr("red: the floor, {ms} ms").replace("{ms} ms", "{ms}\u00a0ms").format(
                ms=ms_figure(self.floor_ms))
        self.trip_plot_title.setText(title)


class StatusLine:
    """The calm one-line status under the page, in the current language (re-said on a language change)."""

    def __init__(self, label):
        self.label = label
        self._status_key: tuple[str, dict] | None = None

    def set_status(self, english: str, **fields) -> None:
        """Show a calm one-line message (an English source string, translated now and on language change;
        ``fields`` fill its {placeholders})."""
        self._status_key = (english, fields)
        self.label.setText(_tr(english).format(**fields))
        log.info("status: %s", english.format(**fields))

    def set_status_text(self, text: str) -> None:
        """Show ``text`` as it is (already translated, with its numbers)."""
        self._status_key = None
        self.label.setText(text)
        log.info("status: %s", text)

    def retranslate(self) -> None:
        if self._status_key is not None:
            self.label.setText(_tr(self._status_key[0]).format(**self._status_key[1]))
