"""What this computer can do: memory bandwidth, measured, and the decode floor it implies.

A decode step must read every weight once, so no step can be faster than
    floor (s) = weight bytes ÷ memory bandwidth (bytes/s)
(the "roofline" bound for memory-bound work; Williams, Waterman & Patterson 2009, "Roofline").
"""

from __future__ import annotations

import os
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


def _measure_bandwidths(weight_bytes: int, threads: int | None, passes: int) -> dict:
    """``passes`` measurements of both read speeds (bytes/s) for weights of ``weight_bytes``: each pass is the
    best of ``measure_read_bandwidth``'s repeats, with the better of 1 thread and all cores when ``threads`` is
    None. Returns {"cache": [bytes/s per pass], "dram": [...]}."""
    llc = last_level_cache_bytes()
    counts = [threads] if threads else sorted({1, os.cpu_count() or 1})
    out: dict = {"cache": [], "dram": []}
    for _ in range(max(1, passes)):
        out["cache"].append(max(measure_read_bandwidth(max(weight_bytes, 2**20), t) for t in counts))
        out["dram"].append(max(measure_read_bandwidth(max(4 * (llc or 64 * 2**20), 256 * 2**20), t, repeats=3)
                               for t in counts))
    return out


FLOOR_PASSES = 5  # the read speed of the floor is the median of this many passes (one pass varied 2.4x, issue 34)
# A measurement during which other programs kept more than this share of all cores busy is kept only until a start
# finds the machine quiet and measures again: other programs' reads share the memory bus (a start beside a training
# run measured 4.5 GB/s against 17.4 GB/s quiet, and the floor then sat above the measured reading).
BUSY_SHARE_MAX = 0.25
QUIET_LOOK_S = 0.2  # how long a start watches the other programs before it trusts a busy measurement again


def cpu_snapshot() -> tuple[float, float, float]:
    """(busy seconds of all cores, total seconds of all cores, this process's CPU seconds), from psutil."""
    import psutil
    t = psutil.cpu_times()
    idle = t.idle + getattr(t, "iowait", 0.0)
    busy = sum(getattr(t, k, 0.0) for k in ("user", "nice", "system", "irq", "softirq", "steal"))
    own = psutil.Process().cpu_times()
    return busy, busy + idle, own.user + own.system


def others_busy_share(before: tuple[float, float, float], after: tuple[float, float, float]) -> float:
    """The share (0..1) of all cores' time between two ``cpu_snapshot``s that other processes kept busy."""
    total = after[1] - before[1]
    if total <= 0:
        return 0.0
    return min(1.0, max(0.0, ((after[0] - before[0]) - (after[2] - before[2])) / total))


def machine_is_quiet(look_s: float = QUIET_LOOK_S) -> bool:
    """Whether other programs kept at most ``BUSY_SHARE_MAX`` of all cores busy during the next ``look_s`` seconds
    (this process sleeps meanwhile)."""
    before = cpu_snapshot()
    time.sleep(look_s)
    return others_busy_share(before, cpu_snapshot()) <= BUSY_SHARE_MAX


FLOOR_CACHE_VERSION = 1


def machine_key() -> dict:
    """What identifies this machine for the cached read speed: host name, processor, cores, last-level cache,
    architecture and torch version. A cache copied to (or a home folder mounted on) another machine does not
    match, so its figures are measured again there instead of trusted."""
    import torch
    return {"host": platform.node(), "cpu": cpu_name(), "cores": os.cpu_count(), "l3_bytes": last_level_cache_bytes(),
            "arch": platform.machine(), "torch": torch.__version__}


def floor_cache_path() -> Path:
    """The cached read speeds: ``$ONE_TRIP_CACHE_DIR`` if set (tests), else the user's cache folder
    (``platformdirs.user_cache_dir("one-trip")``), file ``read_speed.json``."""
    folder = os.environ.get("ONE_TRIP_CACHE_DIR")
    if not folder:
        import platformdirs
        folder = platformdirs.user_cache_dir("one-trip", appauthor=False)
    return Path(folder) / "read_speed.json"


def _load_cache(path: Path, key: dict) -> dict:
    """The cache's entries for this machine ({entry name: {...}}), {} when missing, unreadable, of another
    version or of another machine."""
    import json
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != FLOOR_CACHE_VERSION or data.get("machine") != key:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _save_cache(path: Path, key: dict, entries: dict) -> None:
    """Write the cache atomically (a temporary file, then a rename); a folder that cannot be written is logged
    and otherwise ignored (the figures were measured; they are only not kept)."""
    import json
    import logging
    import tempfile
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".read_speed.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"version": FLOOR_CACHE_VERSION, "machine": key, "entries": entries}, f, indent=1)
        os.replace(tmp, path)
    except OSError as exc:
        logging.getLogger("one_trip.hardware").warning("could not keep the measured read speed in %s: %s", path, exc)


def read_speeds(weight_bytes: int, threads: int | None = None, remeasure: bool = False,
                passes: int = FLOOR_PASSES) -> dict:
    """The memory's read speeds for the decode floor of weights of ``weight_bytes``, measured once per machine.

    The first call on a machine (or with ``remeasure``) measures ``passes`` passes (``_measure_bandwidths``,
    about 1–3 s) and keeps their medians in ``floor_cache_path()`` keyed by ``machine_key()``, the weight
    bytes and ``threads``; later calls read them back. A measurement during which other programs kept more than
    ``BUSY_SHARE_MAX`` of the cores busy (``others_busy_share``) is kept marked "busy": a later call reads it back
    while the machine is still busy (measuring again beside the same programs would be no truer, and costs a
    start 1–3 s each time), and measures again as soon as it finds the machine quiet (``machine_is_quiet``, a
    0.2 s look). Returns {"cache_bandwidth_bytes_per_s", "dram_bandwidth_bytes_per_s" (medians, bytes/s),
    "cache_passes", "dram_passes" (bytes/s per pass), "measured_at" (Unix s), "others_busy_share", "busy",
    "source": "measured" | "cached", "path"}.
    """
    path = floor_cache_path()
    key = machine_key()
    name = f"{int(weight_bytes)}:{threads or 'best'}"
    entries = _load_cache(path, key)
    entry = entries.get(name)
    ok = isinstance(entry, dict) and all(
        isinstance(entry.get(k), (int, float)) and entry[k] > 0 for k in ("cache_bandwidth_bytes_per_s",
                                                                         "dram_bandwidth_bytes_per_s"))
    if ok and not remeasure and not (entry.get("busy") and machine_is_quiet()):
        return {**entry, "source": "cached", "path": str(path)}
    import statistics
    before = cpu_snapshot()
    m = _measure_bandwidths(int(weight_bytes), threads, passes)
    busy = others_busy_share(before, cpu_snapshot())
    entry = {"cache_bandwidth_bytes_per_s": statistics.median(m["cache"]),
             "dram_bandwidth_bytes_per_s": statistics.median(m["dram"]),
             "cache_passes": m["cache"], "dram_passes": m["dram"], "measured_at": time.time(),
             "others_busy_share": round(busy, 3), "busy": busy > BUSY_SHARE_MAX}
    if entry["busy"]:
        import logging
        logging.getLogger(__name__).warning("read speed measured while other programs kept %.0f%% of the cores "
                                            "busy: kept until a start finds the machine quiet", 100 * busy)
    _save_cache(path, key, {**entries, name: entry})
    return {**entry, "source": "measured", "path": str(path)}


def cached_measurement(name: str, measure, remeasure: bool = False) -> dict:
    """A figure measured once per machine and kept beside the read speeds (``floor_cache_path()``, keyed by
    ``machine_key()``): the entry ``name`` read back, or, when missing or with ``remeasure``, ``measure()`` (a
    callable returning a JSON-able dict) run now and kept. Returns the dict with "source": "measured" | "cached"
    and "path" added."""
    path = floor_cache_path()
    key = machine_key()
    entries = _load_cache(path, key)
    entry = entries.get(name)
    if isinstance(entry, dict) and entry and not remeasure:
        return {**entry, "source": "cached", "path": str(path)}
    entry = {**measure(), "measured_at": time.time()}
    _save_cache(path, key, {**entries, name: entry})
    return {**entry, "source": "measured", "path": str(path)}


def decode_floors(weight_bytes: int, threads: int | None = None, remeasure: bool = False) -> dict:
    """Both floors of a decode step for weights of ``weight_bytes``, and which one applies.

    cache: read bandwidth on a buffer the size of the weights (it stays in the last-level cache between reads
    when it fits there); dram: read bandwidth on a buffer 4 × the last-level cache (at least 256 MiB), so
    nothing is re-read from cache. Both with ``threads`` threads (None: the better of 1 thread and all cores,
    the machine's own bound), each the median of ``FLOOR_PASSES`` passes measured once per machine and kept
    in the user's cache folder (``read_speeds``; ``remeasure`` measures again and replaces them). The cache
    floor applies when the weights fit in the last-level cache, else the DRAM floor (a lower bound either
    way: other processes sharing the cache can push a small model's step towards the DRAM floor). Returns
    {"weight_bytes", "l3_bytes", "cache_bandwidth_bytes_per_s", "dram_bandwidth_bytes_per_s", "cache_floor_ms",
    "dram_floor_ms", "applies": "cache" | "dram", "bandwidth_bytes_per_s", "floor_ms"} (the last two: the
    applicable ones), "source" ("measured" now | "cached"), "measured_at" (Unix s), "passes" (the applicable
    read speed per pass, bytes/s).
    """
    llc = last_level_cache_bytes()
    speeds = read_speeds(weight_bytes, threads, remeasure=remeasure)
    cache_bw, dram_bw = speeds["cache_bandwidth_bytes_per_s"], speeds["dram_bandwidth_bytes_per_s"]
    applies = "cache" if llc is not None and weight_bytes <= llc else "dram"
    floors = {"cache": decode_floor_ms(weight_bytes, cache_bw), "dram": decode_floor_ms(weight_bytes, dram_bw)}
    return {"weight_bytes": weight_bytes, "l3_bytes": llc, "cache_bandwidth_bytes_per_s": cache_bw,
            "dram_bandwidth_bytes_per_s": dram_bw, "cache_floor_ms": floors["cache"], "dram_floor_ms": floors["dram"],
            "applies": applies, "bandwidth_bytes_per_s": cache_bw if applies == "cache" else dram_bw,
            "floor_ms": floors[applies], "source": speeds["source"], "measured_at": speeds.get("measured_at"),
            "passes": list(speeds.get(f"{applies}_passes") or [])}


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
