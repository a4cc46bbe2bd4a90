"""The catalog's lookup presets (issue 35, item 3): prompts whose answer repeats the prompt, each with its own
sampling, and the figures bench/lookup_bench.py measured for them."""

from __future__ import annotations

import json

from model import catalog


def test_the_code_model_has_lookup_presets_with_their_own_sampling():
    presets = catalog.CODE.lookup_presets
    assert presets
    for p in presets:
        assert "the answer repeats the prompt" in p.label
        assert p.prompt not in catalog.CODE.presets  # apart from the free-writing presets
        assert catalog.CODE.lookup_preset(p.prompt) is p
        assert 0 < p.top_p <= 1 and 1 <= p.k <= 8
        # its own sampling: greedy (and then the page says so in words), or cooler than free writing's
        assert p.greedy or 0 < p.temperature < catalog.CODE.temperature
    assert catalog.CODE.lookup_preset("def fibonacci(n):") is None
    assert catalog.POEMS.lookup_presets == ()


def test_the_shipped_figures_are_for_each_presets_own_sampling_and_show_a_speedup_a_loop_rare_and_stopped():
    for p in catalog.CODE.lookup_presets:
        f = catalog.lookup_measured(p.key)
        assert f is not None, f"python -m bench.lookup_bench has not measured {p.key}"
        assert f["temperature"] == p.temperature and f["k"] == p.k
        # ten distinct answers at least; a loop (stopped, as on the page) in at most one in four of them
        assert f["speedup"] > 1.0 and f["answers"] >= 10 and f["loops"] <= f["answers"] // 4
        assert f["loops"] == len(f["looped_seeds"])
        assert f["rounds_faster"] == len(f["round_speedups"]) == f["rounds"]


def test_lookup_measured_is_none_without_figures(tmp_path):
    assert catalog.lookup_measured("doctest", tmp_path / "missing.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert catalog.lookup_measured("doctest", bad) is None
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"presets": {"other": {"speedup": 2.0}}}), encoding="utf-8")
    assert catalog.lookup_measured("doctest", other) is None
    assert catalog.lookup_measured("other", other)["speedup"] == 2.0


def test_the_lookup_presets_answer_copies_its_prompt_and_a_loop_is_stopped_not_shown():
    """Ten answers of the lookup preset, as the Live page runs it (the engine stops a looping request): the guesses
    copied from the prompt are kept often (pooled over the ten), and no answer goes on looping. At its
    temperature (0.6) about one answer in twelve falls into a loop (5 of 60 seeds, measured): those end "loop"
    after the third copy, which the page never shows (``shown_text``)."""
    import torch

    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.loops import find_loop, shown_text
    from model.sampling import SamplingParams

    torch.set_num_threads(1)
    p = catalog.CODE.lookup_presets[0]
    target, tokenizer = load_pretrained(catalog.CODE.path())
    proposed = accepted = 0
    for seed in range(1, 11):
        e = Engine(target, tokenizer, kv_budget_bytes=8 * 2**20, prefix_cache=False, max_batch=1)
        e.stop_loops = True
        e.set_draft_kind("ngram")
        e.set_draft_k(p.k)
        e.add_request(p.prompt, max_new_tokens=64, sampling=SamplingParams(temperature=p.temperature,
                                                                          top_p=p.top_p, seed=seed))
        list(e.run(max_steps=10_000))
        result = next(iter(e.finished.values()))
        loop = find_loop(result.text)
        if loop is not None:  # stopped as soon as the third copy was written, and cut before it on the page
            assert result.finish_reason == "loop" and len(result.text) - loop.end < 40, (seed, result.text)
            assert find_loop(shown_text(result.text)[0]) is None
        proposed, accepted = proposed + e.spec_proposed, accepted + e.spec_accepted
    assert accepted / proposed > 0.25  # most trips write more than one token: it copies
