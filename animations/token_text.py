"""How a token's label is set on a tour page: special tokens as what they mean, never raw.

Labels come from ``model.tokenizer.Tokenizer.label`` (whitespace already carries a visible mark: ␣ ↵ ⇥; bytes
that are not yet a character are hex, ``<E4 B8>``). What is left raw there is a special token's own text
(``<|endoftext|>``), which a visitor cannot read: :func:`shown_token` says what it means, in the page's language
("end of text" / "文末"). No torch and no model here: plain strings.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication

SPECIAL = re.compile(r"<\|[^<>|]{1,40}\|>")  # GPT-2's special tokens look like <|endoftext|>
_MEANING = {"<|endoftext|>": "end of text"}  # marked for translation in the .ts (context "Tour")
WHITESPACE_MARKS = frozenset("␣↵⇥␍")


def _t(text: str) -> str:
    return QCoreApplication.translate("Tour", text)


def shown_token(label: str) -> str:
    """``label`` with every special token replaced by its meaning: ``"<|endoftext|>"`` → "end of text" ("文末" in
    Chinese), any other ``<|name|>`` → ``⟨name⟩``. Other text is returned as it is (``str`` in, ``str`` out)."""
    def meaning(m: re.Match) -> str:
        raw = m.group(0)
        if raw in _MEANING:
            return "⟨" + _t(_MEANING[raw]) + "⟩"
        return "⟨" + raw[2:-2] + "⟩"
    return SPECIAL.sub(meaning, label)


def is_junk(label: str) -> bool:
    """True when a label shows no word: only whitespace marks, a special token, or bytes of an unfinished
    character (``<E4 B8>``). Such tokens may be listed but never make the story of a page."""
    if SPECIAL.fullmatch(label.strip()):
        return True
    rest = re.sub(r"<[0-9A-F]{2}(?: [0-9A-F]{2})*>", "", label)
    return not any(c not in WHITESPACE_MARKS and not c.isspace() for c in rest)
