"""The models bundled in ``assets/models``: which is which, whom each is for, and what to ask it.

Two families, each a big book (the default), a pocket book, and their apprentices, all sharing the family's
tokenizer:

* ``code``: a GPT-2 trained on the Python 3.11 documentation and standard library; the English default.
* ``poems``: a GPT-2 trained on the Tang and Song *shi* of the ``chinese-poetry`` corpus (Simplified), one
  token per common character; the Chinese default. It continues a first line in the line length it was given.

The big book (``code``, ``poems``: 512 wide, 8 blocks, ~27–28M parameters, over 100 MB in fp32, FP16 on disk) is
larger than a desktop CPU's last-level cache, so every trip reads it from memory, as the source's 16 GB book is
read from HBM; its apprentice is the family's small model (at most a fifth of its parameters). The pocket book
(``code-pocket``, ``poems-pocket``: the small model, ~17–20 MB) fits the cache: a visitor who switches between the
two sees that where the book lives decides the trip. The pocket book's apprentice is its own layer-skip draft.

The window samples by default (``temperature`` 0.8, ``top_p`` 0.95) so that a visitor never watches a greedy
loop; greedy is one switch away. A model may also have *lookup presets* (``LookupPreset``): prompts whose answer
repeats the prompt, where the n-gram apprentice (prompt lookup, ``model/ngram.py``) pays; each carries its own
sampling, and its speed-up as ``bench/lookup_bench.py`` measured it is read from ``assets/lookup.json``
(``lookup_measured``). This module only names files; it imports no torch and no Qt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import assets

MODELS_DIR = assets.MODELS

# Lines of a poem end at these marks (full-width punctuation as the corpus writes it) or at a line break.
POEM_LINE_END = re.compile(r"[，。！？；\n]")


@dataclass(frozen=True)
class LookupPreset:
    """A prompt whose answer repeats the prompt: the n-gram apprentice's own preset (prompt lookup copies from the
    prompt what the answer writes again). The Live page runs the n-gram apprentice for it, at its own sampling."""

    key: str  # names its measurement in assets/lookup.json
    prompt: str
    label: str  # what the prompt box shows for it (English; the window translates it)
    temperature: float  # its sampling: lower than free writing's, so the answer copies more (0 would be greedy)
    top_p: float = 0.95
    k: int = 4  # the apprentice's guesses per trip for it

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class BundledModel:
    """One bundled target model and its draft model. Folder names are relative to ``assets/models``."""

    key: str  # "code", "poems" (the big books), "code-pocket", "poems-pocket": what the picker calls it
    family: str  # "code" or "poems": the corpus, tokenizer, presets and tour questions it shares with its family
    folder: str  # the target's folder
    draft_folder: str  # its draft model's folder (same tokenizer)
    language: str  # the interface language it is the default for: "en" or "zh"
    name: str  # display name, English (the window translates it)
    about: str  # one line: what it is and what it learned (English; the window translates it)
    presets: tuple[str, ...]  # prompts it continues well, best first
    temperature: float = 0.8  # the window's default sampling
    top_p: float = 0.95
    lookup_presets: tuple[LookupPreset, ...] = ()  # prompts whose answer repeats the prompt (the n-gram apprentice's)

    def lookup_preset(self, prompt: str) -> LookupPreset | None:
        """The lookup preset whose prompt is ``prompt`` (exactly), or None."""
        return next((p for p in self.lookup_presets if p.prompt == prompt), None)

    def path(self, models_dir: Path | None = None) -> Path:
        return (models_dir or MODELS_DIR) / self.folder

    def draft_path(self, models_dir: Path | None = None) -> Path:
        return (models_dir or MODELS_DIR) / self.draft_folder


CODE_POCKET = BundledModel(
    key="code-pocket", family="code", folder="target", draft_folder="draft", language="en",
    name="One Trip pocket code model",
    about="A 4.3M-parameter GPT-2 trained here on Python's documentation and source: it writes Python-like "
          "code and documentation-like English, and knows nothing else.",
    presets=(
        "def fibonacci(n):",
        "import os\n\ndef read_lines(path):",
        "class Stack:\n    def __init__(self):",
        "for i in range(10):",
        "This module provides",
        "The function returns",
        "To open a file, use",
    ),
    # measured with bench/lookup_bench.py (docs/benchmarks.md, "Prompt lookup where it belongs"): at temperature
    # 0.6 the answer goes on with the doctest, copying its lines, without looping; at 0.8 it strays from them
    lookup_presets=(
        LookupPreset(
            key="doctest",
            prompt=">>> from decimal import Decimal\n>>> Decimal('1.1') + Decimal('2.2')\nDecimal('3.3')\n"
                   ">>> Decimal('1.1') * Decimal('2.2')\n",
            label="↻ more of a doctest: the answer repeats the prompt",
            temperature=0.6),
    ),
)

POEMS_POCKET = BundledModel(
    key="poems-pocket", family="poems", folder="poems", draft_folder="poems-draft", language="zh",
    name="One Trip pocket poetry model",
    about="A 5M-parameter GPT-2 trained here on 278,000 Tang and Song poems: given a first line, it writes on "
          "in the same line length, one character per trip; its lines rhyme by luck, not by meaning.",
    presets=(
        "床前明月光，",
        "春风又绿江南岸，",
        "白日依山尽，",
        "两个黄鹂鸣翠柳，",
        "海上生明月，",
        "月落乌啼霜满天，",
        "山中何所有，",
    ),
)

# The big books: the pocket books grown twice as wide and deep and trained on (model/training/starts.py
# grown_state, recipes target-big and poems-big); the pocket book is their apprentice. Same presets and sampling.
CODE = replace(
    CODE_POCKET, key="code", folder="target-big", draft_folder="target", name="One Trip code model",
    about="A 27M-parameter GPT-2 trained here on Python's documentation and source: it writes Python-like code and "
          "documentation-like English, and knows nothing else.")
POEMS = replace(
    POEMS_POCKET, key="poems", folder="poems-big", draft_folder="poems", name="One Trip poetry model",
    about="A 28M-parameter GPT-2 trained here on 278,000 Tang and Song poems: given a first line, it writes on in "
          "the same line length, one character per trip; its lines rhyme by luck, not by meaning.")

BUNDLED: tuple[BundledModel, ...] = (CODE, POEMS, CODE_POCKET, POEMS_POCKET)


def by_key(key: str) -> BundledModel:
    """The bundled model called ``key``. Raises KeyError naming the keys there are."""
    for m in BUNDLED:
        if m.key == key:
            return m
    raise KeyError(f"no bundled model {key!r}; there are: {', '.join(m.key for m in BUNDLED)}")


def for_language(language: str) -> BundledModel:
    """The default model for an interface language ("zh" → poems; anything else → code)."""
    return POEMS if language.startswith("zh") else CODE


def identify(model_dir: str | Path, models_dir: Path | None = None) -> BundledModel | None:
    """The bundled model whose target lives in ``model_dir``, or None (a user's own ``--model DIR``)."""
    try:
        resolved = Path(model_dir).resolve()
    except OSError:
        return None
    for m in BUNDLED:
        if m.path(models_dir).resolve() == resolved:
            return m
    return None


def card_acceptance(models_dir: Path | None = None) -> dict[str, float | None]:
    """Each bundled pair's greedy acceptance rate at 4 guesses, as its model card measured it on held-out text.

    Returns ``{"code": rate, "poems": rate}`` (0..1; accepted guesses / guesses), a rate None where the card's
    ``eval.json`` is missing or unreadable. Sources: ``assets/models/eval.json``
    (``python -m model.training.model_card``, held-out code) and ``assets/models/poems/eval.json``
    (``python -m model.training.poems_card``, held-out poems).
    """
    import json

    base = models_dir or MODELS_DIR
    out: dict[str, float | None] = {}
    for key, path, pick in (("code", base / "eval.json", lambda d: d["acceptance"]["code"]["rate"]),
                            ("poems", base / "poems" / "eval.json", lambda d: d["acceptance"]["rate"])):
        try:
            out[key] = float(pick(json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, KeyError, TypeError):
            out[key] = None
    return out


LOOKUP_MEASURED = "lookup.json"  # in assets/: bench/lookup_bench.py's figures for the lookup presets


def lookup_measured(key: str, path: Path | None = None) -> dict | None:
    """What ``bench/lookup_bench.py`` measured for the lookup preset ``key``: ``{"speedup" (plain ÷ n-gram medians),
    "round_speedups", "rounds", "acceptance" (guesses kept ÷ proposed, 0..1), "loops", "answers", "date", ...}``,
    or None where ``assets/lookup.json`` (or ``path``) is missing, unreadable or has no such preset."""
    import json

    try:
        data = json.loads((path or assets.path(LOOKUP_MEASURED)).read_text(encoding="utf-8"))
        entry = data["presets"][key]
        entry = {**entry, "date": data.get("date", ""), "load_average": data.get("load_average")}
        float(entry["speedup"])
        return entry
    except (OSError, ValueError, KeyError, TypeError):
        return None


def poem_lines(text: str) -> list[str]:
    """The complete lines of ``text``: pieces ended by ，。！？； or a line break (the unfinished tail is dropped)."""
    pieces = POEM_LINE_END.split(text)
    return [p.strip() for p in pieces[:-1] if p.strip()]


def form_score(prompt: str, continuations: list[str]) -> dict:
    """How well continuations of a poem's first line keep its form.

    prompt: a first line ending in a mark, e.g. "床前明月光，" (line length 5).
    continuations: the generated text after the prompt, one per sample.
    Returns {"line_length": n, "lines": total complete lines, "in_form": lines of length n, "score": fraction}.
    Raises ValueError when the prompt holds no complete line.
    """
    first = poem_lines(prompt)
    if not first:
        raise ValueError(f"the prompt {prompt!r} holds no complete line (end it with ， or 。)")
    n = len(first[-1])
    lines = [ln for c in continuations for ln in poem_lines(c)]
    in_form = sum(1 for ln in lines if len(ln) == n)
    return {"line_length": n, "lines": len(lines), "in_form": in_form,
            "score": in_form / len(lines) if lines else 0.0}
