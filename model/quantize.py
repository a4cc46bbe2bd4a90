"""A thinner book for real: int8 weights, one scale per output row, read by torch's int8 weight-only kernel.

``quantize_int8(model)`` replaces, in place, every weight matrix of a loaded GPT-2 by int8 values and a float32
scale per output row (symmetric, absmax: s_r = max_c |W_rc| / 127, q_rc = round(W_rc / s_r), so W ≈ q · s):
the four projections of every block (``Int8Linear``), and the token and position embeddings (``Int8Embedding``),
whose int8 rows also serve as the tied LM head. Biases and layer norms stay float32 (0.3 % of the bytes of the
bundled model). ``GPT2.weight_bytes()`` then counts what is really held: int8 values + scales + the rest.

The matrix-vector products run ``torch._weight_int8pack_mm`` (ATen's int8 weight-only GEMM, the kernel torchao's
int8 weight-only quantization lowers to on CPU), with activations cast to bfloat16 (its vectorised path) and the
result scaled by the float32 row scales in float32. Measured on this CPU (docs/benchmarks-engine.md, "int8
weights"): the kernel with float32 activations is 4× slower than fp32 GEMV here; with bfloat16 activations
2–4× faster; ``torch.ao.quantization.quantize_dynamic`` (fbgemm/x86, int8 activations too) in between.

Numerics: per-row absmax int8 keeps each weight within half a step (s_r / 2) of its float value; bfloat16
activations and outputs round to 8 significant bits. The held-out bits per byte against fp32 is in
docs/benchmarks.md ("int8 weights"). Only CPU tensors are supported by the kernel here.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

WEIGHT_KINDS = ("fp32", "int8")
ACT_DTYPE = torch.bfloat16  # the kernel's fast path on CPU (float32 activations take a slow scalar path)


def quantize_rows(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-row int8 of a float matrix w (R, K): returns (q int8 (R, K), scale float32 (R,)), w ≈ q·s."""
    w = w.detach().float()
    scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-12)  # an all-zero row keeps scale > 0 (q = 0)
    q = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return q.contiguous(), scale.contiguous()


def int8_matmul(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor, ones: torch.Tensor,
                bias: torch.Tensor | None = None) -> torch.Tensor:
    """x (N, K) float32 times (q · scale)ᵀ: (N, R) float32, plus bias (R,) if given.

    q int8 (R, K), scale float32 (R,), ones: a bfloat16 vector of at least R ones (the kernel's own scale
    argument; the float32 scale is applied after, so it is not rounded to bfloat16)."""
    y = torch._weight_int8pack_mm(x.to(ACT_DTYPE), q, ones[:q.size(0)])  # (N, R) bfloat16, unscaled
    return torch.addcmul(bias, y, scale) if bias is not None else y.float().mul_(scale)


class Int8Linear(nn.Module):
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

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = int8_matmul(x.reshape(-1, self.in_features), self.weight, self.scale, self.ones, self.bias)
        return y.view(*x.shape[:-1], self.out_features)


class Int8Embedding(nn.Module):
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

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        y = int8_matmul(x.reshape(-1, self.embedding_dim), self.weight, self.scale, self.ones)
        return y.view(*x.shape[:-1], self.num_embeddings)


@torch.no_grad()
def quantize_int8(model):
    """Replace, in place, the weights of ``model`` (a ``GPT2`` on the CPU, float32) by int8 rows + float32 scales
    (module doc). Sets ``model.weights = "int8"``; prepares it for decoding again if it was. Returns the model.

    Raises ValueError if the model is not on the CPU (the int8 kernel used here is the CPU one)."""
    if model.wte.weight.device.type != "cpu":
        raise ValueError("int8 weights run on the CPU here (torch._weight_int8pack_mm); use --device cpu")
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
    if model._flat is not None:
        model.prepare_for_decode()
    return model


@torch.no_grad()
def dequantize_int8(model, config=None):
    """A float32 ``GPT2`` with the weights of int8 ``model``: every matrix w = q · s (row scales), the rest as is.
    For devices where the int8 kernel does not run (``quantize_int8`` is CPU-only). Returns a new model on the CPU
    (move it with ``.to``)."""
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

