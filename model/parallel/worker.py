"""The worker process: one rank's shard, its part of the paged KV cache, and its forward pass (spawned or forked
from a forkserver; imports torch and model/ only, never Qt)."""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from datetime import timedelta

import numpy as np
import torch

from model import decoder
from model.gpt2 import AttentionBatch, GPT2Config
from model.kv_cache import PagedKVCache
from model.parallel.plan import WORKER_POLL_S
from model.parallel.shard import READ, CurrentReadTimer, _Shard
from model.timing import NULL_TIMER, read_timer, time_modules


def _now() -> int:
    return time.perf_counter_ns()


def _loopback_env() -> None:
    """Keep gloo/NCCL on the loopback interface: the workers never leave this machine."""
    ifname = {"linux": "lo", "darwin": "lo0"}.get(sys.platform)
    if ifname:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", ifname)
        os.environ.setdefault("NCCL_SOCKET_IFNAME", ifname)


def _rows(batch: AttentionBatch, a: int, b: int) -> AttentionBatch:
    return AttentionBatch(positions=batch.positions[a:b], attn_mask=batch.attn_mask[a:b],
                          slot_mapping=None if batch.slot_mapping is None else batch.slot_mapping[a:b],
                          context_slots=None if batch.context_slots is None else batch.context_slots[a:b])


class _Worker:
    """One rank: its shard, its KV cache, and the forward pass of its mode."""

    def __init__(self, spec: dict):
        import torch.distributed as dist

        self.dist = dist
        self.rank, self.n, self.mode = spec["rank"], spec["n"], spec["mode"]
        self.device = torch.device(spec["device"])
        self.config = GPT2Config(**spec["config"])
        dtype = getattr(torch, spec["dtype"])
        shard = _Shard(self.config, self.mode, self.n, self.rank)
        state = {k: torch.from_numpy(v) for k, v in spec["state"].items()}
        shard.load_state_dict(state, strict=True)
        del state, spec["state"]
        self.shard = shard.to(self.device, dtype).eval().requires_grad_(False)
        # every product through model/weight_mm.py: fp16 (the same values as the whole model's) or fp32
        from model.quantize import fp16_modules, matrix_modules
        (fp16_modules if spec.get("weights", "fp32") == "fp16" else matrix_modules)(self.shard)
        self.weight_bytes = sum(p.numel() * p.element_size() for p in self.shard.parameters())
        cfg = self.config
        heads = cfg.n_head // self.n if self.mode == "tp" else cfg.n_head
        self.cache = None
        if spec["num_blocks"] > 0:
            self.cache = PagedKVCache(len(self.shard.layers), heads, cfg.head_dim, spec["num_blocks"],
                                      spec["block_size"], self.device, dtype)
        self.dtype = dtype
        self.sync = (lambda: torch.cuda.synchronize(self.device)) if self.device.type == "cuda" else (lambda: None)
        self._read_hooks = time_modules(self.shard, CurrentReadTimer())  # the shard's Linear and Embedding calls

    def info(self) -> dict:
        d = {"rank": self.rank, "pid": os.getpid(), "weight_bytes": self.weight_bytes,
             "kv_bytes": 0 if self.cache is None else self.cache.nbytes}
        if self.mode == "tp":
            heads = self.config.n_head // self.n
            d["heads"] = [self.rank * heads, (self.rank + 1) * heads]
        else:
            d["layers"] = [self.shard.layers[0], self.shard.layers[-1] + 1]
        return d

    def _inputs(self, p: dict):
        def t(key):
            return None if p.get(key) is None else torch.from_numpy(p[key]).to(self.device)
        batch = AttentionBatch(positions=t("positions"), attn_mask=t("attn_mask"), slot_mapping=t("slot_mapping"),
                               context_slots=t("context_slots"))
        return t("input_ids"), batch, t("logit_index")

    def forward(self, p: dict) -> tuple[dict, np.ndarray | None]:
        READ[0] = read_timer(self.device)
        try:
            with torch.inference_mode():
                timing, logits = self._forward_tp(p) if self.mode == "tp" else self._forward_pp(p)
            timing["weight_read_ms"] = READ[0].ms()
            return timing, logits
        finally:
            READ[0] = NULL_TIMER

    def _forward_tp(self, p):
        input_ids, batch, logit_index = self._inputs(p)
        comm = 0

        def all_reduce(t):
            nonlocal comm
            self.sync()
            t0 = _now()
            self.dist.all_reduce(t)
            self.sync()
            comm += _now() - t0

        t_start = _now()
        logits = decoder.forward(self.shard, self.shard.blocks(), input_ids, batch.positions,
                                 (batch, self.cache, all_reduce), logit_index, NULL_TIMER)
        self.sync()
        t_end = _now()
        timing = {"compute_ms": (t_end - t_start - comm) / 1e6, "comm_ms": comm / 1e6, "bubble_ms": 0.0,
                  "t_start_ns": t_start, "t_end_ns": t_end}
        return timing, (logits.float().cpu().numpy() if self.rank == 0 else None)

    def _forward_pp(self, p):
        input_ids, batch, logit_index = self._inputs(p)
        B, T = input_ids.shape
        C = self.config.n_embd
        m = max(1, min(B, int(p["micro_batches"])))
        sizes = [len(r) for r in torch.arange(B).tensor_split(m)]
        hdr = 8 // torch.empty((), dtype=self.dtype).element_size()  # int64 timestamp, bit-cast into the dtype
        compute = comm = bubble = 0
        outs = []
        blocks = self.shard.blocks()
        t_start = _now()
        a = 0
        for size in sizes:
            b = a + size
            sub = _rows(batch, a, b)
            if self.shard.first:
                t0 = _now()
                x = self.shard.embed(input_ids[a:b], sub.positions)
                compute += _now() - t0
            else:
                buf = torch.empty(size * T * C + hdr, dtype=self.dtype, device=self.device)
                t_enter = _now()
                self.dist.recv(buf, src=self.rank - 1)
                t_got = _now()
                t_sent = int(buf[-hdr:].cpu().view(torch.int64)[0])
                idle = max(0, min(t_sent, t_got) - t_enter)  # waiting before the data existed: bubble
                bubble += idle
                comm += t_got - t_enter - idle
                x = buf[:-hdr].view(size, T, C)
            t0 = _now()
            for local, block in enumerate(blocks):
                x = block(x, local, sub, self.cache)
            if self.shard.last:
                outs.append(self.shard.logits(x, logit_index[a:b]))
            self.sync()
            compute += _now() - t0
            if not self.shard.last:
                t0 = _now()
                stamp = torch.tensor([t0], dtype=torch.int64).view(self.dtype).to(self.device)
                self.dist.send(torch.cat([x.reshape(-1), stamp]), dst=self.rank + 1)
                self.sync()
                comm += _now() - t0
            a = b
        t_end = _now()
        timing = {"compute_ms": compute / 1e6, "comm_ms": comm / 1e6, "bubble_ms": bubble / 1e6,
                  "micro_batches": len(sizes), "t_start_ns": t_start, "t_end_ns": t_end}
        logits = torch.cat(outs).float().cpu().numpy() if self.shard.last else None
        return timing, logits


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Linux only: ask the kernel to send ``sig`` to this process when its OS parent ends (prctl(2),
    PR_SET_PDEATHSIG). True if set. The "parent" is the thread that forked this process, which is why it is
    only used where that thread is the forkserver's one thread (``_die_with_parent``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _exit_when_parent_ends(parent) -> None:
    """Block until the engine process (``parent``, a ``multiprocessing`` parent handle) is gone, then leave at
    once with ``os._exit``: no finalizer runs, above all not the result queue's feeder-thread join, which blocks
    forever once a step's logits fill a pipe whose only other reader (this very process) never reads."""
    from multiprocessing.connection import wait
    try:
        wait([parent.sentinel])
    except (OSError, ValueError):
        pass
    os._exit(0)


def _die_with_parent() -> None:
    """Make this worker end within moments of the engine process, however the engine ends (kill -9 included;
    issue 38): everywhere, a daemon thread waits on the engine's sentinel (the end of a pipe only the engine
    holds, or its process handle on Windows) and exits when it closes; on Linux, when this worker was forked by
    a forkserver, also the kernel's parent-death signal for the forkserver (it leaves when its last worker has
    gone, and SIGKILL then reaches a worker that no thread of its own could stop). Under *spawn* the OS parent
    is the engine thread that started the worker, which may end before the engine does, so the thread alone
    watches there."""
    parent = mp.parent_process()
    if parent is None:
        return
    threading.Thread(target=_exit_when_parent_ends, args=(parent,), name="parent-watch", daemon=True).start()
    ppid = os.getppid()
    if ppid != parent.pid and _set_parent_death_signal() and os.getppid() != ppid:
        os._exit(0)  # the forkserver ended between the two getppid calls: the signal will never come


def _worker_main(spec: dict, cmd_q, res_q) -> None:
    """Worker process entry point (spawned; imports torch and model/ only, never Qt): load the shard, meet the
    other ranks once the parent says "connect", then run one forward per "step" until "shutdown". An error is
    reported on ``res_q`` ("error", rank, text) and ends the process."""
    _settle(spec)
    rank = spec["rank"]
    parent = mp.parent_process()
    clean = False
    try:
        worker = _Worker(spec)  # the slow part (and on a busy machine, a slow import before it)
        res_q.put(("loaded", rank, None))
        # every rank loaded: now meet, so the rendezvous timeout measures only the meeting
        msg = _next_command(cmd_q, parent)
        if msg[0] != "connect":
            clean = True
            return
        _connect(spec, worker)
        res_q.put(("ready", rank, worker.info()))
        _serve(worker, rank, cmd_q, res_q, parent)
        clean = True
    except BaseException as e:  # report why, then exit: a broken process group cannot be trusted again
        try:
            res_q.put(("error", rank, f"{type(e).__name__}: {e}"))
        except Exception:
            pass
    finally:
        if clean:
            _leave_group()


def _settle(spec: dict) -> None:
    """The worker's process settings: end with the parent, ignore Ctrl+C (the parent decides), torch's threads
    (``spec["threads"]`` intra-op, one inter-op), loopback networking for the rendezvous."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the parent decides
    torch.set_num_threads(spec["threads"])
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    _loopback_env()


def _next_command(cmd_q, parent) -> tuple:
    """The next message from the parent; ends this process once the parent is gone."""
    while True:
        try:
            return cmd_q.get(timeout=WORKER_POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                os._exit(0)  # orphaned (the parent-watch thread may not have run yet): see _exit_when_parent_ends


def _connect(spec: dict, worker: _Worker) -> None:
    """Join the process group of every rank (NCCL on CUDA, else gloo) through the parent's rendezvous store."""
    import torch.distributed as dist

    timeout = timedelta(seconds=spec["timeout_s"])
    store = dist.TCPStore("127.0.0.1", spec["port"], is_master=False, timeout=timeout)
    backend = "nccl" if worker.device.type == "cuda" else "gloo"
    dist.init_process_group(backend, store=dist.PrefixStore(spec["prefix"], store), rank=spec["rank"],
                            world_size=spec["n"], timeout=timeout)


def _serve(worker: _Worker, rank: int, cmd_q, res_q, parent) -> None:
    """Run a forward pass per ("step", step_id, payload) command, answering ("step", rank, step_id, timing,
    logits); return at "shutdown"."""
    while True:
        msg = _next_command(cmd_q, parent)
        if msg[0] == "shutdown":
            return
        _, step_id, payload = msg
        timing, logits = worker.forward(payload)
        timing["rank"], timing["weight_bytes"] = rank, worker.weight_bytes
        res_q.put(("step", rank, step_id, timing, logits))


def _leave_group() -> None:
    """A clean exit leaves the process group (if it was joined)."""
    try:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
    except Exception:
        pass

