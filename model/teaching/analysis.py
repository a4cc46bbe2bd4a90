"""Measurements for the tour: real runs of the engine's model, returned as plain data (no Qt).

The GUI process never runs torch; it asks the engine process with one command,
``{"op": "analyze", "analysis_id": str, "kind": KIND, ...params}``, and gets back
``{"type": "analysis", "analysis_id": ..., "kind": KIND, ...plain data}`` (see ``model/service.py``).

Every figure here is *measured* on this computer (times with ``time.perf_counter_ns`` around real forward
passes, via the engine's ``StepReport``) or *counted* from what the engine actually did (tokens fed, K/V rows
computed, blocks shared). Each kind builds fresh ``Engine`` objects on the engine's model and tokenizer, so the
running session's requests and KV cache are never touched. Times are milliseconds; bytes are bytes.

Kinds (each also a function of the same name):
    attention    attention weights of every layer and head for the prompt (readable attention)        §05
    next_token   the top-k next tokens with their raw logits                                           §06
    prefill      prefill time for a short and a long prompt                                            §05
    decode       decode time per token and this computer's floor (weight bytes ÷ bandwidth)            §07
    kv_cache     the same answer with and without the KV cache: times and K/V rows computed            §08
    stream       token times of one answer (TTFT, inter-token latency) and TTFT behind a long prompt  §10
    reasoning    hidden "thinking" tokens before the visible answer: TTFT vs first visible token        §11
    batching     static vs continuous batching on the scheduler, step by step, with block tables       §12
    speculative  the draft model guesses, the target verifies (only when a draft model is loaded)       §13
    prefix       two requests sharing a system prompt: the second reuses cached blocks                  §15
    thin_book    the model with fp32 and int8 weights: bytes and decode trip ms (thin_book.py)        §14
    speculative_trip  one verify trip of the draft model's k guesses over a running text (the game)     game
    closing_line the source's closing line written by the model, one real decode trip per token
                 (teacher forcing: each trip feeds the line's own previous token, not a sample)         end
    tour         all of the above for one prompt, in one dict keyed by kind
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from model.catalog import card_acceptance
from model.engine import Engine
from model.engine import PassItem as _PassItem
from model.sampling import SamplingParams
from model.teaching import lesson_runs
from model.teaching.lesson_runs import LESSON_REPEATS
from model.teaching.lessons import measured_split, steps_with_cpu
from model.teaching.thin_book import LIVE_SAMPLING, thin_book  # LIVE_SAMPLING: decode as the Live page samples

KV_BUDGET_BYTES = 8 * 2**20  # a small pool: one context window of the bundled model (the engine keeps one)
SYSTEM_PROMPT = "You are a concise assistant. "  # the prefix-cache and long-prompt runs' (seed §01's example)
STREAM_SAMPLING = SamplingParams(temperature=0.8, top_k=40, seed=0)  # seeded samples: a tiny model's greedy text loops
REPEATS = 3  # median of this many runs for times that are compared with each other


def _engine(src: Engine, **kw) -> Engine:
    """A fresh engine on ``src``'s model and tokenizer (its own small KV pool, no shared state)."""
    kw.setdefault("kv_budget_bytes", KV_BUDGET_BYTES)
    kw.setdefault("max_step_tokens", src.config.n_positions)
    return Engine(src.model, src.tokenizer, **kw)


def _ids(engine: Engine, text: str) -> list[int]:
    ids = engine.tokenizer.encode(text)
    return ids or ([engine.tokenizer.eos_token_id] if engine.tokenizer.eos_token_id is not None else [0])


def _fit(ids: list[int], n: int) -> list[int]:
    """``ids`` repeated or cut to exactly ``n`` tokens (a long prompt built from the visitor's own)."""
    out = list(ids)
    while len(out) < n:
        out += ids
    return out[:n]


def _labels(engine: Engine, ids: list[int]) -> list[str]:
    return [engine.tokenizer.label(i) for i in ids]


def _run(engine: Engine) -> list:
    return list(engine.run(max_steps=10_000))


def _median(values: list[float]) -> float:
    return float(statistics.median(values)) if values else 0.0


# --------------------------------------------------------------------------------------------------------------
def attention(engine: Engine, prompt: str, max_tokens: int = 24) -> dict:
    """Attention weights softmax(QKᵀ/√d) of every layer and head for the prompt's last ``max_tokens`` tokens.

    Returns ``labels``, ``ids``, ``n_layer``, ``n_head`` and ``weights[layer][head][query][key]`` (floats, rows
    sum to 1; keys after the query are 0: causal attention). Uses the model's readable attention for one plain
    forward pass (Vaswani et al. 2017, eq. 1), then switches back.
    """
    ids = _ids(engine, prompt)[-max_tokens:]
    model = engine.model
    dev = next(model.parameters()).device
    model.set_readable_attention(True)
    try:
        with torch.inference_mode():
            model(torch.tensor([ids], device=dev))
        weights = [w[0].float().cpu() for w in model.attention_weights()]  # each (nh, T, T)
    finally:
        model.set_readable_attention(False)
    return {"ids": ids, "labels": _labels(engine, ids), "n_layer": len(weights), "n_head": weights[0].shape[0],
            "weights": [[[[round(x, 4) for x in row] for row in head] for head in layer.tolist()] for layer in weights]}


def next_token(engine: Engine, prompt: str, k: int = 50) -> dict:
    """The model's top-``k`` next tokens after the prompt: ``ids``, ``labels``, raw ``logits`` (descending) and
    ``prob_full`` (softmax over the whole vocabulary at temperature 1), plus the pass's ``forward_ms``."""
    ids = _ids(engine, prompt)[-(engine.config.n_positions - 1):]
    model = engine.model
    dev = next(model.parameters()).device
    t0 = time.perf_counter_ns()
    with torch.inference_mode():
        logits = model(torch.tensor([ids], device=dev))[0, -1].float().cpu()
    ms = (time.perf_counter_ns() - t0) / 1e6
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(logits, min(k, logits.numel()))
    top_ids = top.indices.tolist()
    return {"prompt_tokens": len(ids), "ids": top_ids, "labels": _labels(engine, top_ids),
            "logits": [round(float(x), 4) for x in top.values], "prob_full": [float(probs[i]) for i in top_ids],
            "vocab_size": int(logits.numel()), "forward_ms": ms}


def _prefill_ms(engine: Engine, ids: list[int]) -> float:
    e = _engine(engine, prefix_cache=False)
    e.add_request(ids, max_new_tokens=1)
    report = e.step()
    return report.forward_ms


def prefill(engine: Engine, prompt: str, long_tokens: int | None = None) -> dict:
    """Prefill (one pass over every prompt token) for the prompt and for a long prompt built from it.

    ``long_tokens`` defaults to 3/4 of the context window. Median of ``REPEATS`` fresh runs each.
    """
    short = _ids(engine, prompt)[: engine.config.n_positions // 4]
    n_long = long_tokens or (3 * engine.config.n_positions) // 4
    long = _fit(short, n_long)
    short_ms = _median([_prefill_ms(engine, short) for _ in range(REPEATS)])
    long_ms = _median([_prefill_ms(engine, long) for _ in range(REPEATS)])
    return {"short_tokens": len(short), "short_ms": short_ms, "long_tokens": len(long), "long_ms": long_ms}


def dictionary_bytes(model) -> int:
    """Bytes of a model's dictionary, what every trip reads whatever its depth: the embedding (``wte``) and the
    LM head (the same tensor when tied), counted from the tensors' sizes and dtypes."""
    tensors = {id(model.wte.weight): model.wte.weight, id(model.lm_head_weight()): model.lm_head_weight()}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def decode(engine: Engine, prompt: str, steps: int = 16, bandwidth: float | None = None) -> dict:
    """Time of each decode pass (one new token) after the prompt, and the floor weight bytes ÷ bandwidth.

    ``bandwidth`` in bytes/s (the engine process's, measured once per machine); the floor is None without it.
    ``l3_bytes``: this CPU's last-level cache (None on a GPU or where the OS does not say); ``lives_in``: "cache"
    when the weights fit it, "dram" when not (the memory whose read speed ``bandwidth`` is, as
    ``model.hardware.decode_floors`` chooses it), None without a cache size.
    ``split``: the medians of the decode steps as measured reading, other work and the floor, with the lesson
    key every screen uses (``measured_split``; model.teaching.lessons.trip_split); per step ``whole_ms_all`` (wall_ms)
    and ``read_ms_all`` (weight_read_ms, 0 where the engine does not measure it).
    """
    e = _engine(engine)
    e.add_request(_ids(engine, prompt), max_new_tokens=steps + 1, sampling=LIVE_SAMPLING)
    stepped, cpu = steps_with_cpu(e, cpu=torch.get_num_threads() == 1)  # wall − CPU: waiting for a busy machine
    keep = [i for i, r in enumerate(stepped) if r.phase == "decode"]
    reports, cpu = [stepped[i] for i in keep], [cpu[i] for i in keep] if cpu else None
    ms = [r.forward_ms for r in reports]
    floor = e.weight_bytes / bandwidth * 1e3 if bandwidth else None
    from model.hardware import last_level_cache_bytes
    llc = last_level_cache_bytes() if next(e.model.parameters()).device.type == "cpu" else None
    lives_in = None if llc is None else "cache" if e.weight_bytes <= llc else "dram"  # decode_floors' rule
    return {"decode_ms": _median(ms), "decode_ms_all": ms, "weight_bytes": e.weight_bytes, "l3_bytes": llc,
            "lives_in": lives_in,
            "whole_ms_all": [r.wall_ms for r in reports], "read_ms_all": [r.weight_read_ms for r in reports],
            "bandwidth": bandwidth, "floor_ms": floor, "split": measured_split(reports, e.weight_bytes, bandwidth, cpu)}


def kv_cache(engine: Engine, prompt: str, steps: int = 24) -> dict:
    """The same greedy answer with the KV cache and without it (every pass recomputes every K and V).

    Returns the tokens written (``new_tokens``: one per pass, the prefill's included; fewer than ``steps + 1``
    when the model ends its text), per-pass times of one run, totals (``*_total_ms``: the medians of ``runs``
    interleaved runs after a warm-up, with ``*_summary`` min/max and the ``verdict``), K/V rows computed (tokens
    fed, summed over the decode passes: without the cache pass i feeds prompt + i tokens, with it 1), whether both
    answers were identical, and the source's case run for real: an 8-token prompt and 6 decode passes
    (``rows_8x6``: 69 without, 6 with).
    """
    ids = _ids(engine, prompt)[: engine.config.n_positions - steps - 2]

    def run(ids: list[int], n_new: int, cached: bool) -> tuple[list, list[int]]:
        e = _engine(engine, kv_cache=cached, prefix_cache=False)
        rid = e.add_request(ids, max_new_tokens=n_new)
        reports = _run(e)
        return reports, e.finished[rid].token_ids

    with_r, with_tokens = run(ids, steps + 1, True)
    without_r, without_tokens = run(ids, steps + 1, False)

    def rows(reports) -> int:
        return sum(r.tokens_in for r in reports[1:])  # decode passes only: the first pass is the prefill

    # the totals shown are medians of interleaved runs after a warm-up (model/teaching/lesson_runs.py), not one cold run
    timed = lesson_runs.kv_cache_times(engine, ids, steps, KV_BUDGET_BYTES)
    eight = _fit(ids, 8)
    small_with, _ = run(eight, 7, True)
    small_without, _ = run(eight, 7, False)
    return {"prompt_tokens": len(ids), "steps": steps, "new_tokens": len(with_tokens),
            "with_ms": [r.forward_ms for r in with_r], "without_ms": [r.forward_ms for r in without_r],
            "with_total_ms": timed["with"]["median"], "without_total_ms": timed["without"]["median"],
            "with_summary": timed["with"], "without_summary": timed["without"], "runs": timed["runs"],
            "verdict": timed["verdict"],
            "rows_with": rows(with_r), "rows_without": rows(without_r),
            "same_tokens": with_tokens == without_tokens,
            "rows_8x6": {"with": rows(small_with), "without": rows(small_without)}}


def stream(engine: Engine, prompt: str, n: int = 16, long_tokens: int | None = None) -> dict:
    """One answer streamed token by token: each token's text and time (ms since the request arrived), TTFT,
    inter-token latencies, tokens/s; and the TTFT of the same question behind a long uncached system prompt."""
    ids = _ids(engine, prompt)[: engine.config.n_positions // 4]
    e = _engine(engine)
    rid = e.add_request(ids, max_new_tokens=n, sampling=STREAM_SAMPLING)
    tokens = []
    for report in _run(e):
        for ev in report.tokens:
            tokens.append({"text": ev.text, "label": ev.label, "id": ev.token_id})
    res = e.finished[rid]
    times = [res.ttft_ms]
    for d in res.inter_token_ms:
        times.append(times[-1] + d)
    for tok, t in zip(tokens, times):
        tok["t_ms"] = t
    itl = res.inter_token_ms
    mean_itl = sum(itl) / len(itl) if itl else None
    n_long = long_tokens or (3 * engine.config.n_positions) // 4
    system = _fit(_ids(engine, SYSTEM_PROMPT), max(1, n_long - len(ids)))
    long_ttft = []
    for _ in range(REPEATS):
        e2 = _engine(engine, prefix_cache=False)
        rid2 = e2.add_request(system + ids, max_new_tokens=1)
        _run(e2)
        long_ttft.append(e2.finished[rid2].ttft_ms)
    return {"prompt_tokens": len(ids), "tokens": tokens, "ttft_ms": res.ttft_ms, "inter_token_ms": itl,
            "mean_itl_ms": mean_itl, "tokens_per_s": 1e3 / mean_itl if mean_itl else None,
            "long_prompt_tokens": len(system) + len(ids), "long_ttft_ms": _median(long_ttft)}


def split_think(written: int, think: int, visible: int) -> int:
    """How many of ``written`` tokens to hide as thinking: ``think`` when the model wrote all ``think +
    visible``, else the same proportion of what it wrote, leaving at least one visible token (0 if it wrote one).
    """
    if written >= think + visible:
        return think
    return max(0, written - max(1, written * visible // (think + visible)))


def reasoning(engine: Engine, prompt: str, think: int = 24, visible: int = 8) -> dict:
    """The model writes ``think`` tokens that are hidden (its "thinking"), then ``visible`` ones.

    A model that ends its text early (a poem is short) keeps the same hidden-to-visible proportion over the
    tokens it did write (``split_think``), so there is always a visible answer to show. Returns both token
    lists, ``think`` as used, whether the text ended early, and the time to the first token (hidden) and to the
    first visible token, measured (ms).
    """
    ids = _ids(engine, prompt)[: engine.config.n_positions // 4]
    e = _engine(engine)
    rid = e.add_request(ids, max_new_tokens=think + visible, sampling=STREAM_SAMPLING)
    _run(e)
    res = e.finished[rid]
    labels = _labels(engine, res.token_ids)
    ended_early = len(res.token_ids) < think + visible
    think = split_think(len(res.token_ids), think, visible)
    first_visible = None
    if res.ttft_ms is not None and len(res.token_ids) > think:
        first_visible = res.ttft_ms + sum(res.inter_token_ms[:think])
    return {"prompt_tokens": len(ids), "think": think, "ended_early": ended_early,
            "hidden": labels[:think], "visible": labels[think:],
            "visible_text": engine.tokenizer.decode(res.token_ids[think:]), "ttft_ms": res.ttft_ms,
            "first_visible_ms": first_visible}


def batching(engine: Engine, prompt: str, max_batch: int = 4, step_tokens: int = 32,
             repeats: int = LESSON_REPEATS) -> dict:
    """Static against continuous batching on the real scheduler, ``max_batch`` seats, eight requests of clearly
    different prompt and answer lengths (``model.teaching.lesson_runs.BATCHING_PLAN``, prompts built from the
    visitor's).

    Request C's long prompt is fed in chunks of at most ``step_tokens`` tokens per pass (chunked prefill).
    A warm-up run of each mode (recorded for the drawing), then ``repeats`` runs interleaved between the modes.
    For each mode: ``passes`` (one entry per pass ``{"ms", "phase", "rows": [[request, tokens fed,
    "prefill"|"decode"]]}``), ``trips``, ``ms`` (median, min, max, n of the summed forward ms) and ``total_ms``
    (that median); ``runs``; ``verdict`` and ``why_not`` (``model.teaching.lessons``); for continuous the block tables
    of the running requests when most blocks were in use.
    """
    return lesson_runs.batching(engine, _ids(engine, prompt)[:16], KV_BUDGET_BYTES, max_batch=max_batch,
                                step_tokens=step_tokens, repeats=repeats)


def speculative(engine: Engine, prompt: str, k: int = 4, n: int = 24, bandwidth: float | None = None) -> dict:
    """The draft model guesses ``k`` tokens, the target checks them in one pass (greedy, so the answer equals
    plain greedy decoding). ``available`` is False when the engine has no draft model. ``trips`` counts the
    prefill (trip 1, ``prefill_labels``: the token it wrote) and the verify ``passes`` (trips 2, 3, ...).

    Also why a smaller apprentice is not proportionally cheaper: ``draft_weight_bytes`` / ``weight_bytes``,
    ``draft_pass_ms`` (median of one draft pass: a verify trip's draft time ÷ its guesses) against
    ``plain_pass_ms`` (median plain decode pass), ``split``: the plain steps as measured reading, other work
    and (with ``bandwidth``, bytes/s) the floor (``measured_split``), and ``dictionary_bytes`` /
    ``draft_dictionary_bytes``: each model's embedding + LM head, which the apprentice reads in full on every
    guess however few chapters it has."""
    if engine.draft is None:
        return {"available": False}
    ids = _ids(engine, prompt)[: engine.config.n_positions // 4]
    e = _engine(engine)
    e.set_draft(engine.draft, engine.tokenizer)
    e.set_draft_k(k)
    rid = e.add_request(ids, max_new_tokens=n)
    passes, prefill_labels = [], []
    for r in _run(e):
        if r.phase != "verify" and not passes and not prefill_labels:  # trip 1: reading the question
            prefill_labels = [t.label for t in r.tokens]
        if r.phase == "verify":
            passes.append({"proposed": r.proposed, "accepted": r.accepted, "tokens": r.tokens_out,
                           "labels": [t.label for t in r.tokens], "draft_ms": r.draft_ms, "verify_ms": r.verify_ms})
    plain = _engine(engine)
    rid2 = plain.add_request(ids, max_new_tokens=n)
    plain_reports = _run(plain)
    trips = len(passes) + 1
    per_guess = [p["draft_ms"] / p["proposed"] for p in passes if p["proposed"]]
    plain_decode = [r for r in plain_reports if r.phase == "decode"]
    plain_ms = _median([r.forward_ms for r in plain_decode])
    split = measured_split(plain_decode, e.weight_bytes, bandwidth)
    return {"available": True, "k": k, "passes": passes, "trips": trips, "prefill_labels": prefill_labels,
            "weight_bytes": e.weight_bytes, "draft_weight_bytes": engine.draft.weight_bytes(),
            "dictionary_bytes": dictionary_bytes(engine.model),
            "draft_dictionary_bytes": dictionary_bytes(engine.draft),
            "draft_pass_ms": _median(per_guess), "plain_pass_ms": plain_ms, "split": split,
            "tokens": len(e.finished[rid].token_ids), "plain_trips": len(plain_reports),
            "same_tokens": e.finished[rid].token_ids == plain.finished[rid2].token_ids,
            "acceptance": e.acceptance_rate,
            "card_acceptance": card_acceptance()}  # the bundled pairs' rates on held-out code / poems


def speculative_trip(engine: Engine, prompt: str, k: int = 5) -> dict:
    """One real trip of speculative decoding over ``prompt`` (the game's running text): the bundled draft model
    guesses ``k`` tokens, the target checks them all in one verify pass (greedy) and keeps the agreeing prefix
    plus its own next token. The prompt is read first in a prefill pass that is not part of the answer.
    Returns ``available`` (False without a draft model), ``proposed``, ``accepted`` (0..proposed), the
    guesses' ``guesses`` labels, the ``written`` labels and ``text`` of the tokens the trip wrote (the first
    token comes from the reading pass), ``draft_ms`` and ``verify_ms`` (measured)."""
    if engine.draft is None:
        return {"available": False}
    k = max(1, int(k))
    ids = _ids(engine, prompt)[-(engine.config.n_positions - k - 3):]
    e = _engine(engine, prefix_cache=False)
    e.set_draft(engine.draft, engine.tokenizer)
    e.set_draft_k(k)
    e.draft_stop_below = 0.0  # the game deals k slips: the apprentice fills all k, sure or not
    e.add_request(ids, max_new_tokens=k + 2)
    first = e.step()  # reading the text (prefill), writes the first token
    r = e.step()  # the trip the game counts: draft guesses, one verify pass
    if r is None or r.phase != "verify":
        return {"available": True, "proposed": 0, "accepted": 0, "guesses": [], "written": [], "text": "",
                "draft_ms": 0.0, "verify_ms": 0.0}
    toks = list(first.tokens) + list(r.tokens)
    guesses = r.guesses[0]["labels"] if r.guesses else []
    return {"available": True, "k": k, "proposed": r.proposed, "accepted": r.accepted, "guesses": guesses,
            "written": [t.label for t in r.tokens], "text": "".join(t.text for t in toks),
            "draft_ms": r.draft_ms, "verify_ms": r.verify_ms}


def prefix(engine: Engine, prompt: str, system_tokens: int | None = None) -> dict:
    """Two requests that share a long system prompt: the second finds its blocks in the prefix cache.

    Measures the second request's prefill pass warm (after the first) and cold (on a fresh engine), median of
    ``REPEATS``; ``saved_ms`` = cold − warm. ``hit_tokens`` is what the block manager actually shared (whole
    blocks of ``block_size`` tokens only).
    """
    n_sys = system_tokens or engine.config.n_positions // 2
    system = _fit(_ids(engine, SYSTEM_PROMPT), n_sys)
    q1 = _ids(engine, prompt)[:24]
    q2 = _ids(engine, "And why does it help?")[:24]
    warm, cold, hits = [], [], 0
    for _ in range(REPEATS):
        e = _engine(engine)
        e.add_request(system + q1, max_new_tokens=2, request_id="first")
        _run(e)
        e.add_request(system + q2, max_new_tokens=1, request_id="second")
        r = e.step()
        warm.append(r.forward_ms)
        hits = r.prefix_hit_tokens
        _run(e)
        c = _engine(engine)
        c.add_request(system + q2, max_new_tokens=1)
        cold.append(c.step().forward_ms)
        _run(c)
    return {"system_tokens": len(system), "question_tokens": len(q2), "hit_tokens": hits,
            "block_size": engine.block_size, "warm_ms": _median(warm), "cold_ms": _median(cold),
            "saved_ms": _median(cold) - _median(warm)}


# The source's closing line (seed, the last paragraph), written live on the tour's last page.
CLOSING_LINE = "折腾一大圈，只为写出一句解释 KV 缓存的话。而让这句话写得出来的，正是 KV 缓存本身。"


def closing_line(engine: Engine, prompt: str = "", text: str = CLOSING_LINE) -> dict:
    """The model "writes" ``text`` with its KV cache: one real decode trip per token, teacher-forced.

    The line's words are the source's: trip j feeds token j-1 (trip 1 feeds the end-of-text token, the
    start of a document) at position j-1, appends its K and V to the paged KV cache and yields logits for
    token j; the token kept is the line's own token j, not a sample (a tiny model cannot write this line on
    its own; ``model_top`` says what it would have picked, ``hit`` whether that was the line's token).
    Each trip is a real forward pass of one token on a fresh engine's block pool, timed like a StepReport.

    Returns ``tokens``: one dict per token ``{"id", "label", "text" (printable text this token completes,
    maybe ""), "ms" (that trip's forward time), "blocks" (KV blocks in use after it), "cached" (tokens in the
    KV cache after it), "hit"}``, and ``total_ms``, ``trips``, ``block_size``, ``hits``.
    """
    from model.tokenizer import StreamDecoder

    e = _engine(engine, prefix_cache=False)
    ids = engine.tokenizer.encode(text)[: engine.config.n_positions - 1]
    start = engine.tokenizer.eos_token_id if engine.tokenizer.eos_token_id is not None else ids[0]
    feed = [start] + ids
    table = e.blocks.allocate_prompt(feed[:1])
    decoder = StreamDecoder(engine.tokenizer)
    out = []
    for j, tok in enumerate(ids):
        if not e.blocks.ensure_capacity(table, j + 1):
            break
        item = _PassItem([feed[j]], j, table)
        input_ids, batch, logit_index, _ = e.model_runner.pack_padded([item], e.cache)
        logits, ms, _ = e.forward_timed(input_ids, batch, logit_index)
        top = int(torch.argmax(logits[0, -1]))
        out.append({"id": tok, "label": engine.tokenizer.label(tok), "text": decoder.push(tok), "ms": ms,
                    "blocks": e.blocks_in_use, "cached": j + 1, "hit": top == tok,
                    "model_top": engine.tokenizer.label(top)})
    if out:
        out[-1]["text"] += decoder.flush()
    e.blocks.free_table(table)
    return {"text": text, "tokens": out, "trips": len(out), "total_ms": sum(t["ms"] for t in out),
            "block_size": e.block_size, "hits": sum(t["hit"] for t in out)}


KINDS: dict[str, Callable] = {
    "attention": attention, "next_token": next_token, "prefill": prefill, "decode": decode,
    "kv_cache": kv_cache, "stream": stream, "reasoning": reasoning, "batching": batching,
    "speculative": speculative, "prefix": prefix, "closing_line": closing_line, "thin_book": thin_book,
}
WITH_BANDWIDTH = ("decode", "speculative")  # kinds that take the measured read speed (bytes/s)
ON_DEMAND: dict[str, Callable] = {"speculative_trip": speculative_trip}  # served by analyze, not part of "tour"


def measure(engine: Engine, kind: str, prompt: str, bandwidth: float | None = None) -> dict:
    """One kind of ``KINDS`` for ``prompt``: its data, or ``{"error": msg}`` if it failed (never raises)."""
    fn = KINDS[kind]
    try:
        return fn(engine, prompt, bandwidth=bandwidth) if kind in WITH_BANDWIDTH else fn(engine, prompt)
    except Exception as exc:  # noqa: BLE001 - one broken measurement must not hide the others
        return {"error": f"{type(exc).__name__}: {exc}"}


def tour(engine: Engine, prompt: str, bandwidth: float | None = None) -> dict:
    """Every kind for one prompt, keyed by kind (an entry is ``{"error": msg}`` if that kind failed): a
    ``TourAnalysis`` run to its end."""
    return TourAnalysis(engine, {"prompt": prompt}, bandwidth).finish()["data"]


def _event(engine: Engine, cmd: dict, kind: str, prompt: str) -> dict:
    """The ``analysis`` event's head for ``cmd`` (no data yet)."""
    return {"type": "analysis", "analysis_id": cmd.get("analysis_id"), "kind": kind, "prompt": prompt,
            "model": engine.config.name, "n_positions": engine.config.n_positions}


def analyze(engine: Engine, cmd: dict, bandwidth: float | None = None) -> dict:
    """Serve one ``analyze`` command: ``{"kind", "analysis_id", "prompt", ...}`` → the ``analysis`` event.

    Unknown kinds and failures come back as ``{"type": "analysis", ..., "error": message}``; never raises.
    """
    kind = str(cmd.get("kind", "tour"))
    if kind == "tour":
        return TourAnalysis(engine, cmd, bandwidth).finish()
    prompt = str(cmd.get("prompt", ""))
    event = _event(engine, cmd, kind, prompt)
    t0 = time.perf_counter_ns()
    try:
        if kind in KINDS or kind in ON_DEMAND:
            params = {k: v for k, v in cmd.items() if k not in ("op", "kind", "analysis_id", "prompt")}
            if kind in WITH_BANDWIDTH:
                params.setdefault("bandwidth", bandwidth)
            event["data"] = {**KINDS, **ON_DEMAND}[kind](engine, prompt, **params)
        else:
            event["error"] = f"unknown analysis kind {kind!r}; known: tour, {', '.join([*KINDS, *ON_DEMAND])}"
    except Exception as exc:  # noqa: BLE001 - the engine process must keep serving
        event["error"] = f"{type(exc).__name__}: {exc}"
    event["elapsed_ms"] = (time.perf_counter_ns() - t0) / 1e6
    return event


class TourAnalysis:
    """An ``analyze`` command of kind "tour", measured one kind at a time (``step``), so that the engine process
    serves the commands that come meanwhile (a ``shutdown`` above all) between two kinds instead of after all
    twelve (seconds on the bundled books). ``event`` is the same ``analysis`` event that ``analyze`` gives;
    ``elapsed_ms`` counts only the measuring."""

    def __init__(self, engine: Engine, cmd: dict, bandwidth: float | None = None):
        self.engine, self.bandwidth = engine, bandwidth
        self.prompt = str(cmd.get("prompt", ""))
        self.event = _event(engine, cmd, "tour", self.prompt)
        self.event["data"] = {}
        self.todo = list(KINDS)
        self.elapsed_ns = 0

    def done(self) -> bool:
        return not self.todo

    def step(self) -> None:
        """Measure the next kind (``measure``: a failure is that kind's ``{"error": msg}``)."""
        kind = self.todo.pop(0)
        t0 = time.perf_counter_ns()
        self.event["data"][kind] = measure(self.engine, kind, self.prompt, self.bandwidth)
        self.elapsed_ns += time.perf_counter_ns() - t0
        self.event["elapsed_ms"] = self.elapsed_ns / 1e6

    def finish(self) -> dict:
        """Measure every kind still to do, one after another; returns ``event``."""
        while not self.done():
            self.step()
        return self.event


def analyze_model_dir(model_dir: str, cmd: dict, draft_dir: str | None = None, threads: int = 1) -> dict:
    """Load the model from ``model_dir`` and serve one command (for a short-lived helper process, e.g. the
    offscreen screenshot). The decode floor's read speed is the one the window's engine uses
    (``model.hardware.decode_floors``: measured once per machine, kept in the user's cache folder)."""
    from model.checkpoint import load_pretrained
    from model.hardware import decode_floors

    torch.set_num_threads(max(1, int(threads)))
    model, tokenizer = load_pretrained(model_dir)
    engine = Engine(model, tokenizer, kv_budget_bytes=KV_BUDGET_BYTES)
    if draft_dir:
        try:
            draft, dtok = load_pretrained(draft_dir)
            engine.set_draft(draft, dtok)
        except Exception:  # noqa: BLE001 - no draft: speculative reports unavailable
            pass
    return analyze(engine, cmd, bandwidth=decode_floors(engine.weight_bytes)["bandwidth_bytes_per_s"])


__all__ = ["analyze", "analyze_model_dir", "measure", "tour", "TourAnalysis", "KINDS", "ON_DEMAND", *KINDS,
           *ON_DEMAND]
