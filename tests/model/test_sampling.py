"""Sampling: greedy, temperature, top-k, top-p, each with a private seeded RNG; bad parameters are refused."""

from __future__ import annotations

import math

import pytest
import torch

from model.errors import RequestError
from model.sampling import SamplingParams, distribution, make_generator, sample, top_k_probs
from tests.model.conftest import prompt_ids, run_to_end

LOGITS = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0, -3.0, 1.5, 0.2])


def _engine_ids(make_engine, prompts, params_for, max_new=16, **engine_kwargs):
    engine = make_engine(**engine_kwargs)
    rids = [engine.add_request(p, max_new_tokens=max_new, sampling=params_for(i)) for i, p in enumerate(prompts)]
    run_to_end(engine)
    return [engine.finished[r].token_ids for r in rids]


@pytest.fixture
def prompts(tiny):
    _, tok = tiny
    return [prompt_ids(n, 300 + n, tok.vocab_size, tok.eos_token_id) for n in (4, 11, 2)]


# ---- pure functions --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [SamplingParams(), SamplingParams(temperature=0.7),
                                    SamplingParams(temperature=1.3, top_k=3), SamplingParams(temperature=1, top_p=0.5),
                                    SamplingParams(temperature=2.0, top_k=5, top_p=0.9),
                                    SamplingParams(temperature=100.0), SamplingParams(temperature=1e-4)])
def test_distribution_sums_to_one(params):
    for logits in (LOGITS, LOGITS.half(), torch.randn(400) * 30, torch.full((50,), 7.0)):
        probs = distribution(logits, params)
        assert probs.dtype == torch.float32 and probs.shape == logits.shape
        assert torch.all(probs >= 0) and torch.isfinite(probs).all()
        assert math.isclose(float(probs.sum()), 1.0, abs_tol=1e-5)


@pytest.mark.parametrize("temperature", [1e-30, 1e-39, 1e-45])
def test_tiny_temperature_tends_to_greedy_not_nan(temperature):
    """logits / 1e-39 overflowed to inf and softmax gave nan: multinomial then raised (a CLI traceback)."""
    for top_k, top_p in ((0, 1.0), (3, 1.0), (0, 0.5)):
        params = SamplingParams(temperature=temperature, top_k=top_k, top_p=top_p, seed=1)
        probs = distribution(LOGITS, params)
        assert torch.isfinite(probs).all() and math.isclose(float(probs.sum()), 1.0, abs_tol=1e-5)
        assert sample(LOGITS, params, make_generator(1))[0] == int(torch.argmax(LOGITS))


def test_greedy_distribution_is_plain_softmax():
    assert torch.allclose(distribution(LOGITS, SamplingParams()), torch.softmax(LOGITS, -1))
    token, _ = sample(LOGITS, SamplingParams(), None)
    assert token == 0


def test_temperature_divides_logits():
    probs = distribution(LOGITS, SamplingParams(temperature=0.5))
    assert torch.allclose(probs, torch.softmax(LOGITS / 0.5, -1), atol=1e-6)


def test_top_k_keeps_exactly_k():
    probs = distribution(LOGITS, SamplingParams(temperature=1.0, top_k=3))
    kept = torch.nonzero(probs).flatten().tolist()
    assert sorted(kept) == [0, 1, 6]  # the three largest logits: 2.0, 1.5, 1.0
    expected = torch.softmax(LOGITS[[0, 1, 6]], -1)
    assert torch.allclose(probs[[0, 1, 6]], expected, atol=1e-6)
    assert torch.equal(distribution(LOGITS, SamplingParams(temperature=1.0, top_k=100)),
                       distribution(LOGITS, SamplingParams(temperature=1.0)))


def test_top_p_keeps_the_smallest_nucleus():
    full = torch.softmax(LOGITS, -1)
    order = torch.argsort(full, descending=True)
    for p in (0.3, 0.5, 0.8, 0.95):
        probs = distribution(LOGITS, SamplingParams(temperature=1.0, top_p=p))
        kept = set(torch.nonzero(probs).flatten().tolist())
        # smallest prefix of the sorted tokens whose mass reaches p
        need, mass = 0, 0.0
        while mass < p:
            mass += float(full[order[need]])
            need += 1
        assert kept == set(order[:need].tolist()), p
        assert torch.allclose(probs[list(kept)], full[list(kept)] / full[list(kept)].sum(), atol=1e-6)


def test_sample_follows_its_distribution():
    params = SamplingParams(temperature=1.0, top_k=4)
    gen = make_generator(7)
    n = 4000
    counts = torch.zeros(len(LOGITS))
    for _ in range(n):
        token, probs = sample(LOGITS, params, gen)
        counts[token] += 1
    expected = probs * n
    assert counts[probs == 0].sum() == 0  # never a token top-k removed
    chi2 = float((((counts - expected) ** 2) / expected.clamp(min=1e-9))[probs > 0].sum())
    assert chi2 < 20  # 3 degrees of freedom: p ≈ 2e-4 to exceed by chance


def test_top_k_probs():
    pairs = top_k_probs(torch.softmax(LOGITS, -1), 5)
    assert [i for i, _ in pairs] == [0, 6, 1, 2, 7]
    assert all(a[1] >= b[1] for a, b in zip(pairs, pairs[1:]))
    assert len(top_k_probs(torch.softmax(LOGITS[:3], -1), 5)) == 3


@pytest.mark.parametrize("kwargs", [{"temperature": -0.1}, {"temperature": float("nan")}, {"temperature": float("inf")},
                                    {"temperature": 101}, {"temperature": "1"}, {"top_k": -1}, {"top_k": 1.5},
                                    {"top_p": 0.0}, {"top_p": 1.01}, {"top_p": -0.5}, {"top_p": float("nan")},
                                    {"top_p": "0.9"}, {"temperature": None}, {"seed": "abc"}, {"seed": 1.5},
                                    {"seed": 2**64}, {"top_k": True}])
def test_bad_params_raise_request_error(kwargs):
    """Each is refused when the parameters are made, before a request is queued."""
    with pytest.raises(RequestError):
        SamplingParams(**kwargs)


def test_extreme_but_valid_seeds():
    import torch

    draws = []
    for seed in (0, -1, 2**63, 2**64 - 1):
        assert SamplingParams(temperature=1.0, seed=seed).seed == seed
        a, b = make_generator(seed), make_generator(seed)
        first = torch.rand(4, generator=a)
        assert torch.equal(first, torch.rand(4, generator=b))  # the same seed draws the same numbers
        draws.append(tuple(first.tolist()))
    assert draws[1] == draws[3]  # -1 and 2**64 - 1 are the same 64-bit seed
    assert draws[0] != draws[1]


# ---- through the engine ----------------------------------------------------------------------------------------

def test_same_seed_same_ids(make_engine, prompts):
    params = lambda i: SamplingParams(temperature=1.5, seed=1000 + i)  # noqa: E731
    first = _engine_ids(make_engine, prompts, params)
    second = _engine_ids(make_engine, prompts, params)
    assert first == second


def test_different_seeds_usually_differ(make_engine, prompts):
    runs = [_engine_ids(make_engine, prompts[:1], lambda i, s=s: SamplingParams(temperature=1.5, seed=s))[0]
            for s in range(5)]
    assert len({tuple(r) for r in runs}) >= 4


def test_seed_is_independent_of_the_batch(make_engine, prompts):
    """A request's draws come from its own generator: alone or beside others, same seed, same tokens."""
    params = lambda i: SamplingParams(temperature=1.2, top_k=50, seed=77 + i)  # noqa: E731
    together = _engine_ids(make_engine, prompts, params)
    for i, p in enumerate(prompts):
        alone = _engine_ids(make_engine, [p], lambda _, i=i: params(i))
        assert alone[0] == together[i]


def test_seeded_sampling_cached_equals_uncached(make_engine, prompts):
    params = lambda i: SamplingParams(temperature=0.8, top_p=0.9, seed=5 + i)  # noqa: E731
    assert _engine_ids(make_engine, prompts, params) == _engine_ids(make_engine, prompts, params, kv_cache=False)


def test_top_k_one_and_tiny_top_p_equal_greedy(make_engine, prompts):
    greedy = _engine_ids(make_engine, prompts, lambda i: SamplingParams())
    top1 = _engine_ids(make_engine, prompts, lambda i: SamplingParams(temperature=3.0, top_k=1, seed=i))
    nucleus = _engine_ids(make_engine, prompts, lambda i: SamplingParams(temperature=3.0, top_p=1e-6, seed=i))
    assert top1 == greedy == nucleus


def test_unseeded_requests_still_run(make_engine, prompts):
    engine = make_engine()
    rids = [engine.add_request(p, max_new_tokens=5, sampling=SamplingParams(temperature=1.0)) for p in prompts]
    run_to_end(engine)
    vocab, eos = engine.tokenizer.vocab_size, engine.tokenizer.eos_token_id
    for r in (engine.finished[r] for r in rids):
        # an answer stops at its length, or earlier only for a reason the engine names (end of text, a loop)
        assert (r.finish_reason == "length") == (len(r.token_ids) == 5), (r.finish_reason, r.token_ids)
        assert r.finish_reason in ("length", "stop", "loop") and len(r.token_ids) <= 5
        assert all(0 <= t < vocab and t != eos for t in r.token_ids)


def _nucleus_by_full_sort(logits: torch.Tensor, temperature: float, top_p: float) -> torch.Tensor:
    """The reference cut: every token sorted (ties by id), the mass strictly above each one, cut at top_p."""
    probs = torch.softmax((logits - logits.max()) / temperature, -1)
    order = torch.sort(probs, descending=True, stable=True).indices
    sp = probs[order]
    sp = sp.masked_fill(torch.cumsum(sp, -1) - sp >= top_p, 0.0)
    out = torch.zeros_like(probs).scatter_(0, order, sp)
    return out / out.sum()


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0, 8.0])  # flat to peaked: nuclei of thousands to a handful
def test_top_p_from_a_probe_cuts_what_a_full_sort_cuts(scale):
    gen = torch.Generator().manual_seed(int(scale * 10))
    for trial in range(20):
        logits = torch.randn(4096, generator=gen) * scale
        if trial % 2:  # ties across the cut: many tokens with the same logit
            logits[torch.randint(0, 4096, (600,), generator=gen)] = float(logits.max() - 1.0)
        for top_p in (0.5, 0.9, 0.95):
            got = distribution(logits, SamplingParams(temperature=0.8, top_p=top_p))
            want = _nucleus_by_full_sort(logits, 0.8, top_p)
            assert torch.equal(got > 0, want > 0), (scale, trial, top_p)
            assert torch.allclose(got, want, atol=1e-6)


def test_a_draw_never_leaves_the_nucleus_and_follows_it():
    from model.sampling import draw
    probs = torch.zeros(4096)
    probs[[5, 900, 4000]] = torch.tensor([0.5, 0.3, 0.2])
    gen = make_generator(3)
    counts = {5: 0, 900: 0, 4000: 0}
    for _ in range(3000):
        counts[draw(probs, gen)] += 1  # a KeyError here: a token outside the nucleus
    assert abs(counts[5] / 3000 - 0.5) < 0.04 and abs(counts[4000] / 3000 - 0.2) < 0.04


# ---- the nucleus of a row (speculative decoding's p and q) ------------------------------------------------------

@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0, 8.0])  # flat to peaked: nuclei past both probes to a handful
def test_nuclei_are_the_distributions_nonzero_entries(scale):
    """``nuclei`` cuts from the sorted values alone: the same tokens as ``distribution``, in its order (likeliest
    first, equal ones by id), with the same probabilities, ties across the cut included."""
    from model.sampling import NUCLEUS_MAX, Row, nuclei
    gen = torch.Generator().manual_seed(int(scale * 10) + 1)
    narrow = 0
    for trial in range(12):
        logits = torch.randn(5, 4096, generator=gen) * scale
        if trial % 3 == 1:  # many tokens with the same logit near the top
            logits[:, torch.randint(0, 4096, (300,), generator=gen)] = float(logits.max() - 1.0)
        if trial % 3 == 2:  # a few equal probabilities inside a small nucleus
            logits[:, :4] = float(logits.max() + 2.0)
        for params in (SamplingParams(temperature=0.8, top_p=0.95), SamplingParams(temperature=1.2, top_p=0.5),
                       SamplingParams(temperature=0.8), SamplingParams(temperature=0.9, top_k=7, top_p=0.9)):
            for row, nucleus in zip(logits, nuclei(logits, params)):
                want = distribution(row, params)
                assert torch.allclose(nucleus.dense(4096), want, atol=1e-6), (scale, trial, params)
                if isinstance(nucleus, Row):  # wider than NUCLEUS_MAX, greedy, top-k: the full cut itself
                    assert torch.equal(nucleus.probs, want)
                    assert int((want > 0).sum()) > NUCLEUS_MAX or params.top_k or params.top_p == 1.0
                    continue
                order = torch.sort(want, descending=True, stable=True).indices[:len(nucleus.ids)].tolist()
                assert nucleus.ids == order and int((want > 0).sum()) == len(order), (scale, trial, params)
                assert len(nucleus.ids) <= NUCLEUS_MAX
                narrow += 1
    assert narrow > 0 or scale < 3  # peaked rows: the probe's cut was checked, not only the fallback


def test_a_nucleus_draw_follows_it_and_never_leaves_it():
    from model.sampling import Nucleus
    nucleus = Nucleus([5, 900, 4000], [0.5, 0.3, 0.2])
    gen = make_generator(4)
    counts = {5: 0, 900: 0, 4000: 0}
    for _ in range(4000):
        counts[nucleus.draw(gen)] += 1  # a KeyError here: a token outside the nucleus
    assert abs(counts[5] / 4000 - 0.5) < 0.035 and abs(counts[4000] / 4000 - 0.2) < 0.035
    assert nucleus.prob(900) == 0.3 and nucleus.prob(6) == 0.0
    assert nucleus.top(2) == [(5, 0.5), (900, 0.3)]
    assert Nucleus.point(7).draw(gen) == 7 and Nucleus.point(7).prob(7) == 1.0


def test_greedy_nucleus_is_the_plain_softmax():
    from model.sampling import nuclei
    (nucleus,) = nuclei(LOGITS[None], SamplingParams())
    assert torch.allclose(nucleus.dense(LOGITS.numel()), torch.softmax(LOGITS, -1))
