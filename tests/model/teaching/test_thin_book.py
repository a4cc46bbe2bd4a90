"""Page 14's thinner book (model/teaching/thin_book.py) whatever precision the Live engine runs: it names the
precision in use and its bytes, and compares an fp32 book of the same values with its int8 copy."""

from __future__ import annotations

import pytest

from model.engine import Engine
from model.teaching.thin_book import thin_book


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
