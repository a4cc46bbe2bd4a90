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
