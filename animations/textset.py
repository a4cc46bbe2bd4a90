"""Text set for reading, not dumped: no line break inside a number with its unit or inside a formula, and no
paragraph ending with one word alone on its last line when a narrower measure rebalances it.

Plain strings in, plain strings out (``keep_together``), and a rebalancing pass on a wrapped
``QGraphicsTextItem`` (``rebalance``). No torch.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QGraphicsTextItem

NBSP = "\u00a0"  # no-break space: "2 TB/s" never breaks between the number and its unit
WORD_JOINER = "\u2060"  # no break here, no width: after a slash inside a unit or formula ("TB/" | "s")
_UNITS = r"(?:[kKMGTP]i?B(?:/s)?|bytes?|ms|µs|ns|s|%|tokens?|tokens/s|×|GB/s|TB/s|FLOPs?|px|W)"
_NUMBER_UNIT = re.compile(r"(\d[\d,.]*)[ \u00a0]+(?=" + _UNITS + r"(?![\w]))")
_SLASH = re.compile(r"(?<=[\w)ᵀ²³])/(?=[\w(√])")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def keep_together(text: str) -> str:
    """``text`` with a no-break space between a number and its unit ("2 TB/s", "16 GB", "8 ms") and a word joiner
    after every slash between word characters ("TB/s", "QKᵀ/√d"), so that a line never breaks inside them."""
    text = _NUMBER_UNIT.sub(lambda m: m.group(1) + NBSP, text)
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
