"""model.teaching.thin_book (tour page 14's measured bars): fp32 against int8 weights, really measured.

The bytes are checked against a count made here from the config alone (GPT-2's shapes, the int8 layout of
``model/quantize.py``'s doc: one int8 byte per matrix entry, one float32 scale per matrix row, float32 biases and
layer norms), so a broken ``weight_bytes`` or a quantizer that leaves a matrix fp32 fails. A measurement that fails
comes back as ``{"available": False, "error": ...}`` (the page then draws nothing): here that fails the test, with
its message. Times are checked for shape and sign only, never for speed (bench/ measures speed).
"""

from __future__ import annotations

import pytest

from model.checkpoint import load_pretrained
from model.engine import Engine
from model.teaching.thin_book import thin_book

PROMPT = "The quick brown fox"
STEPS, REPEATS = 3, 2


@pytest.fixture(scope="module")
def engine(tiny_model_dir):
    model, tok = load_pretrained(tiny_model_dir)
    return Engine(model, tok, max_batch=1)


@pytest.fixture(scope="module")
def measured(engine):
    return thin_book(engine, PROMPT, steps=STEPS, repeats=REPEATS)


def _gpt2_bytes(config) -> tuple[int, int]:
    """(fp32 bytes, int8 bytes) of a tied-head GPT-2 with ``config``'s shapes, counted from the shapes."""
    V, P, C, L = config.vocab_size, config.n_positions, config.n_embd, config.n_layer
    inner = config.n_inner or 4 * C
    assert config.tie_word_embeddings  # the tiny model's head is wte: no matrix of its own
    # (rows, cols) of every weight matrix: wte, wpe, and per block c_attn, attn c_proj, c_fc, mlp c_proj (out, in)
    matrices = [(V, C), (P, C)] + L * [(3 * C, C), (C, C), (inner, C), (C, inner)]
    rest = 2 * C + L * (2 * C + 3 * C + C + 2 * C + inner + C)  # ln_f; per block ln_1, biases, ln_2, biases
    entries = sum(r * c for r, c in matrices)
    rows = sum(r for r, _ in matrices)
    return 4 * (entries + rest), entries + 4 * rows + 4 * rest


def test_the_measurement_is_available_not_a_silent_error(measured):
    assert "error" not in measured, measured.get("error")
    assert measured["available"] is True
    assert (measured["steps"], measured["runs"]) == (STEPS, REPEATS)


def test_the_bytes_are_the_models_own_counted_from_its_shapes(engine, measured):
    fp32, int8 = _gpt2_bytes(engine.config)
    assert fp32 == 4 * sum(p.numel() for p in engine.model.parameters())  # the count itself, against torch's
    assert measured["fp32"]["weight_bytes"] == fp32
    assert measured["int8"]["weight_bytes"] == int8
    assert measured["bytes_ratio"] == pytest.approx(int8 / fp32)
    assert 0.25 < measured["bytes_ratio"] < 0.5  # a quarter of the bytes, plus scales and the float32 rest


def test_each_side_has_one_positive_figure_per_round(measured):
    for side in ("fp32", "int8"):
        s = measured[side]["trip_ms"]
        assert s["n"] == len(s["values"]) == REPEATS
        assert all(ms > 0 for ms in s["values"])
        assert s["min"] == min(s["values"]) <= s["median"] <= s["max"] == max(s["values"])
        assert measured[side]["tokens_per_s"] == pytest.approx(1000.0 / s["median"])
    fat, lean = measured["fp32"]["trip_ms"]["median"], measured["int8"]["trip_ms"]["median"]
    assert measured["speedup"] == pytest.approx(fat / lean) and measured["speedup"] > 0


def test_the_engines_own_model_stays_fp32(engine, measured):
    assert getattr(engine.model, "weights", "fp32") == "fp32"
    assert engine.model.weight_bytes() == measured["fp32"]["weight_bytes"]



@pytest.mark.parametrize("weights", ["fp32", "fp16"])
def test_the_thin_book_names_the_precision_in_use(tiny_in, weights):
    model, tok = tiny_in(weights)
    t = thin_book(Engine(model, tok, max_batch=1), "def f(x):", steps=2, repeats=1)
    assert t["available"], t.get("error")
    assert t["in_use"] == {"weights": weights, "weight_bytes": model.weight_bytes()}
    fp32, int8 = t["fp32"]["weight_bytes"], t["int8"]["weight_bytes"]
    assert int8 < 0.4 * fp32
    assert t["in_use"]["weight_bytes"] == (fp32 if weights == "fp32" else pytest.approx(fp32 / 2, rel=0.1))
    assert t["bytes_ratio"] == int8 / fp32 and t["runs"] == 1
    assert model.weights == weights  # the engine's own model was not converted
