"""Shards: the slice of a GPT-2 state dict each worker holds, and the modules that run it (see
``model.parallel`` for the tensor- and pipeline-parallel splits)."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.attention import attend
from model.gpt2 import Block, GPT2Config
from model.parallel.plan import check_degree, split_layers
from model.timing import NULL_TIMER
from model.weight_mm import WeightMatrix, linear, weight_key

# the worker's weight-read timer of the pass running now (one pass at a time per worker process; worker.py sets it)
READ = [NULL_TIMER]


def shard_state(state: dict[str, torch.Tensor], config: GPT2Config, mode: str, n: int,
                rank: int) -> dict[str, torch.Tensor]:
    """The parameters worker ``rank`` of ``n`` holds, sliced from a full state dict ([out, in] Linear layout,
    this project's names). Returns new contiguous tensors (no view keeps the full tensor alive).

    TP: c_attn rows of this rank's heads in each of Q, K and V; c_fc rows; c_proj columns; the rest whole.
    PP: the stage's blocks (global names ``h.{i}.*``), ``wte``/``wpe`` on the first stage, ``ln_f`` and
    ``wte`` (the tied LM head) on the last. Raises ValueError for an impossible degree.
    """
    check_degree(config, mode, n)
    C, hs, inner = config.n_embd, config.head_dim, config.inner_dim
    out: dict[str, torch.Tensor] = {}
    if mode == "tp":
        heads = config.n_head // n
        q0, q1 = rank * heads * hs, (rank + 1) * heads * hs  # this rank's columns inside one of Q, K, V
        f0, f1 = rank * inner // n, (rank + 1) * inner // n
        qkv_rows = torch.cat([torch.arange(j * C + q0, j * C + q1) for j in range(3)])
        for name, t in state.items():
            if name.endswith("attn.c_attn.weight") or name.endswith("attn.c_attn.bias"):
                t = t.index_select(0, qkv_rows)  # (3·heads·hs, C) or (3·heads·hs,)
            elif name.endswith("attn.c_proj.weight"):
                t = t[:, q0:q1]  # (C, heads·hs): row-parallel in Megatron's [in, out] words
            elif name.endswith("mlp.c_fc.weight") or name.endswith("mlp.c_fc.bias"):
                t = t[f0:f1]  # (inner/n, C) or (inner/n,)
            elif name.endswith("mlp.c_proj.weight"):
                t = t[:, f0:f1]  # (C, inner/n)
            out[name] = t.contiguous().clone()
        return out
    start, stop = split_layers(config.n_layer, n)[rank]
    first, last = rank == 0, rank == n - 1
    for name, t in state.items():
        if name.startswith("h."):
            keep = start <= int(name.split(".")[1]) < stop
        else:
            keep = (name == "wte.weight" and (first or last)) or (name == "wpe.weight" and first) or \
                   (name.startswith("ln_f.") and last)
        if keep:
            out[name] = t.contiguous().clone()
    return out


def weight_product(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """x float (..., in) times ``module.weight``ᵀ (out, in), without its bias (a row-parallel share, added after the
    all-reduce; the tied LM head), through the weight multiply (model/weight_mm.py) in the weight's precision
    (fp16 weights: FBGEMM; else fp32), bracketed by the pass's weight-read timer. Returns (..., out)."""
    w = module.weight
    key = weight_key(w)
    if module.__dict__.get("_product_for") != key:
        module.__dict__["_product"] = WeightMatrix(w, None, "fp16" if w.dtype == torch.float16 else "fp32")
        module.__dict__["_product_for"] = key
    READ[0].begin()
    y = linear(x, module.__dict__["_product"])
    READ[0].end()
    return y


class _TPAttention(nn.Module):
    """Attention over this rank's heads; ``c_proj`` holds only their columns (row-parallel)."""

    def __init__(self, C: int, heads: int, hs: int):
        super().__init__()
        self.heads, self.hs = heads, hs
        self.c_attn = nn.Linear(C, 3 * heads * hs)  # column-parallel: [Q_r; K_r; V_r]
        self.c_proj = nn.Linear(heads * hs, C)  # row-parallel: its bias is added once, after the all-reduce

    def forward(self, x, layer, batch, cache, all_reduce):
        """x (B, T, C) -> (B, T, C), the all-reduced sum of every rank's share. This rank's K/V are written to
        its cache and the context read from it (``attend``, model/attention.py; GPT-2's 1/√hs scale)."""
        qkv = self.c_attn(x)  # (B, T, 3·nh/n·hs): this rank's heads of Q, K and V
        y = attend(qkv, layer, cache, batch, None, self.heads)[0]  # (B, T, nh/n·hs)
        y = weight_product(self.c_proj, y)  # (B, T, C): this rank's share of the sum
        all_reduce(y)
        return y + self.c_proj.bias


class _TPMLP(nn.Module):
    def __init__(self, C: int, inner: int):
        super().__init__()
        self.c_fc = nn.Linear(C, inner)  # column-parallel
        self.c_proj = nn.Linear(inner, C)  # row-parallel

    def forward(self, x, all_reduce):
        h = F.gelu(self.c_fc(x), approximate="tanh")
        y = weight_product(self.c_proj, h)  # (B, T, C) partial
        all_reduce(y)
        return y + self.c_proj.bias


class _TPBlock(nn.Module):
    def __init__(self, config: GPT2Config, n: int):
        super().__init__()
        C = config.n_embd
        self.ln_1 = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
        self.attn = _TPAttention(C, config.n_head // n, config.head_dim)
        self.ln_2 = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
        self.mlp = _TPMLP(C, config.inner_dim // n)

    def forward(self, x, layer, batch, cache, all_reduce):
        x = x + self.attn(self.ln_1(x), layer, batch, cache, all_reduce)
        return x + self.mlp(self.ln_2(x), all_reduce)


class _Shard(nn.Module):
    """What one worker holds. Names match ``shard_state`` so loading is ``load_state_dict(strict=True)``."""

    def __init__(self, config: GPT2Config, mode: str, n: int, rank: int):
        super().__init__()
        C = config.n_embd
        if mode == "tp":
            self.layers = list(range(config.n_layer))
            self.wte = nn.Embedding(config.vocab_size, C)
            self.wpe = nn.Embedding(config.n_positions, C)
            self.h = nn.ModuleList(_TPBlock(config, n) for _ in self.layers)
            self.ln_f = nn.LayerNorm(C, eps=config.layer_norm_epsilon)
            self.first = self.last = True
            return
        start, stop = split_layers(config.n_layer, n)[rank]
        self.layers = list(range(start, stop))
        self.first, self.last = rank == 0, rank == n - 1
        if self.first or self.last:
            self.wte = nn.Embedding(config.vocab_size, C)
        if self.first:
            self.wpe = nn.Embedding(config.n_positions, C)
        self.h = nn.ModuleDict({str(i): Block(config, i) for i in self.layers})  # the very blocks of model/gpt2.py
        if self.last:
            self.ln_f = nn.LayerNorm(C, eps=config.layer_norm_epsilon)

    def blocks(self):
        return list(self.h) if isinstance(self.h, nn.ModuleList) else [self.h[str(i)] for i in self.layers]

    def embed(self, input_ids, positions, rt=NULL_TIMER):
        """int64 (B, T) ids and positions -> float (B, T, C) (the module hooks time it: rt is unused)."""
        return self.wte(input_ids) + self.wpe(positions)  # (B, T, C)

    def logits(self, x, logit_index, rt=NULL_TIMER):
        """x (B, T, C) at positions logit_index int64 (B, K) -> final norm and the tied LM head, (B, K, V) (timed by
        ``weight_product``: rt is unused)."""
        x = self.ln_f(x.gather(1, logit_index[:, :, None].expand(-1, -1, x.size(-1))))  # (B, K, C)
        return weight_product(self.wte, x)  # (B, K, V): the tied LM head


class CurrentReadTimer:
    """Forwards begin/end to the pass's timer in ``READ`` (module hooks are set once, the timer is per pass)."""

    def begin(self) -> None:
        READ[0].begin()

    def end(self) -> None:
        READ[0].end()

