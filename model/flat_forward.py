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

from model.quantize import int8_matmul
from model.ragged import RaggedBatch, attend
from model.timing import NULL_TIMER

if TYPE_CHECKING:  # pragma: no cover
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

    def __init__(self, model: torch.nn.Module):  # a GPT2 (model/gpt2.py imports this module)
        self.model = model
        self.config = cfg = model.config
        self.fused_act = FUSED_ACT.get(cfg.activation_function)
        self.submodules = list(model.modules())
        self.int8 = model.weights == "int8"  # int8 rows and scales (model/quantize.py)
        linears = [(b.attn.c_attn, b.attn.c_proj, b.mlp.c_fc, b.mlp.c_proj) for b in model.h]
        with torch.no_grad():
            # per block: (ln_1 w, b, ln_2 w, b, attention scale, activation)
            self.layers = [(b.ln_1.weight, b.ln_1.bias, b.ln_2.weight, b.ln_2.bias, cfg.attention_scale(i), b.mlp.act)
                           for i, b in enumerate(model.h)]
            # per block, per projection j (0 qkv, 1 attention proj, 2 fc, 3 proj): fp32 (W [in, out] view, bias),
            # int8 (q int8 (out, in), row scales, bias, ones)
            self.weights = [[(lin.weight, lin.scale, lin.bias, lin.ones) if self.int8 else (lin.weight.t(), lin.bias)
                             for lin in block] for block in linears]
        self.key = model.weights_key()
        # int8 embeddings: each row's float32 scale as a Python float, so one row's gather is one multiply
        self._row_scales = (model.wte.scale.tolist(), model.wpe.scale.tolist()) if self.int8 else None
        self.packable = [] if self.int8 else [
            lin.weight for block in linears for lin in block] + [model.lm_head_weight()]
        self._packed: list | None = None  # oneDNN-packed weights, and the (data_ptr, version) of each weight they copy
        self._packed_for: tuple | None = None
        self._head_t: torch.Tensor | None = None
        self._tri: torch.Tensor | None = None  # decode_one's causal masks are views of it
        self._head_t_for: tuple | None = None
        if not self.int8:
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
        if self.int8 or not torch.backends.mkldnn.is_available() or w0.dtype != torch.float32 \
                or w0.device.type != "cpu":
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

    def forward(self, input_ids: torch.Tensor, batch, kv_cache: PagedKVCache, logit_index: torch.Tensor | None,
                rt=NULL_TIMER, layer_ms: list[float] | None = None) -> torch.Tensor:
        """``forward`` with a KV cache and autograd off, written as a flat sequence of tensor ops on (B·T, C)
        rows: the same arithmetic as the blocks' modules (within float rounding), without their per-call
        overhead, which at batch 1 costs as much as the weights' GEMVs on this CPU. With 2+ rows the GEMMs run
        on oneDNN-packed weights (``packed_weights``), with the MLP's GELU fused into the first; int8 weights
        run ``model/quantize.py``'s int8 kernel at any row count.
        batch: an AttentionBatch or RaggedBatch. rt: the weight-read timer (``model/timing.py``); layer_ms: if
        given, each layer's wall ms is appended. Returns float logits (B, K, V) with ``logit_index``, else (B, T, V).
        """
        m = self.model
        ragged = isinstance(batch, RaggedBatch)
        B, T = (1, input_ids.numel()) if ragged else input_ids.shape
        N = B * T
        cfg = self.config
        C, nh = cfg.n_embd, cfg.n_head
        eps = cfg.layer_norm_epsilon
        packed = self.packed_weights() if N >= self.PACKED_MIN_ROWS else None
        mm = self._mm_int8 if self.int8 else self._mm_packed if packed is not None else self._mm
        rt.begin()
        tok = m.wte(input_ids.reshape(N)) if self.int8 else F.embedding(input_ids.reshape(N), m.wte.weight)  # (N, C)
        pos = m.wpe(batch.positions.reshape(N)) if self.int8 else F.embedding(batch.positions.reshape(N), m.wpe.weight)
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
        for i, (w1, b1, w2, b2, scale, act) in enumerate(self.layers):
            if clock is not None:
                sync()
                t_layer = clock()
            qkv = mm(F.layer_norm(x, (C,), w1, b1, eps), i, 0, rt, packed)  # (N, 3C)
            if ragged:
                y = attend(qkv, i, batch, kv_cache, scale, nh)  # (N, C): each request over its own keys
            else:
                y = self._attend(qkv, i, B, T, batch, kv_cache, scale, mask, in_place, mirror, L, start)
            x = x + mm(y, i, 1, rt, packed)
            h = mm(F.layer_norm(x, (C,), w2, b2, eps), i, 2, rt, packed, act)  # (N, inner): fc and its GELU
            x = x + mm(h, i, 3, rt, packed)
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
        head = None if packed is not None or self.int8 else self.head_t()
        rt.begin()
        if self.int8:
            logits = m.wte.logits(x) if m.lm_head is None else m.lm_head(x)
        else:
            logits = x @ head if packed is None else torch.ops.mkldnn._linear_pointwise(x, packed[-1], None, "none",
                                                                                         [None], "")
        rt.end()
        return logits if K is None else logits.view(B, K, -1)

    def decode_one(self, token_ids: list[int], position: int, kv_cache: PagedKVCache, start: int,
                   rt=NULL_TIMER) -> torch.Tensor:
        """A few tokens of one sequence, as lean as this engine gets: the draft model's guesses
        (model/speculative.py), where a pass of packed (B, T) tensors spends about a third of its time on inputs
        and ops that a lone sequence does not need (slot and position tensors, gathers). The sequence's K/V fill
        the pool's slots ``start`` .. ``start + position + T - 1`` in one run (a lone request whose blocks are
        consecutive: ``AttentionBatch``'s ``context_start``); the tokens' K/V are written there.

        token_ids: the T tokens fed (1 for a guess, 2 when the draft catches up after a bonus token), the first at
        ``position`` (0-based). rt: the weight-read timer. Returns float logits (V,) of the last token: the
        numbers ``forward`` gives for the same pass (tests/model/test_speculative.py compares them).
        Raises ValueError for no tokens or a position outside the context window."""
        m = self.model
        cfg = self.config
        if not token_ids:
            raise ValueError("decode_one needs at least one token to feed")
        if position < 0 or position + len(token_ids) > cfg.n_positions:
            raise ValueError(f"positions {position}..{position + len(token_ids) - 1} are outside the context "
                             f"window of {cfg.n_positions}")
        C, nh, hs, eps = cfg.n_embd, cfg.n_head, cfg.head_dim, cfg.layer_norm_epsilon
        T = len(token_ids)
        mm = self._mm_int8 if self.int8 else self._mm
        rt.begin()
        if T == 1 and self.int8:  # one row: a Python index and a multiply (no index tensors)
            tok_scale, pos_scale = self._row_scales
            x = (m.wte.weight[token_ids[0]] * tok_scale[token_ids[0]]
                 + m.wpe.weight[position] * pos_scale[position])[None]  # (1, C)
        elif T == 1:
            x = (m.wte.weight[token_ids[0]] + m.wpe.weight[position])[None]  # (1, C)
        else:
            ids = torch.tensor(token_ids, device=m.wte.weight.device)
            pos = torch.arange(position, position + T, device=ids.device)
            x = m.wte(ids) + m.wpe(pos) if self.int8 else m.wte.weight[ids] + m.wpe.weight[pos]  # (T, C)
        rt.end()
        slot, L = start + position, position + T
        mask = None if T == 1 else self._causal(position, T, L, x.device)  # (1, 1, T, L)
        for i, (w1, b1, w2, b2, scale, act) in enumerate(self.layers):
            qkv = mm(F.layer_norm(x, (C,), w1, b1, eps), i, 0, rt, None)  # (T, 3C)
            kv_cache.k[i, slot:slot + T] = qkv[:, C:2 * C].view(T, nh, hs)
            kv_cache.v[i, slot:slot + T] = qkv[:, 2 * C:].view(T, nh, hs)
            k = kv_cache.k[i, start:start + L].transpose(0, 1)[None]  # (1, nh, L, hs): a view of the pool
            v = kv_cache.v[i, start:start + L].transpose(0, 1)[None]
            q = qkv[:, :C].view(T, nh, hs).transpose(0, 1)[None]  # (1, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)  # (1, nh, T, hs)
            x = x + mm(y[0].transpose(0, 1).reshape(T, C), i, 1, rt, None)
            x = x + mm(mm(F.layer_norm(x, (C,), w2, b2, eps), i, 2, rt, None, act), i, 3, rt, None)
        x = F.layer_norm(x[-1:], (C,), m.ln_f.weight, m.ln_f.bias, eps)  # (1, C): the last token's
        rt.begin()
        if self.int8:
            logits = m.wte.logits(x) if m.lm_head is None else m.lm_head(x)
        else:
            logits = x @ self.head_t()
        rt.end()
        return logits[0]

    def _causal(self, position: int, T: int, L: int, device) -> torch.Tensor:
        """The causal mask of T queries at positions ``position``.. over keys 0 .. L - 1: a (1, 1, T, L) bool view
        of a lower-triangular matrix kept for the model's context window."""
        tri = self._tri
        if tri is None or tri.device != device:
            n = self.config.n_positions
            tri = self._tri = torch.ones(n, n, dtype=torch.bool, device=device).tril()
        return tri[position:position + T, :L][None, None]

    def _attend(self, qkv, i, B, T, batch, kv_cache, scale, mask, in_place, mirror, L, start) -> torch.Tensor:
        """Attention of block i over a padded (B, T) pass: writes the new K/V, reads the context (in place, from
        the decode mirror, or gathered), (N, 3C) -> (N, C)."""
        C, nh, hs = self.config.n_embd, self.config.n_head, self.config.head_dim
        N = B * T
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
        return y.transpose(1, 2).reshape(N, C)

    # One projection j of block i on rows x (0 Q/K/V, 1 attention projection, 2 MLP fc, 3 MLP proj), bracketed by
    # the weight-read timer rt; act: the activation after it (fc), applied outside the bracket unless fused.

    def _mm(self, x, i, j, rt, packed, act=None) -> torch.Tensor:
        """MKL's GEMV/GEMM on the [in, out] view (1 row)."""
        w, b = self.weights[i][j]
        rt.begin()
        y = torch.addmm(b, x, w)
        rt.end()
        return y if act is None else act(y)

    def _mm_packed(self, x, i, j, rt, packed, act=None) -> torch.Tensor:
        """oneDNN's GEMM on the packed weight (2+ rows), the GELU fused into fc where oneDNN has it (then its time
        is counted with the weight's reading)."""
        b = self.weights[i][j][1]
        fuse = act is not None and self.fused_act is not None
        rt.begin()
        y = torch.ops.mkldnn._linear_pointwise(x, packed[4 * i + j], b, "gelu" if fuse else "none", [None],
                                               self.fused_act if fuse else "")
        rt.end()
        return y if act is None or fuse else act(y)

    def _mm_int8(self, x, i, j, rt, packed, act=None) -> torch.Tensor:
        """The int8 weight-only kernel (model/quantize.py), its bfloat16 cast and float32 scaling included."""
        q, s, b, ones = self.weights[i][j]
        rt.begin()
        y = int8_matmul(x, q, s, ones, b)
        rt.end()
        return y if act is None else act(y)
