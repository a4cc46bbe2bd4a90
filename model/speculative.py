"""Speculative decoding: a small draft model guesses k tokens, the target checks them all in one pass.

``Speculator`` is the engine's apprentice (``Engine.speculator``): it proposes the guesses of a verify step (draft
passes, or prompt lookup) and runs the draft's prefill beside the target's; the engine runs the one target pass and
verifies with the two acceptance rules below, which decide which guesses are kept. A lone request's draft guesses
on the lean single-sequence path (``GPT2.decode_one``: no packed inputs); a batch's draft runs packed passes like the
target's.

Acceptance rule (Leviathan, Kalman & Matias 2023, "Fast Inference from Transformers via Speculative Decoding";
Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative Sampling"):
    draft token x_j, drawn from q_j, is kept with probability min(1, p_j(x_j) / q_j(x_j));
    at the first rejection a token is drawn from normalise(max(p_j − q_j, 0)) and the rest are dropped;
    if all k are kept, one more token is drawn from p_{k} — the "bonus" that comes free with the same pass.
The emitted tokens are distributed exactly as if the target had sampled them one by one. With greedy decoding
the rule reduces to: keep draft tokens while they equal the target's argmax, then emit the target's argmax.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from model.ngram import NgramIndex
from model.runner import PassItem
from model.sampling import Nucleus, Row, draw, nuclei, uniform
from model.timing import read_timer

# With ``Engine.draft_stop_below`` > 0 the draft model stops guessing once the likeliest token of its own
# distribution (after temperature and top-p) is less likely than that: an unsure guess is likely rejected, and the
# guesses after it are wasted passes (dynamic draft length: SpecDec++, Huang et al. 2024; EAGLE-2's confidence).
# Which guesses are made depends on the draft alone, so the output keeps the target's distribution (greedy: its
# tokens). Off by default: on held-out code here it kept more of fewer guesses (70 % of 3.8 a trip at 0, 84 % of
# 2.0 at 0.5) and bought no tokens/s (0.90x against 0.83-0.88x, docs/benchmarks.md).
DRAFT_STOP_BELOW = 0.0


def accept_greedy(target_logits: torch.Tensor, draft_tokens: list[int]) -> tuple[int, list[int]]:
    """Greedy verification.

    target_logits: (k + 1, V) the target's logits at the positions after the last committed token and after
    each draft token. draft_tokens: the k guesses. Returns (accepted count a, emitted tokens: the a accepted
    guesses followed by the target's own token, so 1 ≤ len(emitted) ≤ k + 1).
    """
    target = target_logits.argmax(dim=-1).tolist()  # (k + 1,)
    out = []
    for j, guess in enumerate(draft_tokens):
        if guess != target[j]:
            return j, out + [target[j]]
        out.append(guess)
    return len(draft_tokens), out + [target[len(draft_tokens)]]


def accept_sampled(p, q, draft_tokens: list[int],
                   generator: torch.Generator | None) -> tuple[int, list[int]]:
    """Stochastic verification that preserves the target's distribution.

    p: the k + 1 target distributions, q: the k distributions the draft sampled its guesses from (same
    temperature, top-k and top-p), each as float32 (rows, V) tensors or lists of ``Nucleus`` / ``Row``
    (``model.sampling.nuclei``); draft_tokens: the k guesses.
    Returns (accepted count a, emitted tokens), 1 ≤ len(emitted) ≤ k + 1.
    """
    if isinstance(p, torch.Tensor):
        p = [Row(row) for row in p]
    if isinstance(q, torch.Tensor):
        q = [Row(row) for row in q]
    out = []
    device = generator.device if generator is not None else "cpu"  # where the request's draws are made
    for j, x in enumerate(draft_tokens):
        px, qx = p[j].prob(x), q[j].prob(x)
        r = uniform(generator)
        if qx > 0 and r < min(1.0, px / qx):
            out.append(x)
            continue
        V = max(_reach(p[j]), _reach(q[j]))  # the dense rows need only reach the largest id of either support
        residual = torch.clamp(p[j].dense(V, device) - q[j].dense(V, device), min=0.0)
        total = float(residual.sum())
        # p == q up to rounding leaves no residual mass; then p itself is the right distribution.
        return j, out + [draw(residual / total, generator) if total > 1e-12 else p[j].draw(generator)]
    k = len(draft_tokens)
    return k, out + [p[k].draw(generator)]


def _reach(row: Nucleus | Row) -> int:
    """How long a dense copy of ``row`` must be to hold its support: V for a ``Row``, max id + 1 for a nucleus."""
    return row.probs.numel() if isinstance(row, Row) else max(row.ids) + 1


@dataclass
class Guesses:
    """The apprentice's proposal for one verify step, per scheduled sequence b (in schedule order).

    kind: who guessed, "model" (the draft model) or "ngram" (prompt lookup). ks[b]: how many guesses of sequence b
    the target checks (0: it decodes plainly inside the verify pass). tokens[b]: its ks[b] guessed token ids.
    q[b]: per guess, the distribution the draft model drew it from (``Nucleus`` / ``Row``; None for a greedy
    request; empty for prompt lookup). draft_ms: wall ms of the guessing, draft passes included; read_ms: ms of
    those passes spent reading the draft's weights (``model/timing.py``).
    """

    kind: str
    ks: list[int]
    tokens: list[list[int]]
    q: list[list[Nucleus | Row | None]] = field(default_factory=list)
    draft_ms: float = 0.0
    read_ms: float = 0.0

    @property
    def verifies(self) -> bool:
        """False when prompt lookup found no guess anywhere: the step is an ordinary decode step after looking."""
        return self.kind == "model" or any(self.ks)

    def q_of(self, b: int) -> list[Nucleus | Row | None]:
        """The k distributions sequence b's guesses were drawn from: a point mass on each deterministic guess of
        prompt lookup, the draft's own for the draft model."""
        return [Nucleus.point(t) for t in self.tokens[b]] if self.kind == "ngram" else self.q[b]


class Speculator:
    """The apprentice of one engine (``Engine.speculator``, built by the engine): the draft model, or prompt
    lookup (``model/ngram.py``), as the engine's ``draft_kind`` says. ``propose`` guesses up to ``draft_k`` tokens
    per decoding sequence; ``prefill`` lets the draft model read the prompt beside the target. It reads the
    engine's public settings (``draft``, ``draft_cache``, ``draft_k``, ``draft_kind``, ``draft_stop_below``) and
    runs the draft's passes on the engine's ``model_runner``."""

    def __init__(self, engine):
        self.engine = engine

    def on(self, phase: str) -> bool:
        """True when a step of ``phase`` ("prefill", "mixed", "decode") verifies guesses: a decode step, with
        guesses on and an apprentice ready."""
        e = self.engine
        return e.draft_k > 0 and phase == "decode" and (e.draft_kind == "ngram" or e.draft is not None)

    def prefill(self, sched) -> float:
        """The draft model reads the prompt alongside the target: in a prefill (or mixed) pass, each prompt chunk
        of ``sched`` goes through one draft pass too, from where the draft's cache ends (with the tokens a
        prefix-cache hit spared the target), as serving engines run a draft's prefill beside the target's.
        Otherwise the first verify trip would catch the draft up on the whole prompt and count that reading as
        decoding. The cost lands in the prefill step's time (time to first token), not in the trips. Returns the
        draft pass's ms (0.0 when no draft model guesses)."""
        e = self.engine
        if not (e.draft_k > 0 and e.draft_kind == "model" and e.draft is not None):
            return 0.0
        chunks = [it for it in sched.items if it.seq.in_prefill and it.seq.draft_computed <= it.start]
        if not chunks:
            return 0.0
        e.model_runner.sync()
        t = time.perf_counter_ns()
        # from where the draft's cache ends: a prefix-cache hit spares the target those tokens, not the draft
        items = [PassItem(it.seq.token_ids[it.seq.draft_computed:it.start + it.count], it.seq.draft_computed,
                          it.seq.table) for it in chunks]
        input_ids, batch, logit_index, _, _, _ = e.model_runner.pack(items, e.draft_cache, e.draft)
        e.forward_parts(input_ids, batch, logit_index, e.draft, e.draft_cache)
        for it in chunks:
            it.seq.draft_computed = it.start + it.count
        e.model_runner.sync()
        return (time.perf_counter_ns() - t) / 1e6

    def propose(self, sched) -> Guesses | None:
        """The apprentice guesses for the scheduled decode sequences ``sched``: the draft model at most
        ``draft_k`` a sequence, stopping after a guess whose distribution's likeliest token is under
        ``draft_stop_below`` (``DRAFT_STOP_BELOW``), or prompt lookup. Returns the guesses, or None when a sequence
        has more than its newest token to feed (a recompute: the step is a plain one)."""
        if any(it.start != len(it.seq.token_ids) - 1 for it in sched.items):
            # a verify pass feeds each sequence's newest token only: a sequence readmitted after preemption whose
            # prefix-cache hit reaches past its prompt is a "decode" by its prompt, but recomputes its answer first
            return None
        e = self.engine
        seqs = [it.seq for it in sched.items]
        guesses = Guesses(e.draft_kind, self._room(seqs), [[] for _ in seqs], [[] for _ in seqs])
        e.model_runner.sync()
        t = time.perf_counter_ns()
        if guesses.kind == "ngram":
            self._look_up(seqs, guesses)
            if not guesses.verifies:
                return guesses  # no guess anywhere: an ordinary decode step
        else:
            self._draft(seqs, guesses)
        e.model_runner.sync()
        guesses.draft_ms = (time.perf_counter_ns() - t) / 1e6
        return guesses

    def _room(self, seqs: list) -> list[int]:
        """Guesses each sequence may get: draft_k, fewer near its token limit or the context window, 0 when the KV
        pool has no blocks for them (that sequence decodes plainly inside the verify pass)."""
        e = self.engine
        ks = []
        for seq in seqs:
            n = len(seq.token_ids)
            k = max(0, min(e.draft_k, seq.max_new_tokens - seq.num_generated - 1, e.config.n_positions - n - 1))
            if k and not e.blocks.ensure_capacity(seq.table, n + k):
                k = 0  # no room for the guesses: this sequence decodes plainly inside the verify pass
            ks.append(k)
        return ks

    @staticmethod
    def _look_up(seqs: list, g: Guesses) -> None:
        """Prompt lookup: each sequence's guesses copied from its own earlier tokens (no pass at all)."""
        for b, seq in enumerate(seqs):
            if g.ks[b]:
                if seq.ngram_index is None:
                    seq.ngram_index = NgramIndex()
                g.tokens[b] = seq.ngram_index.propose(seq.token_ids, g.ks[b])
                g.ks[b] = len(g.tokens[b])  # nothing matched: this sequence decodes plainly in the verify pass

    def _draft(self, seqs: list, g: Guesses) -> None:
        """The draft model guesses: one draft pass per guess (the first also catches the draft's cache up), each
        sequence drawing its guess as the target would draw (greedy: the argmax; else from its nucleus)."""
        e = self.engine
        ks, stop_below = g.ks, e.draft_stop_below
        lone = self._lone_run(seqs, ks)
        timer = read_timer(e.device) if lone is not None else None
        for j in range(max(ks)):
            rows = [b for b, k in enumerate(ks) if j < k]
            if not rows:  # every sequence's draft stopped early
                break
            logits = self._draft_pass(seqs, rows, j, g, lone, timer)  # (len(rows), T, V)
            for row, b in enumerate(rows):
                token, q, sure = self._guess(logits[row, -1:], seqs[b], stop_below)
                g.tokens[b].append(token)
                g.q[b].append(q)
                if sure < stop_below and j + 1 < ks[b]:  # unsure: no more guesses for this sequence
                    ks[b] = j + 1
        if timer is not None:
            g.read_ms += timer.ms()
        for b, seq in enumerate(seqs):
            if ks[b]:
                seq.draft_computed = len(seq.token_ids) + ks[b] - 1

    def _lone_run(self, seqs: list, ks: list[int]) -> int | None:
        """A lone sequence whose blocks (up to its last guess) are consecutive guesses token by token on the lean
        path (``GPT2.decode_one``): the first slot of its run of blocks; None otherwise."""
        e = self.engine
        if len(seqs) == 1 and ks[0]:
            with torch.inference_mode():
                if e.draft.flat_ready():
                    return seqs[0].table.run_start(len(seqs[0].token_ids) + ks[0], e.block_size)
        return None

    def _draft_pass(self, seqs: list, rows: list[int], j: int, g: Guesses, lone: int | None,
                    timer) -> torch.Tensor:
        """Draft pass j (0-based guess index) for the sequences ``rows``: logits (len(rows), T, V), the last row of
        each the distribution of its next guess. A lone run feeds one token (or two, to catch up after a bonus
        token) through ``decode_one``; otherwise one packed pass."""
        e = self.engine
        seq0, last = seqs[rows[0]], len(seqs[rows[0]].token_ids) - 1
        if lone is not None and (j > 0 or seq0.draft_computed >= last - 1):  # one token to feed, or two
            if j == 0:  # from where the draft's cache ends: the last token, or (after a bonus token) two
                position = min(seq0.draft_computed, last)
                fed = seq0.token_ids[position:]
            else:
                fed, position = g.tokens[0][-1:], last + j
            with torch.inference_mode():
                return e.draft.decode_one(fed, position, e.draft_cache, lone, timer)[None, None]
        items = []
        for b in rows:
            seq = seqs[b]
            if j == 0:
                start = min(seq.draft_computed, len(seq.token_ids) - 1)
                items.append(PassItem(seq.token_ids[start:], start, seq.table))
            else:
                items.append(PassItem([g.tokens[b][-1]], len(seq.token_ids) + j - 1, seq.table))
        input_ids, batch, logit_index, _, pick, _ = e.model_runner.pack(items, e.draft_cache, e.draft)
        logits, _, _, read = e.forward_parts(input_ids, batch, logit_index, e.draft, e.draft_cache)
        g.read_ms += read
        return logits.view(len(items), 1, -1) if pick is not None else logits

    @staticmethod
    def _guess(last: torch.Tensor, seq, stop_below: float) -> tuple[int, Nucleus | Row | None, float]:
        """One guess from the draft's logits ``last`` (1, V) for ``seq``: (token, the distribution it was drawn
        from or None for greedy, the probability of that distribution's likeliest token, 1.0 when not needed)."""
        params = seq.sampling
        if params.greedy:  # the verify rule compares argmaxes: no distribution needed
            token = int(torch.argmax(last[0]))
            return token, None, float(torch.softmax(last[0], -1)[token]) if stop_below else 1.0
        q = nuclei(last, params)[0]
        return q.draw(seq.generator), q, q.top(1)[0][1]
