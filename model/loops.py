"""Loops: the same phrase written three times in a row. Small models fall into them (greedy decoding most of all),
and an exhibit must never show one as if it were an answer.

A *phrase* is a run of units: ASCII words (letters, digits, underscore), single other characters (a CJK
character, a punctuation mark); white space is not a unit, so a phrase repeated across line breaks or indents
is still the same phrase. A loop is a phrase of 1 to ``MAX_PHRASE_UNITS`` units written ``REPEATS`` times in a
row, whose *weight* is at least ``MIN_WEIGHT``: each ASCII word character counts 1, each other letter (CJK)
counts 2, punctuation 0. So "of the number of the number of the number", "None, None, None", "pass pass pass"
and "明月明月明月" are loops; "0, 0, 0", ")))", "----" and a doubled "萧萧" are not.

``LoopWatch`` follows a growing text (the answer so far, appended chunk by chunk) and finds the first loop as soon
as its third copy is complete; ``shown_text`` cuts a text before the third copy of its first loop. Pure Python:
the engine process (``model/engine.py``, which stops a looping request) and the window (``gui/live``, which
never shows three copies, whatever the engine does) both use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REPEATS = 3  # copies in a row that make a loop
MAX_PHRASE_UNITS = 16  # the longest phrase looked for, in units
MIN_WEIGHT = 3  # the least weight (letters) of a phrase that counts

_UNIT = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


@dataclass(frozen=True)
class Loop:
    """The first loop of a text: ``phrase`` as written in its first copy (white space trimmed), ``start`` the
    character offset of its first copy, ``cut`` of its third copy's first character (the text before ``cut``
    shows two copies at most), ``end`` just after the third copy. Offsets index the whole text."""

    phrase: str
    start: int
    cut: int
    end: int


def _weight(unit: str) -> int:
    if unit[0].isascii():
        return len(unit) if (unit[0].isalnum() or unit[0] == "_") else 0
    return 2 if unit.isalpha() else 0


class LoopWatch:
    """The first loop of a text that grows by ``feed(chunk)``. Keeps the units of the last few hundred
    characters only: each ``feed`` costs O(new units × MAX_PHRASE_UNITS²), not O(text)."""

    def __init__(self, repeats: int = REPEATS, max_units: int = MAX_PHRASE_UNITS, min_weight: int = MIN_WEIGHT):
        if repeats < 2 or max_units < 1:
            raise ValueError(f"need repeats >= 2 and max_units >= 1, got {repeats}, {max_units}")
        self.repeats, self.max_units, self.min_weight = repeats, max_units, min_weight
        self.text = ""
        self.loop: Loop | None = None
        self._units: list[tuple[str, int, int]] = []  # (unit, start, end) of complete units, oldest dropped
        self._scanned = 0  # characters of self.text cut into units (the last unit may still grow)

    def feed(self, chunk: str) -> Loop | None:
        """Append ``chunk``; returns the first loop once one is complete (then always that one)."""
        self.text += chunk
        if self.loop is not None or not chunk:
            return self.loop
        # re-cut from the start of the last unit: a word may continue in this chunk
        if self._units and self._units[-1][2] == self._scanned:
            self._scanned = self._units.pop()[1]
        new = [(m.group(), m.start(), m.end()) for m in _UNIT.finditer(self.text, self._scanned)]
        self._scanned = len(self.text)
        keep = self.repeats * self.max_units
        for unit in new:
            self._units.append(unit)
            found = self._loop_ending_here()
            if found is not None:
                self.loop = found
                return found
        del self._units[:-keep]
        return None

    def _loop_ending_here(self) -> Loop | None:
        units, r = self._units, self.repeats
        n = len(units)
        for length in range(1, self.max_units + 1):
            if length * r > n:
                break
            last = [u[0] for u in units[n - length:]]
            if sum(_weight(u) for u in last) < self.min_weight:
                continue
            if all([u[0] for u in units[n - (i + 1) * length:n - i * length]] == last for i in range(1, r)):
                first = units[n - r * length]
                third = units[n - length]
                phrase = self.text[first[1]:units[n - (r - 1) * length - 1][2]].strip()
                return Loop(phrase=phrase, start=first[1], cut=third[1], end=units[n - 1][2])
        return None


def find_loop(text: str) -> Loop | None:
    """The first loop of ``text`` (``LoopWatch`` fed the whole text), or None."""
    return LoopWatch().feed(text)


def shown_text(text: str) -> tuple[str, Loop | None]:
    """``text`` as an exhibit may show it: cut before the third copy of its first loop (trailing white space
    dropped), with that loop; or the whole text and None."""
    loop = find_loop(text)
    return (text, None) if loop is None else (text[:loop.cut].rstrip(), loop)
