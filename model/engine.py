"""The inference engine: requests in, one ``StepReport`` per forward pass out.

Shape of one step (``Engine.step``):
    schedule   pick the sequences and token counts of this pass (``model/scheduler.py``)
    pack       build the flat (N,) tokens of every request, positions, KV slots and attention groups (ragged:
               model/ragged.py), or, for the sharded runner and readable attention, padded (B, T) inputs
               (``model/runner.py``, the ModelRunner)
    propose    speculative decoding (``Engine.speculator``, model/speculative.py): in a decode step the apprentice
               guesses k tokens a sequence (draft passes, or prompt lookup); in a prefill, the draft reads the prompt
    forward    one real pass of the model over those tokens, timed in parts by the ModelRunner
    sample     draw the next token of every sequence that reached its last known token (``Engine._sample``), or
    verify     keep the guesses the target agrees with, then its own token (``Engine._verify``)
    report     a plain-data ``StepReport`` (``Engine._report``): phase, batch, tokens, measured ms, bytes read,
               blocks in use

With the KV cache off (``kv_cache=False``) every step recomputes every sequence from its first token (the tour's
baseline)."""

from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass

import torch

from model.errors import RequestError
from model.gpt2 import GPT2
from model.kv_cache import BlockManager, PagedKVCache
from model.loops import LoopWatch
from model.report import StepReport, TokenEvent
from model.runner import ModelRunner, PassItem
from model.sampling import SamplingParams, make_generator, nuclei
from model.scheduler import Schedule, Scheduler, Sequence, Status
from model.speculative import DRAFT_STOP_BELOW, Guesses, Speculator, accept_greedy, accept_sampled
from model.stages import forward_stages
from model.tokenizer import StreamDecoder, Tokenizer
from model.weight_mm import BYTES_PER_VALUE

MAX_PROMPT_CHARS = 20_000  # longer typed text is cut before tokenizing, so a pasted book cannot stall a step
DEFAULT_KV_BUDGET_BYTES = 256 * 2**20
MAX_SEQS_IN_POOL = 64  # the batch slider and the benchmark go up to 64 sequences


def default_threads() -> int:
    """Intra-op threads for torch: all cores but one (the GUI keeps a core), at least 1."""
    return max(1, (os.cpu_count() or 2) - 1)


@dataclass
class TargetPass:
    """One pass of the target (``Engine._pass``): logits (B, K, V) float of the model's dtype, tokens fed
    (tokens_in) and rows computed, context tokens read (for the KV bytes), wall ms of the forward, per-layer ms
    (or []), ms of it spent reading weights."""

    logits: torch.Tensor
    tokens_in: int
    rows: int
    context: int
    forward_ms: float
    layer_ms: list[float]
    read_ms: float


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
    layer_timing: also time every layer: two clock reads per layer inside the same flat pass as an untimed one
    (at most a few % of a trip, bench --only trip), and a device sync per layer on CUDA.
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
        param = model.ln_f.weight  # a float parameter (int8 weights compute in float32: model/quantize.py)
        self.device, self.dtype = param.device, param.dtype
        self.kv_cache_enabled = kv_cache
        self.weight_bytes = model.weight_bytes()
        # how the weights' precision was chosen (model/weight_mm.py: choose_precision), set by whoever converted them
        self.weights_choice: dict | None = None
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
        self.draft_stop_below = DRAFT_STOP_BELOW  # the draft model stops guessing once it is less sure than this
        self.draft_kind = "model"  # who guesses: "model" (the draft model) or "ngram" (prompt lookup, model/ngram.py)
        self.spec_proposed = self.spec_accepted = 0  # over the engine's life: draft guesses checked, and kept
        self.speculator = Speculator(self)  # the apprentice: proposes guesses, runs the draft's prefill
        # packs and runs the passes, times them; a sharded runner (model/parallel/) set on it runs the target's
        self.model_runner = ModelRunner(self.model, self.cache, block_size=block_size, n_positions=cfg.n_positions,
                                        ragged=ragged, layer_timing=layer_timing)
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
        """Attach (or with None, detach) the draft model of speculative decoding. A float32 draft is converted, in
        place, to the target's precision (``model.quantize.set_precision``: fp16 or int8), so both books are read
        through the same kernels.

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
        precision = getattr(self.model, "weights", "fp32")
        if getattr(draft, "weights", "fp32") == "fp32" and precision != "fp32":
            from model.quantize import set_precision  # the apprentice reads its book in the session's precision
            set_precision(draft, precision)
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
        self.model_runner.sharded = runner
        self.model_runner.last_workers = []
        self.invalidate_kv()

    def invalidate_kv(self) -> None:
        """Forget every computed K/V: running sequences re-prefill at their next step, prefix hashes are dropped."""
        if self.blocks is not None:
            self.blocks.forget_hashes()
        self.model_runner.drop_mirror()
        for seq in self.sequences():
            seq.num_computed = 0
            seq.draft_computed = 0

    @property
    def runner(self):
        """The sharded runner that runs the target's passes (``set_runner``), or None."""
        return self.model_runner.sharded

    @property
    def last_workers(self) -> list[dict]:
        """Per-worker timings of the last sharded pass."""
        return self.model_runner.last_workers

    @property
    def layer_timing(self) -> bool:
        return self.model_runner.layer_timing

    @layer_timing.setter
    def layer_timing(self, on: bool) -> None:
        self.model_runner.layer_timing = on

    @property
    def ragged(self) -> bool:
        return self.model_runner.ragged

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

    def _pack(self, items: list[PassItem], cache: PagedKVCache | None, mirror: bool = False):
        """``ModelRunner.pack_padded``: padded (B, T) inputs (input_ids, AttentionBatch, logit_index, context)."""
        return self.model_runner.pack_padded(items, cache, mirror)

    def _sync(self) -> None:
        self.model_runner.sync()

    def forward_timed(self, input_ids, batch, logit_index, model: GPT2 | None = None,
                      cache: PagedKVCache | None = None) -> tuple[torch.Tensor, float, list[float]]:
        """``forward_parts`` without the weight-reading ms: (logits (B, K, V), wall ms, per-layer ms or [])."""
        logits, ms, layer_ms, _ = self.forward_parts(input_ids, batch, logit_index, model, cache)
        return logits, ms, layer_ms

    def forward_parts(self, input_ids, batch, logit_index, model: GPT2 | None = None,
                      cache: PagedKVCache | None = None) -> tuple[torch.Tensor, float, list[float], float]:
        """``ModelRunner.forward``: (logits (B, K, V), wall ms, per-layer ms or [], weight-read ms)."""
        return self.model_runner.forward(input_ids, batch, logit_index, model, cache)

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
        """Run one forward pass over the scheduled work. Returns its report, or None if there is nothing to do.

        schedule → propose (the apprentice's guesses, a decode step with guesses on: ``Speculator.propose``) →
        one pass of the target (``_pass``) → verify the guesses (``_verify``) or sample (``_sample``) → report."""
        if not self.scheduler.has_work():
            return None
        t0 = time.perf_counter_ns()
        sched = self.scheduler.schedule(kv_cache=self.kv_cache_enabled)
        if not sched.items:
            raise RuntimeError("the scheduler found work but could not place any of it (KV cache too small)")
        phase = sched.phase  # read now: the sequences leave their prefill in the pass
        guesses = self.speculator.propose(sched) if self.speculator.on(phase) else None
        if guesses is not None and guesses.verifies:  # k guesses a sequence, checked in one pass
            seqs = [it.seq for it in sched.items]
            items = [PassItem([seq.token_ids[-1]] + guesses.tokens[b], len(seq.token_ids) - 1, seq.table,
                              guesses.ks[b] + 1) for b, seq in enumerate(seqs)]
            tp = self._pass(items, verify=True)
            events, verdict = self._verify(seqs, tp.logits, guesses, time.perf_counter_ns())
            return self._report(sched, "verify", t0, tp, events, guesses.draft_ms, guesses, verdict)
        draft_ms = self.speculator.prefill(sched) if phase != "decode" else 0.0  # the draft reads the prompt
        items = [PassItem(it.seq.token_ids[it.start:it.start + it.count], it.start, it.seq.table)
                 for it in sched.items]
        tp = self._pass(items, verify=False)
        events = self._sample(sched, tp.logits, time.perf_counter_ns())
        return self._report(sched, phase, t0, tp, events, draft_ms, guesses)

    def _pass(self, items: list[PassItem], verify: bool) -> TargetPass:
        """One pass of the target over ``items``, packed by ``ModelRunner.pack`` (a plain step, not ``verify``,
        may read the context from the decode mirror). Its logits come back (B, K, V): a row per item and logit."""
        input_ids, batch, logit_index, context, pick, rows = self.model_runner.pack(items, self.cache, self.model,
                                                                                    not verify)
        logits, forward_ms, layer_ms, read_ms = self.forward_parts(input_ids, batch, logit_index)
        if pick is not None:
            if verify:
                logits = logits[pick.to(logits.device)]  # (B, K, V)
            else:  # one logit row per item, in item order
                logits = logits.view(len(items), 1, -1)
        return TargetPass(logits, sum(len(it.token_ids) for it in items), rows, context, forward_ms, layer_ms,
                          read_ms)

    def _sample(self, sched: Schedule, logits: torch.Tensor, now: int) -> list[TokenEvent]:
        """Every scheduled sequence takes its computed tokens; each at its last known token samples one more from
        its last row of ``logits`` (B, K, V). now: perf_counter_ns stamped on the tokens. Returns their events."""
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
                else:  # the same draws' distribution as speculative decoding's target rows
                    dist = nuclei(last[b:b + 1], seq.sampling)[0]
                    token, top5 = dist.draw(seq.generator), dist.top(5)
                events.append(self._emit(seq, token, top5, now))
        return events

    def _verify(self, seqs: list[Sequence], logits: torch.Tensor, guesses: Guesses,
                now: int) -> tuple[list[TokenEvent], tuple[int, int]]:
        """Keep each sequence's agreeing prefix of guesses, then the target's own token (``_accept``), from the
        verify pass's ``logits`` (B, k + 1, V); give back the blocks of rejected guesses. now: perf_counter_ns
        stamped on the tokens. Returns (the emitted tokens' events, (guesses kept, bonus tokens))."""
        events, accepted, bonus = [], 0, 0
        for b, seq in enumerate(seqs):
            k = guesses.ks[b]
            rows = logits[b, :k + 1].float()  # (k + 1, V)
            if self.record_logits:
                self.logits.setdefault(seq.request_id, []).extend(rows.clone())
            a, emitted, tops = self._accept(seq, rows, guesses, b)
            accepted += a
            bonus += int(k > 0 and a == k)
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
        self.spec_proposed += sum(guesses.ks)
        self.spec_accepted += accepted
        return events, (accepted, bonus)

    @staticmethod
    def _accept(seq: Sequence, rows: torch.Tensor, guesses: Guesses,
                b: int) -> tuple[int, list[int], list[list[tuple[int, float]]]]:
        """The acceptance rule for sequence b (``accept_greedy`` / ``accept_sampled``) over its target rows
        (k + 1, V): (guesses kept a, emitted tokens, the top-5 (id, probability) of every emitted token's row)."""
        if seq.sampling.greedy:
            a, emitted = accept_greedy(rows, guesses.tokens[b])
            # the top-5 of every emitted row: greedy shows the plain softmax
            top = torch.topk(torch.softmax(rows[:len(emitted)], dim=-1), min(5, rows.size(-1)))
            return a, emitted, [list(zip(i, v)) for i, v in zip(top.indices.tolist(), top.values.tolist())]
        p = nuclei(rows, seq.sampling)  # the k + 1 target distributions
        a, emitted = accept_sampled(p, guesses.q_of(b), guesses.tokens[b], seq.generator)
        return a, emitted, [p[i].top(5) for i in range(len(emitted))]  # sampling: the rows' distributions

    def _report(self, sched: Schedule, phase: str, t0: int, tp: TargetPass, events: list[TokenEvent],
                draft_ms: float, guesses: Guesses | None, verdict: tuple[int, int] | None = None) -> StepReport:
        """The step's ``StepReport``, for a plain step and a verify step (phase "verify", ``verdict``: (guesses
        kept, bonus tokens)) alike. phase: the schedule's, read before the pass. t0: perf_counter_ns at the step's
        start; draft_ms: the draft's prefill, or the guessing."""
        self._step += 1
        seqs = [it.seq for it in sched.items]
        spec = {}
        if verdict is not None:
            spec = {"proposed": sum(guesses.ks), "accepted": verdict[0], "bonus": verdict[1],
                    "verify_ms": tp.forward_ms, "draft_weight_read_ms": guesses.read_ms,
                    "draft_kind": guesses.kind,
                    "guesses": [{"request_id": s.request_id, "labels": [self._label(t) for t in guesses.tokens[b]]}
                                for b, s in enumerate(seqs)]}
        return StepReport(
            step=self._step, phase=phase,
            request_ids=[s.request_id for s in seqs], batch=len(seqs), tokens_in=tp.tokens_in,
            tokens_out=len(events), rows_computed=tp.rows, wall_ms=(time.perf_counter_ns() - t0) / 1e6,
            forward_ms=tp.forward_ms, weight_read_ms=tp.read_ms, weight_bytes=self.weight_bytes,
            kv_bytes=tp.context * self.kv_bytes_per_token, kv_bytes_in_use=self.kv_bytes_in_use,
            blocks_in_use=self.blocks_in_use, num_blocks=self.num_blocks, prefix_hit_tokens=sched.prefix_hit_tokens,
            layer_ms=tp.layer_ms, tokens=events, workers=list(self.last_workers) if self.runner is not None else [],
            draft_ms=draft_ms, stages=self._stages(sched, draft_ms, guesses, verdict is not None), **spec)

    def _stages(self, sched: Schedule, draft_ms: float, guesses: Guesses | None, verified: bool) -> list[str]:
        """The stages the step went through, in order (``StepReport.stages``): the apprentice's ("draft" for the
        draft model's guesses or prefill, "lookup_draft" for prompt lookup, even one that found nothing), the
        target's pass, then "sample", or "verify" / "verify_sampled" (any sampled request) after guesses."""
        if guesses is not None:
            apprentice = ["lookup_draft" if guesses.kind == "ngram" else "draft"]
        else:
            apprentice = ["draft"] if draft_ms else []
        if not verified:
            last = "sample"
        else:
            last = "verify" if all(it.seq.sampling.greedy for it in sched.items) else "verify_sampled"
        return self._head_stages(sched) + apprentice + ["pack"] + self._pass_stages() + [last]

    def _head_stages(self, sched: Schedule) -> list[str]:
        """The stages before a pass: the prefix-cache lookup when it found blocks for a request admitted now."""
        return ["schedule"] + (["prefix_lookup"] if sched.prefix_hit_tokens else [])

    def _pass_stages(self) -> list[str]:
        """The stages of one forward pass of the target as this engine runs it (``model.stages.forward_stages``)."""
        sharded = getattr(self.runner, "mode", "tp") if self.runner is not None else ""
        return forward_stages(self.config.n_layer, self.cache is not None, sharded,
                              fused=not sharded and self.model_runner.last_fused)

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
                "n_positions": cfg.n_positions, "vocab_size": cfg.vocab_size, "parameters": self.model.num_parameters(),
                "weight_bytes": self.weight_bytes, "weights": self.model.weights,
                "bytes_per_weight": BYTES_PER_VALUE[self.model.weights], "weights_choice": self.weights_choice,
                "layer_weight_bytes": self.model.layer_weight_bytes()}

    def run(self, max_steps: int | None = None):
        """Yield a StepReport per forward pass until every request has finished (or ``max_steps`` passes)."""
        n = 0
        while self.has_work() and (max_steps is None or n < max_steps):
            report = self.step()
            if report is None:
                break
            n += 1
            yield report
