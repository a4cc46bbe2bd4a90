"""Attention over the KV cache, written once for every pass of this engine.

Every forward here attends the same way: split the fused Q/K/V projection into heads, write the new tokens' K and V
into the paged cache, read the context's K and V back (in place, from the decode mirror, or gathered), and run
``scaled_dot_product_attention`` with the mask the pass needs. The readable model (``CausalSelfAttention`` in
model/gpt2.py), the flat pass (``FlatAttention`` in model/flat_forward.py, the draft model's ``decode_one``
included), ragged batches (``attend_ragged``) and the tensor-parallel workers (model/parallel/shard.py) all call
``attend``.

Where the keys are is described by a *keys* object (duck-typed, any of ``AttentionBatch`` in model/gpt2.py,
``AttnGroup`` in model/ragged.py or ``Run`` below) with these attributes:

    shape          (B, T): sequences and new tokens per sequence
    slot_mapping   int64 (B, T) slots the new K/V are written to; an int: the first of T consecutive slots (B = 1);
                   None: not written here (a ragged pass writes every row once, before its groups)
    context_start  with B = 1, the first slot of the context when it is one run of the pool (read in place)
    context_slots  int64 (B, L) slots of the context, gathered
    mirror         with T = 1, (k, v, write_index) of a ``DecodeMirror`` (model/kv_cache.py)
    L              keys per sequence
    mask           bool (B, 1, T, L), True where a query may look; None when every query sees every key (or,
                   without a cache, plain causal over the new tokens)

Dimensions: B sequences, T new tokens each, L keys, nh heads, hs head size, C = nh · hs, N = B · T rows.
Vaswani et al. 2017, "Attention Is All You Need", eq. 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.ragged import RaggedBatch


@dataclass
class Run:
    """The keys of a lone sequence whose K/V fill one run of the pool (``FlatForward.decode_one``): its T new
    tokens are written at slots slot_mapping .. slot_mapping + T - 1 and its L keys read from context_start on.
    mask: bool (1, 1, T, L) causal mask, or None for one new token (it sees every key)."""

    slot_mapping: int
    context_start: int
    L: int
    T: int
    mask: torch.Tensor | None = None
    context_slots = None
    mirror = None

    @property
    def shape(self) -> tuple[int, int]:
        return 1, self.T


def attention_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                        mask: torch.Tensor | None, scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / √d) · V written out, for reading and for the attention map on screen.

    scale: the factor the scores are multiplied by; None means 1/√d (d = hs).

    q: (B, nh, T, hs), k and v: (B, nh, L, hs), mask: bool (B, 1, T, L) with True where a query may look,
    or None for no mask. Returns (output (B, nh, T, hs), weights (B, nh, T, L)), same dtype as q.
    """
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (B, nh, T, L)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights  # (B, nh, T, hs), (B, nh, T, L)


def read_context(cache, layer: int, k: torch.Tensor, v: torch.Tensor, keys) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """The keys and values attention reads, 2 × (B, nh, L, hs), and whether they are the new tokens' own (no cache
    read: L = T). k, v: the new tokens' (B, T, nh, hs); with a decode mirror they are also written into it."""
    if cache is not None and keys is not None:
        if keys.mirror is not None:
            mk, mv, index = keys.mirror[0][layer], keys.mirror[1][layer], keys.mirror[2]  # (B, nh, capacity, hs)
            hs = k.size(-1)
            mk.view(-1, hs).index_copy_(0, index, k.reshape(-1, hs))  # head-major: each head's keys one run
            mv.view(-1, hs).index_copy_(0, index, v.reshape(-1, hs))
            return mk[:, :, :keys.L], mv[:, :, :keys.L], False
        if keys.context_start is not None:
            k, v = cache.view(layer, keys.context_start, keys.L)  # 2 × (1, L, nh, hs), views of the pool
            return k.transpose(1, 2), v.transpose(1, 2), False
        if keys.context_slots is not None:
            k, v = cache.gather(layer, keys.context_slots)  # 2 × (B, L, nh, hs)
            return k.transpose(1, 2), v.transpose(1, 2), False
    return k.transpose(1, 2), v.transpose(1, 2), True  # (B, nh, T, hs): the keys are the new tokens


def attention_readable(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                       scale: float | None) -> tuple[torch.Tensor, torch.Tensor]:
    """``attention_reference`` with ``attend``'s masks: q (B, nh, T, hs), k and v (B, nh, L, hs), mask bool
    (B, 1, T, L), or None for causal with the T queries last (every key when T = 1). Returns ((B, nh, T, hs),
    weights (B, nh, T, L))."""
    if mask is None:
        T, L = q.size(2), k.size(2)
        mask = torch.ones(T, L, dtype=torch.bool, device=q.device).tril(L - T)[None, None]
    return attention_reference(q, k, v, mask, scale)


def attend(qkv: torch.Tensor, layer: int, cache, keys, scale: float | None, nh: int,
           readable: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Attention of one layer: writes the new K/V to ``cache`` (when there is one), reads the context, runs SDPA.

    qkv: the fused Q, K, V projection, (B, T, 3C), or (N, 3C) rows (a padded pass's, viewed as ``keys.shape``, or a
    ``RaggedBatch``'s). keys: where the keys are (the module docstring), a ``RaggedBatch`` (``attend_ragged``), or
    None (no cache, plain causal: training). scale: the scores' factor, None for 1/√hs. readable: keep the weights.
    Returns (output with qkv's leading dims and C columns, float, qkv's dtype; weights (B, nh, T, L) or None).
    """
    if isinstance(keys, RaggedBatch):
        return attend_ragged(qkv, layer, keys, cache, scale, nh), None
    lead = qkv.shape[:-1]
    B, T = lead if qkv.dim() == 3 else keys.shape  # (N, 3C) rows: N = B · T
    C = qkv.size(-1) // 3
    hs = C // nh
    q, k, v = qkv.split(C, dim=-1)  # 3 × (..., C)
    q = q.view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
    k = k.view(B, T, nh, hs)  # (B, T, nh, hs): the cache stores this layout
    v = v.view(B, T, nh, hs)
    if cache is not None and keys is not None and keys.slot_mapping is not None:
        cache.write(layer, keys.slot_mapping, k, v)
    k, v, own = read_context(cache, layer, k, v, keys)  # 2 × (B, nh, L, hs)
    mask = None if keys is None else keys.mask  # None: every key, or (own keys) causal
    if readable:
        y, weights = attention_readable(q, k, v, mask, scale)
    else:  # softmax(Q Kᵀ · scale) · V, one fused kernel
        y, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=own and mask is None,
                                                    scale=scale), None  # (B, nh, T, hs)
    return y.transpose(1, 2).reshape(*lead, C), weights


def attend_ragged(qkv: torch.Tensor, layer: int, batch: RaggedBatch, cache, scale: float | None,
                  nh: int) -> torch.Tensor:
    """Attention of one layer over a ragged batch (model/ragged.py); also writes the new K/V to ``cache`` (if any),
    every row at once. qkv: (N, 3C) the fused Q, K, V of the pass's rows. Returns (N, C), float, qkv's dtype.
    Each group is one ``attend`` (one SDPA call) on its own keys, so no query sees another request."""
    N, C3 = qkv.shape
    C = C3 // 3
    if cache is not None:
        k_new, v_new = qkv[:, C:2 * C].view(1, N, nh, C // nh), qkv[:, 2 * C:].view(1, N, nh, C // nh)
        cache.write(layer, batch.slot_mapping, k_new, v_new)  # as (1, N, nh, hs)
    ys = []
    for g in batch.groups:
        a, b = g.start, g.start + g.B * g.T
        ys.append(attend(qkv[a:b], layer, cache, g, scale, nh)[0])  # (B_g · T_g, C)
    return ys[0] if len(ys) == 1 else torch.cat(ys)
