"""Paged KV cache with a block table per sequence and automatic prefix caching.

The K and V of every token of every layer live in a pool of fixed-size blocks (PagedAttention, Kwon et al. 2023,
"Efficient Memory Management for Large Language Model Serving with PagedAttention"). A sequence owns a *block
table*: the list of block ids that hold its tokens in order, so token ``p`` sits in slot
``block_table[p // block_size] * block_size + p % block_size``.

Full blocks are also keyed by a hash chained over their tokens and every token before them, as vLLM's automatic
prefix caching does: a new prompt that starts with the same tokens finds the same hashes and shares those blocks
(reference-counted) instead of computing their K and V again. Freed blocks keep their hash until they are
reused, so a later request can still hit them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import torch


@dataclass
class Block:
    block_id: int
    ref_count: int = 0
    hash: int | None = None  # set once the block is full and its tokens are final
    token_ids: tuple[int, ...] = ()


def chain_hash(parent: int | None, token_ids: tuple[int, ...]) -> int:
    """Hash of a full block: depends on its tokens and, through ``parent``, on every token before them."""
    return hash((parent, token_ids))


@dataclass
class BlockTable:
    """The blocks of one sequence, in token order, and how many of its first tokens came from the prefix cache."""

    blocks: list[int] = field(default_factory=list)
    prefix_hit_tokens: int = 0

    def run_start(self, num_tokens: int, block_size: int) -> int | None:
        """The pool slot of position 0 when the blocks holding the first ``num_tokens`` tokens are consecutive (one
        run: a pass can read the context in place), else None (also without blocks)."""
        blocks = self.blocks[:-(-num_tokens // block_size)]
        if not blocks or blocks != list(range(blocks[0], blocks[0] + len(blocks))):
            return None
        return blocks[0] * block_size


class BlockManager:
    """Allocates blocks to sequences, shares cached prefix blocks, and recycles freed ones (least recent first).

    Raises ``MemoryError`` from ``allocate``/``append`` only if called without checking ``can_allocate``.
    """

    def __init__(self, num_blocks: int, block_size: int, prefix_caching: bool = True):
        if num_blocks < 1 or block_size < 1:
            raise ValueError("num_blocks and block_size must be positive")
        self.block_size = block_size
        self.prefix_caching = prefix_caching
        self.blocks = [Block(i) for i in range(num_blocks)]
        self.free: OrderedDict[int, None] = OrderedDict((i, None) for i in range(num_blocks))  # LRU order
        self.hash_to_block: dict[int, int] = {}

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def blocks_in_use(self) -> int:
        return self.num_blocks - len(self.free)

    def blocks_needed(self, num_tokens: int) -> int:
        return -(-num_tokens // self.block_size)

    def can_allocate(self, num_new_blocks: int) -> bool:
        return num_new_blocks <= len(self.free)

    def _take_free(self) -> int:
        if not self.free:
            raise MemoryError("KV cache is out of blocks")
        block_id, _ = self.free.popitem(last=False)
        block = self.blocks[block_id]
        if block.hash is not None and self.hash_to_block.get(block.hash) == block_id:
            del self.hash_to_block[block.hash]  # its old contents are about to be overwritten
        block.hash, block.token_ids, block.ref_count = None, (), 1
        return block_id

    def match_prefix(self, token_ids: list[int]) -> list[int]:
        """Cached blocks that hold a prefix of ``token_ids``. The block holding the last token is never matched,
        so at least one token is always computed (its logits are needed)."""
        if not self.prefix_caching:
            return []
        hits, parent = [], None
        bs = self.block_size
        for start in range(0, len(token_ids) - 1 - bs + 1, bs):  # whole blocks strictly before the last token
            chunk = tuple(token_ids[start:start + bs])
            h = chain_hash(parent, chunk)
            block_id = self.hash_to_block.get(h)
            if block_id is None or self.blocks[block_id].token_ids != chunk:
                break
            hits.append(block_id)
            parent = h
        return hits

    def allocate_prompt(self, token_ids: list[int]) -> BlockTable | None:
        """Block table for a new sequence's prompt, reusing cached prefix blocks. None if the pool is too full."""
        hits = self.match_prefix(token_ids)
        new_needed = self.blocks_needed(len(token_ids)) - len(hits)
        revived = sum(1 for b in hits if self.blocks[b].ref_count == 0)  # cached but free: leave the free list
        if not self.can_allocate(new_needed + revived):
            return None
        for block_id in hits:
            block = self.blocks[block_id]
            if block.ref_count == 0:
                del self.free[block_id]
            block.ref_count += 1
        table = BlockTable(blocks=list(hits), prefix_hit_tokens=len(hits) * self.block_size)
        table.blocks += [self._take_free() for _ in range(new_needed)]
        return table

    def ensure_capacity(self, table: BlockTable, num_tokens: int) -> bool:
        """Grow ``table`` to hold ``num_tokens`` tokens. False (and no change) if the pool is too full."""
        needed = self.blocks_needed(num_tokens) - len(table.blocks)
        if needed <= 0:
            return True
        if not self.can_allocate(needed):
            return False
        table.blocks += [self._take_free() for _ in range(needed)]
        return True

    def forget_hashes(self) -> None:
        """Drop every prefix-cache entry (the K/V they point to are no longer valid)."""
        self.hash_to_block.clear()
        for block in self.blocks:
            block.hash, block.token_ids = None, ()

    def truncate(self, table: BlockTable, num_tokens: int) -> None:
        """Give back the blocks past the first ``num_tokens`` tokens (speculative guesses that were rejected).

        They go to the front of the free list, so the sequence's next block is the one it just gave back: they
        hold no prefix worth keeping (a guess block is never full of verified tokens), and a lone request's blocks
        stay consecutive, which lets its passes read the context in place (``AttentionBatch.context_start``)."""
        keep = self.blocks_needed(num_tokens)
        surplus = table.blocks[keep:]
        del table.blocks[keep:]
        for block_id in reversed(surplus):
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free[block_id] = None
                self.free.move_to_end(block_id, last=False)  # the first surplus block ends up first

    def register_full_blocks(self, table: BlockTable, token_ids: list[int], num_computed: int) -> None:
        """Give every block whose tokens are all computed its chained hash, so later prompts can share it."""
        if not self.prefix_caching:
            return
        bs, parent = self.block_size, None
        for i in range(num_computed // bs):
            block = self.blocks[table.blocks[i]]
            chunk = tuple(token_ids[i * bs:(i + 1) * bs])
            if block.hash is None:
                block.hash, block.token_ids = chain_hash(parent, chunk), chunk
                self.hash_to_block.setdefault(block.hash, block.block_id)
            parent = block.hash

    def free_table(self, table: BlockTable) -> None:
        """Release a finished or preempted sequence's blocks; hashed ones stay findable until recycled."""
        for block_id in reversed(table.blocks):  # the tail goes back first, so the shared head lives longest
            block = self.blocks[block_id]
            block.ref_count -= 1
            if block.ref_count == 0:
                self.free[block_id] = None
        table.blocks = []

    def slot(self, table: BlockTable, position: int) -> int:
        return table.blocks[position // self.block_size] * self.block_size + position % self.block_size


class PagedKVCache:
    """The KV tensors: per layer, ``num_blocks * block_size`` slots of (n_head, head_dim), plus one scratch slot.

    k, v: float tensors of shape (n_layer, num_blocks * block_size + 1, n_head, head_dim). The last slot
    (``scratch_slot``) absorbs writes from padding tokens and is read by padding keys, which the mask hides.
    """

    def __init__(self, n_layer: int, n_head: int, head_dim: int, num_blocks: int, block_size: int = 16,
                 device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32):
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.scratch_slot = num_blocks * block_size
        shape = (n_layer, num_blocks * block_size + 1, n_head, head_dim)
        # Uninitialised: a slot is only read after it was written, except the scratch slot, zeroed here (its K/V
        # meet masked-out queries, and 0 × NaN would still be NaN). Zeroing the whole pool took ~0.1 s per engine.
        self.k = torch.empty(shape, device=device, dtype=dtype)
        self.v = torch.empty(shape, device=device, dtype=dtype)
        self.k[:, self.scratch_slot].zero_()
        self.v[:, self.scratch_slot].zero_()

    @staticmethod
    def bytes_per_token(n_layer: int, n_head: int, head_dim: int, dtype_bytes: int) -> int:
        """2 (K and V) × layers × heads × head_dim × bytes: the KV-size formula for one token of one sequence."""
        return 2 * n_layer * n_head * head_dim * dtype_bytes

    @property
    def bytes_per_block(self) -> int:
        _, _, nh, hs = self.k.shape
        return self.bytes_per_token(self.k.shape[0], nh, hs, self.k.element_size()) * self.block_size

    @property
    def nbytes(self) -> int:
        """Bytes of the K and V tensors the cache holds (the whole pool and the scratch slot)."""
        return self.k.numel() * self.k.element_size() + self.v.numel() * self.v.element_size()

    def write(self, layer: int, slot_mapping: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        """Store new K and V. slot_mapping: int64 (B, T), or an int: the first of T consecutive slots (a lone
        sequence, B = 1, whose slots are one run: written as a slice); k, v: (B, T, nh, hs)."""
        if isinstance(slot_mapping, int):
            self.k[layer, slot_mapping:slot_mapping + k.size(1)] = k[0]
            self.v[layer, slot_mapping:slot_mapping + v.size(1)] = v[0]
            return
        slots = slot_mapping.reshape(-1)
        self.k[layer].index_copy_(0, slots, k.reshape(slots.numel(), *k.shape[2:]))
        self.v[layer].index_copy_(0, slots, v.reshape(slots.numel(), *v.shape[2:]))

    def gather(self, layer: int, context_slots: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Read the context. context_slots: int64 (B, L). Returns k, v of shape (B, L, nh, hs)."""
        B, L = context_slots.shape
        flat = context_slots.reshape(-1)
        k = self.k[layer].index_select(0, flat)  # (B * L, nh, hs); index_select beats advanced indexing on CPU
        v = self.v[layer].index_select(0, flat)
        return k.view(B, L, *k.shape[1:]), v.view(B, L, *v.shape[1:])

    def view(self, layer: int, start: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The K and V of slots start .. start + length - 1 without copying: 2 × (1, length, nh, hs) views.

        For one sequence whose blocks are consecutive in the pool (the usual case for a lone request), this is
        what ``gather`` returns, minus a copy of the whole context per layer per step.
        """
        return self.k[layer, start:start + length][None], self.v[layer, start:start + length][None]


class DecodeMirror:
    """Contiguous copies of the K and V of the sequences that decode together, so that attention reads each
    row's context as one run instead of gathering it from the pool in every layer of every step.

    k, v: (n_layer, B, n_head, capacity, head_dim), row b holding positions 0 .. of the pass's sequence b, each
    head's keys one contiguous run (attention reads them 1.0–3× faster than the pool's (L, n_head, head_dim)
    layout, the most at long contexts: docs/benchmarks-engine.md). A
    decode pass writes its new K/V both to the pool (which stays the source of truth) and here. The mirror is
    valid only while the same sequences decode in the same order, each exactly one token further than at the
    last pass; otherwise ``prepare`` rebuilds it with one gather per layer, which is what every step cost before.
    """

    BUDGET_BYTES = 64 * 2**20  # larger batches or contexts gather from the pool as before

    def __init__(self, cache: PagedKVCache, max_len: int | None = None):
        self.cache = cache
        self.max_len = max_len  # the model's context window: no row grows past it
        self.k: torch.Tensor | None = None
        self.v: torch.Tensor | None = None
        self.tables: list[BlockTable] = []  # the rows' block tables, held (compared by identity)
        self.filled: list[int] = []  # positions of each row written

    def prepare(self, tables: list[BlockTable], starts: list[int], context_slots: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """For a decode pass feeding position ``starts[b]`` of the sequence whose blocks are ``tables[b]``:
        (k, v, write_index), where write_index int64 (B · n_head,) is the row of each new token's head in
        ``k[layer].view(-1, hs)`` and ``k[layer, :, :, :L]`` is then the pass's context (L = context_slots.size(1));
        None if the mirror would exceed ``BUDGET_BYTES``. context_slots: int64 (B, L), the pass's slots (rebuilds
        read them)."""
        B, L = context_slots.shape
        same = (len(tables) == len(self.tables) and all(a is b for a, b in zip(tables, self.tables))
                and starts == self.filled and self.k is not None and L <= self.k.size(3))
        if not same:
            n_layer, _, nh, hs = self.cache.k.shape
            n_positions_cap = max(L, min(2 * L, L + 256, self.max_len or L + 256))  # room to grow before a rebuild
            if 2 * n_layer * B * n_positions_cap * nh * hs * self.cache.k.element_size() > self.BUDGET_BYTES:
                return None
            # zeros, not empty: a shorter row's keys past its end are masked, but 0 × NaN in softmax · V is NaN
            self.k = torch.zeros(n_layer, B, nh, n_positions_cap, hs, dtype=self.cache.k.dtype,
                                 device=self.cache.k.device)
            self.v = torch.zeros_like(self.k)
            for layer in range(n_layer):
                k, v = self.cache.gather(layer, context_slots)  # (B, L, nh, hs)
                self.k[layer, :, :, :L] = k.transpose(1, 2)
                self.v[layer, :, :, :L] = v.transpose(1, 2)
            self.tables = list(tables)
        self.filled = [s + 1 for s in starts]
        nh, cap = self.k.size(2), self.k.size(3)
        # row (b, h) of the flattened (B · nh · cap, hs) view starts at (b · nh + h) · cap; the token at start_b
        write_index = (torch.arange(B * nh) * cap).view(B, nh) + torch.tensor(starts, dtype=torch.long)[:, None]
        return self.k, self.v, write_index.view(-1)
