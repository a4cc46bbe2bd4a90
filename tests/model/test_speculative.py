"""Speculative decoding: greedy output is the target's own, sampling keeps the target's distribution."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from model.engine import Engine
from model.errors import RequestError
from model.gpt2 import GPT2Config
from model.sampling import SamplingParams, distribution
from model.speculative import accept_greedy, accept_sampled
from tests.model.conftest import lively_gpt2, prompt_ids

REPO = Path(__file__).resolve().parents[2]
PROMPTS = {
    "prose": "The quick brown fox jumps over the lazy dog. Tea is",
    "code": "def fibonacci(n):\n    return",
}


@pytest.fixture(scope="module")
def random_draft(tiny):
    """A draft of the same vocabulary with unrelated random weights: its guesses are mostly wrong."""
    model, _ = tiny
    cfg = GPT2Config(vocab_size=model.config.vocab_size, n_positions=model.config.n_positions,
                     n_embd=16, n_layer=1, n_head=2)
    return lively_gpt2(cfg, seed=7)


def _greedy(tiny, prompts, draft=None, k=0, new_tokens=24, ragged=True, stop=0.0):
    """Greedy answers of ``prompts`` with ``draft`` guessing ``k`` (all k every trip unless ``stop`` > 0)."""
    model, tokenizer = tiny
    engine = Engine(model, tokenizer, max_batch=len(prompts), ragged=ragged)
    if draft is not None:
        engine.set_draft(draft, tokenizer)
        engine.set_draft_k(k)
        engine.draft_stop_below = stop
    ids = [engine.add_request(p, max_new_tokens=new_tokens) for p in prompts]
    reports = list(engine.run())
    return [engine.finished[i].token_ids for i in ids], reports, engine


def test_an_unsure_draft_stops_guessing_and_the_answer_stays_the_targets(tiny, random_draft):
    """draft_stop_below 0: every trip proposes k guesses (room allowing); 1.0: one guess a trip (nothing is that
    sure). Either way greedy decoding writes the target's own tokens."""
    model, tokenizer = tiny
    plain, _, _ = _greedy(tiny, [PROMPTS["code"]])
    proposed = {}
    for stop in (0.0, 1.0):
        engine = Engine(model, tokenizer, max_batch=1)
        engine.set_draft(random_draft, tokenizer)
        engine.set_draft_k(4)
        engine.draft_stop_below = stop
        rid = engine.add_request(PROMPTS["code"], max_new_tokens=24)
        verify = [r for r in engine.run() if r.phase == "verify"]
        assert engine.finished[rid].token_ids == plain[0]
        proposed[stop] = [r.proposed for r in verify]
    assert max(proposed[1.0]) == 1
    assert proposed[0.0][0] == 4 and sum(proposed[0.0]) > sum(proposed[1.0])


def test_the_draft_reads_the_prompt_in_the_prefill_not_in_the_first_trip(tiny, random_draft):
    """The draft's prefill runs beside the target's (its ms in the prefill report), so the first verify trip's
    draft passes feed one token, not the whole prompt; the answer is still the target's own."""
    model, tokenizer = tiny
    prompt = PROMPTS["prose"]
    plain, _, _ = _greedy(tiny, [prompt])
    drafted, reports, engine = _greedy(tiny, [prompt], random_draft, 4)
    assert drafted == plain
    prefill = [r for r in reports if r.phase == "prefill"]
    assert prefill and prefill[0].draft_ms > 0 and "draft" in prefill[0].stages
    fed = []
    original = engine.forward_parts
    def spy(input_ids, batch, logit_index, model=None, cache=None):
        if model is not None:
            fed.append(input_ids.numel())
        return original(input_ids, batch, logit_index, model, cache)
    engine.forward_parts = spy
    engine.add_request(prompt, max_new_tokens=6)  # the same prompt: a prefix-cache hit for the target only
    reports = list(engine.run())
    assert fed[0] >= len(tokenizer.encode(prompt))  # the prefill step's draft pass: the whole prompt, once
    assert fed[1:] and max(fed[1:]) <= 2  # every verify trip's draft pass feeds one or two tokens
    assert [r.phase for r in reports][0] == "prefill" and reports[0].draft_ms > 0


@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_greedy_with_a_random_draft_is_token_for_token_the_target(tiny_in, random_draft, k, ragged, weights):
    """In each precision (target and draft both in it): speculative greedy is plain greedy, token for token."""
    from model.quantize import set_precision
    target = tiny_in(weights)
    draft = set_precision(copy.deepcopy(random_draft), weights)
    prompts = list(PROMPTS.values())
    plain, _, _ = _greedy(target, prompts, ragged=ragged)
    drafted, reports, engine = _greedy(target, prompts, draft, k, ragged=ragged)
    assert draft.weights == weights
    assert drafted == plain
    verify = [r for r in reports if r.phase == "verify"]
    assert verify, "no verify pass ran"
    assert all(0 <= r.accepted <= r.proposed <= k * r.batch for r in verify)
    assert 0.0 <= engine.acceptance_rate <= 1.0
    # every verify pass writes at least one and at most k + 1 tokens per sequence
    assert all(r.batch <= r.tokens_out <= (k + 1) * r.batch for r in verify)


@pytest.mark.parametrize("weights", ["fp16", "int8"])
def test_a_float32_draft_joins_in_the_targets_precision(tiny_in, random_draft, weights):
    """The apprentice reads its book through the same kernels as the target: a float32 draft attached to an fp16
    or int8 target is converted to that precision (the pocket book as fp32 cost 1.7x its fp16 pass)."""
    from model.engine import Engine
    target, tok = tiny_in(weights)
    draft = copy.deepcopy(random_draft)
    assert getattr(draft, "weights", "fp32") == "fp32"
    fp32_bytes = draft.weight_bytes()
    engine = Engine(target, tok)
    engine.set_draft(draft, tok)
    assert engine.draft.weights == weights and engine.draft.weight_bytes() < fp32_bytes


def test_a_draft_identical_to_the_target_is_always_accepted(tiny):
    model, _ = tiny
    prompts = list(PROMPTS.values())
    plain, _, _ = _greedy(tiny, prompts)
    drafted, reports, engine = _greedy(tiny, prompts, copy.deepcopy(model), 4)
    assert drafted == plain
    assert engine.acceptance_rate == 1.0
    verify = [r for r in reports if r.phase == "verify"]
    # all guesses kept plus the bonus token: 5 tokens per trip until the length limit trims the last trips
    assert max(r.tokens_out / r.batch for r in verify) == 5


def test_a_draft_with_another_tokenizer_is_refused(tiny, tmp_path):
    from model.tokenizer import Tokenizer
    from tests.model.conftest import train_tokenizer

    model, tokenizer = tiny
    other = Tokenizer.from_dir(train_tokenizer(tmp_path / "tokenizer.json", vocab_size=380).parent)
    engine = Engine(model, tokenizer)
    with pytest.raises(RequestError, match="tokenizer"):
        engine.set_draft(copy.deepcopy(model), other)
    cfg = GPT2Config(vocab_size=model.config.vocab_size + 8, n_positions=model.config.n_positions,
                     n_embd=16, n_layer=1, n_head=2)
    with pytest.raises(RequestError, match="vocabulary"):
        engine.set_draft(lively_gpt2(cfg), tokenizer)
    with pytest.raises(RequestError):
        engine.set_draft_k(2)  # no draft attached


def test_rejected_guesses_give_their_kv_blocks_back(tiny, random_draft):
    model, tokenizer = tiny
    engine = Engine(model, tokenizer, max_batch=1)
    engine.set_draft(random_draft, tokenizer)
    engine.set_draft_k(8)
    engine.add_request(PROMPTS["prose"], max_new_tokens=20)
    for _report in engine.run():
        seq = next(iter(engine.sequences()), None)
        if seq is not None:
            # a live sequence holds exactly the blocks its committed tokens need, never the rejected guesses'
            assert len(seq.table.blocks) == -(-len(seq.token_ids) // engine.block_size)
            # and a lone request gets back the block it gave: its blocks stay one run, read in place
            first = seq.table.blocks[0]
            assert seq.table.blocks == list(range(first, first + len(seq.table.blocks)))
    assert engine.blocks_in_use == 0


@pytest.mark.parametrize("weights", ["fp32", "fp16", "int8"])
def test_the_lean_draft_step_gives_the_logits_of_a_full_pass(tiny_in, weights):
    """``GPT2.decode_one`` (a lone sequence's one token, the draft's guesses) against the engine's packed pass for
    the same token at the same position: the same logits, in fp32, fp16 and int8."""
    from model.runner import PassItem

    model, tokenizer = tiny_in(weights)
    engine = Engine(model, tokenizer, max_batch=1)
    engine.add_request(PROMPTS["code"], max_new_tokens=8)
    next(engine.run())  # the prefill
    seq = engine.sequences()[0]
    n = len(seq.token_ids)
    start = seq.table.blocks[0] * engine.block_size
    assert engine.blocks.ensure_capacity(seq.table, n + 2)
    with torch.inference_mode():
        # the last token, a guess after it, then two tokens at once (the draft catching up after a bonus token)
        for fed, position in (([seq.token_ids[-1]], n - 1), ([17], n), ([17, 40], n)):
            item = PassItem(fed, position, seq.table)
            input_ids, batch, logit_index, _, _, _ = engine.model_runner.pack([item], engine.cache, engine.model)
            full = engine.forward_parts(input_ids, batch, logit_index)[0][0, -1]
            assert model.flat_ready()
            lean = model.decode_one(fed, position, engine.cache, start)
            assert lean.shape == full.shape and torch.allclose(lean, full, atol=1e-5, rtol=1e-5)
        before = lean.clone()
        lean = model.decode_one([17, 41], n, engine.cache, start)  # another second token: other logits
        assert not torch.allclose(lean, before, atol=1e-3)
        with pytest.raises(ValueError, match="context window"):
            model.decode_one([1], model.config.n_positions, engine.cache, start)
        with pytest.raises(ValueError, match="context window"):
            model.decode_one([1, 2], model.config.n_positions - 1, engine.cache, start)
        with pytest.raises(ValueError, match="at least one token"):
            model.decode_one([], n, engine.cache, start)


def test_a_lone_request_guesses_on_the_lean_path_and_a_copy_of_the_target_is_always_kept(tiny, monkeypatch):
    """One request, a draft identical to the target: every guess is made by ``GPT2.decode_one`` (after a bonus
    token, from two tokens fed at once), and every one is kept: the lean step's logits are the target's own."""
    from model.gpt2 import GPT2

    model, _ = tiny
    fed = []
    lean = GPT2.decode_one
    monkeypatch.setattr(GPT2, "decode_one", lambda self, token_ids, position, *a, **kw: fed.append(position)
                        or lean(self, token_ids, position, *a, **kw))
    for prompt in PROMPTS.values():
        plain, _, _ = _greedy(tiny, [prompt])
        drafted, reports, engine = _greedy(tiny, [prompt], copy.deepcopy(model), 4)
        assert drafted == plain and engine.acceptance_rate == 1.0
        trips = [r for r in reports if r.phase == "verify"]
        assert len(fed) == sum(r.proposed for r in trips) > 0  # every guess, the first after a bonus token too
        fed.clear()


def test_accept_greedy_keeps_the_agreeing_prefix_then_the_target_token():
    logits = torch.full((4, 10), -5.0)
    for row, best in enumerate([3, 1, 4, 1]):
        logits[row, best] = 5.0
    assert accept_greedy(logits, [3, 1, 4]) == (3, [3, 1, 4, 1])  # all kept + bonus
    assert accept_greedy(logits, [3, 2, 4]) == (1, [3, 1])  # second guess wrong: target's token instead
    assert accept_greedy(logits, [9, 1, 4]) == (0, [3])


def _first_token_histogram(p: torch.Tensor, q: torch.Tensor, n: int, k: int = 2) -> torch.Tensor:
    """Counts of the first token emitted by a verify pass over ``n`` seeds, drafting from q."""
    counts = torch.zeros(p.size(-1))
    for seed in range(n):
        gen = torch.Generator().manual_seed(seed)
        guesses = [int(torch.multinomial(q, 1, generator=gen)) for _ in range(k)]
        _, emitted = accept_sampled(p.expand(k + 1, -1), q.expand(k, -1), guesses, gen)
        counts[emitted[0]] += 1
    return counts


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_sampling_with_a_draft_keeps_the_target_distribution(tiny, random_draft, temperature):
    from scipy.stats import chisquare

    model, tokenizer = tiny
    ids = torch.tensor([tokenizer.encode(PROMPTS["prose"])])
    params = SamplingParams(temperature=temperature)
    with torch.inference_mode():
        p = distribution(model(ids)[0, -1], params)
        q = distribution(random_draft(ids)[0, -1], params)
    n = 5000
    counts = _first_token_histogram(p, q, n)
    top = torch.topk(p, 20).indices
    freq = counts / n
    tv = 0.5 * float((freq[top] - p[top]).abs().sum())
    assert tv < 0.03
    expected = torch.cat([p[top], (1 - p[top].sum()).reshape(1)]) * n
    observed = torch.cat([counts[top], (n - counts[top].sum()).reshape(1)])
    assert chisquare(observed.numpy(), expected.numpy() * observed.sum().item() / expected.sum().item()).pvalue > 1e-3
    # the check has teeth: the draft's own distribution is far from the target's on the same tokens
    assert 0.5 * float((q[top] - p[top]).abs().sum()) > 0.05


def test_generate_cli_reports_acceptance_and_tokens_per_trip(tiny_model_dir, capsys):
    from model.cli import generate_main  # what main.py generate runs, here; the bad input below in its own process
    code = generate_main([PROMPTS["code"], "--model", str(tiny_model_dir), "--draft-model", str(tiny_model_dir),
                          "--draft-k", "3", "--max-new-tokens", "12", "--threads", "1", "--json"])
    done = capsys.readouterr()
    assert code == 0, done.err
    out = json.loads(done.out)
    assert out["acceptance_rate"] == 1.0  # the model drafting for itself
    assert 1.0 <= out["tokens_per_trip"] <= 4.0
    verify = [s for s in out["steps"] if s["phase"] == "verify"]
    assert verify and all(s["proposed"] >= s["accepted"] >= 0 for s in verify)
    bad = subprocess.run([sys.executable, "main.py", "generate", "x", "--model", str(tiny_model_dir),
                          "--draft-k", "9", "--draft-model", str(tiny_model_dir)], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_a_request_readmitted_after_preemption_recomputes_before_it_guesses(tiny, random_draft):
    """A short prompt is preempted after many answer tokens (a pool of 8 blocks, four requests), then readmitted
    with its first block still in the prefix cache: past its prompt, so by the prompt alone it looks like a
    decode. Its other 23 tokens must be recomputed by a prefill-like pass before a verify trip, which feeds only
    the newest token. Greedy answers stay the target's own, token for token."""
    model, tokenizer = tiny
    eos = model.config.eos_token_id
    vocab = model.config.vocab_size
    head = prompt_ids(40, 1, vocab, eos)
    prompts = [head, head[:37] + prompt_ids(5, 2, vocab, eos), head[:20] + [5], prompt_ids(3, 9, vocab, eos)]
    new_tokens = [3, 60, 10, 40]
    plain = [_greedy(tiny, [p], new_tokens=n)[0][0] for p, n in zip(prompts, new_tokens)]
    for ragged in (True, False):
        engine = Engine(model, tokenizer, max_batch=4, ragged=ragged, kv_budget_bytes=130 * engine_bpt(tiny))
        assert engine.num_blocks == 8
        engine.set_draft(random_draft, tokenizer)
        engine.set_draft_k(3)
        ids = [engine.add_request(p, max_new_tokens=n) for p, n in zip(prompts, new_tokens)]
        reports = list(engine.run())
        assert any(r.prefix_hit_tokens > len(prompts[3]) for r in reports)  # the readmission this test is about
        assert [engine.finished[i].token_ids for i in ids] == plain


def engine_bpt(tiny) -> int:
    """KV bytes per token of the tiny model (fp32)."""
    from model.kv_cache import PagedKVCache

    cfg = tiny[0].config
    return PagedKVCache.bytes_per_token(cfg.n_layer, cfg.n_head, cfg.head_dim, 4)
