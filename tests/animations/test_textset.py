"""Text set, not dumped: no break inside a number with its unit or a formula; no one-word last line."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsTextItem

from animations.textset import NBSP, WORD_JOINER, keep_together, rebalance


def test_units_and_formulas_stay_together():
    assert keep_together("about 2 TB/s") == f"about 2{NBSP}TB/{WORD_JOINER}s"
    assert keep_together("16 GB in 32 chapters") == f"16{NBSP}GB in 32 chapters"
    assert keep_together("softmax(QKᵀ/√d)·V") == f"softmax(QKᵀ/{WORD_JOINER}√d)·V"
    assert keep_together("either / or") == "either / or"  # a slash between spaces may break
    assert keep_together("1,000 tokens take 8 ms") == f"1,000{NBSP}tokens take 8{NBSP}ms"


def _layout(item: QGraphicsTextItem) -> tuple[int, int]:
    """(lines, words on the last line) as Qt lays the one-paragraph item out."""
    item.document().documentLayout().documentSize()
    layout = item.document().firstBlock().layout()
    line = layout.lineAt(layout.lineCount() - 1)
    return layout.lineCount(), len(item.toPlainText()[line.textStart():line.textStart() + line.textLength()].split())


def test_rebalance_leaves_no_word_alone(qapp):
    item = QGraphicsTextItem()
    f = QFont()
    f.setPixelSize(20)
    item.setFont(f)
    item.document().setDocumentMargin(0)
    text = "Block table (PagedAttention): each request's pages of the cheat sheet"
    item.setPlainText(text)
    # a width at which the last line is one word alone: the text's width less a little more than its last word
    full = item.document().idealWidth()
    widths = [full * (1 - k / 100) for k in range(1, 20)]
    fault = next(w for w in widths if (item.setTextWidth(w) or _layout(item)) == (2, 1))
    item.setTextWidth(fault)
    assert _layout(item) == (2, 1)  # the fault, before: "sheet" alone
    rebalance(item)
    lines, words = _layout(item)
    assert lines == 2 and words >= 2
