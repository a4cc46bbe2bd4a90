"""Clocks for the parts of one forward pass: the weight-reading work, and each layer.

A decode trip of a small GPT-2 is a chain of matrix-vector products, each of which reads one weight matrix
from memory once. ``ReadTimer`` sums the wall time of exactly those ops (every weight GEMV/GEMM: Q/K/V,
attention projection, MLP fc and proj, the LM head; and the embedding gathers), with two clock reads around
each of them; everything else of the pass (attention over the KV cache, layer norms, activations, residual
adds, Python between ops) is the rest. torch on the CPU runs an op to its end before returning, so the clock
reads bracket the op's own work; on CUDA, where ops are queued, ``CudaReadTimer`` records events instead and
sums them once the pass is done (one synchronisation, which the engine's forward timing makes anyway).

Cost, measured (docs/benchmarks.md, "The timers' cost, step by step in one process"): 34 bracketed groups per
decode pass of the big 8-layer book (4 weights a block, the embeddings, the LM head), 368 ns a pair: 12.5 µs a
pass, 0.2 % of its 6-8 ms forward; decode steps alternating with and without the timers differ by -0.2 % (median
of 10 repeats of 150 pairs).
"""

from __future__ import annotations

from time import perf_counter_ns

import torch


class ReadTimer:
    """Sums the wall time between ``begin()`` and ``end()`` calls, in ns (``ns``), for ops that run
    synchronously (torch on the CPU). ``ms()`` is the total in milliseconds. Calls must not nest."""

    __slots__ = ("ns", "_t0")

    def __init__(self) -> None:
        self.ns = 0
        self._t0 = 0

    def begin(self) -> None:
        self._t0 = perf_counter_ns()

    def end(self) -> None:
        self.ns += perf_counter_ns() - self._t0

    def ms(self) -> float:
        return self.ns / 1e6


class CudaReadTimer:
    """``ReadTimer`` for a CUDA device: each begin/end pair records two CUDA events; ``ms()`` waits for the
    last one and sums ``elapsed_time`` of every pair (the GPU's own time for the bracketed kernels)."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._pairs: list[tuple] = []
        self._start = None

    def begin(self) -> None:
        self._start = torch.cuda.Event(enable_timing=True)
        self._start.record()

    def end(self) -> None:
        stop = torch.cuda.Event(enable_timing=True)
        stop.record()
        self._pairs.append((self._start, stop))

    def ms(self) -> float:
        if not self._pairs:
            return 0.0
        self._pairs[-1][1].synchronize()
        return sum(a.elapsed_time(b) for a, b in self._pairs)


class NullTimer:
    """A timer that times nothing (passes run outside the engine: training, tests, the analysis)."""

    __slots__ = ()

    def begin(self) -> None:
        pass

    def end(self) -> None:
        pass

    def ms(self) -> float:
        return 0.0


NULL_TIMER = NullTimer()


def read_timer(device: torch.device) -> ReadTimer | CudaReadTimer:
    """A fresh timer for one pass on ``device``."""
    return CudaReadTimer(device) if device.type == "cuda" else ReadTimer()


def time_modules(module: torch.nn.Module, timer) -> list:
    """Bracket every ``nn.Linear`` and ``nn.Embedding`` call (and int8 ones, ``reads_weights``) inside ``module``
    with ``timer`` (forward hooks), for
    passes that run the modules rather than the flat cached forward. Returns the hook handles; call
    ``.remove()`` on each to stop."""
    handles = []
    for m in module.modules():
        if isinstance(m, (torch.nn.Linear, torch.nn.Embedding)) or getattr(m, "reads_weights", False):
            handles.append(m.register_forward_pre_hook(lambda *_: timer.begin()))
            handles.append(m.register_forward_hook(lambda *_: timer.end()))
    return handles
