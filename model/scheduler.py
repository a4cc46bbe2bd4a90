"""Which tokens go into the next forward pass: continuous or static batching, with chunked prefill.

Continuous batching (Yu et al. 2022, "Orca: A Distributed Serving System for Transformer-Based Generative
Models"): requests join the running batch at any step and leave the moment they finish. Static batching: a
batch is formed, and nobody joins until every member has finished ("everyone waits for the longest").
Chunked prefill (Agrawal et al. 2023, "SARATHI"): a long prompt is fed in pieces so that one step never feeds
more than ``max_step_tokens`` tokens, and decodes keep flowing beside it.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

import torch

from model.kv_cache import BlockManager, BlockTable
from model.sampling import SamplingParams


class Status(Enum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(eq=False)  # a sequence is itself: `seq in running` compares identity, not every field (O(fields))
class Sequence:
    """One request's tokens and progress.

    token_ids: prompt followed by generated tokens. num_computed: how many of them have K/V in the cache
    (with the KV cache off, how many were fed in the last pass). Positions are 0-based.
    """

    request_id: str
    token_ids: list[int]
    num_prompt_tokens: int
    max_new_tokens: int
    sampling: SamplingParams
    generator: torch.Generator
    arrival_ns: int = field(default_factory=time.perf_counter_ns)
    status: Status = Status.WAITING
    num_computed: int = 0
    table: BlockTable = field(default_factory=BlockTable)
    finish_reason: str | None = None
    first_token_ns: int | None = None
    token_times_ns: list[int] = field(default_factory=list)
    prefix_hit_tokens: int = 0
    draft_computed: int = 0  # speculative decoding: tokens whose K/V the draft model holds
    ngram_index: object | None = None  # speculative decoding with prompt lookup: a model.ngram.NgramIndex
    notice: str | None = None
    prompt: str = ""

    @property
    def num_generated(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def in_prefill(self) -> bool:
        return self.num_computed < self.num_prompt_tokens

    @property
    def generated_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]


@dataclass
class ScheduledSeq:
    seq: Sequence
    start: int  # first position fed in this pass
    count: int  # tokens fed in this pass

    @property
    def samples(self) -> bool:
        """True if this pass reaches the sequence's last known token, so a next token is drawn."""
        return self.start + self.count == len(self.seq.token_ids)


@dataclass
class Schedule:
    items: list[ScheduledSeq]
    prefix_hit_tokens: int = 0  # for requests admitted in this step
    preempted: list[str] = field(default_factory=list)

    @property
    def phase(self) -> str:
        prefill = any(it.seq.in_prefill for it in self.items)
        decode = any(not it.seq.in_prefill for it in self.items)
        return "mixed" if prefill and decode else ("prefill" if prefill else "decode")


class Scheduler:
    """Keeps the waiting queue and the running batch, and picks each step's work.

    max_batch: most sequences in one pass (may change at any time; a lower value lets the batch shrink as
    requests finish, nobody is evicted). max_step_tokens: the chunked-prefill token budget of one pass.
    """

    def __init__(self, blocks: BlockManager | None, max_batch: int = 8, max_step_tokens: int = 512,
                 batching: str = "continuous"):
        if batching not in ("continuous", "static"):
            raise ValueError(f"batching must be 'continuous' or 'static', got {batching!r}")
        self.blocks = blocks
        self.max_batch = max_batch
        self.max_step_tokens = max_step_tokens
        self.batching = batching
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []

    def add(self, seq: Sequence) -> None:
        self.waiting.append(seq)

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def _admit(self) -> int:
        """Move waiting requests into the batch while seats and KV blocks allow. Returns prefix-hit tokens."""
        if self.batching == "static" and self.running:
            return 0
        hits = 0
        while self.waiting and len(self.running) < self.max_batch:
            seq = self.waiting[0]
            if self.blocks is not None:
                table = self.blocks.allocate_prompt(seq.token_ids)
                if table is None:
                    break  # the pool is full; try again when someone leaves
                seq.table = table
                seq.num_computed = table.prefix_hit_tokens
                seq.prefix_hit_tokens = table.prefix_hit_tokens
                hits += table.prefix_hit_tokens
            self.waiting.popleft()
            seq.status = Status.RUNNING
            self.running.append(seq)
        return hits

    def _preempt_last(self) -> Sequence:
        """Free the most recently admitted sequence's blocks and put it back at the queue's head (recompute)."""
        victim = self.running.pop()
        if self.blocks is not None:
            self.blocks.free_table(victim.table)
        victim.status, victim.num_computed, victim.draft_computed = Status.WAITING, 0, 0
        self.waiting.appendleft(victim)
        return victim

    def schedule(self, kv_cache: bool = True) -> Schedule:
        """The next pass. With ``kv_cache`` False every running sequence is fed whole (recompute baseline)."""
        hits = self._admit()
        items: list[ScheduledSeq] = []
        preempted: list[str] = []
        if not kv_cache:
            return Schedule([ScheduledSeq(s, 0, len(s.token_ids)) for s in self.running], hits)
        budget = self.max_step_tokens
        # Decodes first (one token each), then prefill chunks in arrival order.
        for seq in sorted(self.running, key=lambda s: len(s.token_ids) - s.num_computed > 1):
            if seq not in self.running:
                continue  # preempted below while making room
            remaining = len(seq.token_ids) - seq.num_computed  # 1 for a decode, more for a (re)prefill
            count = min(remaining, budget)
            if count <= 0:
                continue
            while self.blocks is not None and not self.blocks.ensure_capacity(seq.table, seq.num_computed + count):
                victim = self._preempt_last()
                preempted.append(victim.request_id)
                items = [it for it in items if it.seq is not victim]
                if victim is seq:
                    break
            if seq.status is not Status.RUNNING:
                continue
            items.append(ScheduledSeq(seq, seq.num_computed, count))
            budget -= count
            if budget <= 0:
                break
        return Schedule(items, hits, preempted)

    def finish(self, seq: Sequence, reason: str) -> None:
        seq.status, seq.finish_reason = Status.FINISHED, reason
        if seq in self.running:
            self.running.remove(seq)
        if self.blocks is not None:
            self.blocks.free_table(seq.table)

    def abort_all(self) -> list[Sequence]:
        gone = list(self.running) + list(self.waiting)
        for seq in list(self.running):
            self.finish(seq, "abort")
        for seq in self.waiting:
            seq.status, seq.finish_reason = Status.FINISHED, "abort"
        self.waiting.clear()
        return gone
