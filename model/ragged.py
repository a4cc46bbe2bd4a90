"""Ragged (flat) forward passes: the tokens of every request of a pass in one (N, C) batch, no padding.

A padded pass feeds a (B, T) batch, so a trip that carries one request's 31-token prefill chunk beside three
1-token decodes computes 4 × 31 rows in every Linear and the MLP. A ragged pass concatenates the real tokens
instead, as vLLM, SGLang and TensorRT-LLM's in-flight batching do: embeddings, every Linear, the MLP and the LM
head run over N = Σ tokens rows, and the LM head only over the rows whose logits are needed.

Attention is the one part that needs to know where each request starts (``attention.attend_ragged``, in
model/attention.py). The rows are ordered so that requests feeding the same number of tokens T sit next to each
other, and each such *group* is one ``scaled_dot_product_attention`` call over (B_g, nh, T, L_g): the B_g
requests' keys are padded to the longest context L_g of the group and masked (padding there costs attention only,
never a Linear). So a decode-only pass is one group of T = 1 (and reads its context from the ``DecodeMirror`` as
before), a lone prefill chunk is one group of B_g = 1 that reads its context in place, and a mixed trip is two
groups. Measured against a block-diagonal mask over the whole flat batch in bench/engine_bench.py ("mixed"),
docs/benchmarks.md.

Dimensions: N new tokens of the pass (rows), M rows whose logits are computed, B_g, T_g, L_g of a group,
nh heads, hs head size, C = nh · hs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class AttnGroup:
    """B requests that feed T tokens each at flat rows start .. start + B·T - 1 (request-major).

    context_slots: int64 (B, L) cache slots of the keys of each request (past its own end: the scratch slot), or
                   None without a KV cache (the keys are the group's own new tokens, L = T, plain causal)
    context_start: with B = 1, the first slot when the context is one run of the pool (read in place)
    attn_mask:     bool (B, 1, T, L), True where a query may look (causal, within its request), or None when
                   every query sees every key (T = 1 and all requests have L keys) or without a KV cache
    mirror:        with T = 1, (k, v, write_index) of a ``DecodeMirror`` (model/kv_cache.py)
    """

    start: int
    B: int
    T: int
    L: int
    context_slots: torch.Tensor | None = None
    context_start: int | None = None
    attn_mask: torch.Tensor | None = None
    mirror: tuple | None = None
    slot_mapping = None  # the pass writes every row's K/V at once (``attention.attend_ragged``), not per group

    @property
    def shape(self) -> tuple[int, int]:
        return self.B, self.T

    @property
    def mask(self) -> torch.Tensor | None:
        """What ``model/attention.py`` masks with: ``attn_mask``."""
        return self.attn_mask


@dataclass
class RaggedBatch:
    """Where each of the N new tokens of a flat pass sits. Built by ``pack``.

    positions:    int64 (N,) position of each token in its own sequence
    slot_mapping: int64 (N,) KV-cache slot its K and V are written to, or None without a KV cache
    groups:       the attention groups, in row order; together they cover rows 0 .. N - 1
    """

    positions: torch.Tensor
    slot_mapping: torch.Tensor | None
    groups: list[AttnGroup] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return int(self.positions.numel())


def pack(items: list, block_size: int, ar: torch.Tensor, scratch_slot: int | None, device: torch.device,
         mirror_of=None) -> tuple[torch.Tensor, RaggedBatch, torch.Tensor, torch.Tensor, int]:
    """Flat inputs for one pass over ``items`` (``model.engine.PassItem``: token_ids, start, table, n_logits).

    ar: int64 arange (CPU) at least as long as every context. scratch_slot: the cache's scratch slot, or None
    without a KV cache. mirror_of: a callable (tables, starts, context_slots) -> mirror tuple or None, asked for
    the group of 1-token items (a plain decode of the target), or None.
    Returns (input_ids int64 (N,), the RaggedBatch, logit_index int64 (M,) flat rows whose logits are computed,
    pick int64 (len(items), K) the row of ``logits (M, V)`` for each item's j-th logit (shorter items repeat
    their last), context tokens read by attention).
    """
    by_t: dict[int, list[int]] = {}
    for i, it in enumerate(items):
        by_t.setdefault(len(it.token_ids), []).append(i)
    ids, pos, slots_all, groups = [], [], [], []
    row_of = [0] * len(items)
    context = 0
    row = 0
    for T in sorted(by_t):  # 1-token rows (decodes) first, as the scheduler orders them
        members = by_t[T]
        g_items = [items[i] for i in members]
        g, positions = _group(g_items, T, row, ar)
        for i in members:
            row_of[i] = row
            row += T
        for it in g_items:
            ids.extend(it.token_ids)
        pos.append(positions.reshape(-1))
        if scratch_slot is not None:
            context += sum(it.start + T for it in g_items)
            slots_all.append(_place_in_cache(g, g_items, positions, block_size, ar, scratch_slot, device, mirror_of))
        groups.append(g)
    logit_rows, pick = _logit_rows(items, row_of)
    positions = pos[0] if len(pos) == 1 else torch.cat(pos)
    slot_mapping = None if scratch_slot is None else (slots_all[0] if len(slots_all) == 1 else torch.cat(slots_all))
    batch = RaggedBatch(positions=positions.to(device),
                        slot_mapping=None if slot_mapping is None else slot_mapping.to(device), groups=groups)
    return (torch.tensor(ids, dtype=torch.long, device=device), batch,
            torch.tensor(logit_rows, dtype=torch.long, device=device), torch.tensor(pick, dtype=torch.long), context)


def _group(g_items: list, T: int, start: int, ar: torch.Tensor) -> tuple[AttnGroup, torch.Tensor]:
    """The attention group of ``g_items`` (each feeding T tokens) from flat row ``start``, and its positions
    int64 (B, T) on the CPU."""
    B = len(g_items)
    L = max(it.start + T for it in g_items)
    positions = torch.stack([ar[it.start:it.start + T] for it in g_items]) if B > 1 \
        else ar[g_items[0].start:g_items[0].start + T][None]  # (B, T)
    return AttnGroup(start=start, B=B, T=T, L=L), positions


def _place_in_cache(g: AttnGroup, g_items: list, positions: torch.Tensor, block_size: int, ar: torch.Tensor,
                    scratch_slot: int, device: torch.device, mirror_of) -> torch.Tensor:
    """Where group ``g`` reads and writes the KV cache: sets its mask (unless every query sees every key), its
    context (one run of the pool read in place, ``context_start``, or the slots ``context_slots`` (B, L), past a
    request's end the scratch slot) and, for 1-token rows, the decode mirror (``mirror_of``). positions: int64
    (B, T). Returns the slots its B·T new tokens' K and V are written to, int64 (B·T,) on the CPU."""
    B, T, L = g.B, g.T, g.L
    ends = [it.start + T for it in g_items]
    if not (T == 1 and all(e == L for e in ends)):  # unless every query sees all L keys
        g.attn_mask = (ar[None, None, :L] <= positions[:, :, None])[:, None].to(device)  # (B, 1, T, L)
    run = g_items[0].table.run_start(L, block_size) if B == 1 else None
    if run is not None:
        g.context_start = run
        return positions.reshape(-1) + run
    nb = -(-L // block_size)
    tables = [it.table.blocks[:nb] + [0] * (nb - len(it.table.blocks[:nb])) for it in g_items]
    slots = (torch.tensor(tables, dtype=torch.long)[:, :, None] * block_size
             + ar[:block_size]).view(B, nb * block_size)[:, :L]
    ends_t = torch.tensor(ends)
    g.context_slots = slots.masked_fill(ar[None, :L] >= ends_t[:, None], scratch_slot)  # (B, L)
    written = slots.gather(1, positions).reshape(-1)
    if T == 1 and mirror_of is not None:
        g.mirror = mirror_of([it.table for it in g_items], [it.start for it in g_items], g.context_slots)
    g.context_slots = g.context_slots.to(device)
    return written


def _logit_rows(items: list, row_of: list[int]) -> tuple[list[int], list[list[int]]]:
    """The flat rows whose logits are computed (M of them: each item's last n_logits), and pick (len(items), K):
    the j-th logit of each item among those M rows (shorter items repeat their last). row_of: each item's first
    flat row."""
    logit_rows, pick = [], []
    K = max(it.n_logits for it in items)
    for i, it in enumerate(items):
        n = len(it.token_ids)
        first = len(logit_rows)
        logit_rows.extend(range(row_of[i] + n - it.n_logits, row_of[i] + n))
        pick.append([first + min(j, it.n_logits - 1) for j in range(K)])
    return logit_rows, pick
