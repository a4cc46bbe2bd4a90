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


def measure_read_bandwidth(nbytes: int, threads: int | None = None, repeats: int = 7,
                           device: str | torch.device = "cpu") -> float:
    """Read bandwidth in bytes/s: best of ``repeats`` sums over an ``nbytes`` float32 buffer, which is what a
    decode step's GEMVs do to the weights (read once, write almost nothing).

    threads: torch intra-op threads for the measurement (None: all cores), restored afterwards. A buffer that
    fits the last-level cache measures cache bandwidth after the first (untimed) pass; one several times larger
    measures DRAM. Takes about 0.1–0.5 s on CPU.
    """
    import os
    n = max(1, nbytes // 4)
    buf = torch.ones(n, dtype=torch.float32, device=device)
    sync = torch.cuda.synchronize if buf.is_cuda else (lambda: None)
    before = torch.get_num_threads()
    torch.set_num_threads(threads or os.cpu_count() or 1)
    try:
        buf.sum()  # first touch and warm-up: page faults are not bandwidth
        best = float("inf")
        for _ in range(repeats):
            sync()
            t0 = time.perf_counter_ns()
            buf.sum()
            sync()
            best = min(best, time.perf_counter_ns() - t0)
    finally:
        torch.set_num_threads(before)
    return n * 4 / (best / 1e9)


def last_level_cache_bytes() -> int | None:
    """Size of the CPU's largest cache in bytes (Linux sysfs), or None where it cannot be read."""
    best = None
    for size_file in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = size_file.read_text().strip().upper()
            scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
            value = int(text.rstrip("KMG")) * scale
        except (OSError, ValueError):
            continue
        best = max(best or 0, value)
    return best


def decode_floors(weight_bytes: int, threads: int | None = None) -> dict:
    """Both floors of a decode step for weights of ``weight_bytes``, and which one applies.

    cache: read bandwidth on a buffer the size of the weights (it stays in the last-level cache between reads
    when it fits there); dram: read bandwidth on a buffer 4 × the last-level cache (at least 256 MiB), so
    nothing is re-read from cache. Both with ``threads`` threads (None: the better of 1 thread and all cores,
    the machine's own bound). The cache floor applies when the weights fit in the last-level cache, else the
    DRAM floor (a lower bound either way: other processes sharing the cache can push a small model's step
    towards the DRAM floor). Returns {"weight_bytes", "l3_bytes",
    "cache_bandwidth_bytes_per_s", "dram_bandwidth_bytes_per_s", "cache_floor_ms", "dram_floor_ms",
    "applies": "cache" | "dram", "bandwidth_bytes_per_s", "floor_ms"} (the last two: the applicable ones).
    """
    import os
    llc = last_level_cache_bytes()
    # a floor is the best the machine can do: with threads None, the better of one thread and all cores (on a
    # shared machine a busy core can make all-core reads slower than one thread's)
    counts = [threads] if threads else sorted({1, os.cpu_count() or 1})
    cache_bw = max(measure_read_bandwidth(max(weight_bytes, 2**20), t) for t in counts)
    dram_bw = max(measure_read_bandwidth(max(4 * (llc or 64 * 2**20), 256 * 2**20), t, repeats=3) for t in counts)
    applies = "cache" if llc is not None and weight_bytes <= llc else "dram"
    floors = {"cache": decode_floor_ms(weight_bytes, cache_bw), "dram": decode_floor_ms(weight_bytes, dram_bw)}
    return {"weight_bytes": weight_bytes, "l3_bytes": llc, "cache_bandwidth_bytes_per_s": cache_bw,
            "dram_bandwidth_bytes_per_s": dram_bw, "cache_floor_ms": floors["cache"], "dram_floor_ms": floors["dram"],
            "applies": applies, "bandwidth_bytes_per_s": cache_bw if applies == "cache" else dram_bw,
            "floor_ms": floors[applies]}


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
