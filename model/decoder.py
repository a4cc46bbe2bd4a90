"""The forward skeleton every GPT-2 pass here follows, written once: embed, the blocks in order (timed when asked),
the final norm and the LM head.

The readable model (``GPT2`` in model/gpt2.py), the flat pass (``FlatForward`` in model/flat_forward.py, the draft
model's ``decode_one`` included) and the tensor-parallel workers (``_Shard`` in model/parallel/shard.py) run their
passes through ``forward``; each supplies its own ``embed(ids, positions, rt)`` (token + position rows) and
``logits(x, rows, rt)`` (final LayerNorm and LM head at the rows asked for), and its blocks, each called as
``block(x, layer, *args)``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch


def _nothing() -> None:
    return None


def run_blocks(x: torch.Tensor, blocks: Sequence[Callable], args: tuple,
               layer_ms: list[float] | None = None) -> torch.Tensor:
    """x (rows, C) or (B, T, C) through ``blocks[layer](x, layer, *args)`` in order; returns the same shape.
    layer_ms: if a list, each block's wall time in ms is appended (synchronising on CUDA first, so it is the
    block's own)."""
    if layer_ms is None:
        for layer, block in enumerate(blocks):
            x = block(x, layer, *args)
        return x
    sync = torch.cuda.synchronize if x.is_cuda else _nothing
    for layer, block in enumerate(blocks):
        sync()
        t0 = time.perf_counter_ns()
        x = block(x, layer, *args)
        sync()
        layer_ms.append((time.perf_counter_ns() - t0) / 1e6)
    return x


def forward(net, blocks: Sequence[Callable], ids, positions, args: tuple, rows, rt,
            layer_ms: list[float] | None = None) -> torch.Tensor:
    """One pass of ``net``: ``net.embed(ids, positions, rt)`` -> ``run_blocks`` -> ``net.logits(x, rows, rt)``.

    ids, positions: the tokens fed and their positions, in the form ``net.embed`` takes (int64 (B, T) or (N,)).
    args: what every block takes after (x, layer). rows: which rows' logits ``net.logits`` computes (None: all).
    rt: the weight-read timer (model/timing.py). layer_ms: as ``run_blocks``. Returns float logits (rows, V) or
    (B, K, V), as ``net.logits`` gives them.
    """
    x = net.embed(ids, positions, rt)
    x = run_blocks(x, blocks, args, layer_ms)
    return net.logits(x, rows, rt)
