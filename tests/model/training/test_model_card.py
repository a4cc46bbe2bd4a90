"""The code pair's card (assets/models/README.md) is what ``python -m model.training.model_card`` renders from the
shipped eval.json, and eval.json describes the weights that are shipped: nothing in it is typed in by hand."""

from __future__ import annotations

import json
import re

import pytest

from model.checkpoint import load_pretrained
from model.training import model_card
from tests.model.training.test_train import ASSETS


def _without_assets_size(text: str) -> str:
    return re.sub(r"All of `assets/` when this card was written: [^\n]*", "", text)


def test_the_card_is_rendered_from_eval_json():
    res = json.loads((ASSETS / "eval.json").read_text(encoding="utf-8"))
    manifest = json.loads((ASSETS / "corpus.json").read_text(encoding="utf-8"))
    rendered = model_card.render(res, manifest, 0)
    assert _without_assets_size(rendered) == _without_assets_size((ASSETS / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["target", "draft"])
def test_eval_json_describes_the_shipped_weights(name):
    res = json.loads((ASSETS / "eval.json").read_text(encoding="utf-8"))["models"][name]
    model, _ = load_pretrained(ASSETS / name)
    cfg = model.config
    assert (res["n_layer"], res["n_embd"], res["n_head"], res["vocab_size"]) == \
        (cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.vocab_size)
    assert res["parameters"] == model.num_parameters()
    assert res["file_bytes"] == (ASSETS / name / "model.safetensors").stat().st_size
    assert res["training"] == json.loads((ASSETS / name / "training.json").read_text(encoding="utf-8"))
