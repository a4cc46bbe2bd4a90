"""The engine process: the GUI's engine runs here, in its own process, and speaks plain dicts over two queues.

Started by the GUI with the *spawn* start method; nothing on this module's import path imports Qt.
Start options (a dict, ``EngineService``): model_dir, device, threads, max_batch, layer_timing, stop_loops,
draft_model_dir, max_workers, measure_apprentice, and weights: "fp32", "fp16" or "int8" (the target's weights,
model/quantize.py, multiplied through model/weight_mm.py; absent: the machine's default, fp16 where it measures
faster, measured once per machine like the floor and again with remeasure_floor; ready's model.weights says which,
model.weight_bytes counts the bytes really held, model.weights_choice how it was chosen; sharding is refused with
int8).

Commands (GUI → engine), each a dict with "op":
    submit        request_id, prompt, max_new_tokens, temperature, top_k, top_p, seed
    grant         n: allow n more forward passes (paced mode: one trip per animation)
    free_run      on: run forward passes continuously (real-time mode)
    set_max_batch n
    set_draft_k   k: draft guesses per verify pass (0 = off); optional kind: "model" | "ngram", the apprentice
                  (set first, so {"op": "set_draft_k", "k": 4, "kind": "ngram"} switches and sets in one command)
    set_draft_kind  kind: "model" (the draft model) | "ngram" (prompt lookup, no model; always available)
    set_sharding  mode ("tp" | "pp"), n: tear the model over n worker processes (n = 1: back to one process)
    check_apprentice  temperature, top_k, top_p (optional): measure which apprentice pays under that sampling
                  (and greedy), between other commands; answered by an "apprentice" event
    reset         abort every request and drop unused grants
    analyze       analysis_id, kind, prompt, ...params: a measurement for the tour (model/teaching/analysis.py) on
                  fresh engines over the same model, the session's requests untouched; kind "tour" a kind at a time
                  before the session's next pass, with the commands that come meanwhile served in between
    shutdown
Events (engine → GUI), each a dict with "type":
    ready         model info, threads, device, memory_bandwidth_bytes_per_s (the bandwidth of the floor that
                  applies to this model), floor (model.hardware.decode_floors: applies "cache" | "dram",
                  floor_ms, bandwidth_bytes_per_s, cache_floor_ms, dram_floor_ms, cache_/dram_bandwidth_bytes_per_s,
                  l3_bytes, weight_bytes), kv_bytes_per_block, block_size, num_blocks, draft (parameters,
                  weight_bytes) or None, draft_error (why there is no draft model), draft_kind (the apprentice
                  now: "model" | "ngram"), draft_kinds (those available), sharding {mode, n, degrees_tp, max_pp}
    sharding      mode, n, workers [{rank, pid, weight_bytes, kv_bytes, heads | layers}]: the sharding now in
                  force (after set_sharding, and after a fallback to one process)
    accepted      request_id, prompt_token_ids, prompt_labels, notice
    step          report: StepReport.to_dict(), plus cpu_ms (the stepping thread's CPU time of the step, with one
                  torch thread on one process: wall_ms − cpu_ms is the time the step waited for a busy machine)
    finished      request_id, text, finish_reason ("loop": stopped, it wrote one phrase three times in a row,
                  model/loops.py), ttft_ms
    idle          no request left
    analysis      analysis_id, kind, prompt, data (plain measurements) or error, elapsed_ms
    apprentice    checks: [model.teaching.lesson_runs.combine_verdicts for the sampling in use, then greedy], chosen:
                  the apprentice now set ("model" | "ngram"; the free-writing one, the draft model where one is
                  loaded (model.teaching.lessons.free_writing_apprentice), when it pays or at least kept guesses
                  under the sampling in use; a visitor's own choice stands), pays_when: where the
                  chosen one pays, "sampling" | "greedy" | None. Each verdict carries "pays"
                  (model.teaching.lesson_runs.pays). Measured at start-up
                  (when the option measure_apprentice is on, as the window's engine process has it) while idle
    error         message (the engine keeps running)
    fatal         message (the model could not be loaded; the process ends)
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import queue
import time

log = logging.getLogger("one_trip.engine")

POLL_S = 0.25  # how often an idle engine checks that its parent is still alive
# the commands that change one of the engine's settings (EngineService._change_setting)
_SETTINGS = frozenset({"set_max_batch", "set_draft_k", "set_draft_kind", "check_apprentice", "set_sharding"})


def _parent_alive() -> bool:
    parent = mp.parent_process()
    return parent is None or parent.is_alive()


class EngineService:
    """The engine plus the pacing state of the protocol. Separate from the process so tests can drive it."""

    def __init__(self, options: dict, emit):
        from model.checkpoint import load_pretrained
        from model.cli import BUNDLED_MODEL, setup_torch
        from model.engine import Engine
        from model.hardware import decode_floors

        self.emit = emit
        self.threads, self.device = setup_torch(options.get("threads"), options.get("device", "cpu"))
        model_dir = options.get("model_dir") or BUNDLED_MODEL
        model, tokenizer = load_pretrained(model_dir, device=self.device)
        layer_timing = bool(options.get("layer_timing", True))
        # per-layer timing on one trip in N (0: never, 1: every trip): timing every layer costs the trip its fast
        # path (issue 34: +61 % on the forward), so the window times a sample and the stage keeps its shares
        self.layer_timing_every = max(0, int(options.get("layer_timing_every", 1 if layer_timing else 0)))
        self.trips = 0
        choice = self._choose_weights(options, model)
        self.weights = choice["precision"]  # the target's weights: "fp32", "fp16" or "int8"
        self.engine = Engine(model, tokenizer, max_batch=int(options.get("max_batch", 1)),
                             layer_timing=self.layer_timing_every == 1)
        self.engine.weights_choice = choice
        # an exhibit never runs on with a loop: a request that writes one phrase three times in a row finishes
        # ("loop", model/loops.py) and the page says so
        self.engine.stop_loops = bool(options.get("stop_loops", True))
        if str(self.device) == "cpu":
            # the cache floor or the DRAM one, whichever applies; its read speed measured once per machine and
            # kept in the user's cache folder (model.hardware.read_speeds), not re-measured at every start
            self.floor = decode_floors(self.engine.weight_bytes, remeasure=bool(options.get("remeasure_floor")))
        else:
            from model.hardware import decode_floor_ms, measure_memory_bandwidth
            bw = measure_memory_bandwidth(device=self.device)
            self.floor = {"weight_bytes": self.engine.weight_bytes, "applies": "dram", "bandwidth_bytes_per_s": bw,
                          "floor_ms": decode_floor_ms(self.engine.weight_bytes, bw)}
        self.bandwidth = self.floor["bandwidth_bytes_per_s"]
        self.draft_error: str | None = None  # why speculative decoding is unavailable, shown beside its slider
        from model.catalog import identify
        from model.cli import BUNDLED_DRAFT
        from model.errors import ModelLoadError, RequestError
        bundled = identify(model_dir)  # a bundled target brings its own draft (same tokenizer)
        self.model_key = bundled.key if bundled else None
        draft_dir = options.get("draft_model_dir") or (bundled.draft_path() if bundled else BUNDLED_DRAFT)
        try:
            draft, draft_tokenizer = load_pretrained(draft_dir, device=self.device)
            self.engine.set_draft(draft, draft_tokenizer)
        except (ModelLoadError, RequestError) as e:
            self.draft_error = str(e)
            log.warning("no draft model (the n-gram apprentice is still there): %s", e)
            self.engine.set_draft_kind("ngram")  # set_draft_k works without a draft model
        self.max_workers = int(options.get("max_workers", 4))
        self.runner = None  # a model.parallel.ShardedRunner while the model is torn over worker processes
        self.sharding_mode = "tp"
        self.grants = 0
        self.free_run = False
        self.stopping = False
        # model.teaching.lesson_runs.ApprenticeCheck per sampling, a round per idle moment
        self.apprentice_queue: list = []
        self.apprentice_done: list = []  # the last check's verdicts (combine_verdicts per sampling)
        self.apprentice_chosen_by_user = False  # the visitor picked an apprentice: the check does not override it
        self.analysis_queue: list = []  # model.teaching.analysis.TourAnalysis, oldest first, a kind per loop turn
        if options.get("measure_apprentice"):
            self.check_apprentice(bundled.temperature if bundled else 0.8, 0, bundled.top_p if bundled else 0.95)

    def _choose_weights(self, options: dict, model) -> dict:
        """The precision of ``model``'s weights: the ``weights`` option, else the machine's default (measured once,
        ``remeasure_floor`` measures again; model/weight_mm.py: choose_precision); converts ``model`` in place
        (model/quantize.py). Returns the choice. Raises ValueError for an unknown precision."""
        from model.quantize import set_precision
        from model.weight_mm import choose_precision
        asked = options.get("weights")
        choice = choose_precision(None if asked is None else str(asked), model.config.n_embd, model.weight_bytes(),
                                  self.device, remeasure=bool(options.get("remeasure_floor")))
        set_precision(model, choice["precision"])
        return choice

    def check_apprentice(self, temperature: float, top_k: int, top_p: float) -> None:
        """Queue the apprentice check (``model.teaching.lesson_runs.ApprenticeCheck``) for this sampling and for greedy:
        one round (plain, n-gram, draft model once each) per idle moment, so commands wait at most one round."""
        from model.sampling import SamplingParams
        from model.teaching.lesson_runs import ApprenticeCheck
        sampling = SamplingParams(temperature=float(temperature), top_k=int(top_k), top_p=float(top_p), seed=0)
        samplings = [sampling, None] if not sampling.greedy else [None]
        self.apprentice_queue = [ApprenticeCheck(self.engine, s) for s in samplings]
        self.apprentice_done = []

    def apprentice_pending(self) -> bool:
        return bool(self.apprentice_queue) and not self.engine.has_work() and self.runner is None

    def apprentice_step(self) -> None:
        """Run the next round of the check; after the last, choose the apprentice and emit "apprentice".

        The choice, for free writing: the free-writing apprentice (the draft model where one is loaded, never the
        n-gram one then: it has its own presets, ``model.catalog.LookupPreset``) when it pays under the sampling in
        use (``model.teaching.lesson_runs.combine_verdicts``' ``best``), else when it kept guesses there
        (``model.teaching.lessons.least_bad_apprentice``: the page shows it working and says why it is slower),
        else the one set now. ``pays_when``: the first checked sampling
        where the chosen one pays ("sampling" | "greedy"), or None."""
        check = next(c for c in self.apprentice_queue if not c.done())
        check.step()
        if not all(c.done() for c in self.apprentice_queue):
            return
        checks = [c.result() for c in self.apprentice_queue]
        self.apprentice_queue = []
        from model.teaching.lessons import least_bad_apprentice, pays
        # the page keeps its sampling when the apprentice joins: the one that pays under it, else the least slow
        chosen = checks[0]["best"] or least_bad_apprentice(checks[0]["verdicts"]) or self.engine.draft_kind
        pays_when = next(("greedy" if c["sampling"]["temperature"] == 0 else "sampling" for c in checks
                          if pays(c["verdicts"].get(chosen))), None)
        if not self.apprentice_chosen_by_user:
            self.engine.set_draft_kind(chosen)
        chosen = self.engine.draft_kind
        self.apprentice_done = checks
        self.emit({"type": "apprentice", "checks": checks, "chosen": chosen, "pays_when": pays_when})

    def ready_event(self) -> dict:
        e = self.engine
        return {"type": "ready", "model": e.model_info(), "threads": self.threads, "device": str(self.device),
                "memory_bandwidth_bytes_per_s": self.bandwidth,
                "kv_bytes_per_block": e.cache.bytes_per_block if e.cache is not None else 0,
                "block_size": e.block_size, "num_blocks": e.num_blocks,
                "draft": None if e.draft is None else {"parameters": e.draft.num_parameters(),
                                                      "weight_bytes": e.draft.weight_bytes()},
                "draft_error": self.draft_error, "draft_kind": e.draft_kind,
                "draft_kinds": (["model"] if e.draft is not None else []) + (["ngram"] if e.cache is not None else []),
                "floor": dict(self.floor), "sharding": self.sharding_info()}

    def sharding_info(self) -> dict:
        from model.parallel import describe
        n = 1 if self.runner is None else self.runner.n
        return {"mode": self.sharding_mode, "n": n, **describe(self.engine.config, self.max_workers)}

    def set_sharding(self, mode: str, n: int) -> None:
        """Tear the model ``n`` ways (``mode`` "tp" or "pp"), or run it on this process again (n = 1).

        Raises RequestError for a degree the model does not allow; a runner that cannot start is reported
        as an error event and the engine stays on one process. Running requests recompute their K/V.
        """
        from model.errors import RequestError, ShardingError
        from model.parallel import ShardedRunner, describe
        if mode not in ("tp", "pp"):
            raise RequestError(f"sharding mode must be 'tp' or 'pp', got {mode!r}")
        allowed = describe(self.engine.config, self.max_workers)
        if n != 1 and (n not in allowed["degrees_tp"] if mode == "tp" else not 1 <= n <= allowed["max_pp"]):
            raise RequestError(f"this model can be torn {allowed['degrees_tp']} ways by heads and "
                               f"1..{allowed['max_pp']} ways by layers, not {n} ({mode})")
        if n != 1 and self.weights == "int8":
            raise RequestError("the torn book runs fp32 or fp16 weights; with int8 weights the model stays on one "
                               "process")
        self.close_runner()
        self.sharding_mode = mode
        if n > 1:
            try:
                runner = ShardedRunner.from_engine(self.engine, mode, n)
            except ShardingError as e:
                log.error("sharding %s %d failed to start: %s", mode, n, e)
                self.emit({"type": "error", "message": f"The workers could not start ({e}); "
                                                       "the book stays whole on one desk."})
            else:
                self.runner = runner
                self.engine.set_runner(runner)
        self.emit_sharding()

    def emit_sharding(self) -> None:
        workers = [] if self.runner is None else [vars(w) for w in self.runner.workers]
        self.emit({"type": "sharding", "mode": self.sharding_mode, "n": 1 if self.runner is None else self.runner.n,
                   "workers": workers})

    def close_runner(self) -> None:
        """Stop the worker processes (if any) and run on this process again."""
        runner, self.runner = self.runner, None
        if runner is not None:
            runner.close()
            self.engine.set_runner(None)

    def close(self) -> None:
        """Release what the service holds outside this process: the sharding workers."""
        self.close_runner()

    def wants_step(self) -> bool:
        return self.engine.has_work() and (self.free_run or self.grants > 0)

    def handle(self, cmd: dict) -> None:
        """Obey one command of the protocol; a bad one is answered with an ``error`` event."""
        from model.errors import RequestError

        op = cmd.get("op") if isinstance(cmd, dict) else None
        try:
            if op == "submit":
                self._submit(cmd)
            elif op in _SETTINGS:
                self._change_setting(op, cmd)
            elif op == "grant":
                self.grants = max(0, min(self.grants + int(cmd.get("n", 1)), 64))
            elif op == "free_run":
                self.free_run = bool(cmd.get("on", True))
            elif op == "reset":
                self.engine.abort_all()
                self.grants = 0
            elif op == "analyze":
                self._analyze(cmd)
            elif op == "shutdown":
                self.stopping = True
            else:
                raise RequestError(f"unknown command {op!r}")
        except (RequestError, ValueError, TypeError) as e:
            self.emit({"type": "error", "message": str(e)})

    def _analyze(self, cmd: dict) -> None:
        """A "tour" analysis is queued and measured a kind at a time (``analysis_step``), with the commands that
        come meanwhile served in between; any other kind is measured and answered now."""
        from model.teaching.analysis import TourAnalysis, analyze
        if str(cmd.get("kind", "tour")) == "tour":
            self.analysis_queue.append(TourAnalysis(self.engine, cmd, bandwidth=self.bandwidth))
        else:
            self.emit(analyze(self.engine, cmd, bandwidth=self.bandwidth))

    def analysis_pending(self) -> bool:
        return bool(self.analysis_queue)

    def analysis_step(self) -> None:
        """Measure the next kind of the oldest queued tour analysis; after its last, emit its ``analysis`` event."""
        job = self.analysis_queue[0]
        job.step()
        if job.done():
            self.analysis_queue.pop(0)
            self.emit(job.event)

    def busy(self) -> bool:
        """Whether ``work`` has something to do (the loop then only looks at its commands, never waits for them)."""
        return self.analysis_pending() or self.wants_step() or self.apprentice_pending()

    def work(self) -> bool:
        """The next piece of work between two looks at the commands: a kind of the oldest queued tour analysis
        (as before, the tour's measurements go before the session's passes), else a decode pass, else a round of
        the apprentice check. Returns False when there was none. A pass or check that fails is an ``error`` event
        (the pass's requests are aborted, the check is dropped), never an exception."""
        if self.analysis_pending():
            self.analysis_step()
        elif self.wants_step():
            try:
                self.step()
            except Exception as e:  # a bug in one step must not take the engine down silently
                log.exception("step failed")
                self.emit({"type": "error", "message": f"step failed: {e}"})
                self.engine.abort_all()
        elif self.apprentice_pending():
            try:
                self.apprentice_step()
            except Exception as e:  # noqa: BLE001 - a failed check leaves the apprentice as it was
                log.exception("apprentice check failed")
                self.apprentice_queue = []
                self.emit({"type": "error", "message": f"apprentice check failed: {e}"})
        else:
            return False
        return True

    def _submit(self, cmd: dict) -> None:
        """Queue a request with its sampling settings and say ``accepted`` with its prompt's tokens."""
        from model.sampling import SamplingParams

        sampling = SamplingParams(temperature=float(cmd.get("temperature", 0.0)),
                                  top_k=int(cmd.get("top_k", 0)), top_p=float(cmd.get("top_p", 1.0)),
                                  seed=cmd.get("seed"))
        rid = self.engine.add_request(str(cmd.get("prompt", "")),
                                      max_new_tokens=int(cmd.get("max_new_tokens", 64)),
                                      sampling=sampling, request_id=cmd.get("request_id"))
        seq = next(s for s in self.engine.sequences() if s.request_id == rid)
        label = self.engine.tokenizer.label
        self.emit({"type": "accepted", "request_id": rid, "prompt_token_ids": list(seq.token_ids),
                   "prompt_labels": [label(i) for i in seq.token_ids], "notice": seq.notice})

    def _change_setting(self, op: str, cmd: dict) -> None:
        """The engine's settings (``_SETTINGS``): the batch, the apprentice's kind and guesses, the torn book."""
        if op == "set_max_batch":
            self.engine.set_max_batch(int(cmd.get("n", 1)))
        elif op == "set_draft_k":
            if "kind" in cmd:
                self.engine.set_draft_kind(str(cmd["kind"]))
                self.apprentice_chosen_by_user = True
            self.engine.set_draft_k(int(cmd.get("k", 0)))
        elif op == "set_draft_kind":
            self.engine.set_draft_kind(str(cmd.get("kind", "")))
            self.apprentice_chosen_by_user = True
        elif op == "check_apprentice":
            self.check_apprentice(float(cmd.get("temperature", 0.8)), int(cmd.get("top_k", 0)),
                                  float(cmd.get("top_p", 0.95)))
        elif op == "set_sharding":
            self.set_sharding(str(cmd.get("mode", "tp")), int(cmd.get("n", 1)))

    def step(self) -> None:
        from model.errors import ShardingError
        every = self.layer_timing_every
        self.engine.layer_timing = every > 0 and self.trips % every == 0
        cpu0 = time.thread_time_ns()
        try:
            report = self.engine.step()
            cpu_ms = (time.thread_time_ns() - cpu0) / 1e6
        except ShardingError as e:  # a worker died or hung: stop the rest, go on with the whole book here
            log.error("sharded pass failed, falling back to one process: %s", e)
            self.emit({"type": "error", "message": "A worker stopped; the book is whole again on one desk."})
            self.close_runner()  # set_runner(None): the running requests recompute and carry on
            self.emit_sharding()
            return
        if report is None:
            return
        self.trips += 1
        if not self.free_run:
            self.grants -= 1
        step = report.to_dict()
        if self.threads == 1 and self.runner is None:  # the stepping thread did all the work: wall − CPU = waiting
            step["cpu_ms"] = min(cpu_ms, step["wall_ms"])  # two clocks: never more CPU than wall
        self.emit({"type": "step", "report": step})
        # Popped once reported: a long session does not pile up results, and an id reused later (the GUI
        # restarts its numbering after a reset) is reported again.
        for rid in list(self.engine.finished):
            res = self.engine.finished.pop(rid)
            self.emit({"type": "finished", "request_id": rid, "text": res.text,
                       "finish_reason": res.finish_reason, "ttft_ms": res.ttft_ms})
        if not self.engine.has_work():
            self.emit({"type": "idle"})


def coalesce(first: dict, commands) -> list[dict]:
    """``first`` and every command already waiting, in order, except set_sharding commands that a later one in
    the same batch supersedes: starting worker processes takes seconds, so a slider dragged across 1-2-4-2
    starts only the last arrangement instead of queueing every one of them."""
    batch = [first]
    while True:
        try:
            batch.append(commands.get_nowait())
        except (queue.Empty, EOFError, OSError):
            break
    shard = [i for i, c in enumerate(batch) if isinstance(c, dict) and c.get("op") == "set_sharding"]
    superseded = set(shard[:-1])
    return [c for i, c in enumerate(batch) if i not in superseded]


def engine_main(commands, events, options: dict) -> None:
    """Process entry point: load the model, then serve commands until "shutdown" or the parent dies."""
    # WARNING: without the app's log file (``main.py screenshot``, tests) only what matters reaches the terminal;
    # with it (gui.logs, set up by gui.engine_link.engine_entry first) this call changes nothing and the file keeps INFO
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s engine %(levelname)s %(message)s")
    from model.errors import ModelLoadError
    try:
        service = EngineService({"measure_apprentice": True, **options}, events.put)
    except (ModelLoadError, ValueError, OSError) as e:
        log.error("model could not be loaded: %s", e)
        events.put({"type": "fatal", "message": str(e)})
        return
    events.put(service.ready_event())
    while not service.stopping:
        try:
            cmd = commands.get_nowait() if service.busy() else commands.get(timeout=POLL_S)
        except queue.Empty:
            cmd = None
        except (EOFError, OSError):
            break  # the parent closed the queue
        if cmd is not None:
            for queued in coalesce(cmd, commands):
                service.handle(queued)
            continue  # drain every waiting command before the next pass
        if not service.work() and not _parent_alive():
            break
    service.close()
    log.info("engine process exiting")
    time.sleep(0)  # let the queue's feeder thread flush
