"""The catalog's lookup presets (issue 35, item 3): prompts whose answer repeats the prompt, each with its own
sampling, and the figures bench/lookup_bench.py measured for them."""

from __future__ import annotations

import json

import pytest

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


def test_the_shipped_figures_are_for_each_presets_own_sampling_and_show_a_speedup_without_a_loop():
    for p in catalog.CODE.lookup_presets:
        f = catalog.lookup_measured(p.key)
        assert f is not None, f"python -m bench.lookup_bench has not measured {p.key}"
        assert f["temperature"] == p.temperature and f["k"] == p.k
        assert f["speedup"] > 1.0 and f["loops"] == 0 and f["answers"] > 0
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


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_lookup_presets_answer_copies_its_prompt_and_does_not_loop(seed):
    import torch

    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.loops import find_loop
    from model.sampling import SamplingParams

    torch.set_num_threads(1)
    p = catalog.CODE.lookup_presets[0]
    target, tokenizer = load_pretrained(catalog.CODE.path())
    e = Engine(target, tokenizer, kv_budget_bytes=8 * 2**20, prefix_cache=False, max_batch=1)
    e.set_draft_kind("ngram")
    e.set_draft_k(p.k)
    e.add_request(p.prompt, max_new_tokens=64, sampling=SamplingParams(temperature=p.temperature, top_p=p.top_p,
                                                                      seed=seed))
    list(e.run(max_steps=10_000))
    text = next(iter(e.finished.values())).text
    assert find_loop(text) is None, text
    assert e.spec_accepted / e.spec_proposed > 0.25  # most trips write more than one token: it copies
