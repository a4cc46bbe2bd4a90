"""Degrees and splits: how many ways a model can be torn by heads (tensor parallel) or by layers (pipeline
parallel), and the shared limits of ``model.parallel``. No processes here."""

from __future__ import annotations

import socket

from model.gpt2 import GPT2Config

MODES = ("tp", "pp")
MAX_WORKERS = 4  # the slider tears the book into 1, 2 or 4; more processes than cores only measures the OS
POLL_S = 0.05  # how often a waiting runner checks that its workers are alive
WORKER_POLL_S = 0.25  # how often an idle worker checks that its parent is alive
START_TIMEOUT_S = 120.0  # spawning n Python processes that import torch is slow on a busy 2-core machine
DEATH_GRACE_S = 0.05  # after a rank reports a transport error, how long to look for the peer that died


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

