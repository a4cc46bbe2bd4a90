"""Where a draft's training starts: weights taken from a bigger model of the same tokenizer.

``early_exit_state``: some of its blocks (a layer-skip or early-exit draft); ``thin_embeddings``: its embeddings
projected to a narrower width (a thin draft with its own dictionary).
"""

from __future__ import annotations

import torch

from model.gpt2 import GPT2


def early_exit_state(start: GPT2, n_layer: int, layers: tuple[int, ...] | None = None) -> dict[str, torch.Tensor]:
    """``start``'s weights for a model of its width with ``n_layer`` blocks: the embeddings, its blocks
    ``layers`` (default its first ``n_layer``; block i of the new model is ``start``'s block ``layers[i]``) and the
    final layer norm (the whole model when ``n_layer`` is its depth). A draft made so reads some of the target's
    chapters and skips the rest (self-speculative decoding: Zhang et al. 2024, "Draft & Verify"; Elhoushi et al.
    2024, "LayerSkip"); distillation then teaches it to say what the skipped layers would have.
    Raises ValueError when ``layers`` does not name ``n_layer`` blocks of ``start``.
    """
    layers = tuple(range(n_layer)) if layers is None else tuple(layers)
    if len(layers) != n_layer or not all(0 <= i < start.config.n_layer for i in layers):
        raise ValueError(f"layers {layers} are not {n_layer} blocks of a {start.config.n_layer}-block model")
    out = {}
    for k, v in start.state_dict().items():
        if not k.startswith("h."):
            out[k] = v
            continue
        _, i, rest = k.split(".", 2)
        if int(i) in layers:
            out[f"h.{layers.index(int(i))}.{rest}"] = v
    return out


@torch.no_grad()
def thin_embeddings(start: GPT2, n_embd: int) -> dict[str, torch.Tensor]:
    """``start``'s token and position embeddings for a narrower model: ``wte`` (V, C) and ``wpe`` (P, C) projected
    on the top ``n_embd`` right singular vectors of ``wte`` (V, n_embd and P, n_embd). The tied LM head then
    starts from the target's logits restricted to that subspace (a rank-``n_embd`` approximation of its head).
    Raises ValueError when ``n_embd`` is not narrower than ``start``.
    """
    wte, wpe = start.wte.weight.float(), start.wpe.weight.float()
    if n_embd >= wte.shape[1]:
        raise ValueError(f"n_embd {n_embd} is not narrower than the start model's {wte.shape[1]}")
    _, _, vh = torch.linalg.svd(wte - wte.mean(0), full_matrices=False)
    basis = vh[:n_embd].T  # (C, n_embd)
    return {"wte.weight": wte @ basis, "wpe.weight": wpe @ basis}


@torch.no_grad()
def grown_state(start: GPT2, wide: GPT2, seed: int = 0) -> dict[str, torch.Tensor]:
    """``start``'s function in a model twice as wide and twice as deep (``wide``'s config), as a state dict.

    Width (C -> 2C, heads of the same size, nh -> 2·nh): the residual stream carries ``a·[x; x]`` with
    a = 1/√2, so every LayerNorm sees the same mean and a variance of var/2 (only its eps moves, 1e-5 against
    a variance of order 1) and outputs ``[LN(x); LN(x)]``; a projection reading it takes ``[W/2, W/2]``. The old
    heads and MLP units compute what they did; the new ones start random (N(0, 0.02)) and write through output
    columns of zero, so they add nothing until they learn to. Each block's output is written as ``a·[y; y]``;
    ``ln_f`` is scaled by ``a`` and the tied embeddings by ``a``, so the logits are ``a²·2 = 1`` times the old
    ones. Depth (L -> 2L): after every old block a new one whose two output projections are zero (an identity
    until trained). Net2Net (Chen et al. 2016) duplicates units the same way; zero-initialised output
    projections are how new blocks start as the identity (as in ReZero, Bachlechner et al. 2021).

    Raises ValueError unless ``wide`` is exactly 2× ``start``'s width, heads and depth, with its vocabulary,
    context and head size.
    """
    s, w = start.config, wide.config
    if (w.n_embd, w.n_head, w.n_layer) != (2 * s.n_embd, 2 * s.n_head, 2 * s.n_layer) \
            or (w.vocab_size, w.n_positions) != (s.vocab_size, s.n_positions) or not s.tie_word_embeddings:
        raise ValueError(f"{w.n_embd}x{w.n_layer} ({w.n_head} heads) is not {s.n_embd}x{s.n_layer} "
                         f"({s.n_head} heads) grown twice as wide and deep with its vocabulary and context")
    g = _Grower(seed, s.n_embd, s.inner_dim)
    a = g.a
    out = {"wte.weight": a * g.dup(start.wte.weight.T).T, "wpe.weight": a * g.dup(start.wpe.weight.T).T,
           "ln_f.weight": a * g.dup(start.ln_f.weight), "ln_f.bias": a * g.dup(start.ln_f.bias)}
    for i, blk in enumerate(start.h):  # the random draws in this order: the old block's new rows, then the new's
        out.update(g.widened_block(blk, f"h.{2 * i}."))
        out.update(g.identity_block(f"h.{2 * i + 1}."))
    return out


class _Grower:
    """The pieces of ``grown_state``: C -> 2C for a model of width ``C`` and MLP width ``H``, the new weights
    drawn from one generator seeded with ``seed`` (N(0, 0.02))."""

    a = 2 ** -0.5  # the residual stream carries a·[x; x]

    def __init__(self, seed: int, C: int, H: int) -> None:
        self.gen = torch.Generator().manual_seed(seed)
        self.C, self.H = C, H

    def rand(self, *shape):
        return torch.randn(*shape, generator=self.gen) * 0.02

    @staticmethod
    def dup(v):
        """A vector read on the wide residual stream: (C,) -> (2C,)."""
        return torch.cat([v, v])

    def read(self, W, new_rows):
        """(out, C) reading [h; h] -> (out + new_rows, 2C); the new rows random."""
        return torch.cat([torch.cat([W / 2, W / 2], dim=1), self.rand(new_rows, 2 * self.C)])

    def write(self, W, b, new_cols):
        """(C, in) writing a·[y; y] -> (2C, in + new_cols); the new columns zero."""
        top = torch.cat([self.a * W, torch.zeros(self.C, new_cols)], dim=1)
        return torch.cat([top, top]), self.a * self.dup(b)

    def widened_block(self, blk, old: str) -> dict[str, torch.Tensor]:
        """An old block, twice as wide, computing what it did (its new heads and MLP units write zeros)."""
        C, H, read, write, dup = self.C, self.H, self.read, self.write, self.dup
        out = {}
        q, k, v = blk.attn.c_attn.weight.split(C)  # 3 × (C, C)
        bq, bk, bv = blk.attn.c_attn.bias.split(C)
        out[old + "attn.c_attn.weight"] = torch.cat([read(q, C), read(k, C), read(v, C)])  # (6C, 2C)
        out[old + "attn.c_attn.bias"] = torch.cat([bq, torch.zeros(C), bk, torch.zeros(C), bv, torch.zeros(C)])
        out[old + "attn.c_proj.weight"], out[old + "attn.c_proj.bias"] = write(
            blk.attn.c_proj.weight, blk.attn.c_proj.bias, C)
        out[old + "mlp.c_fc.weight"] = read(blk.mlp.c_fc.weight, H)  # (2I, 2C)
        out[old + "mlp.c_fc.bias"] = torch.cat([blk.mlp.c_fc.bias, torch.zeros(H)])
        out[old + "mlp.c_proj.weight"], out[old + "mlp.c_proj.bias"] = write(blk.mlp.c_proj.weight,
                                                                            blk.mlp.c_proj.bias, H)
        for ln in ("ln_1", "ln_2"):
            out[old + ln + ".weight"] = dup(getattr(blk, ln).weight)
            out[old + ln + ".bias"] = dup(getattr(blk, ln).bias)
        return out

    def identity_block(self, new: str) -> dict[str, torch.Tensor]:
        """A new block whose two output projections are zero: the identity until trained."""
        C, H = self.C, self.H
        out = {}
        for ln in ("ln_1", "ln_2"):
            out[new + ln + ".weight"], out[new + ln + ".bias"] = torch.ones(2 * C), torch.zeros(2 * C)
        out[new + "attn.c_attn.weight"], out[new + "attn.c_attn.bias"] = self.rand(6 * C, 2 * C), torch.zeros(6 * C)
        out[new + "mlp.c_fc.weight"], out[new + "mlp.c_fc.bias"] = self.rand(2 * H, 2 * C), torch.zeros(2 * H)
        for name, cols in (("attn.c_proj", 2 * C), ("mlp.c_proj", 2 * H)):
            out[new + name + ".weight"], out[new + name + ".bias"] = torch.zeros(2 * C, cols), torch.zeros(2 * C)
        return out
