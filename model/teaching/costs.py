"""Cost formulas for large models: KV-cache size and the memory-bandwidth floor of one decode step.

These are the "projected" numbers the tour shows beside the live model's measured ones. Every constant below
carries its source. Units: bytes are exact integers; "GB" is 10**9 bytes and "GiB" 2**30 bytes; bandwidth is
bytes per second; times are milliseconds.

Formulas
--------
* KV cache (multi-head or grouped-query attention): each layer stores one key and one value vector per KV
  head per token::

      bytes = 2 × layers × kv_heads × head_dim × tokens × batch × bytes_per_value

  Source: the seed text §09 ("KV 缓存 = 2 × 层数 × KV 头数 × 每头维度 × 长度 × 批大小 × 字节数"); the same
  accounting is in Kwon et al. 2023, "Efficient Memory Management for Large Language Model Serving with
  PagedAttention" (SOSP '23), section 2.
* KV cache with multi-head latent attention (MLA): each layer stores one compressed latent vector per token
  (keys and values are both rebuilt from it), so there is no factor 2 and no head count::

      bytes = layers × mla_dim × tokens × batch × bytes_per_value

  Source: DeepSeek-AI 2024, "DeepSeek-V2" (arXiv:2405.04434), section 2.1: a KV latent of d_c = 512 plus a
  decoupled RoPE key of d_h^R = 64 per token per layer = 576 values; DeepSeek-V3 (arXiv:2412.19437) keeps
  d_c = 512, d_h^R = 64 with 61 layers. The seed text §09: "每层每个 token 压成 576 个数，61 层、FP16 约 70 KB/token".
* Decode floor (roofline, memory-bound side): one decode step at batch 1 must read every weight it uses once,
  so it cannot take less than ``bytes_read / bandwidth``. Source: the seed text §07 ("读一遍 16 GB 约 8 毫秒",
  with A100 bandwidth about 2 TB/s); Williams, Waterman & Patterson 2009, "Roofline" (CACM 52(4)). For a
  mixture-of-experts model only the active parameters are read per token. The floor ignores KV-cache reads,
  compute and kernel overheads: a lower bound, not a prediction.
* Weights fit when ``params × bytes_per_param <= GPU memory`` (weights only; the KV cache and activations
  need room too).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DTYPE_BYTES",
    "KV_DTYPES",
    "ModelPreset",
    "GPU",
    "PRESETS",
    "GPUS",
    "kv_cache_bytes",
    "mla_cache_bytes",
    "preset_kv_bytes",
    "weight_bytes",
    "decode_floor_ms",
    "Roofline",
    "roofline",
    "sharding_projection",
    "preset_from_config",
    "preset_from_model_dir",
]

GB = 10**9
MIB = 2**20
GIB = 2**30

# Bytes per stored value. IEEE 754 binary32 = 4, binary16 = 2, bfloat16 = 2 (Google Brain's format, 8-bit
# exponent + 7-bit mantissa), FP8 (E4M3/E5M2, Micikevicius et al. 2022, "FP8 Formats for Deep Learning") = 1,
# and 4-bit integer/float weights = 0.5 (two per byte; scales of quantization groups not counted).
DTYPE_BYTES: dict[str, float] = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int4": 0.5}
KV_DTYPES = ("fp32", "fp16", "bf16", "fp8")  # int4 is offered for weights only


# --------------------------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelPreset:
    """Shape of a model, as far as the cost formulas need it.

    Attributes:
        name: preset name used on the command line.
        layers: transformer layers.
        params: total parameters.
        kv_heads: key/value heads per layer (== query heads without grouped-query attention); None with MLA.
        head_dim: values per head.
        mla_dim: values cached per layer per token with multi-head latent attention; None otherwise.
        n_heads: query heads; d_model: width of the residual stream; vocab_size: tokens in the vocabulary.
        active_params: parameters read per token (mixture of experts); None means all of ``params``.
        source: where the numbers come from.
    """

    name: str
    layers: int
    params: int
    kv_heads: int | None = None
    head_dim: int | None = None
    mla_dim: int | None = None
    n_heads: int | None = None
    d_model: int | None = None
    vocab_size: int | None = None
    active_params: int | None = None
    source: str = ""

    @property
    def is_mla(self) -> bool:
        return self.mla_dim is not None

    def kv_values_per_token(self) -> int:
        """Values cached per token per sequence, all layers: ``2·layers·kv_heads·head_dim`` or ``layers·mla_dim``."""
        if self.mla_dim is not None:
            return self.layers * self.mla_dim
        assert self.kv_heads is not None and self.head_dim is not None
        return 2 * self.layers * self.kv_heads * self.head_dim


_LLAMA3_SRC = (
    "Meta Llama 3 model card and config.json (meta-llama/Meta-Llama-3-8B / -70B): 128,256-token vocabulary, "
    "grouped-query attention with 8 KV heads, head_dim 128; parameter counts from the config "
    "(embeddings untied)"
)

PRESETS: dict[str, ModelPreset] = {
    # Llama 3 8B: 32 layers, 32 query heads, 8 KV heads, d_model 4,096, FFN 14,336, vocab 128,256.
    # 8,030,261,248 parameters = 2·128,256·4,096 (embedding + untied head) + 32·218,112,000 + 4,096
    # (checked from the config in tests/model/teaching/test_costs.py). Seed §03/§05/§09 quote the same shape.
    "llama-3-8b": ModelPreset(
        name="llama-3-8b", layers=32, params=8_030_261_248, kv_heads=8, head_dim=128, n_heads=32,
        d_model=4096, vocab_size=128_256, source=_LLAMA3_SRC,
    ),
    # The same model as if it had no grouped-query attention (one KV head per query head): the seed's
    # "如果不分组（老式多头注意力），2,000 块约 1 GB" (§09).
    "llama-3-8b-mha": ModelPreset(
        name="llama-3-8b-mha", layers=32, params=8_030_261_248, kv_heads=32, head_dim=128, n_heads=32,
        d_model=4096, vocab_size=128_256, source=_LLAMA3_SRC + "; KV heads set to 32 (no grouping), per the seed §09",
    ),
    # Llama 3 70B: 80 layers, 64 query heads, 8 KV heads, d_model 8,192, FFN 28,672, vocab 128,256;
    # 70,553,706,496 parameters (same formula as above).
    "llama-3-70b": ModelPreset(
        name="llama-3-70b", layers=80, params=70_553_706_496, kv_heads=8, head_dim=128, n_heads=64,
        d_model=8192, vocab_size=128_256, source=_LLAMA3_SRC,
    ),
    # DeepSeek-V3: 61 layers, MLA with 512 latent + 64 RoPE = 576 cached values per layer per token,
    # 671B total parameters with 37B activated per token (DeepSeek-V3 technical report, arXiv:2412.19437,
    # abstract and section 4.2; the seed §14: "共 6,710 亿参数，每个 token 只激活约 370 亿"). d_model 7,168,
    # 128 heads, vocabulary 129,280 (its config.json).
    "deepseek-v3": ModelPreset(
        name="deepseek-v3", layers=61, params=671_000_000_000, mla_dim=576, n_heads=128, d_model=7168,
        vocab_size=129_280, active_params=37_000_000_000,
        source="DeepSeek-V3 technical report (arXiv:2412.19437) and DeepSeek-V2 (arXiv:2405.04434) §2.1",
    ),
    # GPT-2 small: 12 layers, 12 heads of 64, d_model 768, vocab 50,257, 1,024 positions (Radford et al. 2019,
    # table 2; Hugging Face "gpt2" config.json). 124,439,808 parameters with the LM head tied to the embedding.
    "gpt2": ModelPreset(
        name="gpt2", layers=12, params=124_439_808, kv_heads=12, head_dim=64, n_heads=12, d_model=768,
        vocab_size=50_257, source="Radford et al. 2019 (GPT-2), Hugging Face gpt2 config.json",
    ),
}


def preset_from_config(cfg: Mapping[str, object], name: str) -> ModelPreset:
    """Build a :class:`ModelPreset` from a Hugging Face ``config.json`` dict, e.g. the bundled model's.

    Understands GPT-2 keys (``n_layer``, ``n_head``, ``n_embd``, ``n_inner``, ``vocab_size``, ``n_positions``;
    LM head tied to the embedding) and Llama-style keys (``num_hidden_layers``, ``num_attention_heads``,
    ``num_key_value_heads``, ``hidden_size``, ``intermediate_size``, ``head_dim``, ``tie_word_embeddings``).
    The parameter count is computed from the shapes (biases and norms included), unless the dict gives
    ``n_params``.

    GPT-2 per layer: ln_1 2C + c_attn 3C²+3C + c_proj C²+C + ln_2 2C + c_fc C·I+I + c_proj I·C+C, plus
    wte V·C, wpe P·C and ln_f 2C (Radford et al. 2019; the Hugging Face ``GPT2LMHeadModel`` modules).
    Llama per layer: q C·(h·d) + k,v 2·C·(kv·d) + o (h·d)·C + gate/up/down 3·C·I + two RMSNorms 2C, plus
    embedding V·C, an untied head V·C and the final norm C (Touvron et al. 2023; Meta Llama 3 config).

    Raises:
        ValueError: a required key is missing or not a positive integer (one-line message naming the key).
    """

    layers = _required_int(cfg, "n_layer", "num_hidden_layers")
    n_heads = _required_int(cfg, "n_head", "num_attention_heads")
    d_model = _required_int(cfg, "n_embd", "hidden_size")
    vocab = _required_int(cfg, "vocab_size")
    explicit = _config_int(cfg, "n_params")
    if "n_layer" in cfg:  # GPT-2 family
        kv_heads, head_dim, params, src = _gpt2_shape(cfg, layers, n_heads, d_model, vocab)
    else:  # Llama family
        kv_heads, head_dim, params, src = _llama_shape(cfg, layers, n_heads, d_model, vocab)
    return ModelPreset(
        name=name, layers=layers, params=explicit or params, kv_heads=kv_heads, head_dim=head_dim,
        n_heads=n_heads, d_model=d_model, vocab_size=vocab, source=src,
    )


def _config_int(cfg: Mapping[str, object], *keys: str) -> int | None:
    """The first of ``keys`` the config gives (not None), which must be a positive integer; None without one.

    Raises:
        ValueError: the value is not a positive integer.
    """
    for k in keys:
        if k in cfg and cfg[k] is not None:
            v = cfg[k]
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"config key {k!r} must be a positive integer, got {v!r}")
            return v
    return None


def _required_int(cfg: Mapping[str, object], *keys: str) -> int:
    """As ``_config_int``, but one of ``keys`` must be there (ValueError naming them when none is)."""
    v = _config_int(cfg, *keys)
    if v is None:
        raise ValueError(f"config has no {' / '.join(repr(k) for k in keys)}")
    return v


def _gpt2_shape(cfg: Mapping[str, object], layers: int, n_heads: int, d_model: int,
                vocab: int) -> tuple[int, int, int, str]:
    """KV heads, head dim, parameters and where they come from, for the GPT-2 layout (tied LM head)."""
    if d_model % n_heads:
        raise ValueError(f"n_embd {d_model} is not divisible by n_head {n_heads}")
    kv_heads, head_dim = n_heads, d_model // n_heads
    c, inner = d_model, _config_int(cfg, "n_inner") or 4 * d_model
    positions = _config_int(cfg, "n_positions", "max_position_embeddings") or 1024
    per_layer = 4 * c * c + 2 * c * inner + 9 * c + inner
    params = vocab * c + positions * c + layers * per_layer + 2 * c
    return kv_heads, head_dim, params, "computed from config.json (GPT-2 layout, tied LM head)"


def _llama_shape(cfg: Mapping[str, object], layers: int, n_heads: int, d_model: int,
                 vocab: int) -> tuple[int, int, int, str]:
    """KV heads, head dim, parameters and where they come from, for the Llama layout (head tied or not)."""
    kv_heads = _config_int(cfg, "num_key_value_heads") or n_heads
    head_dim = _config_int(cfg, "head_dim") or d_model // n_heads
    inner = _required_int(cfg, "intermediate_size")
    c, q = d_model, n_heads * head_dim
    per_layer = c * q + 2 * c * kv_heads * head_dim + q * c + 3 * c * inner + 2 * c
    tied = bool(cfg.get("tie_word_embeddings", False))
    params = vocab * c * (1 if tied else 2) + layers * per_layer + c
    return kv_heads, head_dim, params, "computed from config.json (Llama layout)"


def preset_from_model_dir(path: str | Path, name: str | None = None) -> ModelPreset:
    """Read ``config.json`` from a model directory and return :func:`preset_from_config` of it.

    Raises:
        ValueError: the file is missing, not JSON, or lacks a required key (one-line message naming it).
    """
    f = Path(path) / "config.json"
    try:
        cfg = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {f}: {' '.join(str(exc).split())}") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{f} is not a JSON object")
    try:
        return preset_from_config(cfg, name or Path(path).name)
    except ValueError as exc:
        raise ValueError(f"{f}: {exc}") from None


# --------------------------------------------------------------------------------------------------------------
# GPUs
# --------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GPU:
    """One accelerator: memory in bytes, peak memory bandwidth in bytes/s, and the sources.

    Memory is what ``nvidia-smi`` reports as the card's total, in MiB (``memory_mib``): the most a program can
    hold, so ``memory_bytes = memory_mib × 2**20``. The datasheet's figure ("80GB", "141GB") is kept as the
    product name only (``memory_nominal_gb``): it is neither decimal GB nor exact GiB (an H200 "141GB" reports
    143,771 MiB = 150.8 GB = 140.4 GiB), so it is never compared with anything. Everything shown is in decimal
    GB (10**9 bytes), like the bandwidth (TB/s = 10**12 bytes/s) and the weight sizes.
    """

    name: str
    memory_nominal_gb: float  # the product's name on the datasheet ("H200 141GB"): a label, not a size
    bandwidth: float  # bytes per second
    source: str
    memory_mib: int = 0  # nvidia-smi's memory.total in MiB

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * MIB


_SMI = "nvidia-smi memory.total as reported on these cards"
GPUS: dict[str, GPU] = {
    # NVIDIA A100 Tensor Core GPU datasheet (2021): A100 80GB SXM, HBM2e, 2,039 GB/s (the PCIe card: 1,935 GB/s).
    # The seed §07 rounds this to "about 2 TB/s" (and notes the figure is the page's, not the original's).
    # nvidia-smi on an A100-SXM4-80GB: 81,920 MiB (modal-labs/modal-client PR #2797 lists it).
    "a100": GPU("a100", 80, 2.039e12, f"NVIDIA A100 datasheet: 80GB HBM2e, 2,039 GB/s (SXM); {_SMI}: 81,920 MiB",
                memory_mib=81_920),
    # NVIDIA H100 Tensor Core GPU datasheet: H100 SXM 80GB HBM3, 3.35 TB/s (H100 NVL: 94GB, 3.9 TB/s).
    # The seed §14: "H100 80 GB". nvidia-smi on "NVIDIA H100 80GB HBM3": 81,559 MiB (e.g. NVIDIA/nccl issue #1264).
    "h100": GPU("h100", 80, 3.35e12, f"NVIDIA H100 datasheet: 80GB HBM3, 3.35 TB/s (SXM); {_SMI}: 81,559 MiB",
                memory_mib=81_559),
    # NVIDIA H200 Tensor Core GPU datasheet: 141GB HBM3e, 4.8 TB/s. The seed §14: "H200 141 GB".
    # nvidia-smi on "NVIDIA H200": 143,771 MiB (many public nvidia-smi listings).
    "h200": GPU("h200", 141, 4.8e12, f"NVIDIA H200 datasheet: 141GB HBM3e, 4.8 TB/s; {_SMI}: 143,771 MiB",
                memory_mib=143_771),
    # NVIDIA DGX B200 / HGX B200 datasheets: 1,440GB of HBM3e for 8 GPUs = 180GB each, 64 TB/s for 8 = 8 TB/s
    # each. The seed §14: "B200 180 GB". nvidia-smi on "NVIDIA B200": 183,359 MiB = 192.3 GB (NVIDIA's
    # Blackwell announcement quotes 192GB; e.g. NVIDIA/TensorRT-LLM issue #10278).
    "b200": GPU("b200", 180, 8.0e12, f"NVIDIA DGX/HGX B200 datasheets: 180GB HBM3e, 8 TB/s per GPU; {_SMI}: "
                "183,359 MiB", memory_mib=183_359),
}


# --------------------------------------------------------------------------------------------------------------
# Formulas
# --------------------------------------------------------------------------------------------------------------
def _bytes_per_value(dtype: str, allowed: Sequence[str] = KV_DTYPES) -> float:
    if dtype not in allowed:
        raise ValueError(f"unknown dtype {dtype!r}; choose from {', '.join(allowed)}")
    return DTYPE_BYTES[dtype]


def _nonneg(**kw: int) -> None:
    for k, v in kw.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{k} must be an integer, got {v!r}")
        if v < (0 if k == "tokens" else 1):
            raise ValueError(f"{k} must be {'>= 0' if k == 'tokens' else '>= 1'}, got {v}")


def kv_cache_bytes(
    layers: int, kv_heads: int, head_dim: int, tokens: int, batch: int = 1, dtype: str = "fp16"
) -> int:
    """KV-cache bytes with multi-head or grouped-query attention (``int``).

    ``2 × layers × kv_heads × head_dim × tokens × batch × bytes_per_value``; the 2 is one key and one value.
    Source: seed text §09; Kwon et al. 2023 (PagedAttention), §2.
    Example: Llama 3 8B (32, 8, 128), 2,000 tokens, FP16 -> 262,144,000 bytes (the seed rounds to 250 MB).

    Raises:
        ValueError: a count below 1 (tokens below 0) or an unknown dtype (fp32, fp16, bf16, fp8).
    """
    _nonneg(layers=layers, kv_heads=kv_heads, head_dim=head_dim, tokens=tokens, batch=batch)
    return int(2 * layers * kv_heads * head_dim * tokens * batch * _bytes_per_value(dtype))


def mla_cache_bytes(layers: int, mla_dim: int, tokens: int, batch: int = 1, dtype: str = "fp16") -> int:
    """KV-cache bytes with multi-head latent attention (``int``): ``layers × mla_dim × tokens × batch × bytes``.

    Source: DeepSeek-V2 (arXiv:2405.04434) §2.1, 512 latent + 64 RoPE = 576 values per layer per token;
    DeepSeek-V3 (arXiv:2412.19437), 61 layers. Example: 61 × 576 × 2 = 70,272 bytes per token at FP16.

    Raises:
        ValueError: a count below 1 (tokens below 0) or an unknown dtype.
    """
    _nonneg(layers=layers, mla_dim=mla_dim, tokens=tokens, batch=batch)
    return int(layers * mla_dim * tokens * batch * _bytes_per_value(dtype))


def preset_kv_bytes(preset: ModelPreset, tokens: int, batch: int = 1, dtype: str = "fp16") -> int:
    """KV-cache bytes of a preset, by :func:`mla_cache_bytes` or :func:`kv_cache_bytes` as its attention is."""
    if preset.mla_dim is not None:
        return mla_cache_bytes(preset.layers, preset.mla_dim, tokens, batch, dtype)
    assert preset.kv_heads is not None and preset.head_dim is not None
    return kv_cache_bytes(preset.layers, preset.kv_heads, preset.head_dim, tokens, batch, dtype)


def weight_bytes(params: int, dtype: str = "fp16") -> int:
    """Bytes of ``params`` weights stored as ``dtype`` (fp32, fp16, bf16, fp8, int4), rounded up (``int``).

    Example: Llama 3 8B at FP16 = 16,060,522,496 bytes, "约 16 GB" in the seed §04.
    """
    _nonneg(params=params)
    return math.ceil(params * _bytes_per_value(dtype, tuple(DTYPE_BYTES)))


def decode_floor_ms(bytes_read: int, bandwidth: float) -> float:
    """Lower bound of one decode step in ms: ``bytes_read / bandwidth × 1000`` (bandwidth in bytes/s).

    Source: the roofline's memory-bound side (Williams et al. 2009); the seed §07: 16 GB ÷ 2 TB/s ≈ 8 ms.
    """
    if bandwidth <= 0:
        raise ValueError(f"bandwidth must be > 0, got {bandwidth}")
    return bytes_read / bandwidth * 1e3


@dataclass(frozen=True)
class Roofline:
    """Result of :func:`roofline`: bytes, the decode floor in ms, and whether the weights fit one GPU."""

    preset: str
    gpu: str
    dtype: str
    bytes_per_param: float
    params: int
    active_params: int
    weight_bytes: int  # all weights: what must fit in memory
    bytes_read_per_token: int  # weights read by one decode step at batch 1 (active ones for MoE)
    gpu_memory_bytes: int
    gpu_bandwidth_bytes_per_s: float
    decode_floor_ms: float
    fits: bool  # weight_bytes <= gpu_memory_bytes (weights only: the KV cache needs room too)
    gpus_needed: int  # ceil(weight_bytes / gpu_memory_bytes), weights only


def roofline(preset: ModelPreset, gpu: GPU, dtype: str = "fp16") -> Roofline:
    """Weight bytes, the memory-bound decode floor and the fit of ``preset`` on ``gpu`` at ``dtype``.

    Example: Llama 3 8B, FP16, A100: 16.06 GB ÷ 2.039 TB/s = 7.88 ms (seed §07: ≈ 8 ms); Llama 3 70B, FP16
    (141.1 GB) does not fit one H100 80 GB but fits two.

    Raises:
        ValueError: unknown dtype.
    """
    wb = weight_bytes(preset.params, dtype)
    active = preset.active_params or preset.params
    read = weight_bytes(active, dtype)
    mem = gpu.memory_bytes
    return Roofline(
        preset=preset.name, gpu=gpu.name, dtype=dtype, bytes_per_param=DTYPE_BYTES[dtype],
        params=preset.params, active_params=active, weight_bytes=wb, bytes_read_per_token=read,
        gpu_memory_bytes=mem, gpu_bandwidth_bytes_per_s=gpu.bandwidth,
        decode_floor_ms=decode_floor_ms(read, gpu.bandwidth), fits=wb <= mem, gpus_needed=max(1, math.ceil(wb / mem)),
    )


def sharding_projection(dtype: str = "fp16") -> dict:
    """Why books are torn: which large models fit which GPUs, as plain data for the "tear the book" panel.

    Returns ``{"label": "projected", "dtype", "formula", "note", "models": [...]}``; each model is
    ``{"preset", "params", "active_params", "weight_bytes", "active_bytes_per_token", "source", "illustration",
    "gpus": [...]}`` and each GPU ``{"gpu", "memory_bytes", "fits_one", "gpus_needed", "bytes_per_gpu",
    "source"}``, where ``gpus_needed = ceil(weight_bytes / memory_bytes)`` (weights only) and ``bytes_per_gpu``
    is the weights each of those GPUs holds when the model is split evenly (tensor or pipeline parallel).
    Models: Llama 3 70B (about 141 GB at FP16: not one 80 GB H100, two; one H200 141 GB or one B200 180 GB by
    weights alone) and DeepSeek-V3 (671B total, about 37B active per token: expert parallelism spreads the
    experts over many GPUs, each token visits few of them; an illustration, served in FP8 by its authors).
    Sources: the presets' and GPUs' ``source`` fields; Shoeybi et al. 2019 (Megatron-LM) for tensor parallel;
    DeepSeek-V3 report (arXiv:2412.19437) §3.4 for its expert-parallel deployment.

    Raises:
        ValueError: unknown dtype.
    """
    models = []
    for name, illustration in (("llama-3-70b", False), ("deepseek-v3", True)):
        preset = PRESETS[name]
        gpus = []
        for gpu_name in ("h100", "h200", "b200"):
            r = roofline(preset, GPUS[gpu_name], dtype)
            gpus.append({"gpu": gpu_name, "memory_bytes": r.gpu_memory_bytes, "fits_one": r.fits,
                         "gpus_needed": r.gpus_needed, "bytes_per_gpu": math.ceil(r.weight_bytes / r.gpus_needed),
                         "source": GPUS[gpu_name].source})
        models.append({"preset": name, "params": r.params, "active_params": r.active_params,
                       "weight_bytes": r.weight_bytes, "active_bytes_per_token": r.bytes_read_per_token,
                       "source": preset.source, "illustration": illustration, "gpus": gpus})
    return {"label": "projected", "dtype": dtype,
            "formula": "weights fit when params × bytes_per_param <= GPU memory; n GPUs hold 1/n each",
            "note": "weights only: the KV cache and activations need room too, so 'fits' is a lower bound",
            "models": models}
