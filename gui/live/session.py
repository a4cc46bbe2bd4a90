"""The Live page's session and pacing: what Run, Pause, Step and Reset do, and when a trip is granted.

Pacing. In paced mode (the default) the window grants the engine one forward pass at a time, one trip ahead
of the stage: the next pass is granted while the stage shows the previous trip, and only when no report is
waiting and no grant is outstanding. So the stage never stands still waiting for the engine between trips,
and the engine is never more than one trip ahead. Each step report is shown as one trip on the stage, and its
tokens are written when that trip ends. Step grants exactly one pass (pressed during a run, none when the pass
granted ahead is already on its way or waiting: that one is the step). In real-time mode the engine runs
freely ("free_run") and the stage shows the trips as they come.

``LiveRunner`` decides the pacing (the trips waiting for the stage, the one on it, the grants on their way) and
records the answer's progress in the session (``gui.live.state.SessionState``): its ``answer`` (requests
submitted and finished, tokens written, done or not), ``run_state``, ``run_wanted``, ``trip_count`` and
``reports_received``, and the ``trips`` themselves. The views (the readout and plots, ``gui.live.readout_view``;
the window's properties) read those from the session and follow its changes; none reads the runner's fields.
It holds explicitly what it needs: the session, the engine bridge, the controller, the stage, the page's seats
and Step button, the frame-jobs queue, the apprentice's meter and the status line.
"""

from __future__ import annotations

import logging
import time
from collections import deque

from model.loops import LoopWatch, find_loop

log = logging.getLogger("gui.window.main_window")

GRANT_WATCHDOG_S = 10.0  # a grant unanswered this long is given up (the engine may have dropped it)



class LiveRunner:
    """Run, pause, step, reset; one answer (the visitor's) plus preset prompts on the other seats.

    Args:
        session: the Live session's state (batch, sampling, prompt, run state, answer number, trips).
        bridge: the ``EngineBridge`` (requests and trips: ``submit``, ``grant``, ``free_run``, ``reset``).
        controller: the ``LiveController`` (the table's size, told again when an answer starts).
        scene: the stage (``show_trip``, ``busy``, ``advance``, ``real_time``...).
        page: the ``LivePage`` (its Step button and seats).
        frame_jobs: the ``AfterPaint`` queue (work done after the frame that ends a trip).
        spec_meter: the apprentice's ``SpecMeter``.
        status: the ``StatusLine`` (``set_status``, ``set_status_text``).
        presets: a function giving the preset prompts of the model writing now (the other seats').
        finished: called when the visitor's answer is complete and all its trips shown.
        main_new_tokens: tokens the visitor's answer may take.
    """

    def __init__(self, session, bridge, controller, scene, page, frame_jobs, spec_meter, status, presets, finished,
                 main_new_tokens: int):
        self.session = session
        self.bridge = bridge
        self.controller = controller
        self.scene = scene
        self.live_page = page
        self.step_button = page.step_button
        self.frame_jobs = frame_jobs
        self.spec_meter = spec_meter
        self.status = status
        self.presets = presets
        self._finished = finished
        # the pacing (the answer's progress is the session's ``answer``)
        self._seat_count = 0  # seats filled in this answer (each its own seed and length)
        self._preset_cursor = 0
        self._grants_outstanding = 0
        self._grant_time = 0.0
        self._pending: deque[dict] = deque()  # reports waiting for the stage (paced mode)
        self._on_stage: dict | None = None  # the report being shown, tokens not yet written
        self._engine_loop_phrase: str | None = None  # the engine stopped the answer for looping: said when shown
        self._answer_watch = LoopWatch()  # finds a loop in the visitor's words as they are written
        self.main_new_tokens = main_new_tokens
        session.subscribe(lambda c: self._follow_real_time(c.value), "real_time")
        session.subscribe(lambda c: setattr(scene, "trip_duration_s", c.value), "trip_seconds")  # the stage's clock
        session.subscribe(lambda _c: self.fill_seats(), "batch")  # a larger table: more seats filled

    def _set_status(self, english: str, **fields) -> None:
        self.status.set_status(english, **fields)

    def _set_status_text(self, text: str) -> None:
        self.status.set_status_text(text)

    @property
    def _fatal(self) -> str | None:
        return self.session.engine_error

    @property
    def _answer(self):
        """The session's ``Answer`` (``gui.live.state.Answer``): the progress of the visitor's answer."""
        return self.session.answer

    # ---- what the engine's events do to the answer ------------------------------------------------------------
    def on_engine_ready(self) -> None:
        """The engine said ``ready``: an answer it was restarted in the middle of starts again, and a Run pressed
        while it loaded (or a run it died in) goes on."""
        restart_session = not self._answer.done
        if restart_session:  # the engine was restarted mid-answer: start the answer again
            self.session.set_answer(done=True)
        self._set_status("Ready. Choose a prompt and press Run.")
        if self.session.run_wanted or (restart_session and self._running):
            self.session.set_run_wanted(False)
            self.run()

    def on_engine_failed(self) -> None:
        """No model could be loaded: nothing runs."""
        self._running = False

    def on_engine_lost(self) -> None:
        """The engine process died: no grant will be answered and no waiting trip will be shown."""
        self._grants_outstanding = 0
        self._pending.clear()
        self._on_stage = None

    def run_again_when_ready(self) -> None:
        """A new engine is being started: if the answer was running, it runs again once the engine is ready."""
        self.session.set_run_wanted(self.session.run_wanted or self._running)

    # ---- public controls -------------------------------------------------------------------------------------
    # the run's state lives in the session: running, or else paused / complete / idle from the answer's progress
    @property
    def _running(self) -> bool:
        return self.session.run_state == "running"

    @_running.setter
    def _running(self, on: bool) -> None:
        if on:
            self.session.set_run_state("running")
        elif self._answer.main_request is None:
            self.session.set_run_state("idle")
        else:
            self.session.set_run_state("complete" if self._answer.done else "paused")

    def run(self) -> None:
        """Run: start a new answer if none is in progress, then keep granting trips."""
        if self.session.engine_info is None:
            self.session.set_run_wanted(self._fatal is None)
            if self._fatal is None and self.session.engine_status == "restarting":  # say what is really happening
                self._set_status("The engine is restarting; it will run when it is ready.")
            elif self._fatal is None and self.bridge.is_running():
                self._set_status("Loading the model…")
            elif self._fatal is None:
                self._set_status("The engine is not running.")
            else:
                self._set_status("The model is not available.")
            return
        if self._answer.done:
            if not self._start_session():
                return
        self._running = True
        if self.session.real_time:
            self.bridge.free_run(True)
        self._set_status("Running.")
        self._pump()

    def pause(self) -> None:
        """Stop granting trips (the trip on stage finishes)."""
        self.session.set_run_wanted(False)
        self._running = False
        if self.session.real_time:
            self.bridge.free_run(False)
        if not self._answer.done:
            if self.step_button.isHidden():  # presenter mode: no Step button, the keys step
                self._set_status("Paused. Space goes on; → makes one trip.")
            else:
                self._set_status("Paused. Press Run to go on, or Step for one trip.")

    def toggle_run(self) -> None:
        """Space: run if paused, pause if running."""
        if self._running or self.session.run_wanted:
            self.pause()
        else:
            self.run()

    def step_once(self) -> None:
        """Step: exactly one real forward pass (starting a new answer if none is in progress). While a complete
        answer's last trips are still being shown, nothing happens: the answer is written first."""
        if self.session.engine_info is None:
            return
        was_running = self._running
        if self._running:
            self.pause()
        if self._answer.done and not self.is_session_done():
            # the answer is complete but its last trips are still on the stage: a new answer now would wipe
            # the words before they are written (and the clicker would never see the answer done)
            self._set_status("Finishing the answer.")
            return
        if self._answer.done and not self._start_session():
            return
        self._running = False  # an answer in progress, one trip at a time: paused
        if self._answer.active:
            # stepping out of a run: the pass already granted ahead (on its way or waiting) is the step
            if not (was_running and (self._pending or self._grants_outstanding > 0)):
                self.bridge.grant(1)
                self._grants_outstanding += 1
                self._grant_time = time.monotonic()
            self._set_status("One trip.")

    def run_trips(self, n: int) -> bool:
        """Grant ``n`` trips at once (screenshots, benchmarks), starting a new answer if none is in progress.

        Returns False if the engine is not ready or the prompt is empty.
        """
        if self.session.engine_info is None:
            return False
        self._running = False
        if self._answer.done and not self._start_session():
            return False
        self._running = False  # the answer started: paused between the trips granted
        self.bridge.grant(n)
        self._grants_outstanding += n
        self._grant_time = time.monotonic()
        self._set_status("Running.")
        return True

    def reset(self) -> None:
        """Abort every request and clear the answer, the chips and the plots."""
        self._running = False
        self.session.set_run_wanted(False)
        self.bridge.free_run(False)
        self.bridge.reset()
        self._end_session()
        if hasattr(self.scene, "reset"):
            self.scene.reset()
        self.session.set_trip_count(0)  # the plots and the readout follow (``LiveReadout``)
        self._set_status("Reset. Choose a prompt and press Run.")

    def set_real_time(self, on: bool) -> None:
        """Real-time mode: the engine runs freely and the stage shows trips at their measured pace (the
        session's ``real_time``; the runner follows its change, ``_follow_real_time``)."""
        self.session.set_real_time(bool(on))

    def _follow_real_time(self, on: bool) -> None:
        """The session's real-time mode changed: the stage and the engine follow (the readout follows it too)."""
        self.scene.real_time = on
        if on:
            self._flush_pending()
        if self._running:
            self.bridge.free_run(on)

    def is_running(self) -> bool:
        """True while trips are being granted (Run pressed and not paused, answer not complete)."""
        return self._running

    def is_session_done(self) -> bool:
        """True when no answer is in progress (never started, complete, or reset)."""
        return self._answer.done and self._on_stage is None and not self._pending

    # ---- sessions ----------------------------------------------------------------------------------------------
    def _start_session(self) -> bool:
        prompt = self.session.prompt
        if not prompt.strip():
            self._set_status("Type a prompt first.")
            return False
        self.bridge.reset()  # seats left over from the last answer go
        self._end_session()
        self.session.start_answer()
        main_id = f"s{self._session}-main"
        self.session.new_answer(main_id, prompt)
        self._answer_watch, self._engine_loop_phrase = LoopWatch(), None
        self.controller.send_batch()
        self.spec_meter.reset()
        if self.session.draft_k == 0:
            self.spec_meter.start_plain(self.session.spec_key(prompt))
        self._submit(main_id, prompt, self.main_new_tokens, main=True)
        self.fill_seats()
        return True

    def _end_session(self) -> None:
        if self.frame_jobs.discard("grant"):  # a paced grant not yet sent is not sent for a finished answer
            self._grants_outstanding = max(0, self._grants_outstanding - 1)
        self.frame_jobs.flush()  # the last trip's words land before the page is cleared, never after
        # no answer in progress (the phrase the last one looped on stays said until the next one starts)
        self.session.set_answer(prompt="", main_request=None, done=True, active=frozenset(), text="", token_ids=())
        self._pending.clear()
        self._on_stage = None
        self._grants_outstanding = 0
        self.live_page.seats.clear()
        self.session.set_run_state("idle")
        self._show_requests()

    def _submit(self, request_id: str, prompt: str, max_new_tokens: int, main: bool = False) -> None:
        # the visitor's answer gets the session's seed (shown in the top bar), each other seat its own
        seed = self._session if main else self._session * 1000 + self._seat_count
        if main:
            self.session.set_seed(None if self.session.sampling.greedy else seed)
        if self.bridge.submit(request_id, prompt, max_new_tokens, **self.session.sampling.request(seed)):
            self.session.set_answer(active=self._answer.active | {request_id})
            self.live_page.seats.add_request(request_id, prompt, main=main)
            self._show_requests()

    def _show_requests(self) -> None:
        """Every seat's prompt and answer, as plain data, to the stage (which redraws a few changed seat cards
        now, ``seat_redraw_budget``, and the rest after the next paints)."""
        show = getattr(self.scene, "show_requests", None)
        if show is not None:  # TODO(stage): StageScene.show_requests(seats) is being added by the stage helper
            try:
                show(self.live_page.seats.seat_list())
            except Exception:  # noqa: BLE001 - a drawing problem must not stop the words and numbers
                log.exception("the stage could not show the seats")
        self._draw_more_seats()

    def fill_seats(self) -> None:
        """Fill empty seats at the table with preset prompts, up to the batch slider's value."""
        if self._answer.done:
            return
        while len(self._answer.active) < self.session.batch:
            self._seat_count += 1
            presets = self.presets()
            prompt = presets[self._preset_cursor % len(presets)]
            self._preset_cursor += 1
            # different lengths, so seats free up at different trips (continuous batching at work)
            n_new = 16 + (self._seat_count * 11) % 40
            before = len(self._answer.active)
            self._submit(f"s{self._session}-seat{self._seat_count}", prompt, n_new)
            if len(self._answer.active) == before:  # the engine is gone; do not loop
                return

    @property
    def _session(self) -> int:
        """The number of the answer (``session.answer_number``): request ids ``s<n>-main``, ``s<n>-seat<m>``."""
        return self.session.answer_number

    def _in_session(self, request_id: str) -> bool:
        return self._answer.in_answer(request_id)

    # ---- the engine's answers about this answer's requests ----------------------------------------------------
    def on_accepted(self, event: dict) -> None:
        rid = event.get("request_id", "")
        if rid == self._answer.main_request and event.get("notice"):
            self._set_status_text(str(event["notice"]))  # e.g. the prompt was cut to fit the context
        if self._in_session(rid):
            self.live_page.seats.add_prompt_chips(rid, list(event.get("prompt_labels", [])),
                                                  list(event.get("prompt_token_ids", [])))

    def on_step(self, report: dict) -> None:
        """A step report: counted, and for this answer kept in the session (``add_trip``, ``trip_count``: the
        plots, meters and readout follow) and shown on the stage (at once in real time, else in turn)."""
        self.session.count_report()
        self._grants_outstanding = max(0, self._grants_outstanding - 1)
        if self._answer.done or not any(self._in_session(r) for r in report.get("request_ids", [])):
            return  # a report for an answer that was reset or is already complete
        self.session.add_trip(report)
        self.session.set_trip_count(self.session.trip_count + 1)
        if self.session.real_time:
            # Real time: the stage queues (and, when far behind, drops) trips itself; words appear at once.
            self._flush_pending()
            self.scene.show_trip(report)  # the readout follows the stage's ``trip_started``
            self._on_stage = report
            self._write_trip()
            return
        self._pending.append(report)
        self._show_next()

    def on_finished(self, event: dict) -> None:
        rid = event.get("request_id", "")
        if not self._in_session(rid):
            return
        self.session.set_answer(active=self._answer.active - {rid})
        self.live_page.seats.finish(rid)
        main = rid == self._answer.main_request
        if main and event.get("finish_reason") == "loop":
            # the engine stopped it (model/loops.py); the page finds the same phrase as it writes the words
            loop = find_loop(str(event.get("text", "")))
            self._engine_loop_phrase = loop.phrase if loop is not None else "…"
        if main:
            self.session.set_answer(done=True)
            self._running = False
            if self.session.real_time:
                self.bridge.free_run(False)
            self.bridge.reset()  # the other seats stop with the visitor's answer
            self.session.set_answer(active=frozenset())
            if self._on_stage is None and not self._pending:
                self._set_done_status()
                self._finished()
        else:
            self.fill_seats()

    def on_idle(self) -> None:
        self._grants_outstanding = 0

    # ---- pacing ------------------------------------------------------------------------------------------------
    def on_tick(self, dt_s: float) -> None:
        self.scene.advance(dt_s)
        self._pump()

    def _pump(self) -> None:
        """Grant one trip when no report is waiting and none is on its way (paced mode): the engine works on
        the next trip while the stage shows this one."""
        if not self._running or self.session.real_time or self.session.engine_info is None:
            return
        if self._grants_outstanding > 0:
            if time.monotonic() - self._grant_time < GRANT_WATCHDOG_S:
                return
            log.warning("no report for a granted trip in %.0f s; granting again", GRANT_WATCHDOG_S)
            self._grants_outstanding = 0
        if self._pending or not self._answer.active:
            return
        # counted now, sent once this frame is painted: handing the command to the queue's feeder thread costs
        # the GUI thread a GIL switch, which on a busy machine can take longer than a frame
        self._grants_outstanding += 1
        self._grant_time = time.monotonic()
        self.frame_jobs.defer(self._send_grant, key="grant")

    def _send_grant(self) -> None:
        """The paced grant ``_pump`` decided on (not sent when the answer was paused or reset meanwhile)."""
        if not self._running or self._answer.done or self.session.real_time or not self.bridge.grant(1):
            self._grants_outstanding = max(0, self._grants_outstanding - 1)

    def _show_next(self) -> None:
        if self._on_stage is not None or not self._pending or self.scene.busy():
            return
        report = self._pending.popleft()
        self._on_stage = report
        self.scene.show_trip(report)  # the readout follows the stage's ``trip_started``
        if self.scene.real_time or not self.scene.busy():  # nothing to wait for: write now
            self._write_trip()

    def _write_trip(self) -> None:
        """Write the tokens of the trip on stage: the answer's text in the session, the chips and seats."""
        report, self._on_stage = self._on_stage, None
        if report is None:
            return
        tokens = report.get("tokens", [])
        for tok in tokens:
            if tok.get("request_id") == self._answer.main_request and self._answer.loop_phrase is None:
                self._write_answer_token(tok)
        # the words, chips and seat cards (several ms at batch 16) wait until this frame is painted
        self.frame_jobs.defer(lambda: self._write_tokens(tokens))
        if self._answer.done and not self._pending:
            self.frame_jobs.flush()  # the answer is complete: everything on screen says so when we say so
            self._set_done_status()
            self._finished()

    def _write_answer_token(self, tok: dict) -> None:
        """One token of the visitor's answer (a step report's token dict): its text and id into the session's
        answer; a loop found (``LoopWatch``) cuts the text to two copies and stops the answer."""
        loop = self._answer_watch.feed(tok.get("text", ""))
        ids = self._answer.token_ids + (int(tok.get("token_id", -1)),)
        if loop is None:
            self.session.set_answer(text=self._answer_watch.text, token_ids=ids)
        else:  # two copies at most on screen, and the request stops here
            self.session.set_answer(text=self._answer_watch.text[:loop.cut].rstrip(), token_ids=ids)
            self._stop_for_loop(loop.phrase)

    def _stop_for_loop(self, phrase: str) -> None:
        """The visitor's answer wrote ``phrase`` three times in a row: stop it (and the other seats with it), say
        so; its time is not measured on."""
        self.session.set_answer(loop_phrase=phrase)
        log.info("the answer loops on %r: stopped", phrase)
        if self._answer.done:
            return
        self.session.set_answer(done=True)
        self._running = False
        if self.session.real_time:
            self.bridge.free_run(False)
        self.bridge.reset()
        self.session.set_answer(active=frozenset())

    def _set_done_status(self) -> None:
        if self._answer.loop_phrase is None and self._engine_loop_phrase:
            self.session.set_answer(loop_phrase=self._engine_loop_phrase)
        phrase = self._answer.loop_phrase
        if phrase:
            short = phrase if len(phrase) <= 40 else phrase[:39] + "…"
            # the engine stops such a request ("loop", model/loops.py); the page shows two copies at most
            self._set_status("Stopped: the model began to repeat itself (“{phrase}” again and again), as small "
                             "models do. Press Run for a new answer.", phrase=" ".join(short.split()))
        else:
            self._set_status("Done. Press Run for a new answer.")

    def _write_tokens(self, tokens: list[dict]) -> None:
        """A trip's tokens into the answer box, the chips and the seats (run after the frame that ended it)."""
        if self.live_page.seats.add_tokens(tokens):
            self.frame_jobs.defer(self._show_requests, key="stage seats")

    def _draw_more_seats(self) -> None:
        """Seat cards the stage has not redrawn yet: a few more after the next paint, until none is left."""
        more = getattr(self.scene, "draw_pending_seats", None)
        if more is not None and not more():
            self.frame_jobs.defer(self._draw_more_seats, key="stage seats")

    def _flush_pending(self) -> None:
        """Write every waiting trip at once (used when switching to real time)."""
        if self._on_stage is not None:
            self._write_trip()
        while self._pending:
            self._on_stage = self._pending.popleft()
            self._write_trip()
        self.frame_jobs.flush()

    def on_trip_finished(self) -> None:
        self._write_trip()
        self._show_next()
        self._pump()

