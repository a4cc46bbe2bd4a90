"""“Be the GPU” (你来当一回 GPU): the rules of the game, in plain Python (no Qt), so they are easy to test.

The source: “每按一下，就是把书搬一趟。先照常写完一句，再试试带上小徒弟、拉几个人拼桌，看看每趟能写出几个字。
耗时按每趟约 8 毫秒推算。小徒弟每次猜中几个是按‘代码类常能猜中 3–4 个’随机模拟的示意。新人坐下的第一趟要先读题。”

Rules (one ``press()`` = one trip of the book = one forward pass):
* Every trip is accounted at ``ms_per_trip`` = 8 ms (the source's figure for an 8B model on an A100, §07).
* A person who has just sat down spends their first trip reading the question (prefill); that trip also writes
  their first token (the page counts the first token in the reading trip, as §06 says).
* ``alone``: one person. After reading, each trip writes exactly 1 token. A finished sentence (``sentence_tokens``
  tokens) is followed by a new person with a new question.
* ``apprentice``: one person and the apprentice (a draft model). After reading, on each trip the apprentice
  guesses ``guesses`` = 5 tokens and the book checks them all at once: ``accepted`` of them are kept, drawn at
  random with weights ``ACCEPT_WEIGHTS`` (mostly 3 or 4 of 5: the source's “代码类常能猜中 3–4 个”, an
  illustration, seeded) or, with ``accept_source``, asked of that callback (the tour's live draft model:
  the number of guesses one real verify trip kept; clamped to [0, guesses]), and the book adds its own next
  token, so the trip writes ``accepted + 1`` tokens (never past the end of the sentence).
* ``shared``: up to ``seats`` people share the table. Before each trip, if a seat is free, one new person sits
  down. On the trip every seated person writes 1 token (newcomers: their reading trip's first token). Whoever
  finishes their sentence leaves after the trip, freeing the seat (continuous batching).
Counters: trips, tokens, tokens per trip (tokens ÷ trips) and accounted time (trips × ms_per_trip).

Words: with ``sentences`` (lists of token labels, e.g. ``["One", "␣trip", ...]``) person n writes sentence
(n − 1) mod len(sentences) token by token, and its length is their ``target``; each person keeps the ``words``
written so far, each trip's events say which ``words`` it wrote, and the last ``KEEP_FINISHED`` finished
sentences stay in ``finished`` (so a board can show a sentence after its writer has left).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

MODES = ("alone", "apprentice", "shared")
MS_PER_TRIP = 8.0  # the source §07: 16 GB ÷ ~2 TB/s ≈ 8 ms per trip; “耗时按每趟约 8 毫秒推算”
GUESSES = 5  # the apprentice guesses 5 tokens per trip (the source: “5 个里的 3–4 个”)
# P(accepted = 0..5): 3 or 4 kept two times in three, mean 3.0 (illustrative, in the source's spirit)
ACCEPT_WEIGHTS = (1, 1, 2, 5, 5, 1)
KEEP_FINISHED = 4  # finished sentences kept for the board


@dataclass
class Person:
    """Someone at the table: ``number`` (1, 2, ...), tokens ``written`` of ``target``, and whether they have
    read their question yet."""

    number: int
    target: int
    written: int = 0
    has_read: bool = False
    sentence: tuple[str, ...] = ()  # the tokens this person writes ((): no words, only counts)

    @property
    def words(self) -> list[str]:
        """The tokens written so far (empty without a sentence)."""
        return list(self.sentence[:self.written])

    @property
    def done(self) -> bool:
        return self.written >= self.target


class GpuGame:
    """The game's state and rules (see the module docstring). ``seed`` makes the apprentice reproducible."""

    def __init__(self, mode: str = "alone", seed: int = 0, sentence_tokens: int = 12, seats: int = 4,
                 guesses: int = GUESSES, ms_per_trip: float = MS_PER_TRIP,
                 accept_source: Callable[[int], int] | None = None,
                 sentences: list[list[str]] | None = None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if sentence_tokens < 1 or seats < 1 or guesses < 1:
            raise ValueError("sentence_tokens, seats and guesses must be at least 1")
        self.mode = mode
        self.rng = random.Random(seed)
        self.sentence_tokens = sentence_tokens
        self.seats = seats if mode == "shared" else 1
        self.guesses = guesses
        self.ms_per_trip = ms_per_trip
        self.accept_source = accept_source  # guesses -> accepted; None: the seeded random illustration
        self.sentences = [tuple(str(w) for w in s) for s in (sentences or []) if s]
        self.finished: list[dict] = []  # the last KEEP_FINISHED finished sentences: {"person", "words"}
        self.trips = 0
        self.tokens = 0
        self.sentences_done = 0
        self.people: list[Person] = []
        self._next_number = 1
        self.last: list[dict] = []  # what the last trip did, one dict per person at the table

    # ---- counters ----------------------------------------------------------------------------------------
    @property
    def tokens_per_trip(self) -> float:
        """Tokens written ÷ trips (0 before the first trip)."""
        return self.tokens / self.trips if self.trips else 0.0

    @property
    def accounted_ms(self) -> float:
        """Trips × ``ms_per_trip`` (8 ms): time as the source accounts it, not measured."""
        return self.trips * self.ms_per_trip

    # ---- one trip ----------------------------------------------------------------------------------------
    def draw_accepted(self, guesses: int) -> int:
        """How many of ``guesses`` guesses the book keeps: from ``accept_source`` when given, else drawn
        (seeded, weights ``ACCEPT_WEIGHTS``); always within [0, guesses]."""
        if self.accept_source is not None:
            accepted = int(self.accept_source(guesses))
        else:
            accepted = self.rng.choices(range(len(ACCEPT_WEIGHTS)), weights=ACCEPT_WEIGHTS)[0]
        return max(0, min(accepted, guesses))

    def next_guesses(self) -> int:
        """How many guesses the next press will ask the apprentice for (0: no guessing on that trip, e.g. a
        newcomer's reading trip or another mode). Lets a caller fetch a live count before pressing."""
        if self.mode != "apprentice":
            return 0
        if not self.people:
            return 0  # a newcomer sits down and reads
        p = self.people[0]
        return 0 if not p.has_read else min(self.guesses, p.target - p.written)

    def _seat_newcomer(self) -> None:
        n = self._next_number
        if self.sentences:
            sentence = self.sentences[(n - 1) % len(self.sentences)]
            self.people.append(Person(n, len(sentence), sentence=sentence))
        else:
            self.people.append(Person(n, self.sentence_tokens))
        self._next_number += 1

    def press(self) -> list[dict]:
        """One trip. Returns what it did per person: ``{"person", "read", "tokens", "guesses", "accepted",
        "done", "words"}`` (``words``: the tokens written on this trip; [] without sentences)."""
        if len(self.people) < self.seats:
            self._seat_newcomer()
        self.trips += 1
        events = []
        for p in self.people:
            remaining = p.target - p.written
            ev = {"person": p.number, "read": False, "tokens": 1, "guesses": 0, "accepted": 0, "done": False}
            if not p.has_read:
                p.has_read = True
                ev["read"] = True  # the reading trip also writes the first token
            elif self.mode == "apprentice":
                g = min(self.guesses, remaining)
                a = self.draw_accepted(g)
                ev.update(guesses=g, accepted=a, tokens=min(a + 1, remaining))
            ev["words"] = list(p.sentence[p.written:p.written + ev["tokens"]])
            p.written += ev["tokens"]
            self.tokens += ev["tokens"]
            ev["done"] = p.done
            events.append(ev)
        finished = [p for p in self.people if p.done]
        self.sentences_done += len(finished)
        for p in finished:
            self.finished.append({"person": p.number, "words": p.words, "target": p.target})
        self.finished = self.finished[-KEEP_FINISHED:]
        self.people = [p for p in self.people if not p.done]
        self.last = events
        return events

    def snapshot(self) -> dict:
        """Plain data for the scene."""
        return {"mode": self.mode, "trips": self.trips, "tokens": self.tokens,
                "tokens_per_trip": self.tokens_per_trip, "accounted_ms": self.accounted_ms,
                "ms_per_trip": self.ms_per_trip, "seats": self.seats, "sentence_tokens": self.sentence_tokens,
                "sentences_done": self.sentences_done, "guesses": self.guesses,
                "people": [{"number": p.number, "written": p.written, "target": p.target, "has_read": p.has_read,
                            "words": p.words} for p in self.people],
                "finished": [dict(f) for f in self.finished],
                "last": list(self.last)}


__all__ = ["GpuGame", "Person", "MODES", "MS_PER_TRIP", "GUESSES", "ACCEPT_WEIGHTS", "KEEP_FINISHED"]
