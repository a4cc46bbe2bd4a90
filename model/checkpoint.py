"""Load and save GPT-2 checkpoints in the Hugging Face layout: config.json, model.safetensors, tokenizer.json.

Accepted key spellings (one checkpoint may use either):
    bare        ``h.0.attn.c_attn.weight``            (``GPT2Model.save_pretrained``, the hub's gpt2 files)
    prefixed    ``transformer.h.0.attn.c_attn.weight`` (``GPT2LMHeadModel.save_pretrained``)
Skipped: the causal-mask buffers ``attn.bias`` / ``attn.masked_bias``, and ``lm_head.weight`` when the config ties it
to ``wte`` (``tie_word_embeddings``, true by default, as transformers does). With ``tie_word_embeddings`` false the
file must hold its own ``lm_head.weight`` (V, C), and the engine uses it.

config.json and generation_config.json are read field by field: see ``GPT2Config.from_hf_dict`` (honoured,
irrelevant, or refused with a message naming the field).

Hugging Face GPT-2 uses ``Conv1D`` layers whose weight is stored ``[in, out]``; ``nn.Linear`` holds ``[out, in]``.
Which layout a file uses is decided once, from the non-square ``c_attn`` weight of layer 0, and then applied to
every projection, the square ``c_proj`` ones included (their shape alone cannot tell).

Loading is all-or-nothing: every key and shape is checked before any tensor is copied into the model, so an
error never leaves a half-loaded model behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_file, save_file

from model.config_fields import IRRELEVANT_FIELDS, REFUSED_UNLESS
from model.errors import ModelLoadError
from model.gpt2 import GPT2, GPT2Config
from model.tokenizer import Tokenizer

log = logging.getLogger(__name__)

_SKIPPED_SUFFIXES = (".attn.bias", ".attn.masked_bias")
_PROJECTIONS = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def _read_json_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelLoadError(f"{path} is not valid JSON: {e}") from None
    except OSError as e:
        raise ModelLoadError(f"{path} cannot be read: {e.strerror or e}") from None
    if not isinstance(data, dict):
        raise ModelLoadError(f"{path} must hold a JSON object, not {type(data).__name__}")
    return data


def read_config(model_dir: str | Path) -> GPT2Config:
    """Parse ``model_dir/config.json`` (and ``generation_config.json`` when present).

    Raises ModelLoadError naming the file (and the field) on any problem, including a field that would change
    the arithmetic or the stop and that this engine does not honour. Keys transformers' GPT-2 does not read
    either are kept and logged at INFO.
    """
    model_dir = Path(model_dir)
    path = model_dir / "config.json"
    if model_dir.is_file():
        raise ModelLoadError(f"{model_dir} is a file; give the model's folder (with config.json, "
                             f"model.safetensors and tokenizer.json)")
    if not model_dir.is_dir():
        raise ModelLoadError(f"model directory not found: {model_dir}")
    if not path.is_file():
        raise ModelLoadError(f"no config.json in {model_dir}")
    data = _read_json_object(path)
    gen_path = model_dir / "generation_config.json"
    generation = _read_json_object(gen_path) if gen_path.is_file() else None
    try:
        config = GPT2Config.from_hf_dict(data, name=model_dir.name, generation=generation)
    except (TypeError, ValueError) as e:
        raise ModelLoadError(f"{path}: {e}") from None
    unknown = sorted(k for k in config.extra if k not in IRRELEVANT_FIELDS and k not in REFUSED_UNLESS)
    if unknown:
        log.info("%s: keys not part of GPT-2's config, ignored as transformers ignores them: %s",
                 path, ", ".join(unknown))
    return config


def _normalise_keys(tensors: dict[str, torch.Tensor], path: Path, tied: bool = True) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for key, value in tensors.items():
        name = key.removeprefix("transformer.")
        if name.endswith(_SKIPPED_SUFFIXES) or (name == "lm_head.weight" and tied):
            continue  # a tied head is wte itself (transformers ties it the same way)
        if name in out:
            raise ModelLoadError(f"{path.name}: key {name!r} appears twice (with and without 'transformer.')")
        out[name] = value
    return out


def _detect_conv1d(tensors: dict[str, torch.Tensor], config: GPT2Config, path: Path) -> bool:
    """True if projections are stored [in, out] (HF Conv1D), False if [out, in] (nn.Linear)."""
    key = "h.0.attn.c_attn.weight"
    if key not in tensors:
        raise ModelLoadError(f"{path.name}: missing key {key!r}")
    shape = tuple(tensors[key].shape)
    C = config.n_embd
    if shape == (C, 3 * C):
        return True
    if shape == (3 * C, C):
        return False
    raise ModelLoadError(f"{path.name}: {key} has shape {list(shape)}, expected [{C}, {3 * C}] for n_embd={C}")


_INIT_FUNCTIONS = ("uniform_", "normal_", "kaiming_uniform_", "zeros_", "ones_", "constant_", "trunc_normal_")


@contextlib.contextmanager
def no_weight_init() -> Iterator[None]:
    """Modules built inside skip their random initialisation (``torch.nn.init``'s functions do nothing), for
    models whose weights a file replaces at once. On the meta device this also keeps torch from importing its
    compiler (``torch._dynamo``, 1.2 s here) for the init functions' meta versions. Not thread-safe: the load
    runs on one thread."""
    saved = {name: getattr(torch.nn.init, name) for name in _INIT_FUNCTIONS}
    for name in _INIT_FUNCTIONS:
        setattr(torch.nn.init, name, lambda tensor, *_args, **_kw: tensor)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.nn.init, name, fn)


def load_state(model_dir: str | Path, config: GPT2Config) -> dict[str, torch.Tensor]:
    """Read ``model.safetensors`` into a state dict in this project's naming and [out, in] layout.

    Raises ModelLoadError naming the file and key for a missing, unexpected or mis-shaped tensor, or a
    truncated/corrupt file.
    """
    path = Path(model_dir) / "model.safetensors"
    if not path.is_file():
        raise ModelLoadError(f"no model.safetensors in {model_dir}")
    try:
        raw = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise ModelLoadError(f"{path} cannot be read (truncated or corrupt?): {e}") from None
    tensors = _normalise_keys(raw, path, tied=config.tie_word_embeddings)
    if not config.tie_word_embeddings and "lm_head.weight" not in tensors:
        raise ModelLoadError(f"{path.name}: config.json sets tie_word_embeddings=false but the file has no "
                             f"lm_head.weight")
    conv1d = _detect_conv1d(tensors, config, path)
    with no_weight_init(), torch.device("meta"):  # shapes only: nothing is allocated, however large the config
        expected = {k: tuple(v.shape) for k, v in GPT2(config).state_dict().items()}
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise ModelLoadError(f"{path.name}: missing key {missing[0]!r}{more}")
    if unexpected:
        more = f" and {len(unexpected) - 1} more" if len(unexpected) > 1 else ""
        raise ModelLoadError(f"{path.name}: unexpected key {unexpected[0]!r}{more}")
    state = {}
    for name, shape in expected.items():
        t = tensors[name]
        if conv1d and name.endswith(_PROJECTIONS):
            t = t.t()  # HF Conv1D [in, out] -> nn.Linear [out, in]
        if tuple(t.shape) != shape:
            raise ModelLoadError(f"{path.name}: {name} has shape {list(t.shape)}, expected {list(shape)}")
        if not t.is_floating_point():
            raise ModelLoadError(f"{path.name}: {name} has dtype {t.dtype}, expected a floating-point type")
        t = t.to(torch.float32).contiguous()
        if not torch.isfinite(t).all():  # a NaN/inf weight makes every score NaN: refuse it here, not mid-decode
            bad = int((~torch.isfinite(t)).sum())
            raise ModelLoadError(f"{path.name}: {name} holds {bad} NaN or infinite value(s); the checkpoint is broken")
        state[name] = t
    return state


def load_pretrained(model_dir: str | Path, device: str = "cpu",
                    dtype: torch.dtype = torch.float32) -> tuple[GPT2, Tokenizer]:
    """Load a GPT-2 and its tokenizer from a Hugging Face style directory.

    Returns the model in eval mode on ``device`` in ``dtype`` (a file of int8 rows, ``stored_weights``: the int8
    model on the CPU, its float weights elsewhere) and the tokenizer.
    Raises ModelLoadError with a one-line message for any missing or broken file; nothing half-loaded escapes.
    """
    model_dir = Path(model_dir)
    config = read_config(model_dir)
    tokenizer = Tokenizer.from_dir(model_dir)
    if tokenizer.vocab_size > config.vocab_size:
        raise ModelLoadError(f"{model_dir}: tokenizer has {tokenizer.vocab_size} tokens but the model only "
                             f"{config.vocab_size} embedding rows")
    eos = config.eos_token_id
    if tokenizer.eos_token_id != eos:  # generation stops where config.json says, as in transformers
        tokenizer.set_eos_token_id(eos if eos < config.vocab_size else None)  # out of range: never produced
    if stored_weights(model_dir) == "int8":
        model = load_int8(model_dir, config, device)
        if model.weights == "int8":  # int8 rows keep their dtypes (the kernel's bfloat16 ones vector too)
            return model.eval().requires_grad_(False), tokenizer
    else:
        state = load_state(model_dir, config)  # checked against the config's shapes before anything is allocated
        with no_weight_init():  # no random init of weights the file replaces (0.3 s of the big book's start)
            model = GPT2(config)
        model.load_state_dict(state, strict=True, assign=True)  # the model holds the loaded tensors themselves
    model.eval().requires_grad_(False)
    return model.to(device=device, dtype=dtype), tokenizer


INT8_METADATA = "one_trip.weights"  # safetensors metadata key: "int8" for a file of int8 rows and row scales


def stored_weights(model_dir: str | Path) -> str:
    """How ``model_dir/model.safetensors`` stores its weights: "int8" (this project's int8 rows and float32 row
    scales, written by ``save_pretrained`` from a model quantized by ``model/quantize.py``) or "fp32" (anything
    else: the Hugging Face layout in any float dtype). Raises ModelLoadError for a file that cannot be read."""
    path = Path(model_dir) / "model.safetensors"
    if not path.is_file():
        raise ModelLoadError(f"no model.safetensors in {model_dir}")
    try:
        with safe_open(str(path), "pt") as f:
            meta = f.metadata() or {}
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise ModelLoadError(f"{path} cannot be read (truncated or corrupt?): {e}") from None
    return "int8" if meta.get(INT8_METADATA) == "int8" else "fp32"


def load_int8(model_dir: str | Path, config: GPT2Config, device: str = "cpu") -> GPT2:
    """A model whose file holds int8 rows and float32 row scales (``stored_weights`` "int8"): on the CPU the
    int8 model itself (``model/quantize.py``: the bytes read per trip are the file's); on another device, where
    the int8 kernel used here does not run, its float32 weights w = q · s (the same values, 4× the bytes).
    Raises ModelLoadError for a missing, unexpected or mis-shaped tensor, or a non-finite scale."""
    from model.quantize import dequantize_int8, quantize_int8
    path = Path(model_dir) / "model.safetensors"
    try:
        tensors = load_file(str(path))
    except (SafetensorError, OSError, ValueError, RuntimeError) as e:
        raise ModelLoadError(f"{path} cannot be read (truncated or corrupt?): {e}") from None
    model = quantize_int8(GPT2(config))  # the int8 model's shapes; its random values are replaced below
    expected = model.state_dict()
    for name in sorted(set(expected) | set(tensors)):
        if name not in tensors:
            raise ModelLoadError(f"{path.name}: missing key {name!r} of an int8 model")
        if name not in expected:
            raise ModelLoadError(f"{path.name}: unexpected key {name!r} in an int8 model")
        t, want = tensors[name], expected[name]
        if t.shape != want.shape or t.dtype != want.dtype:
            raise ModelLoadError(f"{path.name}: {name} is {t.dtype} {list(t.shape)}, expected {want.dtype} "
                                 f"{list(want.shape)}")
        if t.is_floating_point() and not torch.isfinite(t).all():
            raise ModelLoadError(f"{path.name}: {name} holds NaN or infinite values; the checkpoint is broken")
    model.load_state_dict(tensors, strict=True)
    if torch.device(device).type != "cpu":
        return dequantize_int8(model, config)
    return model.prepare_for_decode()


def save_pretrained(model: GPT2, out_dir: str | Path, tokenizer_json: str | Path | None = None,
                    dtype: torch.dtype = torch.float32) -> Path:
    """Write ``model`` as config.json + model.safetensors (HF GPT-2 layout: bare keys, Conv1D [in, out]).

    ``tokenizer_json`` is copied beside them as tokenizer.json. Weights are saved in ``dtype`` (float32, or
    float16: the source's precision on disk, half the bytes; ``load_pretrained`` reads them back into the
    precision the engine runs), or, for a model made
    thinner by ``model/quantize.py``, as its int8 rows and float32 row scales in [out, in] layout, marked in the
    file's metadata (``INT8_METADATA``; ``transformers`` cannot read those). Returns the directory. The files
    load with ``load_pretrained`` (the fp32 ones with ``transformers`` too).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    metadata = {"format": "pt"}
    if getattr(model, "weights", "fp32") == "int8":
        tensors = {name: t.detach().cpu().contiguous() for name, t in model.state_dict().items()}
        metadata[INT8_METADATA] = "int8"
    else:
        tensors = {}
        for name, t in model.state_dict().items():
            t = t.detach().to("cpu", torch.float32).to(dtype)
            if name.endswith(_PROJECTIONS):
                t = t.t()  # nn.Linear [out, in] -> HF Conv1D [in, out]
            tensors[name] = t.contiguous()
    save_file(tensors, str(out / "model.safetensors"), metadata=metadata)
    (out / "config.json").write_text(json.dumps(model.config.to_hf_dict(), indent=2) + "\n", encoding="utf-8")
    if tokenizer_json is not None and Path(tokenizer_json).resolve() != (out / "tokenizer.json").resolve():
        shutil.copyfile(tokenizer_json, out / "tokenizer.json")
    return out
