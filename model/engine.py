"""The inference engine: requests in, one ``StepReport`` per forward pass out.

Shape of one step (``Engine.step``):
    schedule   pick the sequences and token counts of this pass (``model/scheduler.py``)
    pack       build the flat (N,) tokens of every request, positions, KV slots and attention groups (ragged:
               model/ragged.py), or, for the sharded runner and readable attention, padded (B, T) inputs
    forward    one real pass of the model over those tokens, timed with ``perf_counter_ns``
    sample     draw the next token of every sequence that reached its last known token
    report     a plain-data ``StepReport``: phase, batch, tokens, measured ms, bytes read, blocks in use

With the KV cache off (``kv_cache=False``) every step recomputes every sequence from its first token: the
"no cheat sheet" baseline of the tour.
"""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass

import torch

from model.errors import RequestError
from model.gpt2 import GPT2, AttentionBatch
from model import ragged as ragged_pass
from model.kv_cache import BlockManager, BlockTable, DecodeMirror, PagedKVCache
from model.loops import LoopWatch
from model.ngram import NgramIndex, point_mass
from model.report import StepReport, TokenEvent
from model.sampling import SamplingParams, distribution, make_generator, sample, top_k_probs
from model.scheduler import Schedule, Scheduler, Sequence, Status
from model.speculative import accept_greedy, accept_sampled
from model.tokenizer import StreamDecoder, Tokenizer

MAX_PROMPT_CHARS = 20_000  # longer typed text is cut before tokenizing, so a pasted book cannot stall a step
DEFAULT_KV_BUDGET_BYTES = 256 * 2**20
MAX_SEQS_IN_POOL = 64  # the batch slider and the benchmark go up to 64 sequences


def default_threads() -> int:
    """Intra-op threads for torch: all cores but one (the GUI keeps a core), at least 1."""
    return max(1, (os.cpu_count() or 2) - 1)


@dataclass
class PassItem:
    """One row of a forward pass: feed ``token_ids`` at positions ``start``.. of the sequence whose KV blocks are
    ``table``, and return logits for the last ``n_logits`` of them."""

    token_ids: list[int]
    start: int
    table: BlockTable
    n_logits: int = 1


@dataclass
class RequestResult:
    """What a finished request produced. Times in ms since the request was added."""

    request_id: str
    prompt: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    text: str
    finish_reason: str
    ttft_ms: float | None
    inter_token_ms: list[float]
    prefix_hit_tokens: int
    notice: str | None

    def to_dict(self) -> dict:
        return {
            "prompt": self.prompt, "prompt_token_ids": self.prompt_token_ids, "token_ids": self.token_ids,
            "text": self.text, "finish_reason": self.finish_reason, "ttft_ms": self.ttft_ms,
            "prefix_hit_tokens": self.prefix_hit_tokens, "notice": self.notice,
        }


class Engine:
    """Serves requests on one GPT-2 with a paged KV cache, prefix caching and continuous batching.

    model: a loaded ``GPT2`` (its device and dtype are used). block_size: tokens per KV block (16, as vLLM).
    kv_budget_bytes: memory for the block pool; the pool holds at least one full context window.
    max_batch: most sequences per pass (``set_max_batch`` changes it while running).
    max_step_tokens: chunked-prefill budget of one pass, in tokens.
    layer_timing: also time every layer (adds a small overhead, and a device sync per layer on CUDA).
    decode_layout: prepare the model for fast decoding (``GPT2.prepare_for_decode``: weight layout, the flat
    cached forward, oneDNN-packed weights for passes of 2+ rows); the bench turns it off on a separate copy to
    measure what it gains.
    ragged: run passes as one flat batch of real tokens (model/ragged.py); False packs padded (B, T) batches as
    before (kept to measure the difference and to test both; the sharded runner always gets padded batches).
    """

    def __init__(self, model: GPT2, tokenizer: Tokenizer, *, block_size: int = 16,
                 kv_budget_bytes: int = DEFAULT_KV_BUDGET_BYTES, max_batch: int = 8, max_step_tokens: int = 512,
                 batching: str = "continuous", kv_cache: bool = True, prefix_cache: bool = True,
                 layer_timing: bool = False, decode_layout: bool = True, ragged: bool = True):
        # weight layout for fast GEMVs (same results; GPT2.prepare_for_decode); off only to measure the difference
        self.model = model.prepare_for_decode() if decode_layout else model
        self.tokenizer = tokenizer
        tokenizer.token_bytes(0)  # build the byte table now, not inside the first request's time to first token
        self._labels: dict[int, str] = {}  # token id -> tokenizer.label(id): six labels per new token, each built once
        self.config = model.config
        param = next(model.parameters())
        self.device, self.dtype = param.device, param.dtype
        self.kv_cache_enabled = kv_cache
        self.layer_timing = layer_timing
        self.ragged = ragged
        self.weight_bytes = model.weight_bytes()
        cfg = self.config
        self.kv_bytes_per_token = PagedKVCache.bytes_per_token(cfg.n_layer, cfg.n_head, cfg.head_dim,
                                                               param.element_size())
        if max_step_tokens < 1:
            raise ValueError("max_step_tokens must be at least 1")
        self.block_size = block_size
        if kv_cache:
            window_blocks = -(-cfg.n_positions // block_size)
            # Enough for MAX_SEQS_IN_POOL full windows at most, however generous the budget, and one at least.
            budget_blocks = kv_budget_bytes // (self.kv_bytes_per_token * block_size)
            num_blocks = max(window_blocks, min(budget_blocks, MAX_SEQS_IN_POOL * window_blocks))
            self.blocks: BlockManager | None = BlockManager(num_blocks, block_size, prefix_caching=prefix_cache)
            self.cache: PagedKVCache | None = PagedKVCache(cfg.n_layer, cfg.n_head, cfg.head_dim, num_blocks,
                                                           block_size, self.device, self.dtype)
        else:
            self.blocks, self.cache = None, None
        self.scheduler = Scheduler(self.blocks, max_batch=max_batch, max_step_tokens=max_step_tokens,
                                   batching=batching)
        self.set_max_batch(max_batch)
        self._decoders: dict[str, StreamDecoder] = {}
        self._texts: dict[str, list[str]] = {}
        # stop a request whose answer writes one phrase three times in a row (model/loops.py): finish "loop"
        self.stop_loops = False
        self._loop_watch: dict[str, LoopWatch] = {}
        self.finished: dict[str, RequestResult] = {}
        self._ids = itertools.count()
        self._step = 0
        self.draft: GPT2 | None = None
        self.draft_cache: PagedKVCache | None = None
        self.draft_k = 0
        self.draft_kind = "model"  # who guesses: "model" (the draft model) or "ngram" (prompt lookup, model/ngram.py)
        self.spec_proposed = 0  # over the engine's life: draft guesses checked, and kept
        self.spec_accepted = 0
        self.runner = None  # a sharded runner (model/parallel/) runs the target's passes when set
        self.last_workers: list[dict] = []  # per-worker timings of the last sharded pass
        self._mirror: DecodeMirror | None = None  # contiguous K/V of the rows decoding together (batch > 1)
        self.record_logits = False  # tests: keep every sampled row of logits, per request
        self.logits: dict[str, list[torch.Tensor]] = {}

    # ---- requests -------------------------------------------------------------------------------------------

    def encode_prompt(self, prompt: str | list[int], max_new_tokens: int) -> tuple[list[int], str | None]:
        """Token ids for a prompt, cut to fit the context window, and a notice saying what was cut (or None).

        An empty prompt starts from the end-of-text token, as GPT-2 does for unconditional text.
        Raises RequestError if the prompt is empty and the tokenizer has no end-of-text token.
        """
        notices = []
        if isinstance(prompt, str):
            if len(prompt) > MAX_PROMPT_CHARS:
                notices.append(f"prompt cut to its last {MAX_PROMPT_CHARS:,} of {len(prompt):,} characters")
                prompt = prompt[-MAX_PROMPT_CHARS:]
            ids = self.tokenizer.encode(prompt)
        else:
            ids = [int(i) for i in prompt]
            bad = [i for i in ids if not 0 <= i < self.config.vocab_size]
            if bad:
                raise RequestError(f"token id {bad[0]} is outside the vocabulary (0..{self.config.vocab_size - 1})")
        if not ids:
            eos = self.tokenizer.eos_token_id
            if eos is None:
                raise RequestError("the prompt is empty and this tokenizer has no end-of-text token to start from")
            ids = [eos]
        window = self.config.n_positions
        if len(ids) >= window:
            keep = window - min(max_new_tokens, window // 2)
            notices.append(f"prompt cut from the left to its last {keep} of {len(ids)} tokens "
                           f"(the context window is {window})")
            ids = ids[-keep:]
        return ids, ("; ".join(notices) or None)

    def add_request(self, prompt: str | list[int], max_new_tokens: int = 64,
                    sampling: SamplingParams | None = None, request_id: str | None = None) -> str:
        """Queue a request; it joins the batch at the next step with a free seat. Returns its id.

        Raises RequestError for max_new_tokens < 1, a duplicate id, or a request that can never fit the KV cache.
        """
        if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
            raise RequestError(f"max_new_tokens must be a whole number >= 1, got {max_new_tokens!r}")
        sampling = sampling or SamplingParams()
        request_id = request_id or f"r{next(self._ids)}"
        if request_id in self._decoders:
            raise RequestError(f"request id {request_id!r} is already in use")
        ids, notice = self.encode_prompt(prompt, max_new_tokens)
        if self.blocks is not None:
            longest = min(len(ids) + max_new_tokens, self.config.n_positions)
            if self.blocks.blocks_needed(longest) > self.blocks.num_blocks:
                raise RequestError(f"a request of {longest} tokens does not fit the KV cache "
                                   f"({self.blocks.num_blocks} blocks of {self.block_size})")
        seq = Sequence(request_id=request_id, token_ids=list(ids), num_prompt_tokens=len(ids),
                       max_new_tokens=max_new_tokens, sampling=sampling,
                       generator=make_generator(sampling.seed, self.device), notice=notice,
                       prompt=prompt if isinstance(prompt, str) else self.tokenizer.decode(ids))
        self._decoders[request_id] = StreamDecoder(self.tokenizer)
        self._texts[request_id] = []
        self.scheduler.add(seq)
        return request_id

    def set_max_batch(self, n: int) -> None:
        """Change the most sequences per pass (1..256); takes effect at the next step."""
        if not isinstance(n, int) or not 1 <= n <= 256:
            raise RequestError(f"max batch must be between 1 and 256, got {n!r}")
        self.scheduler.max_batch = n

    def set_draft(self, draft: GPT2 | None, draft_tokenizer: Tokenizer | None = None) -> None:
        """Attach (or with None, detach) the draft model of speculative decoding.

        Raises RequestError if the draft's tokenizer or vocabulary differs from the target's (token ids of two
        vocabularies must never be mixed), or if the KV cache is off (the draft needs its own cache).
        """
        if draft is None:
            self.draft, self.draft_cache = None, None
            if self.draft_kind == "model":
                self.draft_k = 0
            return
        if self.cache is None:
            raise RequestError("speculative decoding needs the KV cache")
        if draft.config.vocab_size != self.config.vocab_size:
            raise RequestError(f"the draft model has {draft.config.vocab_size} tokens in its vocabulary, the "
                               f"target {self.config.vocab_size}: they cannot share token ids")
        if draft_tokenizer is None:
            raise RequestError("the draft model comes without a tokenizer: its guesses cannot be checked")
        differs = self.tokenizer.difference(draft_tokenizer)
        if differs is not None:
            raise RequestError(f"the draft model's tokenizer differs from the target's in its {differs}: "
                               f"its guesses would be other tokens")
        if draft.config.n_positions < self.config.n_positions:
            raise RequestError(f"the draft model's context window ({draft.config.n_positions}) is shorter than "
                               f"the target's ({self.config.n_positions})")
        dcfg = draft.config
        self.draft = draft.to(self.device).prepare_for_decode()
        self.draft_cache = PagedKVCache(dcfg.n_layer, dcfg.n_head, dcfg.head_dim, self.cache.num_blocks,
                                        self.block_size, self.device, self.dtype)
        for seq in self.sequences():
            seq.draft_computed = 0

    def set_draft_k(self, k: int) -> None:
        """Draft guesses per verify pass, 0 (off) to 8. Raises RequestError if the apprentice is the draft model
        and none is loaded."""
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= 8:
            raise RequestError(f"draft guesses must be between 0 and 8, got {k!r}")
        if k > 0 and self.draft_kind == "model" and self.draft is None:
            raise RequestError("no draft model is loaded")
        self.draft_k = k

    def set_draft_kind(self, kind: str) -> None:
        """Choose the apprentice: "model" (the draft model of ``set_draft``) or "ngram" (prompt lookup: guesses
        copied from the request's own earlier tokens, no model, ``model/ngram.py``). Both are exact: greedy
        output is unchanged and sampling keeps the target's distribution. Takes effect at the next step.

        Raises RequestError for another kind, for "ngram" without the KV cache, or for "model" while guesses are
        on (draft_k > 0) and no draft model is loaded.
        """
        if kind not in ("model", "ngram"):
            raise RequestError(f"the apprentice must be 'model' or 'ngram', got {kind!r}")
        if kind == "ngram" and self.cache is None:
            raise RequestError("speculative decoding needs the KV cache")
        if kind == "model" and self.draft is None and self.draft_k > 0:
            raise RequestError("no draft model is loaded")
        self.draft_kind = kind

    def set_runner(self, runner) -> None:
        """Run the target's forward passes on ``runner`` (an object with ``forward(input_ids, batch,
        logit_index) -> (logits (B, K, V), workers: list[dict])``), or locally again with None.

        The K/V already computed live where the old runner kept them, so every running sequence is recomputed
        from its first token and the prefix cache is emptied; the block tables stay as they are.
        """
        self.runner = runner
        self.last_workers = []
        self.invalidate_kv()

    def invalidate_kv(self) -> None:
        """Forget every computed K/V: running sequences re-prefill at their next step, prefix hashes are dropped."""
        if self.blocks is not None:
            self.blocks.forget_hashes()
        self._mirror = None
        for seq in self.sequences():
            seq.num_computed = 0
            seq.draft_computed = 0

    @property
    def acceptance_rate(self) -> float | None:
        """Draft guesses kept ÷ guesses checked, over the engine's life; None before any guess."""
        return self.spec_accepted / self.spec_proposed if self.spec_proposed else None

    def abort_all(self) -> None:
        """Drop every waiting and running request (their blocks return to the pool)."""
        for seq in self.scheduler.abort_all():
            self._decoders.pop(seq.request_id, None)
            self._texts.pop(seq.request_id, None)
            self._loop_watch.pop(seq.request_id, None)

    def has_work(self) -> bool:
        return self.scheduler.has_work()

    def sequences(self) -> list[Sequence]:
        return list(self.scheduler.running) + list(self.scheduler.waiting)

    # ---- one forward pass ----------------------------------------------------------------------------------

    def _pack_pass(self, items: list["PassItem"], cache: PagedKVCache | None, target: bool, mirror: bool = False
                   ) -> tuple[torch.Tensor, object, torch.Tensor, int, torch.Tensor | None, int]:
        """Inputs for one pass over ``items``: ragged when the items feed different numbers of tokens, unless ragged
        passes are off, or the pass goes to the sharded runner, or the model keeps readable attention weights.
        Items that all feed T tokens (a decode step, a lone prefill, a verify pass with equal guesses) are packed
        (B, T): no padding there, the same rows, and ~0.02-0.05 ms less packing per step than the flat packing
        (measured, docs/benchmarks.md "Reading beside writing"). Returns (input_ids, batch, logit_index, context tokens read,
        pick, rows computed): pick int64 (B, K) maps the ragged pass's (M, V) logits to (B, K, V) (None when
        padded: the logits are (B, K, V) already); rows computed: N real tokens, or B × T padded."""
        model = self.model if target else self.draft
        uniform = cache is not None and len({len(it.token_ids) for it in items}) == 1
        if uniform or not self.ragged or (target and self.runner is not None) or model.h[0].attn.readable:
            input_ids, batch, logit_index, context = self._pack(items, cache, mirror=mirror)
            return input_ids, batch, logit_index, context, None, input_ids.numel()
        used = []

        def mirror_of(tables, starts, context_slots):
            if self._mirror is None:
                self._mirror = DecodeMirror(cache, self.config.n_positions)
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

    def _pack(self, items: list["PassItem"], cache: PagedKVCache | None, mirror: bool = False
              ) -> tuple[torch.Tensor, AttentionBatch, torch.Tensor, int]:
        """Padded inputs for one forward pass over ``items``.

        Returns (input_ids int64 (B, T), the AttentionBatch, logit_index int64 (B, K), context tokens read).
        Row b feeds items[b].token_ids at positions start.. and asks for logits at its last n_logits positions
        (K = the largest n_logits; shorter rows repeat their last position).
        mirror: a plain decode step of the target (``_plain_step``) may read the context from the decode mirror
        (``DecodeMirror``) instead of gathering it from the pool every layer; any other pass of the target's cache
        drops the mirror.
        """
        B = len(items)
        lens = [len(it.token_ids) for it in items]
        ends = [it.start + n for it, n in zip(items, lens)]
        T, L, K = max(lens), max(ends), max(it.n_logits for it in items)
        dev = self.device
        ar = self._arange(max(L, T, self.block_size))
        if T == 1:  # a decode step: one token per row, logits at it (K = 1)
            input_ids = torch.tensor([it.token_ids for it in items], dtype=torch.long)  # (B, 1)
            positions = torch.tensor([[it.start] for it in items], dtype=torch.long)  # (B, 1)
            logit_index = torch.zeros((B, K), dtype=torch.long)
            valid_q = None
            ends_t = positions[:, 0] + 1
        else:
            input_ids = torch.tensor([list(it.token_ids) + [0] * (T - n) for it, n in zip(items, lens)],
                                     dtype=torch.long)  # (B, T)
            positions = torch.tensor([list(range(it.start, e)) + [0] * (T - n)
                                      for it, n, e in zip(items, lens, ends)], dtype=torch.long)  # (B, T)
            logit_index = torch.tensor([[min(n - it.n_logits + j, n - 1) for j in range(K)]
                                        for it, n in zip(items, lens)], dtype=torch.long)  # (B, K)
            valid_q = ar[None, :T] < torch.tensor(lens)[:, None]  # (B, T)
            ends_t = torch.tensor(ends)
        mask = ar[None, None, :L] <= positions[:, :, None]  # (B, T, L): causal, and within the row's length
        if valid_q is not None:
            mask &= valid_q[:, :, None]
            mask[:, :, 0] |= ~valid_q  # pad rows look at key 0 so softmax stays finite; their output is dropped
        sees_all = T == 1 and all(e == L for e in ends)  # one new token per row, every row has all L keys
        context = sum(ends)
        if cache is None:
            batch = AttentionBatch(positions=positions.to(dev), attn_mask=mask[:, None].to(dev), sees_all=sees_all)
            context = 0
        else:
            bs = self.block_size
            context_start = None
            if B == 1:
                blocks = items[0].table.blocks[:-(-L // bs)]
                if blocks == list(range(blocks[0], blocks[0] + len(blocks))):  # one run: read in place
                    context_start = blocks[0] * bs
            if context_start is not None:
                context_slots = ar[:L][None] + context_start  # (1, L)
                slot_mapping = positions + context_start  # (1, T)
            else:
                nb = -(-L // bs)
                tables = [it.table.blocks[:nb] + [0] * (nb - len(it.table.blocks[:nb])) for it in items]
                slots = (torch.tensor(tables, dtype=torch.long)[:, :, None] * bs + ar[:bs]).view(B, nb * bs)[:, :L]
                scratch = cache.scratch_slot
                context_slots = slots.masked_fill(ar[None, :L] >= ends_t[:, None], scratch)  # (B, L)
                slot_mapping = slots.gather(1, positions)  # (B, T)
                if valid_q is not None:
                    slot_mapping.masked_fill_(~valid_q, scratch)
            batch = AttentionBatch(positions=positions.to(dev), attn_mask=mask[:, None].to(dev),
                                   slot_mapping=slot_mapping.to(dev), context_slots=context_slots.to(dev),
                                   sees_all=sees_all, context_start=context_start)
            if cache is self.cache:
                if mirror and T == 1 and context_start is None and self.runner is None:
                    if self._mirror is None:
                        self._mirror = DecodeMirror(cache, self.config.n_positions)
                    batch.mirror = self._mirror.prepare([it.table for it in items], [it.start for it in items],
                                                        batch.context_slots)
                    if batch.mirror is None:
                        self._mirror = None  # over its memory budget: gather as before
                else:
                    self._mirror = None
        return input_ids.to(dev), batch, logit_index.to(dev), context

    def _arange(self, n: int) -> torch.Tensor:
        """0, 1, ..., at least n - 1 (int64, CPU), grown by doubling and kept, so packing a step slices it."""
        ar = getattr(self, "_ar", None)
        if ar is None or ar.numel() < n:
            ar = self._ar = torch.arange(max(n, 2 * (0 if ar is None else ar.numel()), 64))
        return ar

    def _sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    def forward_timed(self, input_ids, batch, logit_index, model: GPT2 | None = None,
                      cache: PagedKVCache | None = None) -> tuple[torch.Tensor, float, list[float]]:
        """One forward pass (of the target unless ``model`` is given). Returns (logits (B, K, V), wall ms,
        per-layer ms or [])."""
        if model is None and self.runner is not None:
            t0 = time.perf_counter_ns()
            logits, self.last_workers = self.runner.forward(input_ids, batch, logit_index)
            return logits, (time.perf_counter_ns() - t0) / 1e6, []
        if model is None:
            model, cache = self.model, self.cache
        layer_ms: list[float] | None = [] if self.layer_timing and model is self.model else None
        self._sync()
        t0 = time.perf_counter_ns()
        with torch.inference_mode():
            logits = model(input_ids, batch=batch, kv_cache=cache, layer_ms=layer_ms, logit_index=logit_index)
        self._sync()
        return logits, (time.perf_counter_ns() - t0) / 1e6, layer_ms or []

    def _label(self, token_id: int) -> str:
        label = self._labels.get(token_id)
        if label is None:
            label = self._labels[token_id] = self.tokenizer.label(token_id)
        return label

    def _emit(self, seq: Sequence, token_id: int, top5: list[tuple[int, float]], now_ns: int) -> TokenEvent:
        """Append a sampled token to ``seq``, stream its text, and finish the request if it must stop.

        top5: the five most likely (token id, probability) of the distribution the token was drawn from.
        """
        seq.token_ids.append(token_id)
        if seq.first_token_ns is None:
            seq.first_token_ns = now_ns
        seq.token_times_ns.append(now_ns)
        finish = None
        eos = self.tokenizer.eos_token_id
        if eos is not None and token_id == eos and seq.num_generated > 0:
            finish = "stop"
            text = ""
        else:
            text = self._decoders[seq.request_id].push(token_id)
        if finish is None and seq.num_generated >= seq.max_new_tokens:
            finish = "length"
        if finish is None and len(seq.token_ids) >= self.config.n_positions:
            finish = "context_full"
        if finish is None and self.stop_loops and text:
            watch = self._loop_watch.setdefault(seq.request_id, LoopWatch())
            if watch.feed(text) is not None:
                finish = "loop"
        if finish is not None:
            text += self._decoders[seq.request_id].flush()
        self._texts[seq.request_id].append(text)
        label = self._label
        event = TokenEvent(request_id=seq.request_id, token_id=token_id, position=len(seq.token_ids) - 1,
                           text=text, label=label(token_id),
                           top5=[(i, label(i), p) for i, p in top5], finish_reason=finish)
        if finish is not None:
            self._finish(seq, finish)
        return event

    def _finish(self, seq: Sequence, reason: str) -> None:
        self.scheduler.finish(seq, reason)
        times = seq.token_times_ns
        generated = seq.generated_ids
        if reason == "stop":
            generated = generated[:-1]  # the end-of-text token is not part of the answer
        self.finished[seq.request_id] = RequestResult(
            request_id=seq.request_id, prompt=seq.prompt,
            prompt_token_ids=seq.token_ids[:seq.num_prompt_tokens], token_ids=generated,
            text="".join(self._texts.pop(seq.request_id)), finish_reason=reason,
            ttft_ms=None if seq.first_token_ns is None else (seq.first_token_ns - seq.arrival_ns) / 1e6,
            inter_token_ms=[(b - a) / 1e6 for a, b in zip(times, times[1:])],
            prefix_hit_tokens=seq.prefix_hit_tokens, notice=seq.notice)
        self._decoders.pop(seq.request_id, None)
        self._loop_watch.pop(seq.request_id, None)

    def step(self) -> StepReport | None:
        """Run one forward pass over the scheduled work. Returns its report, or None if there is nothing to do."""
        if not self.scheduler.has_work():
            return None
        t0 = time.perf_counter_ns()
        sched = self.scheduler.schedule(kv_cache=self.kv_cache_enabled)
        if not sched.items:
            raise RuntimeError("the scheduler found work but could not place any of it (KV cache too small)")
        phase = sched.phase
        if self.draft_k > 0 and phase == "decode" and (self.draft_kind == "ngram" or self.draft is not None):
            return self._speculative_step(sched, t0)
        return self._plain_step(sched, t0)

    def _plain_step(self, sched: Schedule, t0: int) -> StepReport:
        """One forward pass over the scheduled tokens; every sequence at its last token samples one more."""
        phase = sched.phase
        items = [PassItem(it.seq.token_ids[it.start:it.start + it.count], it.start, it.seq.table)
                 for it in sched.items]
        input_ids, batch, logit_index, context, pick, rows = self._pack_pass(items, self.cache, True, mirror=True)
        kv_bytes = context * self.kv_bytes_per_token
        logits, forward_ms, layer_ms = self.forward_timed(input_ids, batch, logit_index)
        if pick is not None:
            logits = logits.view(len(items), 1, -1)  # one logit row per item, in item order
        now = time.perf_counter_ns()
        events = []
        last = logits[:, -1].float()  # (B, V): the logits each sequence samples from
        # Greedy rows need no per-row work: one softmax, argmax and top-5 for the whole batch.
        greedy_probs = torch.softmax(last, dim=-1)
        greedy_top = torch.topk(greedy_probs, min(5, last.size(-1)))
        greedy_ids = last.argmax(dim=-1).tolist()
        top_ids, top_ps = greedy_top.indices.tolist(), greedy_top.values.tolist()
        for b, it in enumerate(sched.items):
            seq = it.seq
            seq.num_computed = it.start + it.count
            if self.blocks is not None:
                self.blocks.register_full_blocks(seq.table, seq.token_ids, seq.num_computed)
            if it.samples and seq.status is Status.RUNNING:
                if self.record_logits:
                    self.logits.setdefault(seq.request_id, []).append(last[b].clone())
                if seq.sampling.greedy:
                    token, top5 = greedy_ids[b], list(zip(top_ids[b], top_ps[b]))
                else:
                    token, probs = sample(last[b], seq.sampling, seq.generator)
                    top5 = top_k_probs(probs, 5)
                events.append(self._emit(seq, token, top5, now))
        self._step += 1
        return StepReport(
            step=self._step, phase=phase, request_ids=[it.seq.request_id for it in sched.items],
            batch=len(sched.items), tokens_in=sum(it.count for it in sched.items), tokens_out=len(events),
            rows_computed=rows,
            wall_ms=(time.perf_counter_ns() - t0) / 1e6, forward_ms=forward_ms, weight_bytes=self.weight_bytes,
            kv_bytes=kv_bytes, kv_bytes_in_use=self.kv_bytes_in_use, blocks_in_use=self.blocks_in_use,
            num_blocks=self.num_blocks, prefix_hit_tokens=sched.prefix_hit_tokens, layer_ms=layer_ms,
            tokens=events, workers=list(self.last_workers) if self.runner is not None else [])

    def _speculative_step(self, sched: Schedule, t0: int) -> StepReport:
        """Draft k guesses per sequence, verify them in one target pass, keep the agreeing prefix."""
        seqs = [it.seq for it in sched.items]
        ks = []
        for seq in seqs:
            n = len(seq.token_ids)
            k = max(0, min(self.draft_k, seq.max_new_tokens - seq.num_generated - 1,
                           self.config.n_positions - n - 1))
            if k and not self.blocks.ensure_capacity(seq.table, n + k):
                k = 0  # no room for the guesses: this sequence decodes plainly inside the verify pass
            ks.append(k)
        # 1. the apprentice proposes: the draft model, one draft pass per guess (the first also catches the draft's
        # cache up), or prompt lookup (no pass at all)
        self._sync()
        t_draft = time.perf_counter_ns()
        proposals: list[list[int]] = [[] for _ in seqs]
        q_rows: list[list[torch.Tensor]] = [[] for _ in seqs]
        if self.draft_kind == "ngram":
            for b, seq in enumerate(seqs):
                if ks[b]:
                    if seq.ngram_index is None:
                        seq.ngram_index = NgramIndex()
                    proposals[b] = seq.ngram_index.propose(seq.token_ids, ks[b])
                    ks[b] = len(proposals[b])  # nothing matched: this sequence decodes plainly in the verify pass
            if not any(ks):
                return self._plain_step(sched, t0)  # no guess anywhere: an ordinary decode step
            ks_model = [0] * len(seqs)
        else:
            ks_model = ks
        for j in range(max(ks_model)):
            rows = [b for b, k in enumerate(ks_model) if j < k]
            items = []
            for b in rows:
                seq = seqs[b]
                if j == 0:
                    start = min(seq.draft_computed, len(seq.token_ids) - 1)
                    items.append(PassItem(seq.token_ids[start:], start, seq.table))
                else:
                    items.append(PassItem([proposals[b][-1]], len(seq.token_ids) + j - 1, seq.table))
            input_ids, batch, logit_index, _, pick, _ = self._pack_pass(items, self.draft_cache, False)
            logits, _, _ = self.forward_timed(input_ids, batch, logit_index, self.draft, self.draft_cache)
            if pick is not None:
                logits = logits.view(len(items), 1, -1)
            for row, b in enumerate(rows):
                token, q = sample(logits[row, -1], seqs[b].sampling, seqs[b].generator)
                proposals[b].append(token)
                q_rows[b].append(q)
        for b, seq in enumerate(seqs):
            if ks_model[b]:
                seq.draft_computed = len(seq.token_ids) + ks_model[b] - 1
        self._sync()
        draft_ms = (time.perf_counter_ns() - t_draft) / 1e6
        # 2. one target pass checks every guess (k + 1 positions per sequence)
        items = [PassItem([seq.token_ids[-1]] + proposals[b], len(seq.token_ids) - 1, seq.table, ks[b] + 1)
                 for b, seq in enumerate(seqs)]
        input_ids, batch, logit_index, context, pick, rows_computed = self._pack_pass(items, self.cache, True)
        logits, verify_ms, layer_ms = self.forward_timed(input_ids, batch, logit_index)
        if pick is not None:
            logits = logits[pick.to(logits.device)]  # (B, K, V)
        # 3. keep the agreeing prefix, then the target's own token
        now = time.perf_counter_ns()
        events, accepted, bonus = [], 0, 0
        for b, seq in enumerate(seqs):
            k = ks[b]
            rows = logits[b, :k + 1].float()  # (k + 1, V)
            if self.record_logits:
                self.logits.setdefault(seq.request_id, []).extend(rows.clone())
            if seq.sampling.greedy:
                a, emitted = accept_greedy(rows, proposals[b])
            else:
                p = torch.stack([distribution(r, seq.sampling) for r in rows])
                if self.draft_kind == "ngram":  # a deterministic guess: the draft's q is a point mass on it
                    q = point_mass(proposals[b], p.size(-1), p.dtype, p.device)
                else:
                    q = torch.stack(q_rows[b]) if k else p[:0]
                a, emitted = accept_sampled(p, q, proposals[b], seq.generator)
            accepted += a
            bonus += int(k > 0 and a == k)
            if seq.sampling.greedy:  # one softmax and top-5 for every emitted row (greedy shows the plain softmax)
                top = torch.topk(torch.softmax(rows[:len(emitted)], dim=-1), min(5, rows.size(-1)))
                tops = [list(zip(i, p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
            else:
                tops = [top_k_probs(p[i], 5) for i in range(len(emitted))]  # p: the rows' distributions above
            for i, token in enumerate(emitted):
                event = self._emit(seq, token, tops[i], now)
                event.accepted_from_draft = i < a
                events.append(event)
                if event.finish_reason is not None:
                    break
            if seq.status is Status.RUNNING:
                seq.num_computed = len(seq.token_ids) - 1  # the newest token is fed by the next pass
                seq.draft_computed = min(seq.draft_computed, seq.num_computed)
                self.blocks.truncate(seq.table, len(seq.token_ids))  # give back blocks of rejected guesses
                self.blocks.register_full_blocks(seq.table, seq.token_ids, seq.num_computed)
        proposed = sum(ks)
        self.spec_proposed += proposed
        self.spec_accepted += accepted
        self._step += 1
        return StepReport(
            step=self._step, phase="verify", request_ids=[s.request_id for s in seqs], batch=len(seqs),
            tokens_in=sum(k + 1 for k in ks), tokens_out=len(events), wall_ms=(time.perf_counter_ns() - t0) / 1e6,
            rows_computed=rows_computed,
            forward_ms=verify_ms, weight_bytes=self.weight_bytes, kv_bytes=context * self.kv_bytes_per_token,
            kv_bytes_in_use=self.kv_bytes_in_use, blocks_in_use=self.blocks_in_use, num_blocks=self.num_blocks,
            prefix_hit_tokens=sched.prefix_hit_tokens, layer_ms=layer_ms, tokens=events, proposed=proposed,
            accepted=accepted, bonus=bonus, draft_ms=draft_ms, verify_ms=verify_ms, draft_kind=self.draft_kind,
            guesses=[{"request_id": s.request_id, "labels": [self._label(t) for t in proposals[b]]}
                     for b, s in enumerate(seqs)],
            workers=list(self.last_workers) if self.runner is not None else [])

    # ---- occupancy ------------------------------------------------------------------------------------------

    @property
    def blocks_in_use(self) -> int:
        return 0 if self.blocks is None else self.blocks.blocks_in_use

    @property
    def num_blocks(self) -> int:
        return 0 if self.blocks is None else self.blocks.num_blocks

    @property
    def kv_bytes_in_use(self) -> int:
        return 0 if self.cache is None else self.blocks_in_use * self.cache.bytes_per_block

    @property
    def kv_bytes_allocated(self) -> int:
        """Bytes of the K and V tensors the engine holds (0 with the KV cache off)."""
        return 0 if self.cache is None else self.cache.nbytes

    def model_info(self) -> dict:
        cfg = self.config
        return {"name": cfg.name, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                "n_positions": cfg.n_positions, "vocab_size": cfg.vocab_size,
                "parameters": self.model.num_parameters(), "weight_bytes": self.weight_bytes,
                "layer_weight_bytes": self.model.layer_weight_bytes()}

    # ---- convenience ---------------------------------------------------------------------------------------

    def run(self, max_steps: int | None = None):
        """Yield a StepReport per forward pass until every request has finished (or ``max_steps`` passes)."""
        n = 0
        while self.has_work() and (max_steps is None or n < max_steps):
            report = self.step()
            if report is None:
                break
            n += 1
            yield report
