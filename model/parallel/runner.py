"""The runner (engine side): starts the worker processes, sends each step, collects timings and logits, and
stops every worker when closed or when one fails."""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import torch
import torch.nn as nn

from model.errors import ShardingError
from model.gpt2 import AttentionBatch, GPT2Config
from model.parallel.plan import (
    DEATH_GRACE_S,
    MAX_WORKERS,
    POLL_S,
    START_TIMEOUT_S,
    check_degree,
    free_port,
    max_pp,
    tp_degrees,
)
from model.parallel.shard import shard_state
from model.parallel.worker import _worker_main
from model.procs import children_ignore_sigint, sigint_deferred

log = logging.getLogger(__name__)


@dataclass
class WorkerInfo:
    rank: int
    pid: int
    weight_bytes: int
    kv_bytes: int
    heads: list[int] | None = None  # TP: [first, stop) of this rank's heads
    layers: list[int] | None = None  # PP: [first, stop) of this stage's layers


def fresh_process_context(method: str | None = None):
    """Where workers come from, and any other process that must start fresh (no Qt, no torch operation run yet,
    for example the bench's thread-count children). Default: a *forkserver* where the platform has one, else
    *spawn*. A process has one forkserver, started with the preload set here: everything that asks for one goes
    through this function, so the guard below is never lost to another caller's preload.

    Both start from a fresh interpreter, never a fork of this (possibly threaded, possibly Qt-holding) process:
    spawn runs a new Python per worker; forkserver runs one new Python (spawned the same way, importing only
    ``model.parallel``, so torch and model/ but never Qt) and forks each worker from it. The difference is the
    wait: importing torch takes seconds on a busy machine, once per worker with spawn, once per engine process
    with the forkserver, so moving the slider a second time starts its workers in a fraction of a second.
    """
    if method is None:
        method = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    ctx = mp.get_context(method)
    if method == "forkserver":
        # the guard (the forkserver dies with this process) only when the main thread starts the forkserver: the
        # kernel's parent-death signal follows the starting thread, and only the main thread lives as long as we do
        main = threading.current_thread() is threading.main_thread()
        ctx.set_forkserver_preload(["model.parallel"] + (["model.parallel.forkserver_guard"] if main else []))
    return ctx


def _np(t: torch.Tensor | None):
    return None if t is None else t.detach().to("cpu").numpy()


class ShardedRunner:
    """Runs the target's forward passes on ``n`` worker processes, torn by heads (``"tp"``) or by layers
    (``"pp"``). Plugs into ``Engine.set_runner``.

    model_dir_or_state: a model directory (Hugging Face layout, read with ``model.checkpoint.load_state``), a
    state dict in this project's names and [out, in] layout, or a ``GPT2`` module. config: its ``GPT2Config``.
    num_blocks, block_size: geometry of the paged KV cache, the same as the engine's (0 blocks: no cache).
    device: "cpu" (gloo) or "cuda" (NCCL, one GPU per worker). threads_per_worker: torch intra-op threads in
    each worker. timeout_s: the longest ``forward`` waits for the workers, and the process-group timeout.
    micro_batches: PP micro-batches per pass at most (None: 4·n, GPipe's "m >= 4K" rule of thumb); the batch
    is cut into min(B, micro_batches) parts. start_method: "forkserver" (default where available) or "spawn"
    (see ``fresh_process_context``). weights: "fp32" or "fp16", the workers' precision (None: the model's own, else
    fp32); every worker multiplies through model/weight_mm.py.

    Raises ValueError for an impossible degree (see ``check_degree``), ShardingError if the workers do not start
    (within ``start_timeout_s``) or the rendezvous fails on every port tried.
    """

    def __init__(self, model_dir_or_state, config: GPT2Config, mode: str, n: int, num_blocks: int,
                 block_size: int, device: str = "cpu", threads_per_worker: int = 1, timeout_s: float = 10.0,
                 micro_batches: int | None = None, dtype: torch.dtype = torch.float32,
                 start_timeout_s: float = START_TIMEOUT_S, port_attempts: int = 5,
                 start_method: str | None = None, weights: str | None = None):
        weights = self._check_request(model_dir_or_state, config, mode, n, device, weights)
        self.config, self.mode, self.n = config, mode, n
        self.timeout_s = float(timeout_s)
        self.micro_batches = micro_batches or 4 * n
        self.device = torch.device(device)
        self.workers: list[WorkerInfo] = []
        self._procs: list = []
        self._cmd_qs: list = []
        self._res_q = None
        self._store = None
        self._step = 0
        self._closed = False
        self._stop_lock = threading.Lock()  # close() may come from another thread while forward() waits
        self.failure: str | None = None  # why the runner stopped, once it has
        state = self._full_state(model_dir_or_state, config)
        self._store, self.port = self._open_store(port_attempts)
        ctx = fresh_process_context(start_method)
        with children_ignore_sigint():  # the resource tracker this may start: Ctrl+C is the parent's to handle
            self._res_q = ctx.Queue()
        geometry = {"num_blocks": int(num_blocks), "block_size": int(block_size),
                    "dtype": str(dtype).removeprefix("torch."), "threads": int(threads_per_worker), "weights": weights}
        try:
            for rank in range(n):
                self._start_worker(ctx, rank, self._spec(shard_state(state, config, mode, n, rank), rank, geometry))
            del state
            self._collect("loaded", start_timeout_s)
            self._send_all(("connect",))
            infos = self._collect("ready", 2 * self.timeout_s)
        except ShardingError:
            self._stop(graceful=False)
            raise
        except BaseException as e:
            self._stop(graceful=False)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            raise ShardingError(f"the workers could not start: {type(e).__name__}: {e}") from e
        self.workers = [WorkerInfo(**{k: v for k, v in infos[r].items()}) for r in range(n)]

    @staticmethod
    def _check_request(source, config: GPT2Config, mode: str, n: int, device: str, weights: str | None) -> str:
        """The workers' precision ("fp32" or "fp16"; None: the model's own). Raises ValueError for an impossible
        degree or precision, ShardingError when torch has no torch.distributed or CUDA has too few GPUs."""
        import torch.distributed as dist

        check_degree(config, mode, n)
        weights = weights or getattr(source, "weights", "fp32")
        if weights not in ("fp32", "fp16"):
            raise ValueError(f"the workers hold fp32 or fp16 shards, not {weights}: {weights} runs on one process")
        if not dist.is_available():
            raise ShardingError("this torch build has no torch.distributed")
        if str(device).startswith("cuda") and torch.cuda.device_count() < n:
            raise ShardingError(f"{n} workers on CUDA need {n} GPUs (NCCL puts one rank on each); "
                                f"{torch.cuda.device_count()} found")
        return weights

    def _spec(self, shard: dict[str, torch.Tensor], rank: int, geometry: dict) -> dict:
        """What worker ``rank`` starts from: its place, the rendezvous, the config, the KV geometry, dtype, threads
        and precision (``geometry``), and its ``shard`` of the weights as numpy arrays (bfloat16 as float32)."""
        return {"rank": rank, "n": self.n, "mode": self.mode, "port": self.port, "prefix": f"one-trip/{os.getpid()}",
                "config": self.config.as_dict(), "device": self._worker_device(rank), "timeout_s": self.timeout_s,
                **geometry, "state": {k: v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
                                      for k, v in shard.items()}}

    def _start_worker(self, ctx, rank: int, spec: dict) -> None:
        """Start worker ``rank``'s process with its command queue; its answers come on the shared result queue."""
        # daemonic where allowed: multiprocessing then also stops them when this process exits normally
        with children_ignore_sigint():  # the forkserver (started by the first) and workers: see model.procs
            cmd_q = ctx.Queue()
            proc = ctx.Process(target=_worker_main, args=(spec, cmd_q, self._res_q),
                               daemon=not mp.current_process().daemon, name=f"one-trip-{self.mode}{self.n}-rank{rank}")
            proc.start()
        self._cmd_qs.append(cmd_q)
        self._procs.append(proc)

    @classmethod
    def from_engine(cls, engine, mode: str, n: int, **kwargs) -> ShardedRunner:
        """A runner for ``engine``'s model with its KV geometry, device and dtype (does not attach it)."""
        cache = engine.cache
        return cls(engine.model, engine.config, mode, n, num_blocks=0 if cache is None else cache.num_blocks,
                   block_size=engine.block_size, device=str(engine.device), dtype=engine.dtype, **kwargs)

    # -- start-up helpers

    @staticmethod
    def _full_state(source, config: GPT2Config) -> dict[str, torch.Tensor]:
        if isinstance(source, nn.Module):
            return {k: v.detach().to("cpu") for k, v in source.state_dict().items()}
        if isinstance(source, dict):
            return {k: v.detach().to("cpu") for k, v in source.items()}
        from model.checkpoint import load_state
        return load_state(Path(source), config)

    def _worker_device(self, rank: int) -> str:
        if self.device.type == "cuda":
            return f"cuda:{rank % torch.cuda.device_count()}"
        return "cpu"

    @staticmethod
    def _open_store(attempts: int):
        """Host the rendezvous store here, on a free loopback port; a port taken between choosing and binding
        (another app instance, anything) is skipped for a fresh one. Returns (store, port)."""
        import torch.distributed as dist

        last = None
        for _ in range(max(1, attempts)):
            port = free_port()
            try:
                store = dist.TCPStore("127.0.0.1", port, None, True, timeout=timedelta(seconds=30),
                                      wait_for_workers=False)
                return store, port
            except (RuntimeError, OSError) as e:  # DistNetworkError (address in use) is a RuntimeError
                last = e
        raise ShardingError(f"no free loopback port for the workers' rendezvous after {attempts} tries: {last}")

    # -- waiting

    def _dead(self) -> str | None:
        """A plain sentence about the worker that is no longer running, or None.

        When several have ended, the cause is named: a worker killed by a signal before one that exited with an
        error code, and either before one that exited cleanly (a rank whose peer was killed may exit with code 0
        on the broken connection before this process looks).
        """
        ended = []
        for r, p in enumerate(self._procs):
            if not p.is_alive():  # also reaps it, so a dead worker never lingers as a zombie
                code = p.exitcode
                if code is not None and code < 0:
                    try:
                        how = f"was killed ({signal.Signals(-code).name})"
                    except ValueError:
                        how = f"was killed (signal {-code})"
                    rank = 0
                else:
                    how = f"exited with code {code}"
                    rank = 1 if code else 2
                ended.append((rank, r, f"worker {r} of {self.n} (pid {p.pid}) {how}"))
        return min(ended)[2] if ended else None

    def _fail(self, why: str):
        self.failure = why
        self._stop(graceful=False)
        raise ShardingError(why)

    def _collect(self, kind: str, timeout_s: float, step: int | None = None) -> dict[int, tuple]:
        """Wait for one ``kind`` message from every rank. Raises ShardingError (after stopping every worker) if
        one reports an error, dies, or the wait passes ``timeout_s``."""
        got: dict[int, tuple] = {}
        deadline = time.monotonic() + timeout_s
        while len(got) < self.n:
            try:
                msg = self._res_q.get(timeout=POLL_S)
            except queue.Empty:
                dead = self._dead()
                if dead:
                    self._fail(dead)
                if time.monotonic() > deadline:
                    missing = sorted(set(range(self.n)) - set(got))
                    self._fail(f"worker {missing[0]} did not answer within {timeout_s:.0f} s")
                continue
            except (OSError, ValueError, EOFError) as e:  # closed under us (close() from another thread)
                self._fail(f"the workers were stopped ({type(e).__name__})")
            if msg[0] == "error":
                # a rank whose peer died reports the transport's own error ("Connection reset by peer"...):
                # blame the worker that died, if one did, and keep the raw text for the log only
                log.info("worker %s reported: %s", msg[1], msg[2])  # INFO: the log keeps it, a terminal does not
                dead = self._dead()
                wait_until = time.monotonic() + DEATH_GRACE_S
                while dead is None and time.monotonic() < wait_until:
                    time.sleep(0.005)
                    dead = self._dead()
                self._fail(dead or f"worker {msg[1]} failed: {str(msg[2]).splitlines()[0][:200] if msg[2] else '?'}")
            if msg[0] != kind or (step is not None and msg[2] != step):
                continue  # a late answer to an older request
            got[msg[1]] = msg if kind == "step" else msg[2]
        return got

    def _send_all(self, msg: tuple) -> None:
        """Put ``msg`` on every worker's command queue with Ctrl+C held off until all are sent
        (``model.procs.sigint_deferred``, about 20 µs): a KeyboardInterrupt inside ``put`` would leave the queue's
        lock held, and the "shutdown" put on the way out would wait on it for ever. Raises what ``put`` raises on a
        closed queue (OSError, ValueError). The result queue's get needs no such care: nothing reads it again
        after a Ctrl+C, and this process never writes to it."""
        with sigint_deferred():
            for q in self._cmd_qs:
                q.put(msg)

    # -- the runner protocol

    def forward(self, input_ids: torch.Tensor, batch: AttentionBatch,
                logit_index: torch.Tensor) -> tuple[torch.Tensor, list[dict]]:
        """One sharded forward pass.

        input_ids: int64 (B, T); batch: the engine's AttentionBatch (positions (B, T), attn_mask bool
        (B, 1, T, L), slot_mapping (B, T) and context_slots (B, L) into a cache of ``num_blocks·block_size + 1``
        slots, or None without a cache); logit_index: int64 (B, K).
        Returns (logits float32 (B, K, V) on the engine's device, workers): one dict per rank, in rank order,
        {"rank", "compute_ms", "comm_ms", "bubble_ms", "weight_bytes", "weight_read_ms", "t_start_ns", "t_end_ns"} (+
        "micro_batches" for PP), times in ms measured inside the workers.
        Raises ShardingError within ``timeout_s`` if a worker died, failed or hangs; the runner is then closed.
        """
        if self._closed or self.failure:
            raise ShardingError(self.failure or "the sharded runner is closed")
        self._step += 1
        payload = {"input_ids": _np(input_ids), "positions": _np(batch.positions), "attn_mask": _np(batch.attn_mask),
                   "slot_mapping": _np(batch.slot_mapping), "context_slots": _np(batch.context_slots),
                   "logit_index": _np(logit_index), "micro_batches": self.micro_batches}
        try:
            self._send_all(("forward", self._step, payload))
        except (OSError, ValueError) as e:
            self._fail(f"the workers were stopped ({type(e).__name__})")
        msgs = self._collect("step", 0.9 * self.timeout_s, self._step)  # the rest: time to stop the workers
        timings = [msgs[r][3] for r in range(self.n)]
        if self.mode == "pp":
            end = max(t["t_end_ns"] for t in timings)
            for t in timings:  # drain: finished its last micro-batch, idle until the last stage is done
                t["bubble_ms"] += (end - t["t_end_ns"]) / 1e6
        source = 0 if self.mode == "tp" else self.n - 1
        logits = torch.from_numpy(msgs[source][4]).to(input_ids.device)
        return logits, timings

    def alive(self) -> bool:
        """True while every worker runs and no pass has failed."""
        return not self._closed and self.failure is None and all(p.is_alive() for p in self._procs)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    @property
    def weight_bytes(self) -> list[int]:
        """Bytes of parameters each worker holds, by rank."""
        return [w.weight_bytes for w in self.workers]

    def close(self, timeout: float = 2.0) -> None:
        """Stop every worker: a shutdown message, ``timeout`` s to exit, then SIGTERM, then SIGKILL; each one
        joined (no zombie). Safe to call twice, and from another thread while ``forward`` waits (which then
        raises ShardingError)."""
        if self._closed:
            return
        self._closed = True
        self._stop(graceful=True, timeout=timeout)

    def _stop(self, graceful: bool, timeout: float = 2.0) -> None:
        # a second Ctrl+C waits for the workers to be stopped (a few seconds at most) instead of leaving them half
        # stopped, or a queue's lock held (model.procs.sigint_deferred)
        with sigint_deferred(), self._stop_lock:
            self._stop_locked(graceful, timeout)

    def _stop_locked(self, graceful: bool, timeout: float) -> None:
        self._closed = True
        if graceful:
            for q in self._cmd_qs:
                try:
                    q.put(("shutdown",))
                except (OSError, ValueError):
                    pass
            deadline = time.monotonic() + timeout
            for p in self._procs:
                p.join(max(0.0, deadline - time.monotonic()))
        for p in self._procs:  # a failed runner's workers are of no further use: no grace for them
            if p.is_alive():
                p.terminate() if graceful else p.kill()
        for p in self._procs:
            p.join(1.0)
            if p.is_alive():
                p.kill()  # SIGTERM is not enough for a stopped (SIGSTOP) or wedged process
                p.join(1.0)
        for q in [*self._cmd_qs, self._res_q]:
            if q is not None:
                q.cancel_join_thread()  # never block interpreter exit on a pipe nobody reads any more
                q.close()
        self._store = None

    def __enter__(self) -> ShardedRunner:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            if not self._closed and self._procs:
                self._stop(graceful=False)
        except Exception:
            pass


def describe(config: GPT2Config, max_workers: int = MAX_WORKERS) -> dict:
    """The degrees a window may offer for ``config``: {"degrees_tp": [...], "max_pp": int} (1 included)."""
    return {"degrees_tp": tp_degrees(config.n_head, max_workers), "max_pp": max_pp(config.n_layer, max_workers)}
