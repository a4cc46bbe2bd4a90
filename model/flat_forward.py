"""The flat cached forward: a GPT-2 engine pass as one loop of tensor ops, without module calls.

``GPT2.prepare_for_decode`` (model/gpt2.py) builds a ``FlatForward`` for the model; ``GPT2.forward`` hands it
every engine pass with a KV cache, autograd off, no module hooks and no readable attention. The arithmetic is the
blocks' own (model/gpt2.py, checked against transformers in tests/model/test_parity.py), on (N, C) rows:

    embedding gather -> per block: LayerNorm, Q/K/V GEMM, attention over the KV cache (or ``ragged.attend``),
    projection GEMM, LayerNorm, fc GEMM + GELU, proj GEMM, residual adds -> LayerNorm -> LM head GEMM

Every weight GEMV/GEMM goes through ``model/weight_mm.py`` (the kernel of the model's precision, fp32, fp16 or
int8, and of the pass's row count is chosen there). Every weight product and the embedding gather is bracketed by
the weight-read timer (model/timing.py).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from model.ragged import RaggedBatch, attend
from model.timing import NULL_TIMER
from model.weight_mm import WeightMatrix, weight_key

if TYPE_CHECKING:  # pragma: no cover
    from model.kv_cache import PagedKVCache

# oneDNN's GELU algorithm for each activation it can fuse into a GEMM; others are applied apart
FUSED_ACT = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh", "gelu": "none"}


class FlatForward:
    """What ``GPT2.prepare_for_decode`` derives for fast engine passes: per block its tensors in the order used and
    its four weight matrices (``model/weight_mm.py``'s ``WeightMatrix``: the kernel for the model's precision and
    the pass's row count is chosen there), and the LM head's. Rebuilt by the model when its weights are replaced
    (``key``); fp32 matrices see changes in place (version counters)."""

    def __init__(self, model: torch.nn.Module):  # a GPT2 (model/gpt2.py imports this module)
        self.model = model
        self.config = cfg = model.config
        self.fused_act = FUSED_ACT.get(cfg.activation_function)
        self.submodules = list(model.modules())
        self.precision = model.weights  # "fp32" | "fp16" | "int8" (model/quantize.py converts the modules)
        self.int8 = self.precision == "int8"
        linears = [(b.attn.c_attn, b.attn.c_proj, b.mlp.c_fc, b.mlp.c_proj) for b in model.h]
        with torch.no_grad():
            # per block: (ln_1 w, b, ln_2 w, b, attention scale, activation)
            self.layers = [(b.ln_1.weight, b.ln_1.bias, b.ln_2.weight, b.ln_2.bias, cfg.attention_scale(i), b.mlp.act)
                           for i, b in enumerate(model.h)]
            # per block, per projection j (0 qkv, 1 attention proj, 2 fc, 3 proj): its WeightMatrix
            self.weights = [[self._matrix(lin) for lin in block] for block in linears]
        self.key = model.weights_key()
        # int8 embeddings: each row's float32 scale as a Python float, so one row's gather is one multiply
        self._row_scales = (model.wte.scale.tolist(), model.wpe.scale.tolist()) if self.int8 else None
        self._head: WeightMatrix | None = None
        self._head_for: tuple | None = None
        self._tri: torch.Tensor | None = None  # decode_one's causal masks are views of it
        self.head()

    def _matrix(self, lin) -> WeightMatrix:
        """The WeightMatrix of one projection: an fp32 ``nn.Linear``'s own weight, or the converted module's."""
        return WeightMatrix(lin.weight, lin.bias, "fp32") if self.precision == "fp32" else lin.matrix()

    def head(self) -> WeightMatrix:
        """The LM head's WeightMatrix (V outputs). fp32: over a contiguous [C, V] copy of the head weight (V × C ×
        4 bytes more than the model; MKL reads [in, out] faster), rebuilt when the weight changes in place;
        fp16 / int8: the converted embedding's (or separate head's) own matrix."""
        m = self.model
        if self.precision != "fp32":
            return (m.wte if m.lm_head is None else m.lm_head).matrix()
        w = m.lm_head_weight()
        key = (*weight_key(w), w.dtype, w.device)
        if self._head_for != key:
            with torch.no_grad():
                self._head = WeightMatrix(w.detach().t().contiguous().t(), None, "fp32")  # (V, C) view of [C, V]
            self._head_for = key
        return self._head

    def embed(self, ids: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token rows and position rows, 2 × float32 (N, C), for int64 ids and positions (N,)."""
        m = self.model
        if self.precision == "fp32":
            return F.embedding(ids, m.wte.weight), F.embedding(positions, m.wpe.weight)
        return m.wte(ids), m.wpe(positions)  # the converted embeddings give float32 rows

    def forward(self, input_ids: torch.Tensor, batch, kv_cache: PagedKVCache, logit_index: torch.Tensor | None,
                rt=NULL_TIMER, layer_ms: list[float] | None = None) -> torch.Tensor:
        """``forward`` with a KV cache and autograd off, written as a flat sequence of tensor ops on (B·T, C)
        rows: the same arithmetic as the blocks' modules (within float rounding), without their per-call
        overhead, which at batch 1 costs as much as the weights' GEMVs on this CPU. Every weight product goes
        through ``model/weight_mm.py`` (``_mm``), which picks the kernel for the precision and the row count.
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
        mm = self._mm
        rt.begin()
        tok, pos = self.embed(input_ids.reshape(N), batch.positions.reshape(N))  # 2 × (N, C)
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
            qkv = mm(F.layer_norm(x, (C,), w1, b1, eps), i, 0, rt)  # (N, 3C)
            if ragged:
                y = attend(qkv, i, batch, kv_cache, scale, nh)  # (N, C): each request over its own keys
            else:
                y = self._attend(qkv, i, B, T, batch, kv_cache, scale, mask, in_place, mirror, L, start)
            x = x + mm(y, i, 1, rt)
            h = mm(F.layer_norm(x, (C,), w2, b2, eps), i, 2, rt, act)  # (N, inner): fc and its GELU
            x = x + mm(h, i, 3, rt)
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
        head = self.head()
        rt.begin()
        logits = head.mm(x)[0]  # (rows, V)
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
        mm = self._mm
        rt.begin()
        if T == 1 and self.int8:  # one row: a Python index and a multiply (no index tensors)
            tok_scale, pos_scale = self._row_scales
            x = (m.wte.weight[token_ids[0]] * tok_scale[token_ids[0]]
                 + m.wpe.weight[position] * pos_scale[position])[None]  # (1, C)
        elif T == 1:
            x = (m.wte.weight[token_ids[0]].float() + m.wpe.weight[position].float())[None]  # (1, C)
        else:
            ids = torch.tensor(token_ids, device=m.wte.weight.device)
            tok, pos = self.embed(ids, torch.arange(position, position + T, device=ids.device))
            x = tok + pos  # (T, C)
        rt.end()
        slot, L = start + position, position + T
        mask = None if T == 1 else self._causal(position, T, L, x.device)  # (1, 1, T, L)
        for i, (w1, b1, w2, b2, scale, act) in enumerate(self.layers):
            qkv = mm(F.layer_norm(x, (C,), w1, b1, eps), i, 0, rt)  # (T, 3C)
            kv_cache.k[i, slot:slot + T] = qkv[:, C:2 * C].view(T, nh, hs)
            kv_cache.v[i, slot:slot + T] = qkv[:, 2 * C:].view(T, nh, hs)
            k = kv_cache.k[i, start:start + L].transpose(0, 1)[None]  # (1, nh, L, hs): a view of the pool
            v = kv_cache.v[i, start:start + L].transpose(0, 1)[None]
            q = qkv[:, :C].view(T, nh, hs).transpose(0, 1)[None]  # (1, nh, T, hs)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)  # (1, nh, T, hs)
            x = x + mm(y[0].transpose(0, 1).reshape(T, C), i, 1, rt)
            x = x + mm(mm(F.layer_norm(x, (C,), w2, b2, eps), i, 2, rt, act), i, 3, rt)
        x = F.layer_norm(x[-1:], (C,), m.ln_f.weight, m.ln_f.bias, eps)  # (1, C): the last token's
        head = self.head()
        rt.begin()
        logits = head.mm(x)[0]  # (1, V)
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

    def _mm(self, x, i, j, rt, act=None) -> torch.Tensor:
        """x float32 (N, in) times projection j of block i through ``model/weight_mm.py`` (the kernel of the
        precision and row count), the GELU fused into fc where the kernel has it (then its time is counted with
        the weight's reading). Returns float32 (N, out)."""
        w = self.weights[i][j]
        gelu = self.fused_act if act is not None else None
        rt.begin()
        y, fused = w.mm(x, gelu)
        rt.end()
        return y if act is None or fused else act(y)
