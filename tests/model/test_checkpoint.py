"""Checkpoint loading fails loudly and cleanly: one ModelLoadError, one line, naming the file or key.

Each test breaks one thing in a copy of the tiny checkpoint and checks the message. Loading is
all-or-nothing, so a failed load returns no model at all.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.checkpoint import load_pretrained, read_config, save_pretrained
from model.errors import ModelLoadError


@pytest.fixture
def ckpt(tiny_model_dir, tmp_path):
    """A private copy of the tiny checkpoint that a test may break."""
    return shutil.copytree(tiny_model_dir, tmp_path / "ckpt")


def _edit_tensors(d, edit):
    path = d / "model.safetensors"
    tensors = load_file(str(path))
    edit(tensors)
    save_file(tensors, str(path), metadata={"format": "pt"})


def _load_error(d) -> str:
    with pytest.raises(ModelLoadError) as info:
        load_pretrained(d)
    message = str(info.value)
    assert message and "\n" not in message, f"not one line: {message!r}"
    return message


def test_copy_loads(ckpt, tiny):
    """The fixture copy is good, so every failure below comes from the one thing each test breaks."""
    model, tok = load_pretrained(ckpt)
    ref, _ = tiny
    for (name, a), (_, b) in zip(model.state_dict().items(), ref.state_dict().items()):
        assert torch.equal(a, b), name
    assert tok.eos_token_id is not None


def test_missing_directory(tmp_path):
    assert "nowhere" in _load_error(tmp_path / "nowhere")


def test_directory_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert "file" in _load_error(f)


def test_missing_config(ckpt):
    (ckpt / "config.json").unlink()
    assert "config.json" in _load_error(ckpt)


@pytest.mark.parametrize("text", ["{not json", "", "\xff\xfe", "[1, 2]", "null", '"gpt2"', "{'n_embd': 32}"])
def test_unparsable_config(ckpt, text):
    (ckpt / "config.json").write_text(text, encoding="latin-1")
    assert "config.json" in _load_error(ckpt)


@pytest.mark.parametrize("change", [{"n_embd": "wide"}, {"n_head": 3}, {"model_type": "llama"},
                                    {"activation_function": "mish"}, {"n_layer": 0}, {"n_layer": True},
                                    {"layer_norm_epsilon": "x"}, {"layer_norm_epsilon": -1.0},
                                    {"n_inner": -5}, {"n_inner": 1.5}, {"n_positions": 1e400},
                                    {"eos_token_id": "end"}])
def test_bad_config_value(ckpt, change):
    """One bad field in an otherwise good config.json: an error naming the file, not a crash deeper in."""
    config = json.loads((ckpt / "config.json").read_text())
    config.update(change)
    (ckpt / "config.json").write_text(json.dumps(config))
    assert "config.json" in _load_error(ckpt)


def test_huge_config_is_refused_without_allocating(ckpt):
    """A config.json that claims a trillion-token vocabulary is refused by shape, not by running out of memory."""
    config = json.loads((ckpt / "config.json").read_text())
    config["vocab_size"] = 10**12
    (ckpt / "config.json").write_text(json.dumps(config))
    assert "wte.weight" in _load_error(ckpt)


def test_bad_config_is_model_load_error_from_read_config(ckpt):
    (ckpt / "config.json").write_text('{"n_embd": 32, "n_head": 3}')
    with pytest.raises(ModelLoadError, match="config.json"):
        read_config(ckpt)


def test_missing_weights_file(ckpt):
    (ckpt / "model.safetensors").unlink()
    assert "model.safetensors" in _load_error(ckpt)


def test_missing_tokenizer(ckpt):
    (ckpt / "tokenizer.json").unlink()
    assert "tokenizer" in _load_error(ckpt)


@pytest.mark.parametrize("key", ["h.1.mlp.c_fc.bias", "ln_f.weight", "wpe.weight", "h.0.attn.c_attn.weight"])
def test_missing_key(ckpt, key):
    _edit_tensors(ckpt, lambda t: t.pop(key))
    message = _load_error(ckpt)
    assert key in message and "model.safetensors" in message


@pytest.mark.parametrize("key", ["h.2.ln_1.weight", "score.weight", "transformer.h.0.extra"])
def test_unexpected_key(ckpt, key):
    def add(t):
        t[key] = torch.zeros(32)
    _edit_tensors(ckpt, add)
    message = _load_error(ckpt)
    assert key.removeprefix("transformer.") in message


@pytest.mark.parametrize("key,shape", [("ln_f.weight", (33,)), ("wpe.weight", (64, 32)),
                                       ("h.1.attn.c_proj.weight", (32, 31)), ("wte.weight", (10, 32)),
                                       ("h.0.attn.c_attn.weight", (32, 95))])
def test_wrong_shape(ckpt, key, shape):
    def reshape(t):
        t[key] = torch.zeros(shape)
    _edit_tensors(ckpt, reshape)
    assert key in _load_error(ckpt)


def test_integer_weights_refused(ckpt):
    def to_int(t):
        t["ln_f.bias"] = t["ln_f.bias"].to(torch.int32)
    _edit_tensors(ckpt, to_int)
    assert "ln_f.bias" in _load_error(ckpt)


def test_same_key_with_and_without_prefix(ckpt):
    def dup(t):
        t["transformer.ln_f.bias"] = t["ln_f.bias"].clone()
    _edit_tensors(ckpt, dup)
    assert "ln_f.bias" in _load_error(ckpt)


@pytest.mark.parametrize("cut", [0.5, 0.99, 0.01])
def test_truncated_safetensors(ckpt, cut):
    path = ckpt / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * cut)])
    assert "model.safetensors" in _load_error(ckpt)


@pytest.mark.parametrize("content", [b"", b"\x00" * 7, b"\xff" * 64, b"\x08\x00\x00\x00\x00\x00\x00\x00{\"a\":1}x"])
def test_garbage_safetensors(ckpt, content):
    (ckpt / "model.safetensors").write_bytes(content)
    assert "model.safetensors" in _load_error(ckpt)


def test_corrupt_tokenizer(ckpt):
    (ckpt / "tokenizer.json").write_text('{"model": {"type": "BPE", "vocab": 3}}')
    assert "tokenizer.json" in _load_error(ckpt)


def test_tokenizer_larger_than_embedding(ckpt):
    config = json.loads((ckpt / "config.json").read_text())
    config["vocab_size"] = 100
    (ckpt / "config.json").write_text(json.dumps(config))
    _edit_tensors(ckpt, lambda t: t.update({"wte.weight": t["wte.weight"][:100].clone()}))
    assert "100" in _load_error(ckpt)


def test_config_and_weights_disagree(ckpt):
    """config.json says a wider model than the weights hold: named, not a torch size-mismatch dump."""
    config = json.loads((ckpt / "config.json").read_text())
    config["n_embd"] = 64
    (ckpt / "config.json").write_text(json.dumps(config))
    assert "h.0.attn.c_attn.weight" in _load_error(ckpt)


def test_save_then_load_is_exact(tiny, tmp_path, tokenizer_json):
    model, _ = tiny
    out = save_pretrained(model, tmp_path / "again", tokenizer_json)
    back, _ = load_pretrained(out)
    for (name, a), (_, b) in zip(model.state_dict().items(), back.state_dict().items()):
        assert torch.equal(a, b), name
    raw = load_file(str(out / "model.safetensors"))
    assert tuple(raw["h.0.mlp.c_fc.weight"].shape) == (32, 128)  # HF Conv1D layout on disk: [in, out]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_weights_refused(ckpt, bad):
    """A NaN/inf weight makes every score NaN; it used to load and then crash sampling with a traceback."""
    def poison(t):
        t["h.0.mlp.c_fc.weight"][0, 0] = bad
    _edit_tensors(ckpt, poison)
    message = _load_error(ckpt)
    assert "h.0.mlp.c_fc.weight" in message and "NaN or infinite" in message


# ---- int8 files (a draft model stored as int8 rows and row scales) ------------------------------------------------

@pytest.fixture
def int8_ckpt(tiny_model_dir, tmp_path, tokenizer_json):
    from model.quantize import quantize_int8
    model, _ = load_pretrained(tiny_model_dir)
    return save_pretrained(quantize_int8(model), tmp_path / "int8", tokenizer_json)


def test_int8_file_loads_as_the_int8_model(tiny_model_dir, int8_ckpt):
    """The file holds what the int8 model reads per trip (~1/4 of the fp32 bytes), and loads to the same logits."""
    from model.checkpoint import stored_weights
    from model.quantize import quantize_int8
    assert stored_weights(int8_ckpt) == "int8" and stored_weights(tiny_model_dir) == "fp32"
    back, _ = load_pretrained(int8_ckpt)
    want = quantize_int8(load_pretrained(tiny_model_dir)[0])
    assert back.weights == "int8" and back.weight_bytes() == want.weight_bytes()
    fp32_size = (tiny_model_dir / "model.safetensors").stat().st_size
    assert (int8_ckpt / "model.safetensors").stat().st_size < 0.45 * fp32_size
    ids = torch.tensor([[1, 5, 9, 2]])
    with torch.no_grad():
        assert torch.equal(back(ids), want(ids))


def test_int8_file_off_the_cpu_is_its_float_weights(int8_ckpt):
    """Where the int8 kernel does not run, the same weights come back as float32 w = q · s."""
    from model.checkpoint import load_int8, read_config
    from model.quantize import dequantize_int8
    config = read_config(int8_ckpt)
    int8 = load_int8(int8_ckpt, config, "cpu")
    floats = dequantize_int8(int8, config)
    assert floats.weights == "fp32"
    w = floats.h[0].mlp.c_fc.weight
    q, s = int8.h[0].mlp.c_fc.weight, int8.h[0].mlp.c_fc.scale
    assert torch.allclose(w, q.float() * s[:, None])


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.pop("h.0.mlp.c_fc.scale"), "missing key 'h.0.mlp.c_fc.scale'"),
    (lambda t: t.update({"h.0.mlp.c_fc.weight": t["h.0.mlp.c_fc.weight"].float()}),
     "h.0.mlp.c_fc.weight is torch.float32"),
    (lambda t: t["wte.scale"].__setitem__(0, float("nan")), "wte.scale holds NaN"),
    (lambda t: t.update({"extra": torch.zeros(2)}), "unexpected key 'extra'"),
])
def test_broken_int8_file_is_refused(int8_ckpt, edit, words):
    path = int8_ckpt / "model.safetensors"
    tensors = load_file(str(path))
    edit(tensors)
    save_file(tensors, str(path), metadata={"format": "pt", "one_trip.weights": "int8"})
    assert words in _load_error(int8_ckpt)
