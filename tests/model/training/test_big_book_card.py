"""The big book's card (``model.training.big_book_card``): every figure from the files, on a tiny family."""

from __future__ import annotations

import shutil
from dataclasses import replace

import numpy as np
import torch

from model.checkpoint import load_pretrained, save_pretrained
from model.gpt2 import GPT2
from model.training import big_book_card
from model.training.starts import grown_state


def test_a_book_grown_untrained_scores_as_its_pocket_book_and_agrees_on_every_guess(tiny_model_dir, tmp_path):
    """Grown and not yet trained, the big book is the pocket book's function: the same held-out bits per byte and
    every greedy guess of the pocket book kept; the card says so from the files (an independent check of growth,
    FP16 on disk included)."""
    models = tmp_path / "models"
    pocket_dir = shutil.copytree(tiny_model_dir, models / "target")
    pocket, tok = load_pretrained(pocket_dir)
    cfg = replace(pocket.config, n_embd=2 * pocket.config.n_embd, n_layer=2 * pocket.config.n_layer,
                  n_head=2 * pocket.config.n_head)
    big = GPT2(cfg)
    big.load_state_dict(grown_state(pocket, GPT2(cfg)))
    big_dir = save_pretrained(big, models / "target-big", pocket_dir / "tokenizer.json", dtype=torch.float16)
    (big_dir / "training.json").write_text('{"command": "python -m model.training.train --config x", "steps": 0}')
    corpus = tmp_path / "corpus"
    (corpus / "heldout").mkdir(parents=True)
    rng = np.random.default_rng(0)
    for domain in ("code", "prose"):
        ids = tok.encode("def add(a, b):\n    return a + b\n" * 40)
        np.asarray(ids + list(rng.integers(0, tok.vocab_size, 200)), dtype=np.uint16).tofile(
            corpus / "heldout" / f"{domain}.bin")
    res = big_book_card.evaluate("code", corpus, models)
    assert res["big"]["file_dtype"] == "F16" and res["pocket"]["file_dtype"] == "F32"
    assert res["big"]["parameters"] > 3 * res["pocket"]["parameters"]
    for domain in ("code", "prose"):
        big_bpb, pocket_bpb = res["heldout"]["big"][domain]["bpb"], res["heldout"]["pocket"][domain]["bpb"]
        assert abs(big_bpb - pocket_bpb) < 0.01 * pocket_bpb, domain  # FP16 rounding only
    assert res["acceptance"]["rate"] > 0.95
    card = big_book_card.render(res)
    assert "| code (bits per byte) |" in card and "python -m model.training.train --config x" in card
