"""Tearing the book: tensor and pipeline parallelism over real worker processes.

A ``ShardedRunner`` starts ``n`` worker processes (spawn), joins them with ``torch.distributed`` (gloo on CPU,
NCCL on CUDA) and runs the engine's forward passes on them (``Engine.set_runner``). Each worker holds only its
shard of the weights and its own part of the paged KV cache; the engine keeps the block tables and sends the
slots with every step.

Tensor parallel ("every page down the middle"; Shoeybi et al. 2019, "Megatron-LM", section 3):
    attn.c_attn   column-parallel, split per head inside each of Q, K and V: rank r keeps heads
                  [r·nh/n, (r+1)·nh/n) of Q, of K and of V, so attention runs on its own heads with no talk
    attn.c_proj   row-parallel: each rank multiplies its heads' slice, an all-reduce sums the partial products,
                  the bias is added once, after the sum
    mlp.c_fc      column-parallel (GELU is elementwise, so it needs no talk)
    mlp.c_proj    row-parallel + all-reduce, bias after the sum
    embeddings, layer norms, LM head: replicated (small at this size). Two all-reduces per layer per pass.
    Each worker's KV cache holds all layers, only its heads.

Pipeline parallel ("by chapters"; Huang et al. 2019, "GPipe"): contiguous stages of layers (``split_layers``);
the first stage embeds, the last applies ln_f and the LM head (it keeps its own copy of ``wte``, the tied head,
as Megatron's first and last stages do). Activations go stage to stage with send/recv. A batch above 1 is cut
into micro-batches so that stage s works on micro-batch j while stage s+1 works on j-1. Each worker's KV cache
holds all heads, only its layers.

Measured per worker and per pass, with ``time.perf_counter_ns`` inside the worker (a system-wide monotonic
clock on Linux, macOS and Windows, so timestamps of processes on one machine compare):
    compute_ms   time in the worker's own matmuls, attention, norms
    comm_ms      TP: time inside all_reduce, including waiting for the slowest rank (the sync line)
                 PP: time inside send, and inside recv from the moment the sender handed the data over
    bubble_ms    PP only: time a stage sat idle, waiting in recv before the previous stage had sent
                 (pipeline fill), plus the time from its last micro-batch to the end of the whole pass
                 (drain); the sender's timestamp travels in the activation message itself
    weight_bytes bytes of the parameters the worker holds
    weight_read_ms the part of compute_ms in the worker's weight GEMVs/GEMMs, LM head and embedding gathers
                 (``model/timing.py``: clock reads around each)

Control: one queue per worker carries the step's small tensors (numpy), one result queue brings back every
worker's timings and, from rank 0 (TP) or the last stage (PP), the logits. Every wait has a timeout; a worker
that dies or hangs makes ``forward`` raise ``ShardingError`` and the runner stops the others.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import queue
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from model.errors import ShardingError
from model.gpt2 import AttentionBatch, Block, GPT2Config
from model.kv_cache import PagedKVCache
from model.procs import children_ignore_sigint
from model.timing import NULL_TIMER, read_timer, time_modules

log = logging.getLogger(__name__)
DEATH_GRACE_S = 0.05  # after a rank reports a transport error, how long to look for the peer that died

MODES = ("tp", "pp")
MAX_WORKERS = 4  # the slider tears the book into 1, 2 or 4; more processes than cores only measures the OS
POLL_S = 0.05  # how often a waiting runner checks that its workers are alive
WORKER_POLL_S = 0.25  # how often an idle worker checks that its parent is alive
START_TIMEOUT_S = 120.0  # spawning n Python processes that import torch is slow on a busy 2-core machine


# ---- degrees and splits ---------------------------------------------------------------------------------------

def tp_degrees(n_head: int, max_workers: int = MAX_WORKERS) -> list[int]:
    """Tensor-parallel degrees offered: the divisors of ``n_head`` up to ``max_workers``, 1 included.

    Heads cannot be cut in half, so n must divide n_head (Megatron-LM's rule). Example: (12, 4) -> [1, 2, 3, 4].
    """
    return [d for d in range(1, max(1, max_workers) + 1) if n_head % d == 0]


def max_pp(n_layer: int, max_workers: int = MAX_WORKERS) -> int:
    """Most pipeline stages: one layer per stage at least, ``max_workers`` at most."""
    return max(1, min(n_layer, max_workers))


def split_layers(n_layer: int, n: int) -> list[tuple[int, int]]:
    """Contiguous stages: ``n`` (start, stop) layer ranges covering 0..n_layer, sizes differing by at most one
    (the earlier stages take the extra layers). Raises ValueError unless 1 <= n <= n_layer."""
    if not 1 <= n <= n_layer:
        raise ValueError(f"{n} pipeline stages need 1..{n_layer} (one layer per stage at least)")
    base, extra = divmod(n_layer, n)
    bounds, start = [], 0
    for s in range(n):
        stop = start + base + (1 if s < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def check_degree(config: GPT2Config, mode: str, n: int) -> None:
    """Raise ValueError (with a sentence for the user) if ``config`` cannot be torn ``n`` ways in ``mode``."""
    if mode not in MODES:
        raise ValueError(f"sharding mode must be 'tp' or 'pp', got {mode!r}")
    if not isinstance(n, int) or isinstance(n, bool) or n < 2:
        raise ValueError(f"a sharded runner needs at least 2 workers, got {n!r}")
    differs = config.is_plain_gpt2()
    if differs is not None:  # the workers implement GPT-2's own arithmetic only
        raise ValueError(f"the sharded workers run plain GPT-2 only; this config.json sets {differs}="
                         f"{getattr(config, differs)!r}")
    if mode == "tp":
        if config.n_head % n:
            raise ValueError(f"tensor parallel over {n} workers needs n_head ({config.n_head}) divisible by {n}")
        if config.inner_dim % n:
            raise ValueError(f"tensor parallel over {n} workers needs the MLP width ({config.inner_dim}) "
                             f"divisible by {n}")
    else:
        split_layers(config.n_layer, n)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago: bind ``host``:0 and let the OS choose. Another process may take it
    before we bind it again, which is why ``ShardedRunner`` retries."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


# ---- shards ---------------------------------------------------------------------------------------------------

def shard_state(state: dict[str, torch.Tensor], config: GPT2Config, mode: str, n: int,
                rank: int) -> dict[str, torch.Tensor]:
    """The parameters worker ``rank`` of ``n`` holds, sliced from a full state dict ([out, in] Linear layout,
    this project's names). Returns new contiguous tensors (no view keeps the full tensor alive).

    TP: c_attn rows of this rank's heads in each of Q, K and V; c_fc rows; c_proj columns; the rest whole.
    PP: the stage's blocks (global names ``h.{i}.*``), ``wte``/``wpe`` on the first stage, ``ln_f`` and
    ``wte`` (the tied LM head) on the last. Raises ValueError for an impossible degree.
    """
    check_degree(config, mode, n)
    C, hs, inner = config.n_embd, config.head_dim, config.inner_dim
    out: dict[str, torch.Tensor] = {}
    if mode == "tp":
        heads = config.n_head // n
        q0, q1 = rank * heads * hs, (rank + 1) * heads * hs  # this rank's columns inside one of Q, K, V
        f0, f1 = rank * inner // n, (rank + 1) * inner // n
        qkv_rows = torch.cat([torch.arange(j * C + q0, j * C + q1) for j in range(3)])
        for name, t in state.items():
            if name.endswith("attn.c_attn.weight") or name.endswith("attn.c_attn.bias"):
                t = t.index_select(0, qkv_rows)  # (3·heads·hs, C) or (3·heads·hs,)
            elif name.endswith("attn.c_proj.weight"):
                t = t[:, q0:q1]  # (C, heads·hs): row-parallel in Megatron's [in, out] words
            elif name.endswith("mlp.c_fc.weight") or name.endswith("mlp.c_fc.bias"):
                t = t[f0:f1]  # (inner/n, C) or (inner/n,)
            elif name.endswith("mlp.c_proj.weight"):
                t = t[:, f0:f1]  # (C, inner/n)
            out[name] = t.contiguous().clone()
        return out
    start, stop = split_layers(config.n_layer, n)[rank]
    first, last = rank == 0, rank == n - 1
    for name, t in state.items():
        if name.startswith("h."):
            keep = start <= int(name.split(".")[1]) < stop
        else:
            keep = (name == "wte.weight" and (first or last)) or (name == "wpe.weight" and first) or \
                   (name.startswith("ln_f.") and last)
        if keep:
            out[name] = t.contiguous().clone()
    return out


class _TPAttention(nn.Module):
    """Attention over this rank's heads; ``c_proj`` holds only their columns (row-parallel)."""

    def __init__(self, C: int, heads: int, hs: int):
        super().__init__()
        self.heads, self.hs = heads, hs
        self.c_attn = nn.Linear(C, 3 * heads * hs)  # column-parallel: [Q_r; K_r; V_r]
        self.c_proj = nn.Linear(heads * hs, C)  # row-parallel: its bias is added once, after the all-reduce

    def forward(self, x, layer, batch, cache, all_reduce):
        B, T, _ = x.shape
        q, k, v = self.c_attn(x).split(self.heads * self.hs, dim=2)  # 3 × (B, T, nh/n·hs)
        q = q.view(B, T, self.heads, self.hs).transpose(1, 2)  # (B, nh/n, T, hs)
        k = k.view(B, T, self.heads, self.hs)  # (B, T, nh/n, hs): the cache layout
        v = v.view(B, T, self.heads, self.hs)
        if cache is not None and batch.slot_mapping is not None:
            cache.write(layer, batch.slot_mapping, k, v)
            k, v = cache.gather(layer, batch.context_slots)  # 2 × (B, L, nh/n, hs)
        y = F.scaled_dot_product_attention(q, k.transpose(1, 2), v.transpose(1, 2), attn_mask=batch.attn_mask)
        y = y.transpose(1, 2).reshape(B, T, self.heads * self.hs)  # (B, T, nh/n·hs)
        _READ[0].begin()
        y = F.linear(y, self.c_proj.weight)  # (B, T, C): this rank's share of the sum
        _READ[0].end()
        all_reduce(y)
        return y + self.c_proj.bias


class _TPMLP(nn.Module):
    def __init__(self, C: int, inner: int):
        super().__init__()
        self.c_fc = nn.Linear(C, inner)  # column-parallel
        self.c_proj = nn.Linear(inner, C)  # row-parallel

    def forward(self, x, all_reduce):
        h = F.gelu(self.c_fc(x), approximate="tanh")
        _READ[0].begin()
        y = F.linear(h, self.c_proj.weight)  # (B, T, C) partial
        _READ[0].end()
        all_reduce(y)
        return y + self.c_proj.bias


class _TPBlock(nn.Module):
    def __init__(self, config: GPT2Config, n: int):
        super().__init__()
        C = config.n_embd
        self.ln_1 = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
        self.attn = _TPAttention(C, config.n_head // n, config.head_dim)
        self.ln_2 = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
        self.mlp = _TPMLP(C, config.inner_dim // n)

    def forward(self, x, layer, batch, cache, all_reduce):
        x = x + self.attn(self.ln_1(x), layer, batch, cache, all_reduce)
        return x + self.mlp(self.ln_2(x), all_reduce)


class _Shard(nn.Module):
    """What one worker holds. Names match ``shard_state`` so loading is ``load_state_dict(strict=True)``."""

    def __init__(self, config: GPT2Config, mode: str, n: int, rank: int):
        super().__init__()
        C = config.n_embd
        if mode == "tp":
            self.layers = list(range(config.n_layer))
            self.wte = nn.Embedding(config.vocab_size, C)
            self.wpe = nn.Embedding(config.n_positions, C)
            self.h = nn.ModuleList(_TPBlock(config, n) for _ in self.layers)
            self.ln_f = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
            self.first = self.last = True
            return
        start, stop = split_layers(config.n_layer, n)[rank]
        self.layers = list(range(start, stop))
        self.first, self.last = rank == 0, rank == n - 1
        if self.first or self.last:
            self.wte = nn.Embedding(config.vocab_size, C)
        if self.first:
            self.wpe = nn.Embedding(config.n_positions, C)
        self.h = nn.ModuleDict({str(i): Block(config, i) for i in self.layers})  # the very blocks of model/gpt2.py
        if self.last:
            self.ln_f = nn.LayerNorm(C, eps=config.layer_norm_epsilon)

    def blocks(self):
        return list(self.h) if isinstance(self.h, nn.ModuleList) else [self.h[str(i)] for i in self.layers]

    def embed(self, input_ids, positions):
        return self.wte(input_ids) + self.wpe(positions)  # (B, T, C)

    def head(self, x, logit_index):
        x = self.ln_f(x.gather(1, logit_index[:, :, None].expand(-1, -1, x.size(-1))))  # (B, K, C)
        _READ[0].begin()
        logits = x @ self.wte.weight.t()  # (B, K, V)
        _READ[0].end()
        return logits


# ---- the worker process ---------------------------------------------------------------------------------------

_READ = [NULL_TIMER]  # the worker's weight-read timer of the pass running now (one pass at a time per process)

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


class _Current:
    """Forwards begin/end to the pass's timer in ``_READ`` (the module hooks are set once, the timer is per pass)."""

    def begin(self) -> None:
        _READ[0].begin()

    def end(self) -> None:
        _READ[0].end()


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
        self.weight_bytes = sum(p.numel() * p.element_size() for p in self.shard.parameters())
        cfg = self.config
        heads = cfg.n_head // self.n if self.mode == "tp" else cfg.n_head
        self.cache = None
        if spec["num_blocks"] > 0:
            self.cache = PagedKVCache(len(self.shard.layers), heads, cfg.head_dim, spec["num_blocks"],
                                      spec["block_size"], self.device, dtype)
        self.dtype = dtype
        self.sync = (lambda: torch.cuda.synchronize(self.device)) if self.device.type == "cuda" else (lambda: None)
        self._read_hooks = time_modules(self.shard, _Current())  # the shard's Linear and Embedding calls

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
        _READ[0] = read_timer(self.device)
        try:
            with torch.inference_mode():
                timing, logits = self._forward_tp(p) if self.mode == "tp" else self._forward_pp(p)
            timing["weight_read_ms"] = _READ[0].ms()
            return timing, logits
        finally:
            _READ[0] = NULL_TIMER

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
        x = self.shard.embed(input_ids, batch.positions)
        for i, block in enumerate(self.shard.blocks()):
            x = block(x, i, batch, self.cache, all_reduce)
        logits = self.shard.head(x, logit_index)
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
                outs.append(self.shard.head(x, logit_index[a:b]))
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


def _worker_main(spec: dict, cmd_q, res_q) -> None:
    """Worker process entry point (spawned; imports torch and model/ only, never Qt)."""
    rank = spec["rank"]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the parent decides
    torch.set_num_threads(spec["threads"])
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    _loopback_env()
    parent = mp.parent_process()
    clean = False

    def next_command():
        """The next message from the parent, or None once the parent is gone."""
        while True:
            try:
                return cmd_q.get(timeout=WORKER_POLL_S)
            except queue.Empty:
                if parent is not None and not parent.is_alive():
                    return None  # orphaned: nobody will ever send "shutdown"

    try:
        import torch.distributed as dist

        worker = _Worker(spec)  # the slow part (and on a busy machine, a slow import before it)
        res_q.put(("loaded", rank, None))
        msg = next_command()  # every rank loaded: now meet, so the rendezvous timeout measures only the meeting
        if msg is None or msg[0] != "connect":
            clean = True
            return
        timeout = timedelta(seconds=spec["timeout_s"])
        store = dist.TCPStore("127.0.0.1", spec["port"], is_master=False, timeout=timeout)
        backend = "nccl" if worker.device.type == "cuda" else "gloo"
        dist.init_process_group(backend, store=dist.PrefixStore(spec["prefix"], store), rank=rank,
                                world_size=spec["n"], timeout=timeout)
        res_q.put(("ready", rank, worker.info()))
        while True:
            msg = next_command()
            if msg is None:
                break
            if msg[0] == "shutdown":
                clean = True
                break
            _, step_id, payload = msg
            timing, logits = worker.forward(payload)
            timing["rank"], timing["weight_bytes"] = rank, worker.weight_bytes
            res_q.put(("step", rank, step_id, timing, logits))
    except BaseException as e:  # report why, then exit: a broken process group cannot be trusted again
        try:
            res_q.put(("error", rank, f"{type(e).__name__}: {e}"))
        except Exception:
            pass
    finally:
        if clean:
            try:
                import torch.distributed as dist
                if dist.is_initialized():
                    dist.destroy_process_group()
            except Exception:
                pass


# ---- the runner (engine side) ---------------------------------------------------------------------------------

@dataclass
class WorkerInfo:
    rank: int
    pid: int
    weight_bytes: int
    kv_bytes: int
    heads: list[int] | None = None  # TP: [first, stop) of this rank's heads
    layers: list[int] | None = None  # PP: [first, stop) of this stage's layers


def _mp_context(method: str | None):
    """Where workers come from. Default: a *forkserver* where the platform has one, else *spawn*.

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
        ctx.set_forkserver_preload(["model.parallel"])
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
    (see ``_mp_context``).

    Raises ValueError for an impossible degree (see ``check_degree``), ShardingError if the workers do not start
    (within ``start_timeout_s``) or the rendezvous fails on every port tried.
    """

    def __init__(self, model_dir_or_state, config: GPT2Config, mode: str, n: int, num_blocks: int,
                 block_size: int, device: str = "cpu", threads_per_worker: int = 1, timeout_s: float = 10.0,
                 micro_batches: int | None = None, dtype: torch.dtype = torch.float32,
                 start_timeout_s: float = START_TIMEOUT_S, port_attempts: int = 5,
                 start_method: str | None = None):
        import torch.distributed as dist

        check_degree(config, mode, n)
        if not dist.is_available():
            raise ShardingError("this torch build has no torch.distributed")
        if str(device).startswith("cuda") and torch.cuda.device_count() < n:
            raise ShardingError(f"{n} workers on CUDA need {n} GPUs (NCCL puts one rank on each); "
                                f"{torch.cuda.device_count()} found")
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
        ctx = _mp_context(start_method)
        with children_ignore_sigint():  # the resource tracker this may start: Ctrl+C is the parent's to handle
            self._res_q = ctx.Queue()
        try:
            for rank in range(n):
                shard = shard_state(state, config, mode, n, rank)
                spec = {"rank": rank, "n": n, "mode": mode, "port": self.port, "prefix": f"one-trip/{os.getpid()}",
                        "config": config.as_dict(), "num_blocks": int(num_blocks), "block_size": int(block_size),
                        "device": self._worker_device(rank), "dtype": str(dtype).removeprefix("torch."),
                        "threads": int(threads_per_worker), "timeout_s": self.timeout_s,
                        "state": {k: v.float().numpy() if v.dtype == torch.bfloat16 else v.numpy()
                                  for k, v in shard.items()}}
                del shard
                # daemonic where allowed: multiprocessing then also stops them when this process exits normally
                with children_ignore_sigint():  # the forkserver (started by the first) and workers: see model.procs
                    cmd_q = ctx.Queue()
                    proc = ctx.Process(target=_worker_main, args=(spec, cmd_q, self._res_q),
                                       daemon=not mp.current_process().daemon, name=f"one-trip-{mode}{n}-rank{rank}")
                    proc.start()
                self._cmd_qs.append(cmd_q)
                self._procs.append(proc)
            del state
            self._collect("loaded", start_timeout_s)
            for q in self._cmd_qs:
                q.put(("connect",))
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

    @classmethod
    def from_engine(cls, engine, mode: str, n: int, **kwargs) -> "ShardedRunner":
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
            for q in self._cmd_qs:
                q.put(("forward", self._step, payload))
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
        with self._stop_lock:
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

    def __enter__(self) -> "ShardedRunner":
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
