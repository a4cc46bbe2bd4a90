"""Prompt lookup: the n-gram apprentice. Guesses are copied from the request's own earlier text, no model runs.

If the last n tokens of a sequence occurred before, the tokens that followed that earlier occurrence are a cheap
guess for what follows now (code repeats names, prose repeats phrases). Saxena 2023, "Prompt Lookup Decoding"
(github.com/apoorvumang/prompt-lookup-decoding), as in transformers' ``prompt_lookup_num_tokens`` and vLLM's
n-gram speculator. The guesses are checked by the target exactly like a draft model's (``model/speculative.py``):
greedy output is unchanged, and with sampling the draft is a point mass q(x) = 1 on each guess, for which the
acceptance rule keeps the target's distribution.

Matching here: the longest n from ``max_n`` down to ``min_n`` whose last-n-token window occurred earlier wins,
and among its earlier occurrences the most recent one (recent text is the likeliest to repeat). The guess is
what followed that occurrence; where that runs into the current end, it repeats with the period of the match,
so a text that loops is guessed k tokens ahead.
"""

from __future__ import annotations

import torch

DEFAULT_MAX_N = 3
DEFAULT_MIN_N = 1


class NgramIndex:
    """For one growing sequence: where each n-gram (n = 1..max_n) last ended, updated as tokens are appended.

    ``propose`` costs O(max_n) dictionary look-ups plus indexing the tokens appended since the last call, so a
    step pays for its new tokens only, not for the whole context. Tokens may only be appended (never changed).
    """

    def __init__(self, max_n: int = DEFAULT_MAX_N, min_n: int = DEFAULT_MIN_N):
        if not 1 <= min_n <= max_n:
            raise ValueError(f"need 1 <= min_n <= max_n, got min_n={min_n}, max_n={max_n}")
        self.max_n, self.min_n = max_n, min_n
        self.last_end: list[dict[tuple[int, ...], int]] = [{} for _ in range(max_n + 1)]  # [n][ngram] -> end
        self.indexed = 0  # n-grams ending at positions < indexed are in the tables

    def _index(self, token_ids: list[int], upto: int) -> None:
        for end in range(self.indexed, upto):
            for n in range(1, self.max_n + 1):
                if end - n + 1 < 0:
                    break
                self.last_end[n][tuple(token_ids[end - n + 1:end + 1])] = end
        self.indexed = max(self.indexed, upto)

    def propose(self, token_ids: list[int], k: int) -> list[int]:
        """Up to ``k`` guessed next tokens for ``token_ids`` (the whole sequence so far); [] if nothing matches.

        Only occurrences that end before the last token count, so the guess is always text that followed an
        earlier copy of the current ending. Raises ValueError if the sequence is shorter than what was indexed.
        """
        if len(token_ids) < self.indexed:
            raise ValueError("the sequence got shorter; an NgramIndex only follows appended tokens")
        if k <= 0 or len(token_ids) < 2:
            return []
        self._index(token_ids, len(token_ids) - 1)
        for n in range(min(self.max_n, len(token_ids) - 1), self.min_n - 1, -1):
            end = self.last_end[n].get(tuple(token_ids[-n:]))
            if end is not None:
                # copy what followed; past the end of the text the copy reads its own guesses, so a loop of
                # period (len - 1 - end) goes on repeating: [x y x y] -> x y x y ...
                guess = list(token_ids[end + 1:end + 1 + k])
                while len(guess) < k:
                    past_end = end + 1 + len(guess) >= len(token_ids)
                    guess.append(guess[len(guess) - (len(token_ids) - 1 - end)] if past_end
                                 else token_ids[end + 1 + len(guess)])
                return guess
        return []


def point_mass(token_ids: list[int], vocab_size: int, dtype=torch.float32,
               device: str | torch.device = "cpu") -> torch.Tensor:
    """The distributions a deterministic drafter "sampled" from: (len(token_ids), vocab_size), one-hot rows."""
    q = torch.zeros(len(token_ids), vocab_size, dtype=dtype, device=device)
    if token_ids:
        q[torch.arange(len(token_ids)), torch.tensor(token_ids)] = 1.0
    return q
