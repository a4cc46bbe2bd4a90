"""The flat cached forward: a GPT-2 engine pass as one loop of tensor ops, without module calls.

``GPT2.prepare_for_decode`` (model/gpt2.py) builds a ``FlatForward`` for the model; ``GPT2.forward`` hands it
every engine pass with a KV cache, autograd off, no module hooks and no readable attention. The arithmetic is the
blocks' own (model/gpt2.py, checked against transformers in tests/model/test_parity.py), on (N, C) rows:

    embedding gather -> per block: LayerNorm, Q/K/V GEMM, attention over the KV cache (or ``ragged.attend``),
    projection GEMM, LayerNorm, fc GEMM + GELU, proj GEMM, residual adds -> LayerNorm -> LM head GEMM

Batch-1 passes run MKL's GEMV on ``[in, out]`` views of the weights; passes of 2 or more rows run oneDNN-packed
copies (``packed_weights``). Every weight GEMV/GEMM and the embedding gather is bracketed by the weight-read
timer (model/timing.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from model.ragged import RaggedBatch, attend
from model.timing import NULL_TIMER

if TYPE_CHECKING:  # pragma: no cover
    from model.gpt2 import GPT2
    from model.kv_cache import PagedKVCache

# oneDNN's GELU algorithm for each activation it can fuse into a GEMM; others are applied apart
FUSED_ACT = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh", "gelu": "none"}


class FlatForward:
    """What ``GPT2.prepare_for_decode`` derives for fast engine passes: per block its tensors in the order used
    (weights as ``[in, out]`` views), the LM head's contiguous ``[C, V]`` copy, and oneDNN-packed weights for
    passes of 2+ rows (made at the first such pass). Rebuilt by the model when its weights are replaced
    (``key``); copies stay right when weights change in place (version counters)."""

    # oneDNN packed weights pay from this many rows per GEMM (measured, docs/benchmarks-engine.md: at 1 row MKL's
    # GEMV is faster, from 2 rows oneDNN's blocked GEMM is up to 2x faster than MKL on this CPU)
    PACKED_MIN_ROWS = 2

    def __init__(self, model: "GPT2"):
        self.model = model
        self.config = cfg = model.config
        self.fused_act = FUSED_ACT.get(cfg.activation_function)
        self.submodules = list(model.modules())
        with torch.no_grad():
            self.layers = [
                (b.ln_1.weight, b.ln_1.bias, b.attn.c_attn.weight.t(), b.attn.c_attn.bias, b.attn.c_proj.weight.t(),
                 b.attn.c_proj.bias, b.ln_2.weight, b.ln_2.bias, b.mlp.c_fc.weight.t(), b.mlp.c_fc.bias,
                 b.mlp.c_proj.weight.t(), b.mlp.c_proj.bias, cfg.attention_scale(i), b.mlp.act)
                for i, b in enumerate(model.h)]
        self.key = model.weights_key()
        self.packable = [w for b in model.h for w in (b.attn.c_attn.weight, b.attn.c_proj.weight, b.mlp.c_fc.weight,
                                                      b.mlp.c_proj.weight)] + [model.lm_head_weight()]
        self._packed: list | None = None  # oneDNN-packed weights, and the (data_ptr, version) of each weight they copy
        self._packed_for: tuple | None = None
        self._head_t: torch.Tensor | None = None
        self._head_t_for: tuple | None = None
        self.head_t()

    def head_t(self) -> torch.Tensor:
        """The LM head as a contiguous [C, V] copy (V × C × 4 bytes more than the model), (re)built when stale."""
        w = self.model.lm_head_weight()
        key = (w.data_ptr(), w._version, w.dtype, w.device)
        if self._head_t_for != key:
            with torch.no_grad():
                self._head_t = w.detach().t().contiguous()  # (C, V)
            self._head_t_for = key
        return self._head_t

    def packed_weights(self) -> list | None:
        """oneDNN-packed copies of every block weight and the LM head (``torch.ops.mkldnn._reorder_linear_weight``,
        the layout Inductor uses for CPU linears), packed for 16 rows; rebuilt when any weight changes in place
        (version counters). None where oneDNN is not available (MKL's GEMM is used instead)."""
        w0 = self.model.wte.weight
        if not torch.backends.mkldnn.is_available() or w0.dtype != torch.float32 or w0.device.type != "cpu":
            return None
        weights = self.packable
        key = (self.key, [w._version for w in weights])
        if self._packed_for != key:
            try:
                self._packed = [torch.ops.mkldnn._reorder_linear_weight(w.detach(), 16) for w in weights]
            except (RuntimeError, AttributeError):  # a build without the op: MKL's GEMM it is
                self._packed = None
            self._packed_for = key
        return self._packed

    def forward(self, input_ids: torch.Tensor, batch, kv_cache: "PagedKVCache", logit_index: torch.Tensor | None,
                rt=NULL_TIMER, layer_ms: list[float] | None = None) -> torch.Tensor:
        """``forward`` with a KV cache and autograd off, written as a flat sequence of tensor ops on (B·T, C)
        rows: the same arithmetic as the blocks' modules (within float rounding), without their per-call
        overhead, which at batch 1 costs as much as the weights' GEMVs on this CPU. With 2+ rows the GEMMs run
        on oneDNN-packed weights (``packed_weights``), with the MLP's GELU fused into the first.
        batch: an AttentionBatch or RaggedBatch. rt: the weight-read timer (``model/timing.py``); layer_ms: if
        given, each layer's wall ms is appended. Returns float logits (B, K, V) with ``logit_index``, else (B, T, V).
        """
        m = self.model
        ragged = isinstance(batch, RaggedBatch)
        B, T = (1, input_ids.numel()) if ragged else input_ids.shape
        N = B * T
        cfg = self.config
        C, nh, hs = cfg.n_embd, cfg.n_head, cfg.head_dim
        eps = cfg.layer_norm_epsilon
        packed = self.packed_weights() if N >= self.PACKED_MIN_ROWS else None
        linear = torch.ops.mkldnn._linear_pointwise if packed is not None else None
        rt.begin()
        tok = F.embedding(input_ids.reshape(N), m.wte.weight)  # (N, C): rows of the dictionary
        pos = F.embedding(batch.positions.reshape(N), m.wpe.weight)
        rt.end()
        x = tok + pos  # (N, C)
        clock = time.perf_counter_ns if layer_ms is not None else None
        sync = torch.cuda.synchronize if input_ids.is_cuda else (lambda: None)
        if not ragged:
            mask = batch.attn_mask
            in_place = batch.context_start is not None
            mirror = batch.mirror if T == 1 else None
            L = batch.context_slots.size(1)
            start = batch.context_start
        for i, (w1, b1, wqkv, bqkv, wo, bo, w2, b2, wfc, bfc, wp, bp, scale, act) in enumerate(self.layers):
            if clock is not None:
                sync()
                t_layer = clock()
            h = F.layer_norm(x, (C,), w1, b1, eps)
            rt.begin()
            qkv = torch.addmm(bqkv, h, wqkv) if packed is None else linear(h, packed[4 * i], bqkv, "none", [None], "")
            rt.end()
            if ragged:
                y = attend(qkv, i, batch, kv_cache, scale, nh)  # (N, C): each request over its own keys
                rt.begin()
                y = torch.addmm(bo, y, wo) if packed is None else linear(y, packed[4 * i + 1], bo, "none", [None], "")
                rt.end()
                x = self._mlp(x + y, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps, rt)
                if clock is not None:
                    sync()
                    layer_ms.append((clock() - t_layer) / 1e6)
                continue
            q = qkv[:, :C].view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
            kv_cache.write(i, batch.slot_mapping, qkv[:, C:2 * C].view(B, T, nh, hs), qkv[:, 2 * C:].view(B, T, nh, hs))
            if in_place:
                k, v = kv_cache.view(i, start, L)  # 2 × (1, L, nh, hs)
            elif mirror is not None:
                mk, mv = mirror[0][i], mirror[1][i]  # (B, nh, capacity, hs): head-major, each head's keys one run
                mk.view(-1, hs).index_copy_(0, mirror[2], qkv[:, C:2 * C].reshape(N * nh, hs))
                mv.view(-1, hs).index_copy_(0, mirror[2], qkv[:, 2 * C:].reshape(N * nh, hs))
                k, v = mk[:, :, :L], mv[:, :, :L]  # 2 × (B, nh, L, hs)
            else:
                k, v = kv_cache.gather(i, batch.context_slots)  # 2 × (B, L, nh, hs)
            if mirror is None or in_place:
                k, v = k.transpose(1, 2), v.transpose(1, 2)  # (B, nh, L, hs)
            if batch.sees_all:
                y = F.scaled_dot_product_attention(q, k, v, scale=scale)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)  # (B, nh, T, hs)
            y = y.transpose(1, 2).reshape(N, C)
            rt.begin()
            y = torch.addmm(bo, y, wo) if packed is None else linear(y, packed[4 * i + 1], bo, "none", [None], "")
            rt.end()
            x = self._mlp(x + y, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps, rt)
            if clock is not None:
                sync()
                layer_ms.append((clock() - t_layer) / 1e6)
        if ragged:
            x = x if logit_index is None else x.index_select(0, logit_index)  # (M, C): only the rows sampled
            K = None
        elif logit_index is not None:
            K = logit_index.size(1)
            if T > 1 or K > 1:
                x = x.view(B, T, C).gather(1, logit_index[:, :, None].expand(-1, -1, C)).view(B * K, C)
        else:
            K = T
        x = F.layer_norm(x, (C,), m.ln_f.weight, m.ln_f.bias, eps)
        head = self.head_t() if packed is None else None
        rt.begin()
        logits = x @ head if packed is None else linear(x, packed[-1], None, "none", [None], "")
        rt.end()
        return logits if K is None else logits.view(B, K, -1)

    def _mlp(self, x, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps, rt=NULL_TIMER) -> torch.Tensor:
        """x + MLP(LayerNorm(x)) for block i on (N, C) rows (the flat cached forward's second half). With packed
        weights the GELU is fused into the fc GEMM, so its time is counted with that weight's reading."""
        h = F.layer_norm(x, (x.size(-1),), w2, b2, eps)
        rt.begin()
        if packed is None:
            h = torch.addmm(bfc, h, wfc)
            rt.end()
            h = act(h)
        elif self.fused_act is not None:
            h = linear(h, packed[4 * i + 2], bfc, "gelu", [None], self.fused_act)
            rt.end()
        else:
            h = linear(h, packed[4 * i + 2], bfc, "none", [None], "")
            rt.end()
            h = act(h)
        rt.begin()
        y = torch.addmm(bp, h, wp) if packed is None else linear(h, packed[4 * i + 3], bp, "none", [None], "")
        rt.end()
        return x + y
