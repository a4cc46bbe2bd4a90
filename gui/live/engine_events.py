"""The Live page's answers to the engine's lifecycle: ready, errors, a failed or dead engine (restarted, backing
off), and the two extras' settings (the apprentice: speculative decoding; the torn book: sharding).

``EngineEventHandler`` (a collaborator of ``MainWindow``) turns these events into the session's state
(``engine_info``, ``engine_status``, ``apprentice_available``, ``apprentice_offer``, ``draft_kind``,
``sharding_offer``, ``sharding`` with ``worker_layers``, ``sharding_asked``) and asks the controller to send a new
engine the settings the page shows; the controls and the stage follow the session
(``gui.live.session_view.ExtrasControls``). It holds explicitly what it needs: the session, the bridge, the
controller, the stage (drawn for a new model), the page (its tearing control's requests; its timers' parent), the
``StatusLine``, the ``LiveRunner`` (whose answer an engine restart or failure affects), the sharding's meter, the
lookup presets and the ``LiveReadout`` (``gui.live.readout_view``: the figures, which follow the session). The
answers about the requests themselves (accepted, step, finished, idle) are the runner's (``gui.live.session``).
"""

from __future__ import annotations

import logging
import time
from collections import deque

from PySide6.QtCore import QTimer

from gui.i18n import tr_window as _tr
from gui.live.readout import model_display_name
from gui.live.state import DRAFT_KINDS, ApprenticeOffer, ShardingOffer

log = logging.getLogger("gui.window.main_window")

SHARDING_WATCHDOG_MS = 30_000  # workers that have not answered by then: the tearing slider goes back
RESTART_DELAY_MS = 400
RESTART_MAX_DELAY_MS = 60_000  # an engine that keeps dying is retried at most this far apart, for days


class EngineEventHandler:
    """Slots of the engine bridge's lifecycle signals and the extras' settings, as changes of the session.

    Args:
        session: the Live session's state (engine info and status, apprentice, sharding).
        bridge: the ``EngineBridge``; scene: the stage (configured for each ready model); page: the ``LivePage``
            (its ``tear``'s ``requested``).
        controller: the ``LiveController`` (a ready engine is told the session's settings again; the tear
            request).
        runner: the ``LiveRunner`` (its answer starts again after an engine restart).
        status: the ``StatusLine``.
        shard_meter: what the torn book measures (started again when the sharding changes).
        lookup: the ``LookupPresets`` (a lookup preset runs the n-gram apprentice, whatever an engine starts with).
        readout: the ``LiveReadout`` (the extras' lines, written again when the tearing changes).
        auto_restart: start a new engine when the engine process dies.
    """

    def __init__(self, session, bridge, controller, scene, page, runner, status, shard_meter, lookup, readout,
                 auto_restart: bool = True):
        self.session = session
        self.bridge = bridge
        self.controller = controller
        self.scene = scene
        self.runner = runner
        self.shard_meter = shard_meter
        self.status = status
        self.lookup = lookup
        self.readout = readout
        self.auto_restart = auto_restart
        self._restarts: deque[float] = deque(maxlen=6)
        self._rapid_deaths = 0  # engine deaths each within a minute of the one before
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
        page.tear.requested.connect(self._ask_sharding)

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

    def restart_engine(self) -> None:
        """Start a new engine now (another model or weights were chosen): none is ready until it says so."""
        self.session.set_engine_info(None)
        self.engine_starting()
        self.bridge.restart()

    # ---- engine events -----------------------------------------------------------------------------------------
    def _on_ready(self, info: dict) -> None:
        self.session.set_engine_info(info)  # the readout and the model line follow (``LiveReadout``)
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
        self.controller.send_batch()
        self._take_offer(info)
        self.runner.on_engine_ready()

    def _on_error(self, message: str) -> None:
        self._set_status_text(_tr("The engine says: {message}").format(message=message))

    def _on_fatal(self, message: str) -> None:
        self.session.set_engine_status("failed", message)
        self.scene.show_notice(lambda: _tr("No model could be loaded, so no trips today: the reason is below."))
        self.session.set_engine_info(None)
        self.runner.on_engine_failed()
        self._set_status_text(_tr("The model could not be loaded: {message}").format(message=message))

    def _on_engine_died(self, code: int) -> None:
        self.session.set_engine_info(None)
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
    def _take_offer(self, info: dict) -> None:
        """From ``ready`` (a dict): what the engine offers of the extras and the sharding it runs, as the
        session's; after an engine restart, what the page shows is asked of it again."""
        self._take_apprentice(info)
        self._take_sharding(info.get("sharding") or {})
        self.readout.update_extras()

    def _take_apprentice(self, info: dict) -> None:
        """The apprentice is there with a draft model, or else with the n-gram one (no model: guesses copied
        from the request's own earlier text); the engine is told the session's guesses again."""
        draft_ok = bool(info.get("draft_kinds")) or (info.get("draft") is not None and not info.get("draft_error"))
        kinds = info.get("draft_kinds") or ["ngram"]
        error = info.get("draft_error")
        self.session.set_apprentice_offer(ApprenticeOffer(tuple(k for k in DRAFT_KINDS if k in kinds) or ("ngram",),
                                                          str(error) if error else None))
        self.session.set_apprentice_available(draft_ok)
        if not draft_ok:
            self.session.set_draft_k(0)  # no apprentice in this engine: its slider shows 0
        if info.get("draft_kind") in DRAFT_KINDS:
            self.session.set_draft_kind(info["draft_kind"])
        self.lookup.reapply()  # a lookup preset runs the n-gram apprentice, whatever the engine started with
        if draft_ok and self.session.draft_k:
            self.controller.send_draft_k()

    def _take_sharding(self, sharding: dict) -> None:
        """The degrees the engine allows and the sharding it runs (``ready``'s ``sharding``); a restarted engine
        is asked again for the sharding the page showed (the one asked, or the one in force), as far as it
        allows."""
        wanted = self.session.sharding_asked or self.session.sharding
        self.session.set_sharding_asked(None)  # the last engine's answer will not come
        offer = ShardingOffer(tuple(int(d) for d in sharding.get("degrees_tp") or [1]),
                              max(1, int(sharding.get("max_pp") or 1)))
        self.session.set_sharding_offer(offer)
        self.session.set_sharding(str(sharding.get("mode", "tp")), int(sharding.get("n", 1) or 1),
                                  _worker_layers(sharding))
        n = offer.fit(wanted[0], wanted[1])
        if n > 1 and (wanted[0], n) != self.session.sharding:  # a restarted engine: tear the book again
            self._ask_sharding(wanted[0], n)

    def _ask_sharding(self, mode: str, n: int) -> None:
        """Ask the engine for ``mode``/``n`` (the tearing control's request, or the page's after a restart); the
        session's ``sharding_asked`` until it answers, or back to None at once when no engine can be asked."""
        self.session.set_sharding_asked((mode, n))
        if not self.controller.request_sharding(mode, n):
            self.session.set_sharding_asked(None)
            return
        self._sharding_timer.start(SHARDING_WATCHDOG_MS)
        if n > 1:
            self._set_status("Starting the workers… the book is being torn (a few seconds)")
        else:
            self._set_status("Putting the book back together on one desk…")

    def _on_sharding(self, event: dict) -> None:
        mode, n = str(event.get("mode", "tp")), int(event.get("n", 1) or 1)
        asked = self.session.sharding_asked or self.session.sharding  # what the tearing control showed
        self._sharding_timer.stop()
        self.session.set_sharding(mode, n, _worker_layers(event))
        self.session.set_sharding_asked(None)
        self.shard_meter.reset()
        if (mode, n) == asked or n > 1:  # after a fallback the engine's own calm message stays on screen
            if n > 1:
                how = _tr("by pages (TP)") if mode == "tp" else _tr("by chapters (PP)")
                self._set_status_text(_tr("The book is torn {n} ways {how}: {n} desks work on every trip.").format(
                    n=n, how=how))
            else:
                self._set_status("The book is whole again: one desk.")
        self.readout.update_extras()

    def _on_sharding_timeout(self) -> None:
        if self.session.sharding_asked is not None:
            self.session.set_sharding_asked(None)
            self._set_status("The workers did not answer; the book stays as it was.")


def _worker_layers(event: dict) -> tuple[tuple[int, int], ...]:
    """Each worker's layers ``(first, end)`` from a ``ready``'s ``sharding`` or a ``sharding`` event (a dict with
    ``workers``: dicts with ``layers`` [first, end), for pipeline parallel), () when it says none."""
    return tuple((int(w["layers"][0]), int(w["layers"][1])) for w in event.get("workers") or [] if w.get("layers"))


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
