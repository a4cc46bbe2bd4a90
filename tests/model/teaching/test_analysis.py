"""model.teaching.analysis: the tour's measurements come from real engine runs and change with the prompt."""

from __future__ import annotations

import pytest

from model.checkpoint import load_pretrained
from model.engine import Engine
from model.teaching import analysis

SHORT = "The quick brown fox"
LONG = "Once upon a time, a little robot carried books from the warehouse to the desk. " * 2


@pytest.fixture(scope="module")
def engine(tiny_model_dir):
    model, tok = load_pretrained(tiny_model_dir)
    return Engine(model, tok, kv_budget_bytes=analysis.KV_BUDGET_BYTES)


def test_attention_is_causal_and_normalised(engine):
    a = analysis.attention(engine, SHORT)
    T = len(a["ids"])
    assert a["n_layer"] == 2 and a["n_head"] == 2
    for layer in a["weights"]:
        for head in layer:
            assert len(head) == T
            for q, row in enumerate(head):
                assert sum(row) == pytest.approx(1.0, abs=1e-3)
                assert all(x == 0 for x in row[q + 1:])
    assert analysis.attention(engine, LONG)["ids"] != a["ids"]
    assert not any(b.attn.readable for b in engine.model.h)


def test_prefill_and_decode_are_measured(engine):
    p1, p2 = analysis.prefill(engine, SHORT), analysis.prefill(engine, LONG)
    assert p1["short_tokens"] != p2["short_tokens"]
    assert p1["short_ms"] > 0 and p1["long_ms"] > 0
    d = analysis.decode(engine, SHORT, steps=4, bandwidth=1e10)
    assert len(d["decode_ms_all"]) == 4 and all(ms > 0 for ms in d["decode_ms_all"])
    assert d["floor_ms"] == pytest.approx(d["weight_bytes"] / 1e10 * 1e3)


def test_kv_cache_counts_reproduce_the_source(engine):
    k = analysis.kv_cache(engine, SHORT, steps=5)
    assert k["new_tokens"] == len(k["with_ms"]) == len(k["without_ms"]) <= 6  # one token per pass, prefill included
    assert k["rows_8x6"] == {"with": 6, "without": 69}  # Σ_{i=1..6} (8 + i) = 69
    P = k["prompt_tokens"]
    assert k["rows_with"] == 5 and k["rows_without"] == sum(P + i for i in range(1, 6))
    assert k["same_tokens"]
    assert analysis.kv_cache(engine, LONG, steps=5)["rows_without"] != k["rows_without"]


def test_stream_reasoning_prefix(engine):
    s = analysis.stream(engine, SHORT, n=5)
    assert len(s["tokens"]) == 5 and s["ttft_ms"] > 0 and len(s["inter_token_ms"]) == 4
    assert [t["t_ms"] for t in s["tokens"]] == sorted(t["t_ms"] for t in s["tokens"])
    assert analysis.stream(engine, LONG, n=5)["prompt_tokens"] != s["prompt_tokens"]
    r = analysis.reasoning(engine, SHORT, think=4, visible=2)
    assert len(r["hidden"]) == 4 and r["first_visible_ms"] > r["ttft_ms"] > 0
    p = analysis.prefix(engine, SHORT, system_tokens=48)
    assert p["hit_tokens"] == 48 and p["cold_ms"] > 0 and p["warm_ms"] > 0
    assert analysis.prefix(engine, SHORT, system_tokens=32)["hit_tokens"] == 32


@pytest.mark.parametrize("written, expected", [(32, 24), (40, 24), (17, 13), (4, 3), (2, 1), (1, 0), (0, 0)])
def test_a_text_that_ends_early_still_has_a_visible_answer(written, expected):
    think = analysis.split_think(written, 24, 8)
    assert think == expected
    if written >= 2:
        assert 1 <= written - think and think >= 1


def test_batching_static_waits_continuous_refills(engine):
    b = analysis.batching(engine, SHORT)
    static, cont = b["static"]["passes"], b["continuous"]["passes"]
    assert len(cont) < len(static)  # long answers beside short ones: static keeps seats empty, continuous refills
    assert b["static"]["trips"] == len(static) and b["continuous"]["trips"] == len(cont)
    assert all(len(p["rows"]) <= b["max_batch"] == 4 for p in static + cont)
    assert b["block_tables"]
    for mode in ("static", "continuous"):  # the figure is the median of the interleaved runs, with its spread
        s = b[mode]["ms"]
        assert s["n"] == b["runs"] == 5 and s["min"] <= s["median"] == b[mode]["total_ms"] <= s["max"]
    assert b["verdict"]["holds"] == (b["continuous"]["ms"]["median"] < b["static"]["ms"]["median"])
    assert (b["why_not"] is None) == b["verdict"]["holds"]


def test_analyze_event_shape(engine):
    ev = analysis.analyze(engine, {"op": "analyze", "analysis_id": "a1", "kind": "next_token", "prompt": SHORT, "k": 5})
    assert ev["type"] == "analysis" and ev["analysis_id"] == "a1" and len(ev["data"]["ids"]) == 5
    assert "error" in analysis.analyze(engine, {"kind": "nope"})
    assert analysis.speculative(engine, SHORT) == {"available": False}


def test_closing_line_is_one_real_trip_per_token(engine):
    c = analysis.closing_line(engine, "")
    ids = engine.tokenizer.encode(analysis.CLOSING_LINE)
    assert c["trips"] == len(ids) == len(c["tokens"]) and [t["id"] for t in c["tokens"]] == ids  # forced
    assert all(t["ms"] > 0 for t in c["tokens"])
    assert c["total_ms"] == pytest.approx(sum(t["ms"] for t in c["tokens"]))
    blocks = [t["blocks"] for t in c["tokens"]]
    assert blocks == sorted(blocks) and blocks[0] == 1 and blocks[-1] > 1  # the cheat sheet grows
    assert all(t["blocks"] == -(-t["cached"] // c["block_size"]) for t in c["tokens"])
    assert "".join(t["text"] for t in c["tokens"]) == analysis.CLOSING_LINE
    assert analysis.closing_line(engine, "", text="KV")["trips"] == len(engine.tokenizer.encode("KV"))


def test_speculative_trip_for_the_game(engine):
    import copy

    from model.gpt2 import GPT2Config
    from tests.model.conftest import lively_gpt2

    assert analysis.speculative_trip(engine, SHORT) == {"available": False}
    m = engine.model
    drafts = {"same": copy.deepcopy(m),  # the target as its own draft: every guess is kept
              "random": lively_gpt2(GPT2Config(vocab_size=m.config.vocab_size, n_positions=m.config.n_positions,
                                               n_embd=16, n_layer=1, n_head=2), seed=7)}
    try:
        for name, draft in drafts.items():
            engine.set_draft(draft, engine.tokenizer)
            for k in (1, 3, 5):
                t = analysis.speculative_trip(engine, SHORT, k=k)
                assert t["available"] and t["proposed"] == k and 0 <= t["accepted"] <= k
                assert len(t["written"]) == t["accepted"] + 1 and t["verify_ms"] > 0 and t["text"]
                if name == "same":
                    assert t["accepted"] == k
        ev = analysis.analyze(engine, {"kind": "speculative_trip", "prompt": SHORT, "k": 4, "analysis_id": "g"})
        assert 0 <= ev["data"]["accepted"] <= 4
    finally:
        engine.set_draft(None)


def test_card_acceptance_reads_each_bundled_pairs_held_out_rate(tmp_path):
    """The speculative page quotes both apprentices' card figures: code from held-out code, poems from poems."""
    import json

    import assets
    from model.catalog import card_acceptance

    rates = card_acceptance()
    code = json.loads((assets.MODELS / "eval.json").read_text(encoding="utf-8"))["acceptance"]
    assert rates["code"] == code["code"]["rate"]
    assert 0 < rates["poems"] < 1
    (tmp_path / "poems").mkdir()
    (tmp_path / "poems" / "eval.json").write_text("{not json", encoding="utf-8")
    assert card_acceptance(tmp_path) == {"code": None, "poems": None}
