"""Speculative decoding: a small draft model guesses k tokens, the target checks them all in one pass.

Acceptance rule (Leviathan, Kalman & Matias 2023, "Fast Inference from Transformers via Speculative Decoding";
Chen et al. 2023, "Accelerating Large Language Model Decoding with Speculative Sampling"):
    draft token x_j, drawn from q_j, is kept with probability min(1, p_j(x_j) / q_j(x_j));
    at the first rejection a token is drawn from normalise(max(p_j − q_j, 0)) and the rest are dropped;
    if all k are kept, one more token is drawn from p_{k} — the "bonus" that comes free with the same pass.
The emitted tokens are distributed exactly as if the target had sampled them one by one. With greedy decoding
the rule reduces to: keep draft tokens while they equal the target's argmax, then emit the target's argmax.
"""

from __future__ import annotations

import torch

from model.sampling import draw


def accept_greedy(target_logits: torch.Tensor, draft_tokens: list[int]) -> tuple[int, list[int]]:
    """Greedy verification.

    target_logits: (k + 1, V) the target's logits at the positions after the last committed token and after
    each draft token. draft_tokens: the k guesses. Returns (accepted count a, emitted tokens: the a accepted
    guesses followed by the target's own token, so 1 ≤ len(emitted) ≤ k + 1).
    """
    target = target_logits.argmax(dim=-1).tolist()  # (k + 1,)
    out = []
    for j, guess in enumerate(draft_tokens):
        if guess != target[j]:
            return j, out + [target[j]]
        out.append(guess)
    return len(draft_tokens), out + [target[len(draft_tokens)]]


def accept_sampled(p: torch.Tensor, q: torch.Tensor, draft_tokens: list[int],
                   generator: torch.Generator | None) -> tuple[int, list[int]]:
    """Stochastic verification that preserves the target's distribution.

    p: float32 (k + 1, V) target distributions; q: float32 (k, V) the distributions the draft sampled its
    guesses from (same temperature, top-k and top-p); draft_tokens: the k guesses.
    Returns (accepted count a, emitted tokens), 1 ≤ len(emitted) ≤ k + 1.
    """
    out = []
    for j, x in enumerate(draft_tokens):
        px, qx = float(p[j, x]), float(q[j, x])
        r = float(torch.rand((), generator=generator, device=p.device))
        if qx > 0 and r < min(1.0, px / qx):
            out.append(x)
            continue
        residual = torch.clamp(p[j] - q[j], min=0.0)
        total = float(residual.sum())
        # p == q up to rounding leaves no residual mass; then p itself is the right distribution.
        dist = residual / total if total > 1e-12 else p[j]
        return j, out + [draw(dist, generator)]
    k = len(draft_tokens)
    return k, out + [draw(p[k], generator)]
