"""The engine's promises, each checked against an independent computation.

The ground truth is the model's plain causal forward (``model(ids)``, no cache, no batching, no engine), which
``test_parity.py`` ties to Hugging Face. Every engine feature that is only an optimisation (KV cache, batching,
prefix cache, chunked prefill, continuous scheduling) must give the same greedy tokens as that plain loop.
"""

from __future__ import annotations

import os

import pytest
import torch

from tests.model.conftest import N_POSITIONS, prompt_ids, run_to_end

NEW_TOKENS = 40
FUZZ_SEEDS = int(os.environ.get("ONE_TRIP_FUZZ_SEEDS", "6"))  # raise it to hunt for rare failures


@pytest.fixture
def spy_positions(tiny):
    """Records the positions tensor of every forward pass of the shared model (a hook on ``wpe``)."""
    model, _ = tiny
    seen: list[torch.Tensor] = []
    handle = model.wpe.register_forward_hook(lambda mod, args, out: seen.append(args[0].detach().clone()))
    yield seen
    handle.remove()


# logits of two passes that compute the same rows in another order (cached or not): fp32 and fp16 weights (fp32
# activations) differ by float rounding; int8's kernel rounds each row of activations to 63 levels a side of zero
# (model/weight_mm.py fbgemm_int8_mm), so an fp32 rounding difference upstream can move an activation across one
# such step (1/63 of its row's largest value), and a logit by about a tenth (0.12 measured on the tiny model): the
# tokens must still be the same
SAME_PASS_ATOL = {"fp32": 1e-4, "fp16": 1e-4, "int8": 0.25}


def naive_greedy(model, prompt: list[int], max_new: int, eos: int | None) -> list[int]:
    """Greedy decoding by recomputing ``model(ids)`` from scratch each token; stops as the engine documents."""
    ids, out = list(prompt), []
    with torch.no_grad():
        for _ in range(max_new):
            token = int(model(torch.tensor([ids]))[0, -1].argmax())
            if token == eos:
                break
            ids.append(token)
            out.append(token)
            if len(ids) >= model.config.n_positions:
                break
    return out


def generate(engine, prompts, max_new=NEW_TOKENS, **kwargs) -> tuple[list, list]:
    """Add every prompt, run to the end; returns (results in prompt order, reports)."""
    rids = [engine.add_request(p, max_new_tokens=max_new, **kwargs) for p in prompts]
    reports = run_to_end(engine)
    return [engine.finished[r] for r in rids], reports


def _prompts(tok, lengths, seed=0):
    return [prompt_ids(n, seed + 31 * i, tok.vocab_size, tok.eos_token_id) for i, n in enumerate(lengths)]


# ---- cached == uncached ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
@pytest.mark.parametrize("batch", [1, 3])
@pytest.mark.parametrize("n", [1, 7, 64])
def test_cached_equals_uncached(make_engine, tiny_in, n, batch, weights):
    """In each precision of the weights (model/weight_mm.py): the same kernels on the same rows, cached or not."""
    model, tok = tiny_in(weights)
    prompts = _prompts(tok, [n] * batch, seed=n)
    cached, uncached = make_engine(weights), make_engine(weights, kv_cache=False)
    cached.record_logits = uncached.record_logits = True
    res_c, _ = generate(cached, prompts)
    res_u, rep_u = generate(uncached, prompts)
    for rc, ru in zip(res_c, res_u):
        assert rc.token_ids == ru.token_ids
        assert rc.finish_reason == ru.finish_reason
        a, b = torch.stack(cached.logits[rc.request_id]), torch.stack(uncached.logits[ru.request_id])
        assert a.shape == b.shape and a.shape[1] == model.config.vocab_size
        assert torch.allclose(a, b, atol=SAME_PASS_ATOL[weights], rtol=0), (a - b).abs().max()
    # the baseline really recomputes: each pass feeds every token of every sequence
    assert all(r.kv_bytes == 0 for r in rep_u)
    assert rep_u[-1].tokens_in >= n + len(res_u[0].token_ids) - 1
    # and both equal the plain loop with no engine at all (batch 1 is enough to pin it)
    assert res_c[0].token_ids == naive_greedy(model, prompts[0], NEW_TOKENS, tok.eos_token_id)
    assert len(set(res_c[0].token_ids)) > 3  # the fixture model does not just repeat itself


def test_first_decode_is_at_position_n(make_engine, tiny, spy_positions):
    _, tok = tiny
    n = 23
    engine = make_engine()
    engine.add_request(_prompts(tok, [n])[0], max_new_tokens=4)
    reports = run_to_end(engine)
    assert [r.phase for r in reports] == ["prefill", "decode", "decode", "decode"]
    # flattened: a padded pass feeds (1, T) positions, a ragged one the flat (N,)
    assert spy_positions[0].flatten().tolist() == list(range(n))
    assert [p.flatten().tolist() for p in spy_positions[1:]] == [[n], [n + 1], [n + 2]]
    assert [t.position for r in reports for t in r.tokens] == [n, n + 1, n + 2, n + 3]


# ---- batching --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
def test_batched_equals_alone(make_engine, tiny_in, weights):
    """In each precision: a row's result does not depend on its batch-mates (every kernel of model/weight_mm.py
    multiplies each row on its own; FBGEMM's dynamic int8, which scales a whole pass's activations, is not used)."""
    model, tok = tiny_in(weights)
    prompts = _prompts(tok, [3, 17, 40, 1, 9], seed=7)
    together, reports = generate(make_engine(weights, max_batch=8), prompts, max_new=24)
    assert max(r.batch for r in reports) == len(prompts)  # they really shared passes
    for prompt, res in zip(prompts, together):
        alone, _ = generate(make_engine(weights), [prompt], max_new=24)
        assert res.token_ids == alone[0].token_ids
        assert res.token_ids == naive_greedy(model, prompt, 24, tok.eos_token_id)


def test_decode_mirror_equals_gather(make_engine, tiny, monkeypatch):
    """Batched decode reads the context from the decode mirror (model/kv_cache.py DecodeMirror), rebuilt as
    sequences join and leave; every sampled row equals the modules' pass, which gathers from the pool."""
    from model.kv_cache import DecodeMirror

    model, tok = tiny
    prompts = _prompts(tok, [5, 19, 2, 11, 8], seed=17)
    lengths = [6, 30, 14, 9, 22]  # they finish at different steps, so the batch changes under the mirror
    calls = {"prepare": 0, "rebuilds": 0}
    prepare = DecodeMirror.prepare

    def spy(self, *args):
        before = self.k
        out = prepare(self, *args)
        calls["prepare"] += 1
        calls["rebuilds"] += out is not None and self.k is not before
        return out

    monkeypatch.setattr(DecodeMirror, "prepare", spy)

    def run(engine):
        engine.record_logits = True
        rids = [engine.add_request(p, max_new_tokens=m) for p, m in zip(prompts, lengths)]
        run_to_end(engine)
        return [engine.logits[r] for r in rids], [engine.finished[r].token_ids for r in rids]

    fast_logits, fast_ids = run(make_engine(max_batch=3))
    assert calls["rebuilds"] >= 3 and calls["prepare"] > 2 * calls["rebuilds"]  # rebuilt, and mostly reused
    handle = model.wpe.register_forward_hook(lambda *a: None)  # a hook sends every pass through the modules
    try:
        calls["prepare"] = 0
        ref_logits, ref_ids = run(make_engine(max_batch=3))
    finally:
        handle.remove()
    assert fast_ids == ref_ids
    for a, b in zip(fast_logits, ref_logits):
        assert torch.allclose(torch.stack(a), torch.stack(b), atol=1e-4, rtol=0)


def test_weights_changed_in_place_are_used(tiny_model_dir):
    """The flat decode path keeps views and oneDNN-packed copies of the weights; a weight changed in place
    after a pass (an optimiser step, load_state_dict) is what the next pass uses, at batch 1 and batch 2."""
    from model.checkpoint import load_pretrained
    from model.engine import Engine

    model, tok = load_pretrained(tiny_model_dir)  # a private copy: this test changes its weights
    prompts = _prompts(tok, [7, 12], seed=5)

    def last_rows(max_batch):
        engine = Engine(model, tok, max_batch=max_batch)
        engine.record_logits = True
        rids = [engine.add_request(p, max_new_tokens=3) for p in prompts[:max_batch]]
        run_to_end(engine)
        return [torch.stack(engine.logits[r]) for r in rids], [engine.finished[r].token_ids for r in rids]

    def plain(ids):
        with torch.no_grad():
            return model(torch.tensor([ids]))[0, -1]  # the modules, no cache: the reference

    for max_batch in (1, 2):
        last_rows(max_batch)  # packs the weights (batch 2) / takes their views
        with torch.no_grad():
            model.h[0].mlp.c_fc.weight.mul_(-1.5)
            model.wte.weight[:, :3].mul_(2.0)  # the tied LM head too
        rows, outs = last_rows(max_batch)
        for p, r, out in zip(prompts, rows, outs):
            assert torch.allclose(r[0], plain(p), atol=1e-4, rtol=0)
            assert torch.allclose(r[-1], plain(p + out[:-1]), atol=1e-4, rtol=0)


def test_continuous_equals_static(make_engine, tiny):
    _, tok = tiny
    prompts = _prompts(tok, [5, 30, 12, 2], seed=3)
    cont, rep_c = generate(make_engine(max_batch=2), prompts, max_new=20)
    stat, rep_s = generate(make_engine(max_batch=2, batching="static"), prompts, max_new=20)
    assert [r.token_ids for r in cont] == [r.token_ids for r in stat]
    assert all(r.batch <= 2 for r in rep_c + rep_s)


def test_static_waits_for_the_longest(make_engine, tiny):
    """Static: the next pair starts only when both of the first pair are done; continuous refills at once."""
    _, tok = tiny
    prompts = _prompts(tok, [4, 4, 4, 4], seed=11)

    def run(batching):
        engine = make_engine(max_batch=2, batching=batching)
        rids = [engine.add_request(p, max_new_tokens=m) for p, m in zip(prompts, [3, 12, 5, 5])]
        return rids, run_to_end(engine)

    rids, reports = run("static")
    first_of_r2 = next(i for i, r in enumerate(reports) if rids[2] in r.request_ids)
    last_of_r1 = max(i for i, r in enumerate(reports) if rids[1] in r.request_ids)
    assert first_of_r2 > last_of_r1
    rids, reports = run("continuous")
    first_of_r2 = next(i for i, r in enumerate(reports) if rids[2] in r.request_ids)
    last_of_r0 = max(i for i, r in enumerate(reports) if rids[0] in r.request_ids)
    last_of_r1 = max(i for i, r in enumerate(reports) if rids[1] in r.request_ids)
    assert first_of_r2 == last_of_r0 + 1 < last_of_r1


def test_request_added_mid_run(make_engine, tiny):
    _, tok = tiny
    a, b = _prompts(tok, [6, 6], seed=21)
    for batching in ("continuous", "static"):
        engine = make_engine(max_batch=4, batching=batching)
        ra = engine.add_request(a, max_new_tokens=10)
        reports = [engine.step() for _ in range(3)]
        rb = engine.add_request(b, max_new_tokens=3)
        nxt = engine.step()
        if batching == "continuous":
            assert set(nxt.request_ids) == {ra, rb} and nxt.phase == "mixed" and nxt.batch == 2
        else:
            assert nxt.request_ids == [ra] and nxt.phase == "decode"
        reports += [nxt] + run_to_end(engine)
        if batching == "static":
            first_b = next(i for i, r in enumerate(reports) if rb in r.request_ids)
            assert all(ra not in r.request_ids for r in reports[first_b:])
        alone, _ = generate(make_engine(), [b], max_new=3)
        assert engine.finished[rb].token_ids == alone[0].token_ids


def test_set_max_batch_mid_run(make_engine, tiny):
    _, tok = tiny
    prompts = _prompts(tok, [5, 6, 7, 8], seed=5)
    engine = make_engine(max_batch=1)
    for p in prompts:
        engine.add_request(p, max_new_tokens=30)
    first = [engine.step() for _ in range(2)]
    assert [r.batch for r in first] == [1, 1]
    engine.set_max_batch(3)
    assert engine.step().batch == 3  # two more join at once
    engine.set_max_batch(1)  # lowering evicts nobody: the batch shrinks as requests finish
    rest = run_to_end(engine)
    assert rest[0].batch == 3
    assert rest[-1].batch == 1
    shrunk = next(i for i, r in enumerate(rest) if r.batch == 1)
    assert all(r.batch == 1 for r in rest[shrunk:])
    for bad in (0, -1, 257, 2.5, "3"):
        with pytest.raises(ValueError):
            engine.set_max_batch(bad)


# ---- prefix cache and chunked prefill --------------------------------------------------------------------------

def test_prefix_cache_on_equals_off_and_hits(make_engine, tiny):
    _, tok = tiny
    shared = prompt_ids(32, 100, tok.vocab_size, tok.eos_token_id)
    first = shared + prompt_ids(5, 101, tok.vocab_size, tok.eos_token_id)
    second = shared + prompt_ids(7, 102, tok.vocab_size, tok.eos_token_id)
    results = {}
    for on in (True, False):
        engine = make_engine(prefix_cache=on)
        generate(engine, [first], max_new=6)
        rid = engine.add_request(second, max_new_tokens=12)
        reports = run_to_end(engine)
        admit = reports[0]
        assert admit.request_ids == [rid]
        results[on] = (engine.finished[rid], admit)
    (res_on, admit_on), (res_off, admit_off) = results[True], results[False]
    assert res_on.token_ids == res_off.token_ids
    assert admit_off.prefix_hit_tokens == 0 and admit_off.tokens_in == len(second)
    assert admit_on.prefix_hit_tokens == 32 == res_on.prefix_hit_tokens
    assert admit_on.tokens_in == len(second) - 32


def test_prefix_blocks_are_never_shared_across_different_prefixes(make_engine, tiny):
    """Same second block, different first block: the chained hash must not match."""
    _, tok = tiny
    v, eos = tok.vocab_size, tok.eos_token_id
    block2 = prompt_ids(16, 200, v, eos)
    a = prompt_ids(16, 201, v, eos) + block2 + [5]
    b = prompt_ids(16, 202, v, eos) + block2 + [5]
    engine = make_engine()
    generate(engine, [a], max_new=2)
    rid = engine.add_request(b, max_new_tokens=8)
    reports = run_to_end(engine)
    assert reports[0].prefix_hit_tokens == 0
    assert engine.finished[rid].token_ids == generate(make_engine(prefix_cache=False), [b], max_new=8)[0][0].token_ids


def test_a_block_is_keyed_by_its_position_in_the_chain(make_engine, tiny):
    """The same 16 tokens as the *first* block of a new prompt must not hit a block that held them second:
    its K/V were computed at other positions, after other tokens."""
    _, tok = tiny
    v, eos = tok.vocab_size, tok.eos_token_id
    block2 = prompt_ids(16, 210, v, eos)
    a = prompt_ids(16, 211, v, eos) + block2 + [5]
    c = block2 + prompt_ids(9, 212, v, eos)
    engine = make_engine()
    generate(engine, [a], max_new=2)
    rid = engine.add_request(c, max_new_tokens=8)
    reports = run_to_end(engine)
    assert reports[0].prefix_hit_tokens == 0
    assert engine.finished[rid].token_ids == generate(make_engine(prefix_cache=False), [c], max_new=8)[0][0].token_ids


def test_chunked_prefill_equals_unchunked(make_engine, tiny, spy_positions):
    model, tok = tiny
    prompt = _prompts(tok, [40], seed=9)[0]
    chunked, reports = generate(make_engine(max_step_tokens=8), [prompt], max_new=10)
    whole, _ = generate(make_engine(), [prompt], max_new=10)
    assert chunked[0].token_ids == whole[0].token_ids == naive_greedy(model, prompt, 10, tok.eos_token_id)
    prefill = [r for r in reports if r.phase in ("prefill", "mixed")]
    assert len(prefill) == 5 and all(r.tokens_in <= 8 for r in reports)
    assert sum(r.tokens_out for r in prefill) == 1  # only the last chunk samples
    assert spy_positions[1].flatten().tolist() == list(range(8, 16))


def test_chunked_prefill_beside_decodes(make_engine, tiny):
    """A long prompt arriving while another request decodes shares passes with it (mixed) and changes nothing."""
    _, tok = tiny
    short, long = _prompts(tok, [3, 45], seed=13)
    engine = make_engine(max_step_tokens=10)
    rs = engine.add_request(short, max_new_tokens=15)
    engine.step()
    rl = engine.add_request(long, max_new_tokens=5)
    reports = run_to_end(engine)
    assert sum(r.phase == "mixed" for r in reports) >= 4
    assert all(r.tokens_in <= 10 for r in reports)
    assert engine.finished[rs].token_ids == generate(make_engine(), [short], max_new=15)[0][0].token_ids
    assert engine.finished[rl].token_ids == generate(make_engine(), [long], max_new=5)[0][0].token_ids


# ---- context window --------------------------------------------------------------------------------------------

def test_generation_stops_at_context_full(make_engine, tiny):
    model, tok = tiny
    prompt = _prompts(tok, [100], seed=17)[0]
    for kv in (True, False):
        (res,), reports = generate(make_engine(kv_cache=kv), [prompt], max_new=200)
        if res.finish_reason == "stop":
            pytest.skip("the random model emitted end-of-text before the window filled")
        assert res.finish_reason == "context_full"
        assert len(prompt) + len(res.token_ids) == N_POSITIONS
        assert res.token_ids == naive_greedy(model, prompt, 200, tok.eos_token_id)


def test_long_prompt_is_cut_from_the_left(make_engine, tiny):
    _, tok = tiny
    prompt = _prompts(tok, [300], seed=19)[0]
    engine = make_engine()
    (res,), _ = generate(engine, [prompt], max_new=10)
    kept = res.prompt_token_ids
    assert len(kept) < N_POSITIONS and kept == prompt[-len(kept):]
    assert res.notice and "cut" in res.notice
    assert len(kept) + len(res.token_ids) <= N_POSITIONS
    assert res.finish_reason in ("length", "stop")


def test_long_text_prompt_is_capped(make_engine):
    engine = make_engine()
    text = "START " + "一趟一个字 The quick brown fox. " * 8000 + "the end 😀"  # about 220,000 characters
    (res,), reports = generate(engine, [text], max_new=3)
    assert res.notice and "characters" in res.notice
    assert len(res.prompt_token_ids) < N_POSITIONS
    assert engine.tokenizer.decode(res.prompt_token_ids).endswith("the end 😀")  # the end is kept
    assert reports[0].tokens_in == len(res.prompt_token_ids)


def test_prompt_exactly_at_the_window(make_engine, tiny):
    _, tok = tiny
    for n in (N_POSITIONS - 1, N_POSITIONS):
        prompt = _prompts(tok, [n], seed=n)[0]
        (res,), _ = generate(make_engine(), [prompt], max_new=5)
        assert len(res.prompt_token_ids) + len(res.token_ids) <= N_POSITIONS


# ---- bad requests ----------------------------------------------------------------------------------------------

def test_empty_prompt_starts_from_end_of_text(make_engine, tiny):
    model, tok = tiny
    (res,), _ = generate(make_engine(), [""], max_new=5)
    assert res.prompt_token_ids == [tok.eos_token_id]
    assert res.token_ids == naive_greedy(model, [tok.eos_token_id], 5, tok.eos_token_id)


@pytest.mark.parametrize("bad", [0, -3, 1.5, None, "4"])
def test_bad_max_new_tokens(make_engine, bad):
    from model.errors import RequestError
    with pytest.raises(RequestError):
        make_engine().add_request("hi", max_new_tokens=bad)


def test_bad_token_ids_and_duplicate_ids(make_engine, tiny):
    from model.errors import RequestError
    _, tok = tiny
    engine = make_engine()
    for ids in ([tok.vocab_size + 1000], [-1], [1, 2, 10**9]):
        with pytest.raises(RequestError):
            engine.add_request(ids, max_new_tokens=2)
    engine.add_request("a", max_new_tokens=2, request_id="x")
    with pytest.raises(RequestError):
        engine.add_request("b", max_new_tokens=2, request_id="x")
    run_to_end(engine)
    assert list(engine.finished) == ["x"]


def test_abort_all_returns_blocks(make_engine, tiny):
    _, tok = tiny
    engine = make_engine()
    for p in _prompts(tok, [20, 30, 40], seed=23):
        engine.add_request(p, max_new_tokens=30)
    engine.step()
    assert engine.blocks_in_use > 0
    engine.abort_all()
    assert not engine.has_work() and engine.blocks_in_use == 0 and engine.step() is None
    (res,), _ = generate(engine, [_prompts(tok, [4], seed=24)[0]], max_new=3)
    assert res.finish_reason in ("length", "stop")


def test_reports_are_complete(make_engine, tiny):
    _, tok = tiny
    engine = make_engine(layer_timing=True)
    prompts = _prompts(tok, [5, 9], seed=29)
    results, reports = generate(engine, prompts, max_new=6)
    model_bytes = sum(p.numel() * p.element_size() for p in tiny[0].parameters())
    for i, r in enumerate(reports):
        assert r.step == reports[0].step + i
        assert r.phase in ("prefill", "decode", "mixed")
        assert r.batch == len(r.request_ids) == len(set(r.request_ids))
        assert r.tokens_out == len(r.tokens) <= r.batch
        assert r.wall_ms >= r.forward_ms > 0
        assert r.weight_bytes == model_bytes
        assert len(r.layer_ms) == tiny[0].config.n_layer and all(ms > 0 for ms in r.layer_ms)
        assert set(r.to_dict()) >= {"phase", "batch", "tokens_in", "tokens_out", "wall_ms", "weight_bytes",
                                    "kv_bytes", "blocks_in_use", "prefix_hit_tokens"}
        for t in r.tokens:
            assert len(t.top5) == 5 and t.top5[0][2] >= t.top5[-1][2]
            assert t.top5[0][0] == t.token_id  # greedy: the chosen token is the most likely one
    for res in results:
        assert res.ttft_ms is not None and res.ttft_ms > 0
        assert res.text == tok.decode(res.token_ids)


# ---- everything at once ------------------------------------------------------------------------------------

@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
@pytest.mark.parametrize("seed", range(FUZZ_SEEDS))
def test_random_workloads_match_the_plain_loop(tiny, seed, ragged):
    """Random mixes of shared prefixes, late arrivals, tiny pools (preemption), chunking, static or continuous
    batching and prefix caching: every request still gets exactly the plain loop's greedy tokens."""
    import random

    from model.engine import Engine

    model, tok = tiny
    rng = random.Random(seed)
    v, eos = tok.vocab_size, tok.eos_token_id
    shared = prompt_ids(rng.choice([16, 32, 40]), 500 + seed, v, eos)
    engine = Engine(model, tok, max_batch=rng.choice([1, 2, 3, 8]), max_step_tokens=rng.choice([5, 16, 64, 512]),
                    kv_budget_bytes=rng.choice([1, 10**9]), prefix_cache=rng.random() < 0.7,
                    batching=rng.choice(["continuous", "static"]), ragged=ragged)
    plan = []  # (step to add at, prompt, max_new)
    for i in range(6):
        tail = prompt_ids(rng.randint(1, 20), 600 + 10 * seed + i, v, eos)
        prompt = (shared + tail) if rng.random() < 0.6 else tail
        plan.append((rng.choice([0, 0, 2, 5, 9]), prompt, rng.choice([rng.randint(1, 30), 100])))  # 100: the window
    rids, step = {}, 0
    while len(rids) < len(plan) or engine.has_work():
        for i, (at, prompt, max_new) in enumerate(plan):
            if i not in rids and at <= step:
                rids[i] = engine.add_request(prompt, max_new_tokens=max_new)
        if engine.step() is not None:
            assert engine.blocks_in_use <= engine.num_blocks
        step += 1
        assert step < 3000
    assert engine.blocks_in_use == 0
    for i, (_, prompt, max_new) in enumerate(plan):
        assert engine.finished[rids[i]].token_ids == naive_greedy(model, prompt, max_new, eos), i
