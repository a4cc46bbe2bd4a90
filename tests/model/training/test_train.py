"""The training pipeline on a tiny slice (never a real training run), and the shipped models in assets/models."""

from __future__ import annotations

import csv
import inspect
import json
import sysconfig
from pathlib import Path

import pytest
import torch

from model.checkpoint import load_pretrained
from model.training import corpus as corpus_mod
from model.training import train as train_mod

ROOT = Path(__file__).resolve().parents[3]
ASSETS = ROOT / "assets" / "models"

_STDLIB_MODULES = ["json/__init__.py", "json/decoder.py", "json/encoder.py", "textwrap.py", "bisect.py",
                   "heapq.py", "fnmatch.py", "shlex.py", "colorsys.py", "string.py", "glob.py", "keyword.py"]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory) -> Path:
    """A corpus folder built by model.training.corpus from a few standard-library files and their docstrings."""
    base = tmp_path_factory.mktemp("tiny")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    code, prose = base / "src_code", base / "src_prose"
    for rel in _STDLIB_MODULES:
        dst = code / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes((stdlib / rel).read_bytes())
    prose.mkdir()
    import bisect  # noqa: E401
    import colorsys
    import fnmatch
    import glob
    import heapq
    import json as json_lib
    import shlex
    import string
    import textwrap
    for mod in (bisect, colorsys, fnmatch, glob, heapq, json_lib, shlex, string, textwrap):
        parts = [inspect.getdoc(mod) or ""]
        parts += [f"{n}\n{'-' * len(n)}\n\n{inspect.getdoc(o)}" for n, o in vars(mod).items()
                  if not n.startswith("_") and callable(o) and inspect.getdoc(o)]
        (prose / f"{mod.__name__}.rst.txt").write_text("\n\n".join(parts), encoding="utf-8")
    out = base / "corpus"
    manifest = corpus_mod.build(out, prose, code, None, 0, vocab_size=512, heldout_every=4, seed=0)
    assert manifest["train_tokens"] > 10_000
    return out


def test_corpus_is_deterministic_and_split(tiny_corpus, tmp_path):
    manifest = json.loads((tiny_corpus / "manifest.json").read_text())
    for m in manifest["domains"].values():
        assert m["license"].startswith("PSF")
        assert m["train_files"] > 0
    held = {n for m in manifest["domains"].values() for n in m["heldout_names"]}
    assert held, "heldout_every=4 over 21 files should hold some out"
    # The split depends only on names: the same function decides it again.
    for domain, m in manifest["domains"].items():
        for name in m["heldout_names"]:
            assert corpus_mod.is_heldout(corpus_mod.Document(domain, name, ""), 4)
    assert manifest["eot_id"] == 0


def test_training_loss_falls_and_output_loads(tiny_corpus, tmp_path):
    out, run = tmp_path / "out", tmp_path / "run"
    summary = train_mod.train("tiny-test", tiny_corpus, out, run, steps=30, threads=1, seed=0, quiet=True)
    rows = list(csv.DictReader((run / "loss.csv").open()))
    losses = [float(r["loss"]) for r in rows]
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < losses[0] - 0.5, losses
    assert summary["steps"] == 30 and summary["tokens_seen"] > 0
    model, tok = load_pretrained(out)
    assert (out / "training.json").is_file() and (out / "loss.csv").is_file()
    ids = torch.tensor([tok.encode("def f(x):\n    return x")])
    logits = model(ids)
    assert logits.shape == (1, ids.shape[1], model.config.vocab_size)
    assert logits.dtype == torch.float32 and torch.isfinite(logits).all()
    assert model.config.n_positions == train_mod.CONFIGS["tiny-test"].n_positions
    assert tok.eos_token_id == model.config.eos_token_id == 0


def test_resume_continues_exactly(tiny_corpus, tmp_path):
    full = tmp_path / "full"
    train_mod.train("tiny-test", tiny_corpus, full / "out", full / "run", steps=14, seed=3, quiet=True)
    part = tmp_path / "part"
    train_mod.train("tiny-test", tiny_corpus, part / "out", part / "run", steps=14, seed=3, quiet=True, stop_after=7)
    assert torch.load(part / "run" / "ckpt.pt", weights_only=False)["step"] == 7
    train_mod.train("tiny-test", tiny_corpus, part / "out", part / "run", steps=14, seed=3, quiet=True, resume=True)
    a, _ = load_pretrained(full / "out")
    b, _ = load_pretrained(part / "out")
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        torch.testing.assert_close(p, q, rtol=0, atol=1e-6, msg=name)


def test_lr_schedule_and_long_phase():
    cfg = train_mod.CONFIGS["target"]
    assert train_mod.lr_at(0, cfg) < cfg.lr
    assert train_mod.lr_at(cfg.warmup, cfg) == pytest.approx(cfg.lr)
    assert train_mod.lr_at(cfg.steps, cfg) == pytest.approx(cfg.lr * cfg.min_lr_frac)
    assert train_mod.block_at(0, cfg) == (cfg.batch, cfg.block)
    batch, block = train_mod.block_at(cfg.steps - 1, cfg)
    assert block == cfg.n_positions and batch * block == cfg.batch * cfg.block


def test_shipped_models_load_and_fit():
    target, ttok = load_pretrained(ASSETS / "target")
    draft, dtok = load_pretrained(ASSETS / "draft")
    assert 4_000_000 <= target.num_parameters() <= 15_000_000
    # an apprentice reads less than half the target's weight bytes per guess (the code draft: 3 of the 4 blocks
    # in int8 rows), through fewer layers
    assert draft.weight_bytes() < target.weight_bytes() / 2 and draft.config.n_layer < target.config.n_layer
    assert target.config.n_positions >= 512
    assert ttok.fingerprint() == dtok.fingerprint()
    assert ttok.eos_token_id is not None
    ids = torch.tensor([ttok.encode("def fibonacci(n):")])
    for model in (target, draft):
        assert model(ids).shape == (1, ids.shape[1], model.config.vocab_size)
    size = sum(f.stat().st_size for f in (ROOT / "assets").rglob("*") if f.is_file())
    assert size < 200 * 1024 * 1024  # the budget for all of assets/ (issue 43: two big books in FP16)
    assert (ASSETS / "README.md").is_file()


def test_init_from_starts_a_further_stage(tiny_corpus, tmp_path):
    first = tmp_path / "first"
    s1 = train_mod.train("tiny-test", tiny_corpus, first / "out", first / "run", steps=20, seed=0, quiet=True)
    fresh_first_loss = float(next(csv.DictReader((first / "run" / "loss.csv").open()))["loss"])
    second = tmp_path / "second"
    s2 = train_mod.train("tiny-test", tiny_corpus, second / "out", second / "run", steps=10, seed=1, quiet=True,
                         init_from=first / "out")
    rows = list(csv.DictReader((second / "run" / "loss.csv").open()))
    earlier_rows = [r for r in rows if int(r["step"]) < 0]
    new_rows = [r for r in rows if int(r["step"]) > 0]
    assert len(earlier_rows) == 20 and len(new_rows) == 10  # the curve shows both stages
    # It starts from the trained weights, not from scratch: its first loss is far below a fresh model's.
    assert float(new_rows[0]["loss"]) < fresh_first_loss - 0.5
    assert s2["tokens_seen"] == s1["tokens_seen"] + 10 * 4 * 32
    assert s2["earlier"]["steps"] == 20 and s2["earlier"]["tokens_seen"] == s1["tokens_seen"]


def test_an_early_exit_draft_starts_from_the_first_layers_of_a_deeper_model():
    from model.gpt2 import GPT2, GPT2Config
    deep = GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=3, n_head=2)).init_weights(0)
    shallow = GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=1, n_head=2)).init_weights(1)
    shallow.load_state_dict(train_mod.early_exit_state(deep, 1))  # strict: every weight of the 1-layer model
    for name, value in shallow.state_dict().items():
        assert torch.equal(value, deep.state_dict()[name]), name  # embeddings, block 0 and ln_f are the deep's
    assert not any(k.startswith("h.1.") for k in train_mod.early_exit_state(deep, 1))
    assert train_mod.early_exit_state(deep, 3).keys() == deep.state_dict().keys()


def test_a_layer_skip_draft_takes_the_blocks_it_names_in_order():
    """draft-skip keeps the target's blocks 0, 2 and 3: block i of the draft is the named block, renumbered."""
    from model.gpt2 import GPT2, GPT2Config
    deep = GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=4, n_head=2)).init_weights(0)
    skip = GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=3, n_head=2)).init_weights(1)
    skip.load_state_dict(train_mod.early_exit_state(deep, 3, (0, 2, 3)))  # strict
    for mine, theirs in ((0, 0), (1, 2), (2, 3)):
        assert torch.equal(skip.h[mine].mlp.c_fc.weight, deep.h[theirs].mlp.c_fc.weight)
    assert torch.equal(skip.ln_f.weight, deep.ln_f.weight) and torch.equal(skip.wte.weight, deep.wte.weight)
    for bad in ((0, 1), (0, 2, 4)):
        with pytest.raises(ValueError, match="blocks"):
            train_mod.early_exit_state(deep, 3, bad)
    assert train_mod.CONFIGS["draft-skip"].init_layers == (0, 2, 3)


def test_init_from_refuses_another_shape(tiny_corpus, tmp_path):
    first = tmp_path / "first"
    train_mod.train("tiny-test", tiny_corpus, first / "out", first / "run", steps=2, seed=0, quiet=True)
    with pytest.raises(ValueError, match="shape"):
        train_mod.train("draft", tiny_corpus, tmp_path / "o", tmp_path / "r", steps=1, quiet=True,
                        init_from=first / "out")


def test_a_third_stage_resumes_with_both_earlier_curves_kept(tiny_corpus, tmp_path):
    """Two --init-from stages back, the first stage's steps read "--N"; resuming the third must keep every row
    (it once failed on int("--1") after truncating loss.csv to nothing)."""
    outs = []
    for i, steps in enumerate((6, 4)):
        d = tmp_path / f"s{i}"
        train_mod.train("tiny-test", tiny_corpus, d / "out", d / "run", steps=steps, seed=i, quiet=True,
                        init_from=outs[-1] if outs else None)
        outs.append(d / "out")
    third = tmp_path / "s2"
    train_mod.train("tiny-test", tiny_corpus, third / "out", third / "run", steps=6, seed=2, quiet=True,
                    init_from=outs[-1], stop_after=3)
    train_mod.train("tiny-test", tiny_corpus, third / "out", third / "run", steps=6, seed=2, quiet=True,
                    init_from=outs[-1], resume=True)
    steps = [r["step"] for r in csv.DictReader((third / "run" / "loss.csv").open())]
    assert steps == [f"--{s}" for s in range(1, 7)] + [f"-{s}" for s in range(1, 5)] + [str(s) for s in range(1, 7)]


def test_the_shipped_code_draft_is_at_most_a_quarter_of_the_target_in_bytes():
    # issue 35: a draft that keeps the target's whole dictionary beside a chapter is 0.45x and does not pay
    target = (ASSETS / "target" / "model.safetensors").stat().st_size
    draft = (ASSETS / "draft" / "model.safetensors").stat().st_size
    assert draft <= 0.25 * target, draft / target


def test_thin_embeddings_keep_the_main_directions_of_the_wide_ones():
    from model.gpt2 import GPT2, GPT2Config
    cfg = GPT2Config(vocab_size=64, n_positions=16, n_embd=32, n_layer=1, n_head=2)
    wide = GPT2(cfg)
    gen = torch.Generator().manual_seed(0)
    direction = torch.randn(32, generator=gen)
    direction /= direction.norm()
    with torch.no_grad():  # rows along one direction (plus a little noise): one thin column keeps nearly all
        wide.wte.weight.copy_(torch.randn(64, 1, generator=gen) * 3 * direction
                              + 0.01 * torch.randn(64, 32, generator=gen))
        wide.wpe.weight.copy_(0.5 * direction.expand(16, 32))
    thin = train_mod.thin_embeddings(wide, 1)
    assert thin["wte.weight"].shape == (64, 1) and thin["wpe.weight"].shape == (16, 1)
    kept = thin["wte.weight"].norm() / wide.wte.weight.norm()
    assert kept > 0.98
    assert torch.allclose(thin["wpe.weight"].abs(), torch.full((16, 1), 0.5), atol=0.02)
    with pytest.raises(ValueError):
        train_mod.thin_embeddings(wide, 32)


def _randomised(model):
    """A model whose every weight, norms and biases included, is random: growth must keep all of them."""
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    return model


def test_a_grown_book_writes_what_the_small_one_did():
    """grown_state: twice as wide and deep, the same next-token logits (the small model's function kept), and the
    new heads, MLP units and blocks are really there (random inputs, zero outputs) for training to use."""
    from model.gpt2 import GPT2, GPT2Config
    small_cfg = GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=2, n_head=2)
    wide_cfg = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=4, n_head=4)
    small = _randomised(GPT2(small_cfg)).eval()
    wide = GPT2(wide_cfg).eval()
    wide.load_state_dict(train_mod.grown_state(small, GPT2(wide_cfg), seed=0))  # strict: every weight named
    ids = torch.randint(0, 64, (3, 20), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want, got = small(ids), wide(ids)
    assert (got - want).abs().max() < 1e-3 * want.abs().max()
    state = wide.state_dict()
    assert state["h.1.attn.c_attn.weight"].abs().sum() > 0  # a new block reads through random weights
    assert torch.count_nonzero(state["h.1.attn.c_proj.weight"]) == 0  # and writes nothing yet
    assert torch.count_nonzero(state["h.0.mlp.c_fc.weight"][64:]) > 0  # new MLP units (inner 64 -> 128)
    assert torch.count_nonzero(state["h.0.mlp.c_proj.weight"][:, 64:]) == 0


def test_growth_refuses_a_shape_that_is_not_twice_the_small_one():
    from model.gpt2 import GPT2, GPT2Config
    small = GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=16, n_layer=2, n_head=2))
    with pytest.raises(ValueError, match="twice as wide and deep"):
        train_mod.grown_state(small, GPT2(GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=3, n_head=4)))
