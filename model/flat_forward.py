"""The flat cached forward: a GPT-2 engine pass without ``nn.Module`` calls, in nanoGPT's words.

``GPT2.prepare_for_decode`` (model/gpt2.py) builds a ``FlatForward`` for the model; ``GPT2.forward`` hands it
every engine pass with a KV cache, autograd off, no module hooks and no readable attention. The arithmetic is the
blocks' own (model/gpt2.py, checked against transformers in tests/model/test_parity.py), on (N, C) rows, with the
same names: per block ``x = x + self.attn(self.ln_1(x), ...)`` then ``x = x + self.mlp(self.ln_2(x), ...)``
(``FlatBlock``), attention ``c_attn`` -> ``attend`` (model/attention.py) -> ``c_proj`` (``FlatAttention``), the MLP
``c_fc`` (GELU fused) -> ``c_proj`` (``FlatMLP``); the pass is the skeleton of model/decoder.py
(``embed`` -> blocks -> ``logits``).

Every weight GEMV/GEMM goes through ``model/weight_mm.py`` (``FlatLinear``: the kernel of the model's precision,
fp32, fp16 or int8, and of the pass's row count is chosen there). Every weight product and the embedding gather is
bracketed by the weight-read timer (model/timing.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from model import decoder
from model.attention import Run, attend
from model.ragged import RaggedBatch
from model.timing import NULL_TIMER
from model.weight_mm import WeightMatrix, weight_key

if TYPE_CHECKING:  # pragma: no cover
    from model.kv_cache import PagedKVCache

# oneDNN's GELU algorithm for each activation it can fuse into a GEMM; others are applied apart
FUSED_ACT = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh", "gelu": "none"}


class FlatLinear:
    """One projection as the flat pass calls it, like an ``nn.Linear``: ``self.c_fc(x, rt)``. x float32 (N, in) ->
    (N, out) through the weight multiply (``WeightMatrix.mm``, model/weight_mm.py), bracketed by the weight-read
    timer rt. act: the activation after it (fc), fused into the GEMM where the kernel has it (``gelu``, then its
    time is counted with the weight's reading), else applied outside the bracket."""

    __slots__ = ("w", "act", "gelu")

    def __init__(self, w: WeightMatrix, act=None, gelu: str | None = None):
        self.w, self.act, self.gelu = w, act, (gelu if act is not None else None)

    def __call__(self, x: torch.Tensor, rt) -> torch.Tensor:
        rt.begin()
        y, fused = self.w.mm(x, self.gelu)
        rt.end()
        return y if self.act is None or fused else self.act(y)


class FlatLayerNorm:
    """A block's LayerNorm as the flat pass calls it, like an ``nn.LayerNorm``: ``self.ln_1(x)``, x float32 (N, C)
    -> (N, C) (``F.layer_norm`` with the module's weight, bias and eps)."""

    __slots__ = ("shape", "weight", "bias", "eps")

    def __init__(self, ln: torch.nn.LayerNorm):
        self.shape, self.weight, self.bias, self.eps = ln.normalized_shape, ln.weight, ln.bias, ln.eps

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.shape, self.weight, self.bias, self.eps)


class FlatAttention:
    """A block's attention on (N, C) rows: ``c_attn`` (Q, K, V of every head), ``attend`` over the KV cache
    (model/attention.py), ``c_proj``."""

    def __init__(self, c_attn: FlatLinear, c_proj: FlatLinear, scale: float, n_head: int):
        self.c_attn, self.c_proj, self.scale, self.n_head = c_attn, c_proj, scale, n_head

    def forward(self, x: torch.Tensor, layer: int, batch, cache: PagedKVCache, rt) -> torch.Tensor:
        """x float32 (N, C) -> (N, C). batch: an ``AttentionBatch``, a ``RaggedBatch`` or a ``Run`` (where the keys
        are); this pass's K/V are written to ``cache``."""
        qkv = self.c_attn(x, rt)  # (N, 3C)
        y = attend(qkv, layer, cache, batch, self.scale, self.n_head)[0]  # (N, C): each row over its own keys
        return self.c_proj(y, rt)

    __call__ = forward


class FlatMLP:
    """A block's MLP on (N, C) rows: ``c_fc`` with its GELU, then ``c_proj``."""

    def __init__(self, c_fc: FlatLinear, c_proj: FlatLinear):
        self.c_fc, self.c_proj = c_fc, c_proj

    def forward(self, x: torch.Tensor, rt) -> torch.Tensor:
        """x float32 (N, C) -> (N, C); the hidden rows are (N, inner)."""
        return self.c_proj(self.c_fc(x, rt), rt)

    __call__ = forward


class FlatBlock:
    """One transformer block of the flat pass: the same names and order as ``Block`` in model/gpt2.py."""

    def __init__(self, ln_1: FlatLayerNorm, attn: FlatAttention, ln_2: FlatLayerNorm, mlp: FlatMLP):
        self.ln_1, self.attn, self.ln_2, self.mlp = ln_1, attn, ln_2, mlp

    def forward(self, x: torch.Tensor, layer: int, batch, cache: PagedKVCache, rt) -> torch.Tensor:
        """x float32 (N, C) -> (N, C): the residual stream after block ``layer``."""
        x = x + self.attn(self.ln_1(x), layer, batch, cache, rt)
        return x + self.mlp(self.ln_2(x), rt)

    __call__ = forward


class FlatForward:
    """What ``GPT2.prepare_for_decode`` derives for fast engine passes: per block a ``FlatBlock`` over its tensors and
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
        with torch.no_grad():
            self.h = [self._block(b, i) for i, b in enumerate(model.h)]
        self.key = model.weights_key()
        # int8 embeddings: each row's float32 scale as a Python float, so one row's gather is one multiply
        self._row_scales = (model.wte.scale.tolist(), model.wpe.scale.tolist()) if self.int8 else None
        self._head: WeightMatrix | None = None
        self._head_for: tuple | None = None
        self._tri: torch.Tensor | None = None  # decode_one's causal masks are views of it
        self.head()

    def _block(self, b, layer: int) -> FlatBlock:
        """The ``FlatBlock`` of the model's block ``b`` (number ``layer``): views of its LayerNorm weights and the
        WeightMatrix of each projection."""
        cfg = self.config
        attn = FlatAttention(FlatLinear(self._matrix(b.attn.c_attn)), FlatLinear(self._matrix(b.attn.c_proj)),
                             cfg.attention_scale(layer), cfg.n_head)
        mlp = FlatMLP(FlatLinear(self._matrix(b.mlp.c_fc), b.mlp.act, self.fused_act),
                      FlatLinear(self._matrix(b.mlp.c_proj)))
        return FlatBlock(FlatLayerNorm(b.ln_1), attn, FlatLayerNorm(b.ln_2), mlp)

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

    def _rows(self, ids: torch.Tensor, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token rows and position rows, 2 × float32 (N, C), for int64 ids and positions (N,)."""
        m = self.model
        if self.precision == "fp32":
            return F.embedding(ids, m.wte.weight), F.embedding(positions, m.wpe.weight)
        return m.wte(ids), m.wpe(positions)  # the converted embeddings give float32 rows

    def embed(self, ids, positions, rt=NULL_TIMER) -> torch.Tensor:
        """Token row + position row of every token fed, float32 (N, C), bracketed by the weight-read timer rt.
        ids, positions: int64 (N,); or (``decode_one``) a list of T token ids and the first one's position."""
        rt.begin()
        if isinstance(ids, list):
            x = self._embed_few(ids, positions)
        else:
            tok, pos = self._rows(ids, positions)  # 2 × (N, C)
            x = tok + pos
        rt.end()
        return x

    def _embed_few(self, token_ids: list[int], position: int) -> torch.Tensor:
        """``embed`` of a lone sequence's few tokens, the first at ``position``: one row without index tensors."""
        m = self.model
        if len(token_ids) == 1 and self.int8:  # one row: a Python index and a multiply
            tok_scale, pos_scale = self._row_scales
            return (m.wte.weight[token_ids[0]] * tok_scale[token_ids[0]]
                    + m.wpe.weight[position] * pos_scale[position])[None]  # (1, C)
        if len(token_ids) == 1:
            return (m.wte.weight[token_ids[0]].float() + m.wpe.weight[position].float())[None]  # (1, C)
        ids = torch.tensor(token_ids, device=m.wte.weight.device)
        tok, pos = self._rows(ids, torch.arange(position, position + len(token_ids), device=ids.device))
        return tok + pos  # (T, C)

    def logits(self, x: torch.Tensor, rows, rt=NULL_TIMER) -> torch.Tensor:
        """The final LayerNorm and the LM head: x float32 (N, C) -> logits (M, V) at ``rows`` (int64 (M,) flat rows,
        a slice, or None for all N), the head's product bracketed by the weight-read timer rt."""
        m = self.model
        if rows is not None:
            x = x[rows] if isinstance(rows, slice) else x.index_select(0, rows)  # (M, C): only the rows sampled
        x = F.layer_norm(x, (x.size(-1),), m.ln_f.weight, m.ln_f.bias, self.config.layer_norm_epsilon)
        head = self.head()
        rt.begin()
        logits = head.mm(x)[0]  # (M, V)
        rt.end()
        return logits

    def forward(self, input_ids: torch.Tensor, batch, kv_cache: PagedKVCache, logit_index: torch.Tensor | None,
                rt=NULL_TIMER, layer_ms: list[float] | None = None) -> torch.Tensor:
        """``forward`` with a KV cache and autograd off, on (B·T, C) rows: the same arithmetic as the blocks'
        modules (within float rounding), without their per-call overhead, which at batch 1 costs as much as the
        weights' GEMVs on this CPU. The skeleton is model/decoder.py's over ``embed``, ``h`` (``FlatBlock``) and
        ``logits``. batch: an AttentionBatch (input_ids int64 (B, T), logit_index int64 (B, K)) or a RaggedBatch
        (input_ids (N,), logit_index (M,) flat rows). rt: the weight-read timer (``model/timing.py``); layer_ms: if
        given, each layer's wall ms is appended. Returns float logits (B, K, V) with ``logit_index``, else (B, T, V);
        ragged: (M, V) (or (N, V) without logit_index).
        """
        rows, shape = self._logit_rows(input_ids, batch, logit_index)
        logits = decoder.forward(self, self.h, input_ids.reshape(-1), batch.positions.reshape(-1),
                                 (batch, kv_cache, rt), rows, rt, layer_ms)
        return logits if shape is None else logits.view(shape)

    @staticmethod
    def _logit_rows(input_ids: torch.Tensor, batch, logit_index: torch.Tensor | None):
        """(the flat rows whose logits a pass computes: int64 (M,) or None for every row, the logits' shape
        (B, K, V) as a view, or None for a ragged pass's (M, V))."""
        if isinstance(batch, RaggedBatch):
            return logit_index, None
        B, T = input_ids.shape
        if logit_index is None:
            return None, (B, T, -1)
        K = logit_index.size(1)
        if T == 1 and K == 1:
            return None, (B, 1, -1)
        base = torch.arange(0, B * T, T, device=logit_index.device)[:, None]  # (B, 1): each row's first flat row
        return (logit_index + base).reshape(-1), (B, K, -1)

    def decode_one(self, token_ids: list[int], position: int, kv_cache: PagedKVCache, start: int,
                   rt=NULL_TIMER) -> torch.Tensor:
        """A few tokens of one sequence, as lean as this engine gets: the draft model's guesses
        (model/speculative.py), where a pass of packed (B, T) tensors spends about a third of its time on inputs
        and ops that a lone sequence does not need (slot and position tensors, gathers). The sequence's K/V fill
        the pool's slots ``start`` .. ``start + position + T - 1`` in one run (a lone request whose blocks are
        consecutive: ``AttentionBatch``'s ``context_start``); the tokens' K/V are written there. The same blocks
        and skeleton as ``forward``, with the keys a ``Run`` (model/attention.py).

        token_ids: the T tokens fed (1 for a guess, 2 when the draft catches up after a bonus token), the first at
        ``position`` (0-based). rt: the weight-read timer. Returns float logits (V,) of the last token: the
        numbers ``forward`` gives for the same pass (tests/model/test_speculative.py compares them).
        Raises ValueError for no tokens or a position outside the context window."""
        if not token_ids:
            raise ValueError("decode_one needs at least one token to feed")
        n = self.config.n_positions
        if position < 0 or position + len(token_ids) > n:
            raise ValueError(f"positions {position}..{position + len(token_ids) - 1} are outside the context "
                             f"window of {n}")
        T = len(token_ids)
        L = position + T
        mask = None if T == 1 else self._causal(position, T, L, self.model.wte.weight.device)  # (1, 1, T, L)
        keys = Run(slot_mapping=start + position, context_start=start, L=L, T=T, mask=mask)
        logits = decoder.forward(self, self.h, token_ids, position, (keys, kv_cache, rt), slice(T - 1, T), rt)
        return logits[0]

    def _causal(self, position: int, T: int, L: int, device) -> torch.Tensor:
        """The causal mask of T queries at positions ``position``.. over keys 0 .. L - 1: a (1, 1, T, L) bool view
        of a lower-triangular matrix kept for the model's context window."""
        tri = self._tri
        if tri is None or tri.device != device:
            n = self.config.n_positions
            tri = self._tri = torch.ones(n, n, dtype=torch.bool, device=device).tril()
        return tri[position:position + T, :L][None, None]
