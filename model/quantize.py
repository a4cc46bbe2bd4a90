"""Thinner books for real: fp16 weights (``to_fp16``: half the bytes, FBGEMM's fp16 kernel) and int8 weights, one
scale per output row, read by FBGEMM's int8 GEMM; ``set_precision(model, "fp32" | "fp16" | "int8")``
picks one. Every product goes through ``model/weight_mm.py`` (the modules hold a ``WeightMatrix`` each).

``quantize_int8(model)`` replaces, in place, every weight matrix of a loaded GPT-2 by int8 values and a float32
scale per output row (symmetric, absmax: s_r = max_c |W_rc| / 127, q_rc = round(W_rc / s_r), so W ≈ q · s):
the four projections of every block (``Int8Linear``), and the token and position embeddings (``Int8Embedding``),
whose int8 rows also serve as the tied LM head. Biases and layer norms stay float32 (0.3 % of the bytes of the
bundled model). ``GPT2.weight_bytes()`` then counts what is really held: int8 values + scales + the rest.

The products run FBGEMM's int8 GEMM with each row of activations quantized on its own scale
(``model/weight_mm.py``: ``fbgemm_int8_mm``; batched = alone holds bitwise), or, in a torch without FBGEMM,
``torch._weight_int8pack_mm`` (ATen's int8 weight-only GEMM) with bfloat16 activations.

Numerics: per-row absmax int8 keeps each weight within half a step (s_r / 2) of its float value; each row of
activations is rounded to 63 levels a side of zero (at most 1/126 of its largest value off). Held-out bits per
byte against fp32 on the big books: +0.0021 (code), +0.0023 (prose), +0.0003 (poems) (docs/benchmarks.md).
Only CPU tensors are supported by the kernels here.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.weight_mm import INT8_ACT_DTYPE as ACT_DTYPE
from model.weight_mm import PRECISIONS, WeightMatrix, int8_matmul, linear, quantize_rows, weight_key

WEIGHT_KINDS = PRECISIONS
__all__ = ["ACT_DTYPE", "Fp16Embedding", "Fp16Linear", "Int8Embedding", "Int8Linear", "MatrixLinear", "fp16_modules",
           "int8_matmul", "matrix_modules", "quantize_int8", "quantize_rows", "set_precision", "to_fp16", "to_fp32"]


class _Matrix:
    """A module whose weight is multiplied through ``model/weight_mm.py``: ``matrix()`` is its ``WeightMatrix``,
    made at first use and again when the weight is replaced or changed in place. Copies leave it out."""

    def matrix(self) -> WeightMatrix:
        key = weight_key(self.weight)
        if self.__dict__.get("_wm_for") != key:
            self.__dict__["_wm"] = self._make_matrix()
            self.__dict__["_wm_for"] = key
        return self.__dict__["_wm"]

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_wm", "_wm_for")}


class Int8Linear(_Matrix, nn.Module):
    """``nn.Linear`` with int8 weight rows and float32 row scales: y = x (q · s)ᵀ + b.

    weight: int8 (out, in), a Parameter without gradient (counted in ``num_parameters``); scale: float32 (out,)
    buffer; bias: float32 (out,) or None."""

    reads_weights = True  # model/timing.py brackets its calls as weight reading

    def __init__(self, linear: nn.Linear):
        super().__init__()
        q, scale = quantize_rows(linear.weight)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight = nn.Parameter(q, requires_grad=False)
        self.register_buffer("scale", scale)
        self.bias = None if linear.bias is None else nn.Parameter(linear.bias.detach().float().clone(),
                                                                  requires_grad=False)
        self.register_buffer("ones", torch.ones(self.out_features, dtype=ACT_DTYPE), persistent=False)

    def _make_matrix(self) -> WeightMatrix:
        return WeightMatrix.from_int8(self.weight, self.scale, self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.matrix())


class Int8Embedding(_Matrix, nn.Module):
    """``nn.Embedding`` with int8 rows and a float32 scale per row: a lookup reads one int8 row and its scale.
    ``logits(x)`` multiplies by the same rows (the tied LM head): x (N, C) -> (N, V) float32."""

    reads_weights = True

    def __init__(self, embedding: nn.Embedding):
        super().__init__()
        q, scale = quantize_rows(embedding.weight)
        self.num_embeddings, self.embedding_dim = q.shape
        self.weight = nn.Parameter(q, requires_grad=False)
        self.register_buffer("scale", scale)
        self.register_buffer("ones", torch.ones(self.num_embeddings, dtype=ACT_DTYPE), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight).float() * F.embedding(ids, self.scale[:, None])  # (..., C)

    def _make_matrix(self) -> WeightMatrix:
        return WeightMatrix.from_int8(self.weight, self.scale, None)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.matrix())


class MatrixLinear(_Matrix, nn.Module):
    """``nn.Linear`` for inference whose product goes through ``model/weight_mm.py`` in fp32 (MKL's GEMV at 1 row,
    oneDNN's packed GEMM at 2+), as the engine's flat pass multiplies: what a worker's fp32 shard runs. weight:
    float32 (out, in), the linear's own tensor (not copied), without gradient; bias: float32 (out,) or None."""

    reads_weights = True

    def __init__(self, linear_: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear_.in_features, linear_.out_features
        self.weight = nn.Parameter(linear_.weight.detach(), requires_grad=False)
        self.bias = None if linear_.bias is None else nn.Parameter(linear_.bias.detach(), requires_grad=False)

    def _make_matrix(self) -> WeightMatrix:
        return WeightMatrix(self.weight, self.bias, "fp32")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.matrix())


class Fp16Linear(_Matrix, nn.Module):
    """``nn.Linear`` with fp16 weights (half the bytes of fp32), multiplied with float32 activations and
    accumulation (``model/weight_mm.py``: FBGEMM on the CPU). weight: float16 (out, in), a Parameter without
    gradient; bias: float32 (out,) or None."""

    reads_weights = True

    def __init__(self, linear_: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear_.in_features, linear_.out_features
        self.weight = nn.Parameter(linear_.weight.detach().half().contiguous(), requires_grad=False)
        self.bias = None if linear_.bias is None else nn.Parameter(linear_.bias.detach().float().clone(),
                                                                   requires_grad=False)

    def _make_matrix(self) -> WeightMatrix:
        return WeightMatrix(self.weight, self.bias, "fp16")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.matrix())


class Fp16Embedding(_Matrix, nn.Module):
    """``nn.Embedding`` with fp16 rows: a lookup returns float32 rows (..., C); ``logits(x)`` multiplies by the
    same rows (the tied LM head): x (N, C) -> (N, V) float32."""

    reads_weights = True

    def __init__(self, embedding: nn.Embedding):
        super().__init__()
        self.num_embeddings, self.embedding_dim = embedding.weight.shape
        self.weight = nn.Parameter(embedding.weight.detach().half().contiguous(), requires_grad=False)

    def _make_matrix(self) -> WeightMatrix:
        return WeightMatrix(self.weight, None, "fp16")

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight).float()  # (..., C)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return linear(x, self.matrix())


@torch.no_grad()
def quantize_int8(model):
    """Replace, in place, the weights of ``model`` (a ``GPT2`` on the CPU, float32) by int8 rows + float32 scales
    (module doc). Sets ``model.weights = "int8"``; prepares it for decoding again if it was. Returns the model.

    Raises ValueError if the model is not on the CPU (the int8 kernel used here is the CPU one)."""
    if model.wte.weight.device.type != "cpu":
        raise ValueError("int8 weights run on the CPU here (FBGEMM's int8 GEMM); use --device cpu")
    if getattr(model, "weights", "fp32") == "int8":
        return model
    for block in model.h:
        block.attn.c_attn = Int8Linear(block.attn.c_attn)
        block.attn.c_proj = Int8Linear(block.attn.c_proj)
        block.mlp.c_fc = Int8Linear(block.mlp.c_fc)
        block.mlp.c_proj = Int8Linear(block.mlp.c_proj)
    model.wte = Int8Embedding(model.wte)
    model.wpe = Int8Embedding(model.wpe)
    if model.lm_head is not None:
        model.lm_head = Int8Linear(model.lm_head)
    model.weights = "int8"
    if model.prepared_for_decode:
        model.prepare_for_decode()
    return model


def fp16_modules(module: nn.Module) -> nn.Module:
    """Replace, in place, every ``nn.Linear`` inside ``module`` by an ``Fp16Linear`` and every ``nn.Embedding`` by
    an ``Fp16Embedding`` (any module: a GPT2, a worker's shard). Returns the module."""
    return _replace(module, {nn.Linear: Fp16Linear, nn.Embedding: Fp16Embedding})


def matrix_modules(module: nn.Module) -> nn.Module:
    """Replace, in place, every ``nn.Linear`` inside ``module`` (a worker's fp32 shard; inference only: no
    gradient flows through) by a ``MatrixLinear``: its products then go through ``model/weight_mm.py`` in fp32.
    Returns the module."""
    return _replace(module, {nn.Linear: MatrixLinear})


def _replace(module: nn.Module, kinds: dict) -> nn.Module:
    """Replace, in place, every child of an exact type in ``kinds`` by ``kinds[type](child)``, recursively."""
    for name, child in list(module.named_children()):
        make = kinds.get(type(child))
        if make is not None:
            setattr(module, name, make(child))
        else:
            _replace(child, kinds)
    return module


@torch.no_grad()
def to_fp16(model):
    """Replace, in place, every weight matrix of a float32 ``model`` (a ``GPT2``) by fp16 values: the four
    projections of every block and a separate LM head (``Fp16Linear``), the token and position embeddings
    (``Fp16Embedding``, the tied LM head too). Biases and layer norms stay float32. Memory: the fp16 values (what
    ``weight_bytes`` counts and a pass reads) plus FBGEMM's packed copy of each (made at first use), about the fp32
    model's size in all. Sets ``model.weights = "fp16"``; prepares it for decoding again if it was. Returns the
    model. Raises ValueError for a model that is not fp32."""
    if getattr(model, "weights", "fp32") == "fp16":
        return model
    if getattr(model, "weights", "fp32") != "fp32":
        raise ValueError(f"fp16 weights are made from fp32 ones, not from {model.weights}")
    fp16_modules(model)
    model.weights = "fp16"
    if model.prepared_for_decode:
        model.prepare_for_decode()
    return model


def set_precision(model, precision: str):
    """The weights of ``model`` (a float32 ``GPT2``) in ``precision``: "fp32" (as is), "fp16" (``to_fp16``) or
    "int8" (``quantize_int8``), in place. Returns the model. Raises ValueError for an unknown precision, or for
    a model already in another precision than fp32 that is asked for another one."""
    if precision not in PRECISIONS:
        raise ValueError(f"weights must be one of {PRECISIONS}, got {precision!r}")
    current = getattr(model, "weights", "fp32")
    if precision == current:
        return model
    if current != "fp32":
        raise ValueError(f"the model's weights are {current}; they cannot become {precision}")
    return to_fp16(model) if precision == "fp16" else quantize_int8(model)


@torch.no_grad()
def dequantize_int8(model, config=None):
    """A float32 ``GPT2`` with the weights of ``model`` in any precision (``to_fp32``): int8 matrices w = q · s
    (row scales), fp16 ones widened (exactly), the rest as is. For devices where the int8 kernel does not run
    (``quantize_int8`` is CPU-only). Returns a new model on the CPU (move it with ``.to``)."""
    out = type(model)(config or model.config)  # a GPT2 (model/gpt2.py imports this module's kernel)
    state = {}
    for name, t in model.state_dict().items():
        if name.endswith(".scale"):
            continue
        if t.dtype == torch.int8:
            t = t.float() * model.state_dict()[name[:-len("weight")] + "scale"][:, None]
        state[name] = t.float()
    out.load_state_dict(state, strict=True)
    return out



def to_fp32(model):
    """A new float32 ``GPT2`` holding the values of ``model``'s weights (fp32, fp16 or int8; ``dequantize_int8``)."""
    return dequantize_int8(model)
