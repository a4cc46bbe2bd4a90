"""The bridge between the window and the engine process.

The engine (``model.service.engine_main``) runs in its own process, started with the ``spawn`` method so the
child never inherits Qt. Commands go down one ``multiprocessing`` queue as plain dicts; events come back up
another. A ``QTimer`` on the GUI thread drains the events queue without blocking (``get_nowait``, a bounded
number per tick) and re-emits each event as a Qt signal. There is no ``QThread`` anywhere, so nothing can be
"destroyed while still running" at exit.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import queue
import time
import weakref

from PySide6.QtCore import QObject, QTimer, Signal

from gui.engine_link.engine_entry import run_engine
from model.procs import children_ignore_sigint

log = logging.getLogger(__name__)

DEFAULT_TARGET = "model.service:engine_main"
STOP_WAIT_S = 10.0  # how long a ready engine is given to leave after ``shutdown`` (its pass, its workers, torch)


class EngineBridge(QObject):
    """Starts, feeds, watches and stops the engine process.

    Args:
        options: passed to the engine unchanged: ``model_dir`` (str or None for the bundled model), ``device``,
            ``threads`` (torch intra-op threads or None), ``max_batch`` (int), ``layer_timing`` (bool),
            ``weights`` ("fp32", the default, or "int8": the target's weights, model/quantize.py).
        target: ``"module:function"`` the child runs; tests point it at a fake engine.
        poll_ms: how often the events queue is drained, in milliseconds.
        max_events_per_tick: at most this many events are handled per drain, so a flood of reports cannot
            stall the GUI thread.

    Signals carry the event dicts as the engine sent them (see the engine protocol):
    ``ready(dict)``, ``accepted(dict)``, ``step(dict)`` (the step report), ``finished(dict)``, ``idle()``,
    ``error(str)``, ``fatal(str)``, ``engine_died(int)`` (exit code, -1 if unknown), ``analysis(dict)`` (the
    answer to ``analyze``: a measurement for the tour).
    """

    ready = Signal(dict)
    accepted = Signal(dict)
    step = Signal(dict)
    finished = Signal(dict)
    idle = Signal()
    error = Signal(str)
    fatal = Signal(str)
    engine_died = Signal(int)
    analysis = Signal(dict)
    sharding = Signal(dict)  # the sharding now in force: mode, n, workers (after set_sharding or a fallback)
    apprentice = Signal(dict)  # which apprentice pays here, measured by the engine at start-up (model/service.py)
    apprentice_info: dict | None = None  # the last "apprentice" event

    def __init__(self, options: dict | None = None, target: str = DEFAULT_TARGET, parent: QObject | None = None,
                 poll_ms: int = 8, max_events_per_tick: int = 64):
        super().__init__(parent)
        self.options = dict(options or {})
        self.target = target
        self.max_events_per_tick = max_events_per_tick
        self.info: dict | None = None  # the last "ready" event, None until the engine is ready
        self._ctx = mp.get_context("spawn")
        self._process = None
        self._commands = None
        self._events = None
        self._stopping = False
        self._finalizer: weakref.finalize | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._poll)

    # ---- lifecycle ---------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the engine process (returns at once; ``ready`` or ``fatal`` follows)."""
        if self.is_running():
            return
        self.info = None
        self.apprentice_info = None
        self._stopping = False
        with children_ignore_sigint():  # Ctrl+C is the GUI's to handle, even while the engine is still starting
            self._commands = self._ctx.Queue()
            self._events = self._ctx.Queue()
            self._process = self._ctx.Process(target=run_engine, name="one-trip-engine", daemon=False,
                                              args=(self.target, self._commands, self._events, dict(self.options)))
            self._process.start()
        # If this bridge is garbage-collected without shutdown(), the engine must not outlive it.
        self._finalizer = weakref.finalize(self, _reap, self._process, self._commands, self._events)
        log.info("engine process %s started (%s)", self._process.pid, self.target)
        self._timer.start()

    def restart(self) -> None:
        """Stop the current engine, if any (``shutdown``: asked to stop and waited for), and start a fresh one."""
        self.shutdown()
        self.start()

    def is_running(self) -> bool:
        """True while an engine process exists and is alive."""
        return self._process is not None and self._process.is_alive()

    @property
    def pid(self) -> int | None:
        """The engine process id, or None when none was started."""
        return self._process.pid if self._process is not None else None

    def shutdown(self, timeout: float = STOP_WAIT_S) -> None:
        """Stop the engine and wait until it has left; never leaves a child process behind.

        A ready engine is sent ``shutdown`` and given up to ``timeout`` seconds to finish its pass, close its
        workers and exit (events are drained meanwhile, so it cannot block on a full pipe); only then is it
        terminated, then killed. An engine still loading cannot read commands yet: it is terminated at once.
        Queues are closed without waiting for their feeder threads.
        """
        self._timer.stop()
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        process, commands, events = self._process, self._commands, self._events
        self._process = self._commands = self._events = None
        self._stopping = True
        if process is None:
            return
        if process.is_alive() and self.info is not None:
            _ask_to_stop(process, commands, events, timeout)
        if process.is_alive():
            log.info("engine process %s still loading; stopped at once", process.pid)
            _end(process)
        process.join(0)
        for q in (commands, events):
            q.cancel_join_thread()
            q.close()
        try:
            process.close()
        except ValueError:  # still running after kill: nothing more we can do
            pass

    # ---- commands ----------------------------------------------------------------------------------------------
    def send(self, command: dict) -> bool:
        """Queue ``command`` for the engine. Returns False (and logs) if no engine is running. Never blocks."""
        if self._commands is None or not self.is_running():
            log.info("engine not running; dropped %s", command.get("op"))
            return False
        self._commands.put_nowait(command)
        return True

    def submit(self, request_id: str, prompt: str, max_new_tokens: int, temperature: float = 0.0, top_k: int = 0,
               top_p: float = 1.0, seed: int | None = None) -> bool:
        """Ask the engine to start a request. ``temperature`` 0 means greedy."""
        return self.send({"op": "submit", "request_id": request_id, "prompt": prompt,
                          "max_new_tokens": int(max_new_tokens), "temperature": float(temperature),
                          "top_k": int(top_k), "top_p": float(top_p), "seed": seed})

    def grant(self, n: int = 1) -> bool:
        """Allow the engine ``n`` more forward passes (paced mode)."""
        return self.send({"op": "grant", "n": int(n)})

    def free_run(self, on: bool) -> bool:
        """Real-time mode: let the engine run passes continuously (True) or only on grants (False)."""
        return self.send({"op": "free_run", "on": bool(on)})

    def set_max_batch(self, n: int) -> bool:
        """Change the engine's maximum batch (sequences per forward pass) while it runs."""
        self.options["max_batch"] = int(n)
        return self.send({"op": "set_max_batch", "n": int(n)})

    def set_draft_k(self, k: int) -> bool:
        """Draft guesses per verify pass (speculative decoding), 0 = off."""
        self.options["draft_k"] = int(k)
        return self.send({"op": "set_draft_k", "k": int(k)})

    def set_draft_kind(self, kind: str) -> bool:
        """Which apprentice guesses: "model" (the draft model) or "ngram" (prompt lookup, always available)."""
        return self.send({"op": "set_draft_kind", "kind": str(kind)})

    def check_apprentice(self, temperature: float, top_k: int = 0, top_p: float = 1.0) -> bool:
        """Ask the engine to measure which apprentice pays under this sampling (answered by ``apprentice``)."""
        return self.send({"op": "check_apprentice", "temperature": float(temperature), "top_k": int(top_k),
                          "top_p": float(top_p)})

    def set_sharding(self, mode: str, n: int) -> bool:
        """Tear the model over ``n`` worker processes by heads ("tp") or layers ("pp"); n = 1: one process.
        The answer is a ``sharding`` signal (a few seconds later when workers start)."""
        return self.send({"op": "set_sharding", "mode": str(mode), "n": int(n)})

    def analyze(self, analysis_id: str, kind: str, prompt: str, **params) -> bool:
        """Ask for a measurement for the tour (``model/teaching/analysis.py``); the answer comes as
        ``analysis(dict)``."""
        return self.send({"op": "analyze", "analysis_id": analysis_id, "kind": kind, "prompt": prompt, **params})

    def reset(self) -> bool:
        """Abort every request and drop outstanding grants."""
        return self.send({"op": "reset"})

    # ---- events ------------------------------------------------------------------------------------------------
    def _poll(self) -> None:
        events = self._events
        for _ in range(self.max_events_per_tick):
            if events is None or self._events is not events:  # a slot shut us down or restarted us
                return
            try:
                event = events.get_nowait()
            except queue.Empty:
                break
            except (EOFError, OSError, ValueError):
                break
            self._dispatch(event)
        process = self._process
        if process is not None and not process.is_alive() and not self._stopping and self._events is events:
            # Handle the last words (a fatal message) before announcing the death.
            while True:
                try:
                    self._dispatch(events.get_nowait())
                except Exception:  # noqa: BLE001 - empty or broken: either way we are done
                    break
            if self._process is not process:
                return
            code = process.exitcode if process.exitcode is not None else -1
            log.warning("engine process %s exited with code %s", process.pid, code)
            self.shutdown(timeout=0)
            self.engine_died.emit(code)

    def _dispatch(self, event: dict) -> None:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "step":
            self.step.emit(event.get("report", {}))
        elif kind == "accepted":
            self.accepted.emit(event)
        elif kind == "finished":
            self.finished.emit(event)
        elif kind == "idle":
            self.idle.emit()
        elif kind == "ready":
            self.info = event
            self.ready.emit(event)
        elif kind == "analysis":
            self.analysis.emit(event)
        elif kind == "sharding":
            self.sharding.emit(event)
        elif kind == "apprentice":
            self.apprentice_info = event
            self.apprentice.emit(event)
        elif kind == "error":
            log.warning("engine error: %s", event.get("message"))
            self.error.emit(str(event.get("message", "")))
        elif kind == "fatal":
            log.error("engine fatal: %s", event.get("message"))
            self.fatal.emit(str(event.get("message", "")))
        else:
            log.warning("unknown engine event %r", event)


def _ask_to_stop(process, commands, events, timeout: float) -> None:
    """Send ``shutdown`` and wait up to ``timeout`` s for the process to exit; past that, end it (logged)."""
    try:
        commands.put_nowait({"op": "shutdown"})
    except Exception:  # noqa: BLE001 - a broken queue only means we go straight to terminate
        pass
    deadline = time.monotonic() + timeout
    while process.is_alive() and time.monotonic() < deadline:
        _drain(events)  # a child blocked on a full pipe could not exit otherwise
        process.join(0.02)
    if process.is_alive():
        log.warning("engine did not stop in %.1f s; terminating", timeout)
        _end(process)


def _end(process) -> None:
    """Terminate ``process``, then kill it if it does not go."""
    process.terminate()
    process.join(0.5)
    if process.is_alive():
        process.kill()
        process.join(0.5)


def _reap(process, commands, events) -> None:
    """Last resort (the bridge was collected without shutdown): end the engine process at once."""
    try:
        if process.is_alive():
            _end(process)
        for q in (commands, events):
            q.cancel_join_thread()
            q.close()
    except Exception:  # noqa: BLE001 - at interpreter exit anything may already be half torn down
        pass


def _drain(events) -> None:
    while True:
        try:
            events.get_nowait()
        except Exception:  # noqa: BLE001 - Empty, or a closed/broken queue
            return
