"""Turning logits into the next token: greedy, temperature, top-k, top-p, each request with its own seeded RNG.

Sampling is a pure function of (logits, parameters, generator). ``distribution`` returns exactly the
probabilities a token is drawn from, in fp32, so speculative decoding can use the same ``q`` and ``p``.
Top-p ("nucleus") sampling: Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from model.errors import RequestError


@dataclass(frozen=True)
class SamplingParams:
    """temperature 0 means greedy (argmax); top_k 0 and top_p 1.0 mean "no limit"."""

    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.temperature, (int, float)) and math.isfinite(self.temperature)
                and 0.0 <= self.temperature <= 100.0):
            raise RequestError(f"temperature must be between 0 and 100, got {self.temperature!r}")
        if not isinstance(self.top_k, int) or isinstance(self.top_k, bool) or self.top_k < 0:
            raise RequestError(f"top-k must be a whole number >= 0, got {self.top_k!r}")
        if not (isinstance(self.top_p, (int, float)) and 0.0 < self.top_p <= 1.0):
            raise RequestError(f"top-p must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)
                                      or not -2**63 <= self.seed < 2**64):  # what torch.Generator accepts
            raise RequestError(f"seed must be a whole number (64-bit), got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0


def distribution(logits: torch.Tensor, params: SamplingParams) -> torch.Tensor:
    """Probabilities to draw from. logits: (V,) any float dtype. Returns float32 (V,) summing to 1.

    Greedy returns the plain softmax (temperature 1), which is what the screen shows as the model's belief.
    Otherwise: divide by temperature, keep the top-k logits (exactly k tokens: of equal logits the lower token
    id goes first, so top_k=1 is greedy), then the smallest set of tokens whose probability reaches top-p
    (always at least one; equal probabilities also ordered by token id), renormalise.
    """
    logits = logits.float()
    if params.greedy:
        return torch.softmax(logits, dim=-1)
    # shift so the largest logit is 0 before dividing: the same distribution (softmax ignores a shift), but a
    # tiny temperature (1e-39) cannot overflow to inf - inf = nan; it tends to greedy, as it should
    logits = (logits - logits.max()) / params.temperature
    if 0 < params.top_k < logits.numel():
        # exactly k tokens, ties at the edge broken by the lower token id (as vLLM does): top_k=1 is greedy
        order = sorted_ids(logits)[:params.top_k]
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter_(0, order, True)
        logits = logits.masked_fill(~keep, float("-inf"))
    probs = torch.softmax(logits, dim=-1)
    if params.top_p < 1.0:
        order = _nucleus_candidates(probs, params.top_p)
        sorted_probs = probs[order]
        before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs  # mass strictly above each token
        drop = before >= params.top_p
        sorted_probs = sorted_probs.masked_fill(drop, 0.0)
        probs = torch.zeros_like(probs).scatter_(0, order, sorted_probs)
        probs = probs / probs.sum()
    return probs


# tokens looked at first, then next, when cutting the top-p nucleus: torch's stable sort of 4,096 floats costs
# ~0.8 ms on one core here, of 512 under 0.05 ms, and a top-k of 512 about as little
NUCLEUS_PROBES = (64, 512)


def _nucleus_candidates(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Token ids, most likely first (ties by id), of every token that may be in the top-p nucleus: int64 (M,).

    The same cut as sorting all V tokens (``sorted_ids``), for less: take the ``NUCLEUS_PROBES[i]`` largest
    probabilities; when their mass reaches ``top_p``, only tokens at least as likely as the smallest of them
    (ties included) can be in the nucleus (every other token has more than ``top_p`` above it), so only those are
    sorted. Otherwise the next probe, and past the last, all V are sorted.
    """
    for m in NUCLEUS_PROBES:
        if m >= probs.numel():
            break
        top = torch.topk(probs, m, sorted=False).values
        if float(top.sum()) >= top_p:
            ids = torch.nonzero(probs >= top.min()).squeeze(1)  # ascending ids: the stable sort keeps ties in id order
            return ids[sorted_ids(probs[ids])]
    return sorted_ids(probs)


def sorted_ids(values: torch.Tensor) -> torch.Tensor:
    """Token ids of a (V,) tensor, largest value first; equal values in increasing token id. int64 (V,)."""
    return torch.sort(values, descending=True, stable=True).indices  # stable: equal values keep id order


def uniform(generator: torch.Generator | None) -> float:
    """One number uniform in [0, 1) from ``generator`` (on the generator's own device: a request's generator lives
    where its engine runs, ``make_generator``)."""
    device = generator.device if generator is not None else "cpu"
    return float(torch.rand((), generator=generator, device=device))


@dataclass(frozen=True)
class Nucleus:
    """A distribution over the vocabulary given by its support: token ids and their probabilities (Python lists,
    likeliest first, equal ones by token id; the probabilities sum to 1 within float rounding). The verify rule
    of speculative sampling needs a guess's p and q, a draw, a top-5 and, at a rejection only, the whole rows:
    a nucleus of a few dozen tokens answers all of these without V-sized tensors. ``Row`` answers the same
    questions for a wide distribution kept as a (V,) tensor."""

    ids: list[int]
    probs: list[float]

    @classmethod
    def point(cls, token: int) -> Nucleus:
        """All the mass on one token (a deterministic guess: prompt lookup's)."""
        return cls([token], [1.0])

    def prob(self, token: int) -> float:
        """The probability of ``token`` (0.0 outside the support)."""
        try:
            return self.probs[self.ids.index(token)]
        except ValueError:
            return 0.0

    def dense(self, vocab_size: int, device: str | torch.device = "cpu") -> torch.Tensor:
        """The distribution as a float32 (V,) row on ``device``."""
        return torch.zeros(vocab_size, device=device).index_put_(
            (torch.tensor(self.ids, device=device),), torch.tensor(self.probs, device=device))

    def draw(self, generator: torch.Generator | None) -> int:
        """One token drawn from the nucleus with one uniform number of ``generator`` (inverse CDF)."""
        u = uniform(generator) * sum(self.probs)
        acc = 0.0
        for token, p in zip(self.ids, self.probs):
            acc += p
            if u < acc:
                return token
        return self.ids[-1]  # u at the very top of the float range

    def top(self, k: int = 5) -> list[tuple[int, float]]:
        """The k most likely (token id, probability) pairs, most likely first."""
        return list(zip(self.ids[:k], self.probs[:k]))


@dataclass(frozen=True)
class Row:
    """A distribution as a float32 (V,) tensor (``distribution``'s), with ``Nucleus``'s questions: for wide
    distributions, where a few V-sized ops cost less than Python lists of thousands of entries."""

    probs: torch.Tensor

    def prob(self, token: int) -> float:
        return float(self.probs[token])

    def dense(self, vocab_size: int, device: str | torch.device = "cpu") -> torch.Tensor:
        return self.probs[:vocab_size].to(device)

    def draw(self, generator: torch.Generator | None) -> int:
        return draw(self.probs, generator)

    def top(self, k: int = 5) -> list[tuple[int, float]]:
        return top_k_probs(self.probs, k)


# nuclei wider than this stay dense ``Row``s: Python lists of thousands of entries cost more than V-sized ops
NUCLEUS_MAX = 512


def nuclei(logits: torch.Tensor, params: SamplingParams) -> list[Nucleus | Row]:
    """The sampling distribution (``distribution``) of each row of ``logits`` (R, V): a ``Nucleus`` with the same
    tokens and probabilities (within float rounding) where the top-p nucleus has at most ``NUCLEUS_MAX`` tokens,
    else a ``Row``.

    The cut is found from the row's probabilities sorted by value alone (numpy's vectorised sort: 5 rows of 4,096
    in ~0.03 ms on this CPU, where torch's sort with indices takes ~0.9 ms and a top-513 ~0.1 ms): the mass above
    each sorted value is a prefix sum (equal values in any order give the same prefix sums), the nucleus keeps
    the n values with less than top_p above them, and its tokens are those at least as likely as the n-th, ties
    at that edge taken in token-id order, as ``distribution``'s stable sort does. Greedy (its plain softmax), top-k
    and temperature without top-p are ``Row``s of ``distribution``."""
    logits = logits.float()
    R, V = logits.shape
    if params.greedy or params.top_k or params.top_p >= 1.0:
        return [Row(distribution(row, params)) for row in logits]
    probs = torch.softmax((logits - logits.amax(-1, keepdim=True)) / params.temperature, dim=-1)  # as distribution
    a = probs.cpu().numpy()  # (R, V) float32
    desc = np.sort(a, axis=-1)[:, ::-1][:, :NUCLEUS_MAX + 1]  # the likeliest values, likeliest first
    # as torch's cumsum on the CPU: accumulated in double, stored as float32
    before = np.cumsum(desc, axis=-1, dtype=np.float64).astype(np.float32) - desc  # mass above each value
    kept = (before < np.float32(params.top_p)).sum(axis=-1)  # (R,): at least 1 (nothing is above the first)
    out: list[Nucleus | Row] = []
    for r in range(R):
        n = int(kept[r])
        if n > NUCLEUS_MAX:
            out.append(Row(distribution(logits[r], params)))
            continue
        ids = np.flatnonzero(a[r] >= desc[r, n - 1])  # ascending ids, ties at the edge included
        vals = a[r, ids]
        order = np.argsort(-vals, kind="stable")[:n]  # likeliest first, equal ones by id
        ids, vals = ids[order], vals[order]
        out.append(Nucleus(ids.tolist(), (vals / vals.sum(dtype=np.float32)).tolist()))
    return out


def sample(logits: torch.Tensor, params: SamplingParams, generator: torch.Generator | None
           ) -> tuple[int, torch.Tensor]:
    """Pick the next token. Returns (token id, the float32 (V,) distribution it was drawn from)."""
    probs = distribution(logits, params)
    if params.greedy:
        return int(torch.argmax(logits)), probs
    return draw(probs, generator), probs


def draw(probs: torch.Tensor, generator: torch.Generator | None) -> int:
    """One token id drawn from ``probs`` (float (V,), summing to 1), among its non-zero entries only: a nucleus
    of a few dozen tokens costs a draw over those, not over all V (``torch.multinomial`` draws one random
    number per entry it is given). Same distribution as ``torch.multinomial(probs, 1)``."""
    support = torch.nonzero(probs).squeeze(1)
    if support.numel() == probs.numel():
        return int(torch.multinomial(probs, 1, generator=generator))
    return int(support[torch.multinomial(probs[support], 1, generator=generator)])


def top_k_probs(probs: torch.Tensor, k: int = 5) -> list[tuple[int, float]]:
    """The k most likely (token id, probability) pairs, most likely first."""
    values, ids = torch.topk(probs, min(k, probs.numel()))
    return [(int(i), float(p)) for i, p in zip(ids, values)]


def make_generator(seed: int | None, device: str | torch.device = "cpu") -> torch.Generator:
    """A private RNG for one request, so a seed reproduces its draws whatever else runs in the batch."""
    gen = torch.Generator(device=device)
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)
    return gen
