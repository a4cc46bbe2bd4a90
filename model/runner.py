"""The model runner: pack one forward pass's inputs, run the model, time the pass in parts.

As nano-vllm's ``ModelRunner``: the engine decides *what* runs (the scheduler's items, sampling, reports); the
runner decides *how*: it packs the items of a pass into tensors (ragged, ``model/ragged.py``, or padded (B, T)
for the sharded runner and readable attention), keeps the decode mirror of batched decoding
(``model/kv_cache.py``), runs the forward of the target (locally, or on a sharded runner, ``model/parallel/``)
or of the draft model, and measures it: the wall time of the pass, per layer when asked, and the weight-reading
part (``model/timing.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from model import ragged as ragged_pass
from model.gpt2 import GPT2, AttentionBatch
from model.kv_cache import BlockTable, DecodeMirror, PagedKVCache
from model.timing import read_timer


@dataclass
class PassItem:
    """One row of a forward pass: feed ``token_ids`` at positions ``start``.. of the sequence whose KV blocks are
    ``table``, and return logits for the last ``n_logits`` of them."""

    token_ids: list[int]
    start: int
    table: BlockTable
    n_logits: int = 1



class ModelRunner:
    """Packs and runs the forward passes of one engine.

    model: the target (prepared for decoding or not); cache: its paged KV cache, or None without one.
    block_size: tokens per KV block. n_positions: the context window. ragged: pack passes of unequal rows flat.
    layer_timing: time every layer of the target's passes. ``sharded``: a sharded runner that runs the target's
    passes when set (``Engine.set_runner``); ``last_workers``: per-worker timings of its last pass; ``last_fused``:
    the target's last local pass ran the flat fused pass (``GPT2.takes_fused_path``).
    """

    def __init__(self, model: GPT2, cache: PagedKVCache | None, *, block_size: int, n_positions: int,
                 ragged: bool = True, layer_timing: bool = False):
        self.model, self.cache = model, cache
        param = next(model.parameters())
        self.device = param.device
        self.block_size, self.n_positions = block_size, n_positions
        self.ragged, self.layer_timing = ragged, layer_timing
        self.sharded = None
        self.last_workers: list[dict] = []
        self.last_fused = False  # the target's last local pass ran FlatForward (model/stages.py's fused stages)
        self._mirror: DecodeMirror | None = None  # contiguous K/V of the rows decoding together (batch > 1)
        self._ar: torch.Tensor | None = None

    def drop_mirror(self) -> None:
        """Forget the decode mirror (the K/V it copies are gone or stale)."""
        self._mirror = None

    def pack(self, items: list[PassItem], cache: PagedKVCache | None, model: GPT2, mirror: bool = False
             ) -> tuple[torch.Tensor, object, torch.Tensor, int, torch.Tensor | None, int]:
        """Inputs for one pass over ``items``: ragged when the items feed different numbers of tokens, unless ragged
        passes are off, or the pass goes to the sharded runner, or the model keeps readable attention weights.
        Items that all feed T tokens (a decode step, a lone prefill, a verify pass with equal guesses) are packed
        (B, T): no padding there, the same rows, and ~0.02-0.05 ms less packing per step than the flat packing
        (measured, docs/benchmarks.md "Reading beside writing"). Returns (input_ids, batch, logit_index, context
        tokens read, pick, rows computed): pick int64 (B, K) maps the ragged pass's (M, V) logits to (B, K, V)
        (None when padded: the logits are (B, K, V) already); rows computed: N real tokens, or B × T padded."""
        target = model is self.model
        uniform = cache is not None and len({len(it.token_ids) for it in items}) == 1
        if uniform or not self.ragged or (target and self.sharded is not None) or model.h[0].attn.readable:
            input_ids, batch, logit_index, context = self.pack_padded(items, cache, mirror=mirror)
            return input_ids, batch, logit_index, context, None, input_ids.numel()
        used = []

        def mirror_of(tables, starts, context_slots):
            if self._mirror is None:
                self._mirror = DecodeMirror(cache, self.n_positions)
            out = self._mirror.prepare(tables, starts, context_slots)
            if out is None:
                self._mirror = None  # over its memory budget: gather as before
            used.append(out is not None)
            return out

        n = max(max(it.start + len(it.token_ids) for it in items), self.block_size)
        input_ids, batch, logit_index, pick, context = ragged_pass.pack(
            items, self.block_size, self._arange(n), None if cache is None else cache.scratch_slot, self.device,
            mirror_of if mirror and cache is self.cache else None)
        if cache is self.cache and not any(used):
            self._mirror = None  # this pass wrote the pool without the mirror: it is stale
        return input_ids, batch, logit_index, context, pick, batch.rows

    def pack_padded(self, items: list[PassItem], cache: PagedKVCache | None, mirror: bool = False
              ) -> tuple[torch.Tensor, AttentionBatch, torch.Tensor, int]:
        """Padded inputs for one forward pass over ``items``.

        Returns (input_ids int64 (B, T), the AttentionBatch, logit_index int64 (B, K), context tokens read).
        Row b feeds items[b].token_ids at positions start.. and asks for logits at its last n_logits positions
        (K = the largest n_logits; shorter rows repeat their last position).
        mirror: a plain decode step of the target (``Engine._pass``) may read the context from the decode mirror
        (``DecodeMirror``) instead of gathering it from the pool every layer; any other pass of the target's cache
        drops the mirror.
        """
        lens = [len(it.token_ids) for it in items]
        ends = [it.start + n for it, n in zip(items, lens)]
        T, L = max(lens), max(ends)
        dev = self.device
        ar = self._arange(max(L, T, self.block_size))
        input_ids, positions, logit_index, valid_q = _padded_rows(items, lens, T, ar)
        mask = ar[None, None, :L] <= positions[:, :, None]  # (B, T, L): causal, and within the row's length
        if valid_q is not None:
            mask &= valid_q[:, :, None]
            mask[:, :, 0] |= ~valid_q  # pad rows look at key 0 so softmax stays finite; their output is dropped
        sees_all = T == 1 and all(e == L for e in ends)  # one new token per row, every row has all L keys
        if cache is None:
            batch = AttentionBatch(positions=positions.to(dev), attn_mask=mask[:, None].to(dev), sees_all=sees_all)
            return input_ids.to(dev), batch, logit_index.to(dev), 0
        context_start = items[0].table.run_start(L, self.block_size) if len(items) == 1 else None  # one run: in place
        if context_start is not None:
            context_slots = ar[:L][None] + context_start  # (1, L)
            slot_mapping = positions + context_start  # (1, T)
        else:
            context_slots, slot_mapping = self._slots(items, ends, positions, valid_q, cache.scratch_slot, ar)
        batch = AttentionBatch(positions=positions.to(dev), attn_mask=mask[:, None].to(dev),
                               slot_mapping=slot_mapping.to(dev), context_slots=context_slots.to(dev),
                               sees_all=sees_all, context_start=context_start)
        if cache is self.cache:
            self._attach_mirror(batch, items, cache, mirror and T == 1 and context_start is None)
        return input_ids.to(dev), batch, logit_index.to(dev), sum(ends)

    def _slots(self, items: list[PassItem], ends: list[int], positions: torch.Tensor, valid_q: torch.Tensor | None,
               scratch: int, ar: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The cache slots of a padded pass gathered from the block tables: (context_slots int64 (B, L), past a
        row's end the scratch slot; slot_mapping int64 (B, T), where each new token's K and V are written, pad
        tokens to the scratch slot). ends: each row's context length; positions: int64 (B, T)."""
        bs, B, L = self.block_size, len(items), max(ends)
        nb = -(-L // bs)
        tables = [it.table.blocks[:nb] + [0] * (nb - len(it.table.blocks[:nb])) for it in items]
        slots = (torch.tensor(tables, dtype=torch.long)[:, :, None] * bs + ar[:bs]).view(B, nb * bs)[:, :L]
        ends_t = positions[:, 0] + 1 if valid_q is None else torch.tensor(ends)
        context_slots = slots.masked_fill(ar[None, :L] >= ends_t[:, None], scratch)  # (B, L)
        slot_mapping = slots.gather(1, positions)  # (B, T)
        if valid_q is not None:
            slot_mapping.masked_fill_(~valid_q, scratch)
        return context_slots, slot_mapping

    def _attach_mirror(self, batch: AttentionBatch, items: list[PassItem], cache: PagedKVCache, wanted: bool) -> None:
        """A pass of the target's cache: a plain decode step that gathers its context (``wanted``) reads it from
        the decode mirror (``batch.mirror``); any other pass drops the mirror, stale once the pass writes."""
        if not (wanted and self.sharded is None):
            self._mirror = None
            return
        if self._mirror is None:
            self._mirror = DecodeMirror(cache, self.n_positions)
        batch.mirror = self._mirror.prepare([it.table for it in items], [it.start for it in items],
                                            batch.context_slots)
        if batch.mirror is None:
            self._mirror = None  # over its memory budget: gather as before

    def _arange(self, n: int) -> torch.Tensor:
        """0, 1, ..., at least n - 1 (int64, CPU), grown by doubling and kept, so packing a step slices it."""
        ar = self._ar
        if ar is None or ar.numel() < n:
            ar = self._ar = torch.arange(max(n, 2 * (0 if ar is None else ar.numel()), 64))
        return ar

    def sync(self) -> None:
        """Wait for the device (CUDA); nothing on the CPU, where ops run to their end."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def forward(self, input_ids, batch, logit_index, model: GPT2 | None = None,
                      cache: PagedKVCache | None = None) -> tuple[torch.Tensor, float, list[float], float]:
        """One forward pass, timed in parts. Returns (logits (B, K, V), wall ms, per-layer ms or [], weight-read
        ms: the summed time of the pass's weight GEMVs/GEMMs, LM head and embedding gathers, ``model/timing.py``).
        On the sharded runner the weight-read ms is rank 0's own (its workers time theirs, ``workers``)."""
        if model is None and self.sharded is not None:
            t0 = time.perf_counter_ns()
            logits, self.last_workers = self.sharded.forward(input_ids, batch, logit_index)
            ms = (time.perf_counter_ns() - t0) / 1e6
            read = self.last_workers[0].get("weight_read_ms", 0.0) if self.last_workers else 0.0
            return logits, ms, [], read
        if model is None:
            model, cache = self.model, self.cache
        layer_ms: list[float] | None = [] if self.layer_timing and model is self.model else None
        timer = read_timer(self.device)
        self.sync()
        t0 = time.perf_counter_ns()
        with torch.inference_mode():
            if model is self.model:  # which code the pass runs, for the report's stages (model/stages.py)
                self.last_fused = model.takes_fused_path(batch, cache)
            logits = model(input_ids, batch=batch, kv_cache=cache, layer_ms=layer_ms, logit_index=logit_index,
                           read_timer=timer)
        self.sync()
        ms = (time.perf_counter_ns() - t0) / 1e6
        return logits, ms, layer_ms or [], timer.ms()


def _padded_rows(items: list[PassItem], lens: list[int], T: int, ar: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The padded rows of ``items`` (lens: their token counts, T the longest): (input_ids int64 (B, T), positions
    int64 (B, T), logit_index int64 (B, K), valid_q bool (B, T) True at real tokens, or None when T = 1)."""
    B, K = len(items), max(it.n_logits for it in items)
    if T == 1:  # a decode step: one token per row, logits at it (K = 1)
        input_ids = torch.tensor([it.token_ids for it in items], dtype=torch.long)  # (B, 1)
        positions = torch.tensor([[it.start] for it in items], dtype=torch.long)  # (B, 1)
        return input_ids, positions, torch.zeros((B, K), dtype=torch.long), None
    input_ids = torch.tensor([list(it.token_ids) + [0] * (T - n) for it, n in zip(items, lens)],
                             dtype=torch.long)  # (B, T)
    positions = torch.tensor([list(range(it.start, it.start + n)) + [0] * (T - n)
                              for it, n in zip(items, lens)], dtype=torch.long)  # (B, T)
    logit_index = torch.tensor([[min(n - it.n_logits + j, n - 1) for j in range(K)]
                                for it, n in zip(items, lens)], dtype=torch.long)  # (B, K)
    valid_q = ar[None, :T] < torch.tensor(lens)[:, None]  # (B, T)
    return input_ids, positions, logit_index, valid_q
