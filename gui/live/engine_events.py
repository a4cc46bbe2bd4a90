"""The Live page's answers to the engine: ready, accepted, step, finished, errors, a dead engine, and the two
extras (the apprentice: speculative decoding; the torn book: sharding), and the words and figures they change.

A mixin of ``gui.window.main_window.MainWindow`` (it uses the window's widgets, bridge and scene).
"""

from __future__ import annotations

import logging
import time

from animations.units import ms_figure
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import slower_reason
from gui.live.readout import model_display_name, model_text, readout_rule, readout_text, sharding_why, speedup_why
from model.loops import find_loop

log = logging.getLogger("gui.window.main_window")

SHARDING_WATCHDOG_MS = 30_000  # workers that have not answered by then: the tearing slider goes back
RESTART_DELAY_MS = 400
RESTART_MAX_DELAY_MS = 60_000  # an engine that keeps dying is retried at most this far apart, for days


class EngineEvents:
    """Slots of the engine bridge's signals, the extras' bookkeeping, the readout and the status line."""

    # ---- engine events -----------------------------------------------------------------------------------------
    def _on_ready(self, info: dict) -> None:
        self.engine_info = info
        self._fatal = None
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
            self._show_on_stage(report)
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
        if rid == self._main_id and event.get("finish_reason") == "loop":
            # the engine stopped it (model/loops.py); the page finds the same phrase as it writes the words
            loop = find_loop(str(event.get("text", "")))
            self._engine_loop_phrase = loop.phrase if loop is not None else "…"
        if rid == self._main_id:
            self._main_done = True
            self._running = False
            if self.real_time_box.isChecked():
                self.bridge.free_run(False)
            self.bridge.reset()  # the other seats stop with the visitor's answer
            self._active.clear()
            if self._on_stage is None and not self._pending:
                self._set_done_status()
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
        self._want_run = self._want_run or self._running
        self.bridge.restart()

    # ---- the apprentice and the torn book ---------------------------------------------------------------------
    def _configure_extras(self, info: dict) -> None:
        """From ``ready``: is there a usable draft model, which degrees may the book be torn into; and after an
        engine restart, ask again for what the sliders show."""
        # the apprentice is there with a draft model, or else with the n-gram apprentice (no model: guesses
        # copied from the request's own earlier text)
        draft_ok = bool(info.get("draft_kinds")) or (info.get("draft") is not None and not info.get("draft_error"))
        k = self.apprentice.value()
        self.apprentice.set_available(draft_ok, info.get("draft_error") or ("" if draft_ok else None))
        self.apprentice_choice.set_kinds(list(info.get("draft_kinds") or ["ngram"]))
        if info.get("draft_kind") in ("ngram", "model"):
            self.apprentice_choice.set_kind(info["draft_kind"])
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
        layers = [tuple(w["layers"]) for w in sharding.get("workers") or [] if w.get("layers")]
        if hasattr(self.scene, "set_sharding") and (self._sharding[0] == "tp" or self._sharding[1] == 1 or layers):
            self.scene.set_sharding(*self._sharding, layers or None)  # torn by chapters: the workers' layers
        if wanted[1] > 1 and wanted != self._sharding:  # a restarted engine: tear the book again
            self.tear.set_value(*wanted)
        self._update_extra_readout()

    def _spec_key(self, prompt: str | None = None) -> tuple:
        """What "the same prompt" means for the speed-up: prompt, table size, sharding and greedy or not (a
        greedy apprentice is compared with greedy plain decoding)."""
        return (prompt if prompt is not None else self._prompt_text, self.batch_slider.value(), self._sharding,
                self.model_choice.greedy)

    def _measure_extras(self, report: dict) -> None:
        self.spec_meter.add(report, self._spec_key())
        self.shard_meter.add(report)
        self._update_extra_readout()

    def _update_extra_readout(self) -> None:
        lines = []
        k = self.apprentice.value()
        if k > 0 and self.apprentice.is_available():
            lines.append(self.spec_meter.text(self._spec_key(), k))
            if greedy := self.greedy_line():
                lines.append(greedy)
        mode, n = self._sharding
        if n > 1:
            lines.append(self.shard_meter.text(mode, n))
        why = ""
        if k > 0 and self.apprentice.is_available() and self.spec_meter.trips:
            reason = slower_reason(self.apprentice_choice.event, self.apprentice_choice.kind(),
                                   self.model_choice.greedy, self.spec_meter.acceptance)
            # the details view shows each apprentice's verdict with its reason: one reason on screen, not two
            shown = getattr(self.live_page, "details", False) and \
                reason in self.apprentice_choice.verdict_text(self.apprentice_choice.kind())
            why = "" if shown else speedup_why(self.spec_meter.speedup(self._spec_key()), reason)
        if n > 1 and not why:
            why = sharding_why(self.shard_meter.compute_ms(), self.shard_meter.comm_ms())
        if self.tear.is_pending():
            lines.append(_tr("Starting the workers… the book is being torn (a few seconds)"))
        self.live_page.readout_panel.set_extras(lines, why)
        self._sync_ideas()

    def _on_draft_k_changed(self, k: int) -> None:
        self.spec_meter.reset()
        self._apply_apprentice_sampling(k)  # the visitor's sampling stays (greedy_line says where it pays only greedy)
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
    def _show_on_stage(self, report: dict) -> None:
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
        self._update_readout()
        self.live_page.split_row.show_trip(report, self.engine_info)  # reading, other work, floor: measured split

    def _update_readout(self) -> None:
        text = readout_text(self._readout_args, self.engine_info is not None, self.real_time_box.isChecked(),
                            float(getattr(self.scene, "trip_duration_s", 1.0)))
        if self.readout.text() != text:  # a changed text relayouts the page: only when it changes
            self.readout.setText(text)
        if self._readout_args is None:
            self.live_page.split_row.show_trip(None, None)

    def _retranslate_engine_texts(self) -> None:
        self.model_label.setText(model_text(self.engine_info, self._fatal))
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

    def _set_status(self, english: str, **fields) -> None:
        """Show a calm one-line message (an English source string, translated now and on language change;
        ``fields`` fill its {placeholders})."""
        self._status_key = (english, fields)
        self.status_line.setText(_tr(english).format(**fields))
        log.info("status: %s", english.format(**fields))

    def _set_status_text(self, text: str) -> None:
        self._status_key = None
        self.status_line.setText(text)
        log.info("status: %s", text)

