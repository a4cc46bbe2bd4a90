"""Parity with Hugging Face ``transformers``: same weights, same logits within 1e-4 (fp32, CPU).

The reference is ``transformers.GPT2LMHeadModel`` built from a small random config (no download), with every
parameter, biases and LayerNorms included, drawn far from GPT-2's init so that a wrong transpose, a missing
bias or a wrong epsilon shows up as a large difference rather than hiding under tiny logits.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.checkpoint import load_pretrained, save_pretrained
from model.engine import Engine

TOL = 1e-4
PROMPT_LENGTHS = (1, 7, 64)


@pytest.fixture(scope="module")
def hf_model(tmp_path_factory, tokenizer_json):
    """A random HF GPT2LMHeadModel and the directory it was saved to (prefixed keys, Conv1D [in, out])."""
    import transformers  # the test extra's reference: missing, it fails (not a skip)
    cfg = transformers.GPT2Config(vocab_size=400, n_embd=64, n_layer=2, n_head=4, n_positions=128,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(1234)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    gen = torch.Generator().manual_seed(99)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))
            elif p.dim() == 1:
                p.copy_(0.2 * torch.randn(p.shape, generator=gen))
            elif name.endswith(("wte.weight", "wpe.weight")):
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / p.shape[0] ** 0.5 * 1.5)
    out = tmp_path_factory.mktemp("hf") / "hf_gpt2"
    model.save_pretrained(out, safe_serialization=True)
    shutil.copyfile(tokenizer_json, out / "tokenizer.json")
    return model, out


def _ids(n: int, vocab: int = 400, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, vocab, (1, n), generator=torch.Generator().manual_seed(seed + n))


def _hf_logits(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids).logits


def _ours(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(ids)


def test_hf_file_really_uses_prefix_and_conv1d_layout(hf_model):
    """The fixture exercises what it claims: ``transformer.`` keys and [in, out] projection weights."""
    _, d = hf_model
    keys = load_file(str(d / "model.safetensors"))
    assert "transformer.h.0.attn.c_attn.weight" in keys
    assert tuple(keys["transformer.h.0.attn.c_attn.weight"].shape) == (64, 192)  # Conv1D: [in, out]


@pytest.mark.parametrize("n", PROMPT_LENGTHS)
def test_logits_match_transformers(hf_model, n):
    ref, d = hf_model
    ours, _ = load_pretrained(d)
    ids = _ids(n)
    expected = _hf_logits(ref, ids)
    got = _ours(ours, ids)
    assert got.shape == expected.shape == (1, n, 400)
    assert torch.allclose(got, expected, atol=TOL, rtol=0), (got - expected).abs().max()
    assert expected.std() > 1.0  # the comparison is not between two near-zero tensors


@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
def test_engine_prefill_and_decode_match_transformers(hf_model, ragged):
    """Through the engine (paged cache, packed batch): each sampled row equals HF's logits at that position."""
    ref, d = hf_model
    model, tok = load_pretrained(d)
    engine = Engine(model, tok, ragged=ragged)
    engine.record_logits = True
    prompt = _ids(7)[0].tolist()
    rid = engine.add_request(prompt, max_new_tokens=5)
    list(engine.run())
    res = engine.finished[rid]
    full = torch.tensor([prompt + res.token_ids])
    expected = _hf_logits(ref, full)[0]  # (T, V)
    rows = engine.logits[rid]
    assert len(rows) == len(res.token_ids) + (res.finish_reason == "stop")
    for i, row in enumerate(rows[:len(res.token_ids)]):
        assert torch.allclose(row, expected[len(prompt) - 1 + i], atol=TOL, rtol=0)


def _engine_rows_match_hf(ref, engine, prompts, **request):
    rids = [engine.add_request(p, max_new_tokens=6, **request) for p in prompts]
    list(engine.run())
    checked = 0
    for rid, prompt in zip(rids, prompts):
        res = engine.finished[rid]
        expected = _hf_logits(ref, torch.tensor([prompt + res.token_ids]))[0]  # (T, V)
        rows = engine.logits[rid]
        # a verify pass records k + 1 rows per trip, of which the first len(emitted) are the emitted positions;
        # rows line up with positions only without rejections, so compare each row to the position it scored
        for i, row in enumerate(rows[:len(res.token_ids)]):
            assert torch.allclose(row, expected[len(prompt) - 1 + i], atol=TOL, rtol=0), (rid, i)
            checked += 1
    return checked


@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
def test_every_fast_path_matches_transformers(hf_model, ragged):
    """The engine's decode layout (GPT2.prepare_for_decode), the in-place KV read of one sequence with
    consecutive blocks, the gathered read of scattered blocks, a padded batch with a mask, and a verify pass of
    n-gram guesses: every scored position equals HF's logits within 1e-4."""
    ref, d = hf_model
    model, tok = load_pretrained(d)
    engine = Engine(model, tok, max_batch=3, prefix_cache=False, ragged=ragged)
    engine.record_logits = True
    # one sequence, fresh pool: consecutive blocks, read in place
    from model.engine import PassItem
    from model.kv_cache import BlockTable
    assert engine._pack([PassItem([1], 20, BlockTable(blocks=[0, 1]))], engine.cache)[1].context_start == 0
    assert engine._pack([PassItem([1], 20, BlockTable(blocks=[5, 2]))], engine.cache)[1].context_start is None
    assert _engine_rows_match_hf(ref, engine, [_ids(40, seed=1)[0].tolist()]) >= 6
    # freed blocks come back tail first: the next sequence's blocks are scattered, and gathered
    assert _engine_rows_match_hf(ref, engine, [_ids(40, seed=2)[0].tolist()]) >= 6
    # three lengths in one batch (padded, or flat with one attention group per length)
    assert _engine_rows_match_hf(ref, engine, [_ids(n, seed=3)[0].tolist() for n in (3, 17, 33)]) >= 18
    # chunks of a long prompt beside decodes: mixed trips
    engine.scheduler.max_step_tokens = 12
    assert _engine_rows_match_hf(ref, engine, [_ids(n, seed=5)[0].tolist() for n in (2, 45, 5)]) >= 18
    engine.scheduler.max_step_tokens = 512
    # n-gram guesses checked in verify passes of k + 1 positions (a repetitive prompt, so guesses exist)
    engine.set_draft_kind("ngram")
    engine.set_draft_k(3)
    rep = (_ids(5, seed=4)[0].tolist()) * 4
    engine.logits.clear()
    rid = engine.add_request(rep, max_new_tokens=8)
    reports = list(engine.run())
    assert any(r.phase == "verify" and r.proposed for r in reports)
    res = engine.finished[rid]
    full = rep + res.token_ids
    expected = _hf_logits(ref, torch.tensor([full]))[0]
    # walk the passes: a verify pass recorded k + 1 rows, of which the first accepted + 1 scored committed
    # positions (the rest scored rejected guesses); a prefill or decode pass recorded one row
    rows, pos, checked = engine.logits[rid], len(rep) - 1, 0
    i = 0
    for r in reports:
        n_rows = r.proposed + 1 if r.phase == "verify" else 1
        for j in range((r.accepted + 1) if r.phase == "verify" else 1):
            if pos + j < len(full):  # a length limit can cut a trip short
                assert torch.allclose(rows[i + j], expected[pos + j], atol=TOL, rtol=0), (r.step, j)
                checked += 1
        i += n_rows
        pos += r.tokens_out
    assert i == len(rows) and checked >= len(res.token_ids)


def _resave(src, dst, transform):
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("config.json", "tokenizer.json"):
        shutil.copyfile(src / name, dst / name)
    tensors = load_file(str(src / "model.safetensors"))
    save_file(transform(tensors), str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


def test_bare_keys_load(hf_model, tmp_path):
    ref, d = hf_model
    bare = _resave(d, tmp_path / "bare", lambda t: {k.removeprefix("transformer."): v for k, v in t.items()})
    assert not any(k.startswith("transformer.") for k in load_file(str(bare / "model.safetensors")))
    ours, _ = load_pretrained(bare)
    ids = _ids(7)
    assert torch.allclose(_ours(ours, ids), _hf_logits(ref, ids), atol=TOL, rtol=0)


@pytest.mark.parametrize("prefix", ["transformer.", ""])
def test_mask_buffers_are_skipped(hf_model, tmp_path, prefix):
    """Old checkpoints carry ``attn.bias`` (the causal mask) and ``attn.masked_bias``; they load and are ignored."""
    ref, d = hf_model

    def add_buffers(t):
        t = {k.removeprefix("transformer."): v for k, v in t.items()}
        for i in range(2):
            t[f"h.{i}.attn.bias"] = torch.tril(torch.ones(128, 128)).view(1, 1, 128, 128)
            t[f"h.{i}.attn.masked_bias"] = torch.tensor(-1e4)
        return {prefix + k: v for k, v in t.items()}

    with_buffers = _resave(d, tmp_path / "buffers", add_buffers)
    assert f"{prefix}h.1.attn.masked_bias" in load_file(str(with_buffers / "model.safetensors"))
    ours, _ = load_pretrained(with_buffers)
    ids = _ids(64)
    assert torch.allclose(_ours(ours, ids), _hf_logits(ref, ids), atol=TOL, rtol=0)


def test_linear_layout_loads_too(hf_model, tmp_path):
    """A file with nn.Linear [out, in] projections (every one transposed, square c_proj included) loads the same."""
    ref, d = hf_model
    proj = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
    linear = _resave(d, tmp_path / "linear",
                     lambda t: {k: (v.t().contiguous() if k.endswith(proj) else v) for k, v in t.items()})
    ours, _ = load_pretrained(linear)
    ids = _ids(7)
    assert torch.allclose(_ours(ours, ids), _hf_logits(ref, ids), atol=TOL, rtol=0)


def test_our_save_loads_in_transformers(hf_model, tmp_path):
    import transformers  # the test extra's reference: missing, it fails (not a skip)
    ref, d = hf_model
    ours, _ = load_pretrained(d)
    out = save_pretrained(ours, tmp_path / "ours", d / "tokenizer.json")
    config = json.loads((out / "config.json").read_text())
    assert config["model_type"] == "gpt2" and config["n_embd"] == 64
    back, info = transformers.GPT2LMHeadModel.from_pretrained(out, output_loading_info=True)
    back.eval()
    assert not info["missing_keys"] and not info["unexpected_keys"] and not info["mismatched_keys"], info
    for n in PROMPT_LENGTHS:
        ids = _ids(n, seed=5)
        assert torch.allclose(_hf_logits(back, ids), _hf_logits(ref, ids), atol=TOL, rtol=0)
        assert torch.allclose(_hf_logits(back, ids), _ours(ours, ids), atol=TOL, rtol=0)


@pytest.mark.parametrize("kwargs", [{"tie_word_embeddings": False}, {"scale_attn_by_inverse_layer_idx": True},
                                    {"scale_attn_weights": False}, {"activation_function": "gelu"},
                                    {"activation_function": "relu"}],
                         ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
def test_engine_fast_paths_honour_the_config(tmp_path, tokenizer_json, kwargs):
    """The decode layout, the head copy and the unmasked single-sequence decode use the model's own LM head
    and attention scale: through the engine, every scored position equals transformers' logits."""
    from tests.model.test_config_fields import _save_hf

    ref, d = _save_hf(tmp_path, tokenizer_json, **kwargs)
    model, tok = load_pretrained(d)
    engine = Engine(model, tok, max_batch=2)
    engine.record_logits = True
    assert _engine_rows_match_hf(ref, engine, [_ids(9, seed=7)[0].tolist()]) >= 6
    assert _engine_rows_match_hf(ref, engine, [_ids(n, seed=8)[0].tolist() for n in (4, 11)]) >= 12
