"""What this computer can do: memory bandwidth, measured, and the decode floor it implies.

A decode step must read every weight once, so no step can be faster than
    floor (s) = weight bytes ÷ memory bandwidth (bytes/s)
(the "roofline" bound for memory-bound work; Williams, Waterman & Patterson 2009, "Roofline").
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

import torch


def measure_memory_bandwidth(nbytes: int = 64 * 2**20, repeats: int = 5,
                             device: str | torch.device = "cpu") -> float:
    """Copy bandwidth in bytes/s: best of ``repeats`` copies of an ``nbytes`` float32 buffer.

    A copy reads ``nbytes`` and writes ``nbytes``, so 2 × nbytes move per copy. 64 MiB is larger than the
    caches of common CPUs, so the figure is DRAM bandwidth, not cache bandwidth. Takes about 0.1–0.3 s on CPU.
    """
    n = max(1, nbytes // 4)
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    sync = torch.cuda.synchronize if src.is_cuda else (lambda: None)
    dst.copy_(src)  # first touch: page faults are not bandwidth
    best = float("inf")
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter_ns()
        dst.copy_(src)
        sync()
        best = min(best, time.perf_counter_ns() - t0)
    return 2 * n * 4 / (best / 1e9)


def decode_floor_ms(weight_bytes: int, bandwidth_bytes_per_s: float) -> float:
    """The fastest a decode step can be, in ms: every weight byte read once at full bandwidth."""
    return weight_bytes / bandwidth_bytes_per_s * 1e3


def cpu_name() -> str:
    """The processor's model name (from /proc/cpuinfo on Linux, else what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
