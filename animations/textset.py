"""Text that is set, not dumped: where a line may not break, and how a token is shown to a visitor.

Qt breaks lines by the Unicode line-breaking rules (UAX #14): it may break at a space and after a slash, so
"2 TB/s" can end a line with "2 TB/" and start the next with "s". The helpers here return the same text with
U+00A0 NO-BREAK SPACE for the spaces and U+2060 WORD JOINER beside the slashes and hyphens where a break must
not fall (both render as nothing more than the space they replace; the font's width is unchanged):

- ``keep_units("took 2 TB/s here")``: a number and its unit stay on one line;
- ``keep_together("bytes ÷ bandwidth = time")``: a formula or a token stays on one line, whole;
- ``set_breaks(caption)``: running text whose numbers keep their units and whose formulas never break at a
  slash ("2 TB/s", "QKᵀ/√d"); other spaces stay breakable.

``rebalance`` narrows a wrapped ``QGraphicsTextItem`` until its last line holds more than one word.

Token displays use ``token_text``: special tokens are shown as what they mean ("end of text" / "文末"), bytes
that are not yet a character as bytes (``‹e6 97›``), never as □ or U+FFFD. No torch here.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QGraphicsTextItem

NBSP = "\u00a0"  # no-break space: a space where no line may break
WJ = "\u2060"  # word joiner: no break here, no width
WORD_JOINER = WJ
BYTES_OPEN, BYTES_CLOSE = "‹", "›"  # around bytes that are not a character yet: ‹e6 97›

# Units a figure is followed by in this app (longest first, so "GB/s" wins over "GB"); "x" and "×" as in "1.6×".
UNITS = ("tokens/s", "tok/s", "GB/s", "TB/s", "MB/s", "GiB", "MiB", "KiB", "GB", "TB", "MB", "kB", "KB", "ms",
         "µs", "us", "ns", "s", "B", "%", "px", "tokens", "token", "trips", "trip", "layers", "bytes", "W", "×",
         "x", "字块", "字", "个", "次", "层", "毫秒", "秒", "趟", "倍")
_NUMBER = r"[-−+]?\d[\d,.]*(?:\s?[kKMG])?"
_UNIT_RE = re.compile(rf"({_NUMBER})[ \u00a0]?({'|'.join(re.escape(u) for u in UNITS)})(?![A-Za-z])")
_SPECIAL = re.compile(r"<\|[^|<>]{1,40}\|>")  # GPT-2's <|endoftext|> and kin
_HEX_BYTES = re.compile(r"<((?:[0-9A-Fa-f]{2} )*[0-9A-Fa-f]{2})>")  # model.tokenizer.label_bytes' "<E6 97>"


def _join_unit(unit: str) -> str:
    return unit.replace("/", f"{WJ}/{WJ}")


def keep_units(text: str) -> str:
    """``text`` with every number and its unit joined (U+00A0 between them, U+2060 around a slash in the
    unit): "2 TB/s" -> "2\\u00a0TB\\u2060/\\u2060s". Other spaces stay breakable. A number glued to its unit
    ("12ms") keeps no space."""
    def join(m: re.Match) -> str:
        number, unit = m.group(1), m.group(2)
        gap = m.group(0)[len(number):len(m.group(0)) - len(unit)]
        return number.replace(" ", NBSP) + (NBSP if gap else "") + _join_unit(unit)
    return _UNIT_RE.sub(join, text)


def keep_together(text: str) -> str:
    """``text`` as one unbreakable run (a formula, a token, a short figure with its label): every space is a
    U+00A0, and a U+2060 sits beside each slash and hyphen. Use it for text that fits its line."""
    out = text.replace(" ", NBSP)
    for mark in ("/", "-", "‐", "−"):
        out = out.replace(mark, f"{WJ}{mark}{WJ}")
    return out


def plain(text: str) -> str:
    """``text`` without the joiners these helpers add (U+2060 removed, U+00A0 back to a space): for
    comparisons and logs."""
    return text.replace(WJ, "").replace(NBSP, " ")


def end_of_text() -> str:
    """What a special end-of-text token means, in the current language ("end of text" / "文末")."""
    return QCoreApplication.translate("TextSet", "end of text") or "end of text"


def bytes_text(raw: bytes) -> str:
    """Bytes that are not (yet) a character, as lower-case hex in single guillemets: b"\\xe6\\x97" -> "‹e6 97›"."""
    return BYTES_OPEN + " ".join(f"{b:02x}" for b in raw) + BYTES_CLOSE


def token_text(label: str) -> str:
    """A token's label (``model.tokenizer`` ``label``/``label_bytes``: "␣the", "<E6 97>", "<|endoftext|>") as
    a visitor sees it: special tokens by what they mean (``end_of_text``), hex bytes as ``bytes_text``, a
    U+FFFD that stands for lost bytes as "‹?›"; whitespace marks (␣ ↵) stay. The result never breaks."""
    out = _SPECIAL.sub(lambda m: "⟨" + end_of_text() + "⟩", label)
    out = _HEX_BYTES.sub(lambda m: BYTES_OPEN + m.group(1).lower() + BYTES_CLOSE, out)
    out = out.replace("\ufffd", BYTES_OPEN + "?" + BYTES_CLOSE)
    return keep_together(out)


_RUN_UNITS = r"(?:[kKMGTP]i?B(?:/s)?|bytes?|ms|µs|ns|s|%|tokens?|tokens/s|×|GB/s|TB/s|FLOPs?|px|W)"
_NUMBER_UNIT = re.compile(r"(\d[\d,.]*)[ \u00a0]+(?=" + _RUN_UNITS + r"(?![\w]))")
_SLASH = re.compile(r"(?<=[\w)ᵀ²³])/(?=[\w(√])")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


_SPACED_OPERATOR = re.compile(r" ([=×÷≈≤≥+−]) ")
_SHORT_HYPHEN = re.compile(r"\b([A-Za-z0-9]+)-([A-Za-z0-9]{1,2})\b")


def set_breaks(text: str) -> str:
    """``text`` with a no-break space between a number and its unit ("2 TB/s", "16 GB", "8 ms", "4 倍"), a word
    joiner after every slash between word characters ("TB/s", "QKᵀ/√d"), no-break spaces around an operator
    between spaces ("chapters = pipeline parallel": no line ends or starts with "=") and word joiners around the
    hyphen of a short term ("top-p", "top-k"), so that a line never breaks inside them."""
    text = _NUMBER_UNIT.sub(lambda m: m.group(1) + NBSP, text)
    text = keep_units(text)  # the units _NUMBER_UNIT does not list: Chinese counters ("4 倍", "32 层")
    text = _SPACED_OPERATOR.sub(lambda m: NBSP + m.group(1) + NBSP, text)
    text = _SHORT_HYPHEN.sub(lambda m: m.group(1) + WJ + "-" + WJ + m.group(2), text)
    return _SLASH.sub("/" + WORD_JOINER, text)


def _last_line(item: QGraphicsTextItem) -> tuple[int, str]:
    """(lines of the item's text as laid out now, the text of its last line)."""
    doc = item.document()
    doc.documentLayout().documentSize()  # lays the text out at the current width
    lines, block, last = 0, doc.firstBlock(), ""
    while block.isValid():
        layout = block.layout()
        lines += layout.lineCount()
        if layout.lineCount():
            line = layout.lineAt(layout.lineCount() - 1)
            last = block.text()[line.textStart():line.textStart() + line.textLength()]
        block = block.next()
    return lines, last


def rebalance(item: QGraphicsTextItem, min_fraction: float = 0.7) -> None:
    """Narrow a wrapped item's text width (down to ``min_fraction`` of it, in 4 % steps) until its last line holds
    more than one word, keeping its number of lines; left as it was when no width does. Chinese text (no spaces
    between words) is left alone."""
    text = item.toPlainText()
    if _CJK.search(text) or " " not in text.strip():
        return
    width = item.textWidth()
    lines, last = _last_line(item)
    if lines < 2 or len(last.split()) > 1:
        return
    step = 0.96
    w = width * step
    while w >= width * min_fraction:
        item.setTextWidth(w)
        n, last = _last_line(item)
        if n != lines:
            break
        if len(last.split()) > 1:
            return
        w *= step
    item.setTextWidth(width)
