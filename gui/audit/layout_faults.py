"""The faults eyes catch on a screen, found in a layout from ``gui.audit.layout_audit.collect_layout`` (issue 24,
item 6).

``faults(layout)`` returns one ``Fault`` per problem; ``fault_lines(layout)`` the same as readable lines. Each
fault has a ``kind`` (the class of ``KINDS``), the offending ``text`` and a ``detail``:

- ``floor``: text under ``height / 48`` px (``animations.typescale.MIN_FRACTION``);
- ``hierarchy``: the type scale's order broken: a title not larger than a heading, a heading not larger than
  body text, a label larger than body text, or a title under 1.6 × the body (``typescale.TIERS``);
- ``cut``: text that does not fit where it is shown (``clipped``), or elided: ending in "…" where no complete
  interface string does (``elided_text``);
- ``border``: text lying across the edge of a panel, card or pill (``layout["boxes"]``), half in, half out;
- ``break``: a line break inside a number and its unit ("2 TB" | "/s"), a formula (a line ending with "/", "="
  or an operator) or a word or token ("␣W" | "hi");
- ``raw``: a raw special token (``<|endoftext|>``), U+FFFD or □ standing for lost bytes;
- ``language``: on a Chinese screen, English words other than the product name and ``ACCEPTED_TERMS``; on an
  English screen, Chinese characters other than the product name (content roles, the model's words and the
  visitor's question, are not checked);
- ``stage``: on the Live page, the stage drawn narrower than 90 % of the window (``layout["stage"]``);
- ``band``: on a tour page, an empty band of rows taller than 10 % of the height (``layout["empty_bands"]``).

The collector helpers here (``doc_lines``, ``scene_boxes``, ``stage_rect``, ``empty_bands``) add the facts
the checks need to the layout; ``gui.audit.layout_audit`` calls them.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from functools import lru_cache

from animations.textset import UNITS
from animations.typescale import MIN_FRACTION, TIERS, TITLE_OVER_BODY, tier_of

KINDS = ("floor", "hierarchy", "cut", "border", "break", "raw", "language", "stage", "band")
FONT_TOLERANCE_PX = 0.25  # font sizes are floats; a hair under a limit is rounding
STAGE_MIN_FRACTION = 0.90  # the Live stage is drawn at least this wide, as a fraction of the window
BAND_MAX_FRACTION = 0.10  # no empty band of rows taller than this fraction of the height on a tour page
PRODUCT_NAMES = ("One Trip", "一趟一个字")
LANGUAGE_NAMES = ("English", "中文")  # the language switch names the other language in that language
# Latin words a Chinese page may show: units, field acronyms, names of things that have no Chinese name here.
ACCEPTED_TERMS = frozenset({
    "KV", "GPU", "CPU", "TP", "PP", "GPT", "BPE", "HBM", "DRAM", "SRAM", "SSE", "APC", "MLA", "TTFT", "TPOT", "UTF",
    "ID", "id", "ids", "JSON", "API", "LLM", "AI", "FLOP", "FLOPs", "GEMV", "GEMM", "Python", "PyTorch", "Qt",
    "top", "k", "p", "x", "e", "tok", "Ch", "vs", "B", "kB", "KB", "MB", "GB", "TB", "GiB", "MiB", "ms", "s", "µs",
    "ns", "px", "W", "GHz", "MHz", "fp", "bf", "int", "float", "dtype", "softmax", "token", "tokens",
    # field terms the Chinese text glosses in parentheses (house rules: prefill, decode, KV cache, batch ...)
    "prefill", "decode", "stream", "compute", "memory", "bound", "batch", "small", "instruct", "bit",
    # names of models, products and hardware (names with an inner capital, e.g. DeepSeek, vLLM, pass by themselves)
    "Llama", "llama", "Claude", "Cursor", "Transformer", "Blackwell", "Hopper", "Mixtral", "Qwen", "Gemma",
})
CONTENT_ROLES = frozenset({"answer", "big-answer", "seat-text", "model-name", "prompt", "chip", "token", "token id",
                           "code", "json", "qlineedit",
                           "qtextedit", "qplaintextedit", "source"})
# The cart carries its label from the warehouse door to the desk: it crosses the desk's edge on every trip.
MOVING_ROLES = frozenset({"cart"})
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_RAW = re.compile(r"<\|[^|<>]{1,40}\|>|\ufffd|\u25a1")
_OPERATORS = ("/", "=", "×", "÷", "+", "−", "^", "(", "≈", "≤", "≥", "<", ">")  # "·" separates: a break may follow
_UNIT_START = re.compile(rf"^({'|'.join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))})(?![A-Za-z])")
_WORD_CHAR = re.compile(r"[A-Za-z0-9_␣↵]")


@dataclass(frozen=True)
class Fault:
    """One fault of a screen: ``kind`` (one of ``KINDS``), the offending ``text`` and what is wrong."""

    kind: str
    text: str
    detail: str

    def line(self) -> str:
        text = self.text.replace("\n", "⏎")
        return f"{self.kind}: {text[:60]!r} {self.detail}".rstrip()


def _where(it: dict) -> str:
    return f"({it['role']}, {it['font_px']:.1f} px, at {[round(v) for v in it['rect']]})"


# ---- the checks, one per kind ---------------------------------------------------------------------------------
def floor_faults(layout: dict) -> list[Fault]:
    """Text under ``height / 48`` px."""
    floor = float(layout["size"][1]) * MIN_FRACTION
    return [Fault("floor", it["text"], f"under the floor {floor:.1f} px {_where(it)}")
            for it in layout["items"] if it["font_px"] < floor - FONT_TOLERANCE_PX]


def hierarchy_faults(layout: dict) -> list[Fault]:
    """title > heading > body >= label, and the smallest title at least 1.6 × the median body text."""
    by_tier: dict[str, list[dict]] = {t: [] for t in TIERS}
    for it in layout["items"]:
        tier = tier_of(it["role"])
        if tier is not None:
            by_tier[tier].append(it)
    out: list[Fault] = []
    for upper, lower in zip(TIERS, TIERS[1:]):
        ups, lows = by_tier[upper], by_tier[lower]
        if not ups or not lows:
            continue
        small_up = min(ups, key=lambda it: it["font_px"])
        big_low = max(lows, key=lambda it: it["font_px"])
        inverted = (big_low["font_px"] > small_up["font_px"] + FONT_TOLERANCE_PX if lower == "label"
                    else big_low["font_px"] >= small_up["font_px"] - FONT_TOLERANCE_PX)
        if inverted:
            out.append(Fault("hierarchy", big_low["text"],
                             f"{lower} {_where(big_low)} not smaller than {upper} {small_up['text'][:30]!r} "
                             f"{_where(small_up)}"))
    if by_tier["title"] and by_tier["body"]:
        body = statistics.median(it["font_px"] for it in by_tier["body"])
        title = min(by_tier["title"], key=lambda it: it["font_px"])
        if title["font_px"] < TITLE_OVER_BODY * body - FONT_TOLERANCE_PX:
            out.append(Fault("hierarchy", title["text"], f"title {_where(title)} under {TITLE_OVER_BODY} × "
                                                         f"the body text ({body:.1f} px)"))
    return out


@lru_cache(maxsize=1)
def _complete_strings() -> tuple[re.Pattern, ...]:
    """Patterns of the interface strings (source and Chinese) that end in "…" by themselves."""
    import xml.etree.ElementTree as ET

    from gui.i18n import I18N_DIR
    out = []
    for m in ET.parse(I18N_DIR / "one_trip_zh_CN.ts").getroot().iter("message"):
        for s in (m.findtext("source") or "", m.findtext("translation") or ""):
            s = s.strip()
            if s.endswith(("…", "...")):
                parts = re.split(r"\{[^{}]*\}|%\d", s)
                out.append(re.compile(".*".join(re.escape(p) for p in parts) + r"$", re.S))
    return tuple(out)


def elided_text(text: str) -> bool:
    """True when ``text`` ends in "…" (or "...") and no complete interface string ends so: it was cut short."""
    s = text.strip()
    if not s.endswith(("…", "...")):
        return False
    return not any(p.search(s) for p in _complete_strings())


def cut_faults(layout: dict) -> list[Fault]:
    """Clipped text, and text elided with "…"."""
    out = []
    for it in layout["items"]:
        if it["clipped"]:
            out.append(Fault("cut", it["text"], f"does not fit where it is shown {_where(it)}"))
        elif elided_text(it["text"]):
            out.append(Fault("cut", it["text"], f"elided {_where(it)}"))
    return out


def _across(text_rect: list[float], box: list[float]) -> bool:
    """True when the text's core (its rect less a fifth of its height on every side: the line's leading and
    the glyphs' side bearings) is partly inside ``box`` and partly outside."""
    x, y, w, h = text_rect
    d = max(2.0, h * 0.2)
    tx0, ty0, tx1, ty1 = x + d, y + d, x + w - d, y + h - d
    bx0, by0, bx1, by1 = box[0], box[1], box[0] + box[2], box[1] + box[3]
    if tx1 <= tx0 or ty1 <= ty0:
        return False
    overlaps = tx0 < bx1 and tx1 > bx0 and ty0 < by1 and ty1 > by0
    inside = tx0 >= bx0 and tx1 <= bx1 and ty0 >= by0 and ty1 <= by1
    return overlaps and not inside


def border_faults(layout: dict) -> list[Fault]:
    """Text lying across the edge of a box (``layout["boxes"]``, window rects of panels, cards and pills); text
    that rides on something moving (``MOVING_ROLES``: the cart's label) crosses edges by design and is not checked."""
    out = []
    for it in layout["items"]:
        if it["role"] in MOVING_ROLES:
            continue
        for box in layout.get("boxes", []):
            if _across(it["rect"], box):
                out.append(Fault("border", it["text"], f"lies across the edge of the box at "
                                                       f"{[round(v) for v in box]} {_where(it)}"))
                break
    return out


def bad_break(before: str, after: str) -> str | None:
    """Why a line may not end with ``before`` and the next begin with ``after``, or None when it may.

    ``before`` keeps what ended it: trailing spaces where wrapping broke at a space, "\\n" where the text
    itself has a line break (a break the text asks for is never "inside a word")."""
    a, b = before.rstrip(), after.lstrip()
    if not a or not b:
        return None
    if re.search(r"\d[\d,.]*$", a) and _UNIT_START.match(b):
        return "a number broken from its unit"
    if a.endswith(_OPERATORS) or b.startswith(("/", ")", "=", "×", "÷", "^")):
        return "a formula or unit broken at an operator"
    spaced = before != before.rstrip() or after != after.lstrip()
    if not spaced and _WORD_CHAR.match(a[-1]) and _WORD_CHAR.match(b[0]):
        return "a word or token broken in the middle"
    if not spaced and a.endswith("-") and re.match(r"[A-Za-z0-9]{1,2}\b", b):
        return "a short term broken at its hyphen"
    return None


def break_faults(layout: dict) -> list[Fault]:
    """Line breaks inside a number with its unit, a formula or a token (items with ``lines``)."""
    out = []
    for it in layout["items"]:
        if it["role"] == "chip":  # a token chip: the token on one line, its id on the next, by design
            continue
        if it["role"] == "code":  # a source line wraps where the code view's width ends, under a hanging indent
            continue
        lines = it.get("lines") or []
        for a, b in zip(lines, lines[1:]):
            why = bad_break(a, b)
            if why:
                out.append(Fault("break", it["text"], f"{why}: {a[-12:]!r} | {b[:12]!r} {_where(it)}"))
    return out


def raw_faults(layout: dict) -> list[Fault]:
    """Raw special tokens, U+FFFD and □ on screen."""
    out = []
    for it in layout["items"]:
        if it["role"] == "code":  # the engine's own source, verbatim: its "<|endoftext|>" is a string literal
            continue
        found = sorted(set(_RAW.findall(it["text"])))
        if found:
            shown = ", ".join("U+FFFD" if f == "\ufffd" else "□ (U+25A1)" if f == "\u25a1" else f for f in found)
            out.append(Fault("raw", it["text"], f"shows {shown} {_where(it)}"))
    return out


def _strip_names(text: str) -> str:
    for name in (*PRODUCT_NAMES, *LANGUAGE_NAMES):
        text = text.replace(name, " ")
    return text


def language_faults(layout: dict, content_roles: frozenset[str] = CONTENT_ROLES) -> list[Fault]:
    """English words on a Chinese screen (``ACCEPTED_TERMS``, all-capital acronyms of up to 5 letters, names with
    an inner capital, identifiers with "_" and the product name excepted), Chinese characters on an English screen
    (the product name excepted)."""
    out = []
    lang = layout.get("lang")
    for it in layout["items"]:
        if it["role"] in content_roles:
            continue
        text = _RAW.sub(" ", _strip_names(it["text"]))  # a raw token is the "raw" check's
        if lang == "zh":
            # a word joined by "_" is an identifier (d_model, top_k), a name in code, not English prose
            words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9'_]*", text)
                     if "_" not in w and w not in ACCEPTED_TERMS and not (w.isupper() and len(w) <= 5) and len(w) > 1
                     and not any(c.isupper() for c in w[1:])]  # DeepSeek, vLLM, NVLink: names
            if words:
                out.append(Fault("language", it["text"], f"English {sorted(set(words))} on a zh screen {_where(it)}"))
        elif lang == "en":
            chars = _CJK.findall(text)
            if chars:
                out.append(Fault("language", it["text"],
                                 f"Chinese {''.join(dict.fromkeys(chars))[:12]!r} on an en screen {_where(it)}"))
    return out


def stage_faults(layout: dict) -> list[Fault]:
    """The Live stage (``layout["stage"]``, its drawn rect) narrower than 90 % of the window."""
    stage = layout.get("stage")
    width = float(layout["size"][0])
    if stage is None or stage[2] >= STAGE_MIN_FRACTION * width - 0.5:
        return []
    return [Fault("stage", "", f"the stage is drawn {stage[2]:.0f} px wide, {stage[2] / width:.0%} of the "
                               f"window's {width:.0f} px (at least {STAGE_MIN_FRACTION:.0%})")]


def band_faults(layout: dict) -> list[Fault]:
    """Empty bands (``layout["empty_bands"]``: [top, height] in window px) over 10 % of the height."""
    height = float(layout["size"][1])
    return [Fault("band", "", f"an empty band {h:.0f} px tall ({h / height:.0%} of the height) at y = {y:.0f}")
            for y, h in layout.get("empty_bands", []) if h > BAND_MAX_FRACTION * height]


CHECKS = {"floor": floor_faults, "hierarchy": hierarchy_faults, "cut": cut_faults, "border": border_faults,
          "break": break_faults, "raw": raw_faults, "language": language_faults, "stage": stage_faults,
          "band": band_faults}


def faults(layout: dict, kinds: tuple[str, ...] = KINDS) -> list[Fault]:
    """Every fault of ``kinds`` in ``layout`` (``collect_layout``'s dict or its JSON)."""
    return [f for kind in kinds for f in CHECKS[kind](layout)]


def fault_lines(layout: dict, kinds: tuple[str, ...] = KINDS) -> list[str]:
    """``faults`` as readable lines, one a fault."""
    return [f.line() for f in faults(layout, kinds)]


# ---- the interface words (the Live page tests' older check of untranslated strings) ----------------------
# Technical terms that stay in Latin letters in the Chinese interface (units, field terms, names).
LATIN_TERMS = frozenset({"KV", "GPU", "CPU", "TP", "PP", "MB", "KB", "GB", "kB", "ms", "GPT", "BPE", "HBM", "DRAM",
                         "SSE", "APC", "MLA", "English", "One", "Trip", "tok", "id", "ids", "Ch"})


def english_ui_words(min_len: int = 4) -> set[str]:
    """Words of the English UI: every word (letters only, ``min_len`` or longer, lower case) of the source
    texts of ``assets/i18n/one_trip_zh_CN.ts`` that have a translation, less ``LATIN_TERMS``."""
    import re
    import xml.etree.ElementTree as ET

    from gui.i18n import I18N_DIR
    root = ET.parse(I18N_DIR / "one_trip_zh_CN.ts").getroot()
    words: set[str] = set()
    for m in root.iter("message"):
        src = re.sub(r"\{\w*\}", " ", m.findtext("source") or "")
        for w in re.findall(r"[A-Za-z]+", src):
            if len(w) >= min_len and w not in LATIN_TERMS:
                words.add(w.lower())
    return words


def untranslated_items(layout: dict, words: set[str], skip_roles: set[str] = frozenset(),
                       allow: set[str] = frozenset()) -> list[str]:
    """Items of a Chinese layout whose text holds an English UI word (``english_ui_words``), one line each.

    ``skip_roles``: roles whose text is content, not interface (the prompt, the model's answer, token chips).
    ``allow``: words that are names, not interface (e.g. the folder name of a model given with --model).
    """
    import re
    words = {w for w in words if w not in {a.lower() for a in allow}}
    out = []
    for it in layout["items"]:
        if it["role"] in skip_roles:
            continue
        hits = sorted({w for w in re.findall(r"[A-Za-z]+", it["text"]) if w.lower() in words})
        if hits:
            out.append(f"English {hits} in {it['role']} {it['text'][:60]!r}")
    return out
