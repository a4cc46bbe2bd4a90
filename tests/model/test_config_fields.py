"""config.json / generation_config.json, field by field, against transformers (small random checkpoints).

Each honoured field is set to a non-default value in a transformers ``GPT2LMHeadModel`` saved with
``save_pretrained``; our loader must give the same logits. Each refused field must stop the load with a message
naming it.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from model.checkpoint import load_pretrained
from model.errors import ModelLoadError

TOL = 1e-4


def _save_hf(tmp_path, tokenizer_json, **config_kwargs):
    import transformers  # the test extra's reference: missing, it fails (not a skip)
    cfg = transformers.GPT2Config(vocab_size=400, n_embd=32, n_layer=3, n_head=4, n_positions=64,
                                  resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **config_kwargs)
    torch.manual_seed(7)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.2 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / p.shape[-1] ** 0.5 * 1.5)
    out = tmp_path / "hf"
    model.save_pretrained(out, safe_serialization=True)
    shutil.copyfile(tokenizer_json, out / "tokenizer.json")
    return model, out


def _max_diff(ref, ours) -> float:
    ids = torch.randint(0, 400, (2, 20), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        return float((ref(input_ids=ids).logits - ours(ids)).abs().max())


@pytest.mark.parametrize("kwargs", [
    {"tie_word_embeddings": False},
    {"activation_function": "gelu"},
    {"activation_function": "relu"},
    {"activation_function": "silu"},
    {"activation_function": "quick_gelu"},
    {"activation_function": "gelu_pytorch_tanh"},
    {"layer_norm_epsilon": 0.3},
    {"n_inner": 40},
    {"scale_attn_weights": False},
    {"scale_attn_by_inverse_layer_idx": True},
    {"reorder_and_upcast_attn": True},
], ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()))
def test_honoured_field_matches_transformers(tmp_path, tokenizer_json, kwargs):
    ref, d = _save_hf(tmp_path, tokenizer_json, **kwargs)
    ours, _ = load_pretrained(d)
    assert _max_diff(ref, ours) < TOL


def test_untied_head_is_used_and_counted(tmp_path, tokenizer_json):
    ref, d = _save_hf(tmp_path, tokenizer_json, tie_word_embeddings=False)
    ours, _ = load_pretrained(d)
    assert ours.lm_head is not None
    assert not torch.equal(ours.lm_head.weight, ours.wte.weight)
    assert ours.num_parameters() == sum(p.numel() for p in ref.parameters())  # the head counted once
    tied_ref, tied_dir = _save_hf(tmp_path / "tied", tokenizer_json)
    tied, _ = load_pretrained(tied_dir)
    assert ours.num_parameters() - tied.num_parameters() == 400 * 32


def test_untied_config_without_head_weights_is_refused(tmp_path, tokenizer_json):
    _, d = _save_hf(tmp_path, tokenizer_json, tie_word_embeddings=False)
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / "model.safetensors"))
    t.pop("lm_head.weight")
    save_file(t, str(d / "model.safetensors"))
    with pytest.raises(ModelLoadError, match="lm_head.weight"):
        load_pretrained(d)


@pytest.mark.parametrize("field, value", [
    ("add_cross_attention", True), ("activation_function", "mish"), ("is_encoder_decoder", True),
    ("quantization_config", {"quant_method": "gptq"}), ("pruned_heads", {"0": [1]}),
    ("repetition_penalty", 1.3), ("no_repeat_ngram_size", 3), ("min_length", 5),
    ("bad_words_ids", [[3]]), ("suppress_tokens", [1, 2]), ("eos_token_id", [1, 2]),
])
def test_refused_field_is_named(tmp_path, tokenizer_json, field, value):
    _, d = _save_hf(tmp_path, tokenizer_json)
    cfg = json.loads((d / "config.json").read_text())
    cfg[field] = value
    (d / "config.json").write_text(json.dumps(cfg))
    (d / "generation_config.json").unlink(missing_ok=True)  # it would win for eos_token_id
    with pytest.raises(ModelLoadError, match=field):
        load_pretrained(d)


@pytest.mark.parametrize("field, value", [("repetition_penalty", 1.3), ("min_new_tokens", 4),
                                          ("stop_strings", ["\n"]), ("forced_eos_token_id", 3)])
def test_refused_generation_config_field_is_named(tmp_path, tokenizer_json, field, value):
    _, d = _save_hf(tmp_path, tokenizer_json)
    (d / "generation_config.json").write_text(json.dumps({field: value}))
    with pytest.raises(ModelLoadError, match=f"generation_config.json sets {field}"):
        load_pretrained(d)


def test_irrelevant_fields_load(tmp_path, tokenizer_json):
    ref, d = _save_hf(tmp_path, tokenizer_json, summary_type="mean", initializer_range=0.5, use_cache=False)
    cfg = json.loads((d / "config.json").read_text())
    cfg.update(task_specific_params={"text-generation": {"max_length": 50}}, torch_dtype="float16",
               some_unknown_key=3, do_sample=True, temperature=0.7)
    (d / "config.json").write_text(json.dumps(cfg))
    ours, _ = load_pretrained(d)
    assert _max_diff(ref, ours) < TOL


def test_generation_config_eos_is_where_generation_stops(tmp_path, tokenizer_json):
    """transformers stops at generation_config.json's eos_token_id; so does the engine."""
    from model.engine import Engine
    _, d = _save_hf(tmp_path, tokenizer_json)
    model, tok = load_pretrained(d)
    eng = Engine(model, tok)
    rid = eng.add_request("The quick", max_new_tokens=6)
    list(eng.run())
    orig = eng.finished[rid].token_ids
    j = next(i for i in range(1, len(orig)) if orig[i] not in orig[:i])  # a token not written before it
    first = orig[j]
    (d / "generation_config.json").write_text(json.dumps({"eos_token_id": first, "bos_token_id": first}))
    model, tok = load_pretrained(d)
    assert tok.eos_token_id == first
    eng = Engine(model, tok)
    rid = eng.add_request("The quick", max_new_tokens=6)
    list(eng.run())
    res = eng.finished[rid]
    assert res.finish_reason == "stop" and res.token_ids == orig[:j]  # stops there, eos not shown
