"""Ragged (flat) passes: every trip computes only real tokens, and computes them exactly as before.

The ground truth is the model's plain causal forward (``naive_greedy``) and the padded pass the engine ran
before (``Engine(ragged=False)``), which ``test_engine.py`` ties to the same loop.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from model.engine import Engine
from model.ragged import RaggedBatch
from tests.model.conftest import prompt_ids, run_to_end
from tests.model.test_engine import naive_greedy

ROOT = Path(__file__).resolve().parents[2]


def _mixed(engine, tok, long_n=90, short=(3, 7, 12), new=(20, 20, 20, 6)):
    """Three short prompts and a long one, all queued at once (the short ones first, so they decode while the
    long one is read in chunks); returns (prompts, request ids, reports)."""
    v, eos = tok.vocab_size, tok.eos_token_id
    prompts = [prompt_ids(n, 10 + n, v, eos) for n in short] + [prompt_ids(long_n, 1, v, eos)]
    rids = [engine.add_request(p, max_new_tokens=m) for p, m in zip(prompts, new)]
    return prompts, rids, run_to_end(engine)


def test_a_mixed_trip_computes_only_its_tokens_and_padding_computed_more(tiny):
    model, tok = tiny
    flat = Engine(model, tok, max_batch=4, max_step_tokens=32)
    padded = Engine(model, tok, max_batch=4, max_step_tokens=32, ragged=False)
    prompts, rids, reports = _mixed(flat, tok)
    _, rids_p, reports_p = _mixed(padded, tok)
    assert any(r.phase == "mixed" for r in reports)
    assert all(r.rows_computed == r.tokens_in for r in reports)
    # the padded engine ran the same schedule, and its mixed trips computed B × the longest chunk
    assert [r.tokens_in for r in reports_p] == [r.tokens_in for r in reports]
    assert any(r.rows_computed > r.tokens_in for r in reports_p if r.phase == "mixed")
    for p, a, b in zip(prompts, rids, rids_p):
        assert flat.finished[a].token_ids == padded.finished[b].token_ids
        assert flat.finished[a].token_ids == naive_greedy(model, p, len(flat.finished[a].token_ids) or 1,
                                                          tok.eos_token_id)


def test_ragged_logits_equal_padded_logits(tiny):
    """Every sampled row of a workload with prefill chunks beside decodes, flat against padded."""
    model, tok = tiny
    out = []
    for ragged in (True, False):
        engine = Engine(model, tok, max_batch=4, max_step_tokens=20, ragged=ragged)
        engine.record_logits = True
        _, rids, _ = _mixed(engine, tok)
        out.append([torch.stack(engine.logits[r]) for r in rids])
    for a, b in zip(*out):
        assert a.shape == b.shape
        assert torch.allclose(a, b, atol=1e-4, rtol=0)


def test_a_ragged_pass_feeds_the_flat_tokens(tiny):
    """The model really receives N real rows: (N,) ids and positions, one attention group per token count, in
    every trip whose requests feed different numbers of tokens; a trip where all feed T is (B, T), unpadded."""
    model, tok = tiny
    seen: list = []
    forward = model.forward

    def spy(input_ids, batch=None, **kw):
        seen.append((input_ids.shape, batch))
        return forward(input_ids, batch=batch, **kw)

    model.forward = spy
    try:
        engine = Engine(model, tok, max_batch=4, max_step_tokens=16)
        _, _, reports = _mixed(engine, tok, long_n=40)
    finally:
        del model.forward
    assert len(seen) == len(reports)
    for (shape, batch), r in zip(seen, reports):
        assert shape.numel() == r.tokens_in == r.rows_computed
        if r.phase == "mixed":  # 1-token decodes in one group, the chunk in another
            assert isinstance(batch, RaggedBatch)
            assert shape == (r.tokens_in,) == tuple(batch.positions.shape)
            assert sum(g.B * g.T for g in batch.groups) == r.tokens_in
            assert [g.T for g in batch.groups][0] == 1 and len(batch.groups) >= 2
    assert sum(r.phase == "mixed" for r in reports) >= 2


@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
def test_chunked_equals_unchunked_for_every_chunk_size(tiny, ragged):
    """Chunk sizes 1-100 for a 101-token prompt beside a decoding request: the same greedy tokens and the same
    logits as the whole prompt in one pass."""
    model, tok = tiny
    v, eos = tok.vocab_size, tok.eos_token_id
    long, short = prompt_ids(101, 3, v, eos), prompt_ids(4, 4, v, eos)

    def run(chunk):
        engine = Engine(model, tok, max_batch=2, max_step_tokens=chunk, ragged=ragged)
        engine.record_logits = True
        rs = engine.add_request(short, max_new_tokens=12)
        engine.step()
        rl = engine.add_request(long, max_new_tokens=4)
        run_to_end(engine)
        return [(engine.finished[r].token_ids, torch.stack(engine.logits[r])) for r in (rs, rl)]

    whole = run(512)
    assert whole[1][0] == naive_greedy(model, long, 4, eos)
    for chunk in range(1, 101):
        for (ids, logits), (ids_w, logits_w) in zip(run(chunk), whole):
            assert ids == ids_w, chunk
            assert torch.allclose(logits, logits_w, atol=1e-4, rtol=0), chunk


def test_generate_cli_mixed_workload_computes_only_real_rows():
    """The issue's workload on the bundled model: one 300-token prompt and three short ones, 4 seats, 32-token
    chunks. The short ones come first, so they decode while the long one is read in chunks (mixed trips). Every
    JSON step has rows_computed == tokens_in."""
    long_text = "一趟一个字，小抄就是 KV 缓存。每按一下，就是把书搬一趟。" * 8
    args = [sys.executable, "main.py", "generate", "你好", "书", "一趟", long_text, "--max-batch", "4",
            "--max-step-tokens", "32", "--max-new-tokens", "24", "--threads", "1", "--json"]
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    n_long = len(data["requests"][3]["prompt_token_ids"])
    assert 280 <= n_long <= 320, n_long  # the "300-token prompt"
    steps = data["steps"]
    assert sum(s["phase"] == "mixed" for s in steps) >= 3
    assert all(s["tokens_in"] <= 32 for s in steps)
    assert [s["rows_computed"] for s in steps] == [s["tokens_in"] for s in steps]
