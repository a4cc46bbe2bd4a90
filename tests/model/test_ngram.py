"""The n-gram apprentice (prompt lookup): what it guesses, and that speculative decoding with it is exact."""

from __future__ import annotations

import copy
import random

import pytest
import torch

from model.engine import Engine
from model.errors import RequestError
from model.ngram import NgramIndex, point_mass
from model.sampling import SamplingParams, distribution
from model.speculative import accept_sampled

REPETITIVE = "def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return a + b\n\ndef add(a"
PROMPTS = [REPETITIVE, "The quick brown fox jumps over the lazy dog. The quick brown"]


def test_the_guess_is_what_followed_the_longest_earlier_match():
    index = NgramIndex(max_n=3)
    # "1 2 3" occurred once (followed by 4 9 2); the shorter "2 3" occurred later (followed by 5)
    assert index.propose([1, 2, 3, 4, 9, 2, 3, 5, 1, 2, 3], k=3) == [4, 9, 2]


def test_among_equal_matches_the_most_recent_wins_and_a_loop_goes_on_repeating():
    assert NgramIndex(max_n=2).propose([7, 1, 8, 7, 1, 9, 7, 1], k=4) == [9, 7, 1, 9]
    assert NgramIndex(max_n=3).propose([4, 5, 6, 5, 6], k=5) == [5, 6, 5, 6, 5]
    assert NgramIndex().propose([5, 6, 7], k=4) == []  # nothing repeats
    assert NgramIndex().propose([5, 6, 5], k=0) == []
    assert NgramIndex(min_n=2).propose([1, 2, 1], k=2) == []  # only a 1-gram repeats


def _reference(tokens: list[int], k: int, max_n: int) -> list[int]:
    """The definition, searched from scratch: longest n first, then the latest earlier occurrence, then the
    text after it, continued with the match's period (ext[j] = ext[j - period])."""
    for n in range(min(max_n, len(tokens) - 1), 0, -1):
        tail = tokens[-n:]
        for end in range(len(tokens) - 2, n - 2, -1):
            if tokens[end - n + 1:end + 1] == tail:
                period = len(tokens) - 1 - end
                ext = list(tokens)
                while len(ext) < len(tokens) + k:
                    ext.append(ext[len(ext) - period])
                return ext[len(tokens):]
    return []


def test_the_incremental_index_agrees_with_a_search_from_scratch():
    rng = random.Random(0)
    for trial in range(30):
        tokens, index = [], NgramIndex(max_n=3)
        for _ in range(60):
            tokens.append(rng.randrange(5))
            k = rng.randrange(1, 6)
            assert index.propose(tokens, k) == _reference(tokens, k, 3), (trial, tokens)


def test_point_mass_rows():
    q = point_mass([2, 0], 4)
    assert torch.equal(q, torch.tensor([[0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]))


def _run(tiny, prompts, kind=None, k=0, sampling=None, new_tokens=24):
    model, tokenizer = tiny
    engine = Engine(model, tokenizer, max_batch=len(prompts))
    if kind:
        engine.set_draft_kind(kind)
        engine.set_draft_k(k)
    ids = [engine.add_request(p, max_new_tokens=new_tokens, sampling=sampling) for p in prompts]
    reports = list(engine.run())
    return [engine.finished[i].token_ids for i in ids], reports, engine


@pytest.mark.parametrize("k", [1, 3, 8])
def test_greedy_with_ngram_guesses_is_token_for_token_plain_greedy(tiny, k):
    plain, _, _ = _run(tiny, PROMPTS)
    drafted, reports, engine = _run(tiny, PROMPTS, "ngram", k)
    assert drafted == plain
    verify = [r for r in reports if r.phase == "verify"]
    assert verify and all(r.draft_kind == "ngram" and 1 <= r.proposed <= k * r.batch for r in verify)
    assert all(0 <= r.accepted <= r.proposed and r.draft_ms >= 0 for r in verify)
    assert engine.spec_proposed > 0 and 0.0 <= engine.acceptance_rate <= 1.0
    # every sequence holds exactly the blocks its tokens need at the end: rejected guesses gave theirs back
    assert engine.blocks_in_use == 0


def test_a_repeating_text_is_guessed_right(tiny):
    """A model that sees only the current token (no positions, attention switched off) must fall into a cycle
    under greedy decoding; once it cycles, prompt lookup guesses every token right."""
    model, tokenizer = tiny
    memoryless = copy.deepcopy(model)
    with torch.no_grad():
        memoryless.wpe.weight.zero_()
        for block in memoryless.h:
            block.attn.c_proj.weight.zero_()
            block.attn.c_proj.bias.zero_()
    _, plain_reports, _ = _run((memoryless, tokenizer), ["hello"], new_tokens=120)
    out, reports, engine = _run((memoryless, tokenizer), ["hello"], "ngram", 4, new_tokens=120)
    assert out == _run((memoryless, tokenizer), ["hello"], new_tokens=120)[0]
    assert engine.spec_accepted >= 20
    assert max(r.tokens_out for r in reports if r.phase == "verify") == 5  # 4 guesses kept + the target's own
    assert len(reports) < len(plain_reports)  # fewer trips for the same tokens


def test_sampling_with_ngram_guesses_runs_and_stays_in_the_vocabulary(tiny):
    model, _ = tiny
    out, reports, engine = _run(tiny, PROMPTS, "ngram", 4, SamplingParams(temperature=0.8, seed=3))
    assert all(0 <= t < model.config.vocab_size for ids in out for t in ids)
    for r in engine.finished.values():  # 24 tokens, or fewer only for a reason the engine names
        assert (r.finish_reason == "length") == (len(r.token_ids) == 24), (r.finish_reason, len(r.token_ids))
        assert r.finish_reason in ("length", "stop", "loop")
    assert any(r.phase == "verify" for r in reports)


@pytest.mark.parametrize("temperature", [1.0, 0.6])
def test_sampling_with_a_point_mass_draft_keeps_the_target_distribution(tiny, temperature):
    """What the engine does with n-gram guesses: q is a point mass on each guess. The first emitted token must
    be distributed as p, whether the guess is the likeliest token or an unlikely one."""
    from scipy.stats import chisquare

    model, tokenizer = tiny
    ids = torch.tensor([tokenizer.encode(PROMPTS[1])])
    with torch.inference_mode():
        p = distribution(model(ids)[0, -1], SamplingParams(temperature=temperature))
    order = torch.argsort(p, descending=True)
    n = 4000
    for guess in (int(order[0]), int(order[5])):
        guesses = [guess, int(order[1])]
        q = point_mass(guesses, p.size(-1))
        counts = torch.zeros(p.size(-1))
        for seed in range(n):
            gen = torch.Generator().manual_seed(seed)
            _, emitted = accept_sampled(p.expand(3, -1), q, guesses, gen)
            counts[emitted[0]] += 1
        top = order[:15]
        expected = torch.cat([p[top], (1 - p[top].sum()).reshape(1)]) * n
        observed = torch.cat([counts[top], (n - counts[top].sum()).reshape(1)])
        assert 0.5 * float((counts[top] / n - p[top]).abs().sum()) < 0.04
        assert chisquare(observed.numpy(), expected.numpy() * n / expected.sum().item()).pvalue > 1e-3
        # the check has teeth: the draft's own distribution (all mass on the guess) is far from p
        assert 1.0 - float(p[guess]) > 0.05


def test_a_bad_kind_or_a_missing_draft_model_is_refused(tiny):
    model, tokenizer = tiny
    engine = Engine(model, tokenizer)
    with pytest.raises(RequestError, match="'model' or 'ngram'"):
        engine.set_draft_kind("oracle")
    with pytest.raises(RequestError, match="no draft model"):
        engine.set_draft_k(2)  # the default apprentice is the draft model, and none is loaded
    engine.set_draft_kind("ngram")
    engine.set_draft_k(2)
    with pytest.raises(RequestError, match="no draft model"):
        engine.set_draft_kind("model")  # guesses are on and there is no model to make them
    no_cache = Engine(model, tokenizer, kv_cache=False)
    with pytest.raises(RequestError, match="KV cache"):
        no_cache.set_draft_kind("ngram")


def test_generate_cli_draft_ngram_matches_plain_greedy(tiny_model_dir, capsys):
    """``generate --draft ngram`` writes plain greedy's tokens. In this process (``model.cli.generate_main``, what
    ``main.py generate`` runs): the command's own process is tests/model/test_cli.py's."""
    import json

    from model.cli import generate_main

    def gen(*extra):
        capsys.readouterr()
        code = generate_main([REPETITIVE, "--model", str(tiny_model_dir), "--max-new-tokens", "16", "--threads", "1",
                              "--json", "--greedy", *extra])
        out = capsys.readouterr()
        assert code == 0, out.err
        return json.loads(out.out)

    plain, ngram = gen(), gen("--draft", "ngram")
    assert ngram["requests"][0]["token_ids"] == plain["requests"][0]["token_ids"]
    assert ngram["draft_kind"] == "ngram" and plain["draft_kind"] is None
    assert any(s["phase"] == "verify" for s in ngram["steps"])
    code = generate_main(["x", "--model", str(tiny_model_dir), "--draft", "ngram",
                          "--draft-model", str(tiny_model_dir)])
    assert code == 2 and "--draft ngram uses no draft model" in capsys.readouterr().err
