"""Speculative decoding: a small draft model guesses k tokens, the target checks them all in one pass.

``speculative_step`` is the engine's verify step (draft passes, one target pass, acceptance); the two
acceptance rules below decide which guesses are kept. A lone request's draft guesses on the lean single-sequence
path (``GPT2.decode_one``: no packed inputs); a batch's draft runs packed passes like the target's.

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

import torch

from model.ngram import NgramIndex
from model.report import StepReport
from model.runner import PassItem
from model.sampling import Nucleus, Row, draw, nuclei, uniform
from model.scheduler import Status
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


def draft_prefill(engine, sched) -> float:
    """The draft model reads the prompt alongside the target: in a prefill (or mixed) pass of ``engine``, each
    prompt chunk of ``sched`` goes through one draft pass too, from where the draft's cache ends (with the tokens
    a prefix-cache hit spared the target), as serving engines run a draft's prefill beside the target's.
    Otherwise the first verify trip would catch the draft up on the whole prompt and count that reading as
    decoding. The cost lands in the prefill step's time (time to first token), not in the trips. Returns the
    draft pass's ms (0.0 when no draft model guesses)."""
    if not (engine.draft_k > 0 and engine.draft_kind == "model" and engine.draft is not None):
        return 0.0
    chunks = [it for it in sched.items if it.seq.in_prefill and it.seq.draft_computed <= it.start]
    if not chunks:
        return 0.0
    engine._sync()
    t = time.perf_counter_ns()
    # from where the draft's cache ends: a prefix-cache hit spares the target those tokens, not the draft
    items = [PassItem(it.seq.token_ids[it.seq.draft_computed:it.start + it.count], it.seq.draft_computed, it.seq.table)
             for it in chunks]
    input_ids, batch, logit_index, _, _, _ = engine._pack_pass(items, engine.draft_cache, False)
    engine.forward_parts(input_ids, batch, logit_index, engine.draft, engine.draft_cache)
    for it in chunks:
        it.seq.draft_computed = it.start + it.count
    engine._sync()
    return (time.perf_counter_ns() - t) / 1e6


def speculative_step(engine, sched, t0: int) -> StepReport:
    """One verify step of ``engine`` (``model.engine.Engine``) over the scheduled decode sequences ``sched``:
    the apprentice (the draft model, or prompt lookup) guesses k tokens per sequence, one target pass checks
    them all, the agreeing prefix is kept (``accept_greedy`` / ``accept_sampled``) with the target's own token
    after it. The draft model guesses at most ``engine.draft_k``, and stops after a guess whose distribution's
    likeliest token is under ``engine.draft_stop_below`` (``DRAFT_STOP_BELOW``). t0: perf_counter_ns at the
    step's start. Returns the step's StepReport (phase "verify"), or the plain decode step's when prompt lookup
    found no guess anywhere or a sequence has more than its newest token to feed (a recompute)."""
    if any(it.start != len(it.seq.token_ids) - 1 for it in sched.items):
        # a verify pass feeds each sequence's newest token only: a sequence readmitted after preemption whose
        # prefix-cache hit reaches past its prompt is a "decode" by its prompt, but recomputes its answer first
        return engine._plain_step(sched, t0)
    seqs = [it.seq for it in sched.items]
    ks = []
    for seq in seqs:
        n = len(seq.token_ids)
        k = max(0, min(engine.draft_k, seq.max_new_tokens - seq.num_generated - 1,
                       engine.config.n_positions - n - 1))
        if k and not engine.blocks.ensure_capacity(seq.table, n + k):
            k = 0  # no room for the guesses: this sequence decodes plainly inside the verify pass
        ks.append(k)
    # 1. the apprentice proposes: the draft model, one draft pass per guess (the first also catches the draft's
    # cache up), or prompt lookup (no pass at all)
    engine._sync()
    t_draft = time.perf_counter_ns()
    proposals: list[list[int]] = [[] for _ in seqs]
    draft_read_ms = 0.0
    q_rows: list[list[Nucleus | Row | None]] = [[] for _ in seqs]  # per guess, the draft's distribution
    if engine.draft_kind == "ngram":
        for b, seq in enumerate(seqs):
            if ks[b]:
                if seq.ngram_index is None:
                    seq.ngram_index = NgramIndex()
                proposals[b] = seq.ngram_index.propose(seq.token_ids, ks[b])
                ks[b] = len(proposals[b])  # nothing matched: this sequence decodes plainly in the verify pass
        if not any(ks):
            report = engine._plain_step(sched, t0)  # no guess anywhere: an ordinary decode step
            report.stages.insert(report.stages.index("pack"), "lookup_draft")  # after looking for one
            return report
        ks_model = [0] * len(seqs)
    else:
        ks_model = ks
    stop_below = engine.draft_stop_below
    # a lone sequence whose blocks are consecutive guesses token by token on the lean path (``GPT2.decode_one``)
    lone = None
    if len(seqs) == 1 and ks_model[0]:
        with torch.inference_mode():
            if engine.draft.flat_ready():
                lone = seqs[0].table.run_start(len(seqs[0].token_ids) + ks_model[0], engine.block_size)
    timer = read_timer(engine.device) if lone is not None else None
    for j in range(max(ks_model)):
        rows = [b for b, k in enumerate(ks_model) if j < k]
        if not rows:  # every sequence's draft stopped early
            break
        seq0, last = seqs[rows[0]], len(seqs[rows[0]].token_ids) - 1
        if lone is not None and (j > 0 or seq0.draft_computed >= last - 1):  # one token to feed, or two
            if j == 0:  # from where the draft's cache ends: the last token, or (after a bonus token) two
                position = min(seq0.draft_computed, last)
                fed = seq0.token_ids[position:]
            else:
                fed, position = proposals[0][-1:], last + j
            with torch.inference_mode():
                logits = engine.draft.decode_one(fed, position, engine.draft_cache, lone, timer)[None, None]
        else:
            items = []
            for b in rows:
                seq = seqs[b]
                if j == 0:
                    start = min(seq.draft_computed, len(seq.token_ids) - 1)
                    items.append(PassItem(seq.token_ids[start:], start, seq.table))
                else:
                    items.append(PassItem([proposals[b][-1]], len(seq.token_ids) + j - 1, seq.table))
            input_ids, batch, logit_index, _, pick, _ = engine._pack_pass(items, engine.draft_cache, False)
            logits, _, _, read = engine.forward_parts(input_ids, batch, logit_index, engine.draft,
                                                      engine.draft_cache)
            draft_read_ms += read
            if pick is not None:
                logits = logits.view(len(items), 1, -1)
        for row, b in enumerate(rows):
            params = seqs[b].sampling
            if params.greedy:  # the verify rule compares argmaxes: no distribution needed
                token, q = int(torch.argmax(logits[row, -1])), None
                sure = float(torch.softmax(logits[row, -1], -1)[token]) if stop_below else 1.0
            else:
                q = nuclei(logits[row, -1:], params)[0]
                token = q.draw(seqs[b].generator)
                sure = q.top(1)[0][1]
            proposals[b].append(token)
            q_rows[b].append(q)
            if sure < stop_below and j + 1 < ks_model[b]:  # unsure: no more guesses for this sequence
                ks_model[b] = j + 1
    if timer is not None:
        draft_read_ms += timer.ms()
    for b, seq in enumerate(seqs):
        if ks_model[b]:
            seq.draft_computed = len(seq.token_ids) + ks_model[b] - 1
    engine._sync()
    draft_ms = (time.perf_counter_ns() - t_draft) / 1e6
    # 2. one target pass checks every guess (k + 1 positions per sequence)
    items = [PassItem([seq.token_ids[-1]] + proposals[b], len(seq.token_ids) - 1, seq.table, ks[b] + 1)
             for b, seq in enumerate(seqs)]
    input_ids, batch, logit_index, context, pick, rows_computed = engine._pack_pass(items, engine.cache, True)
    logits, verify_ms, layer_ms, read_ms = engine.forward_parts(input_ids, batch, logit_index)
    if pick is not None:
        logits = logits[pick.to(logits.device)]  # (B, K, V)
    # 3. keep the agreeing prefix, then the target's own token
    now = time.perf_counter_ns()
    events, accepted, bonus = [], 0, 0
    for b, seq in enumerate(seqs):
        k = ks[b]
        rows = logits[b, :k + 1].float()  # (k + 1, V)
        if engine.record_logits:
            engine.logits.setdefault(seq.request_id, []).extend(rows.clone())
        if seq.sampling.greedy:
            a, emitted = accept_greedy(rows, proposals[b])
        else:
            p = nuclei(rows, seq.sampling)  # the k + 1 target distributions
            if engine.draft_kind == "ngram":  # a deterministic guess: the draft's q is a point mass on it
                q = [Nucleus.point(t) for t in proposals[b]]
            else:
                q = q_rows[b]
            a, emitted = accept_sampled(p, q, proposals[b], seq.generator)
        accepted += a
        bonus += int(k > 0 and a == k)
        if seq.sampling.greedy:  # the top-5 of every emitted row: greedy shows the plain softmax
            top = torch.topk(torch.softmax(rows[:len(emitted)], dim=-1), min(5, rows.size(-1)))
            tops = [list(zip(i, v)) for i, v in zip(top.indices.tolist(), top.values.tolist())]
        else:  # sampling, the rows' distributions
            tops = [p[i].top(5) for i in range(len(emitted))]
        for i, token in enumerate(emitted):
            event = engine._emit(seq, token, tops[i], now)
            event.accepted_from_draft = i < a
            events.append(event)
            if event.finish_reason is not None:
                break
        if seq.status is Status.RUNNING:
            seq.num_computed = len(seq.token_ids) - 1  # the newest token is fed by the next pass
            seq.draft_computed = min(seq.draft_computed, seq.num_computed)
            engine.blocks.truncate(seq.table, len(seq.token_ids))  # give back blocks of rejected guesses
            engine.blocks.register_full_blocks(seq.table, seq.token_ids, seq.num_computed)
    proposed = sum(ks)
    engine.spec_proposed += proposed
    engine.spec_accepted += accepted
    engine._step += 1
    return StepReport(
        step=engine._step, phase="verify", request_ids=[s.request_id for s in seqs], batch=len(seqs),
        tokens_in=sum(k + 1 for k in ks), tokens_out=len(events), wall_ms=(time.perf_counter_ns() - t0) / 1e6,
        rows_computed=rows_computed,
        forward_ms=verify_ms, weight_read_ms=read_ms, draft_weight_read_ms=draft_read_ms,
        weight_bytes=engine.weight_bytes, kv_bytes=context * engine.kv_bytes_per_token,
        kv_bytes_in_use=engine.kv_bytes_in_use, blocks_in_use=engine.blocks_in_use, num_blocks=engine.num_blocks,
        prefix_hit_tokens=sched.prefix_hit_tokens, layer_ms=layer_ms, tokens=events, proposed=proposed,
        accepted=accepted, bonus=bonus, draft_ms=draft_ms, verify_ms=verify_ms, draft_kind=engine.draft_kind,
        guesses=[{"request_id": s.request_id, "labels": [engine._label(t) for t in proposals[b]]}
                 for b, s in enumerate(seqs)],
        workers=list(engine.last_workers) if engine.runner is not None else [],
        stages=engine._head_stages(sched) + ["lookup_draft" if engine.draft_kind == "ngram" else "draft", "pack"]
        + engine._pass_stages() + ["verify" if all(s.sampling.greedy for s in seqs) else "verify_sampled"])
