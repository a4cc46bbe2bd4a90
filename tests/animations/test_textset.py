"""Text set, not dumped: no break inside a number with its unit or a formula, tokens shown as what they mean, no
one-word last line."""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsTextItem

from animations.textset import (
    NBSP,
    WJ,
    WORD_JOINER,
    bytes_text,
    keep_together,
    keep_units,
    plain,
    rebalance,
    set_breaks,
    token_text,
)


def test_running_text_keeps_units_and_formulas_together():
    assert set_breaks("about 2 TB/s") == f"about 2{NBSP}TB{WJ}/{WJ}s"
    assert set_breaks("16 GB in 32 chapters") == f"16{NBSP}GB in 32 chapters"
    assert set_breaks("softmax(QKᵀ/√d)·V") == f"softmax(QKᵀ/{WORD_JOINER}√d)·V"
    assert set_breaks("either / or") == "either / or"  # a slash between spaces may break
    assert set_breaks("1,000 tokens take 8 ms") == f"1,000{NBSP}tokens take 8{NBSP}ms"
    assert set_breaks("chapters = pipeline parallel") == f"chapters{NBSP}={NBSP}pipeline parallel"
    assert set_breaks("top-p keeps") == f"top{WJ}-{WJ}p keeps" and set_breaks("well-known") == "well-known"
    assert set_breaks("小 4 倍") == f"小 4{NBSP}倍"


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


def test_a_number_keeps_its_unit():
    assert keep_units("moves 2 TB/s, in 12 ms") == f"moves 2{NBSP}TB{WJ}/{WJ}s, in 12{NBSP}ms"
    assert keep_units("1.6× faster") == "1.6× faster"  # glued stays glued
    assert keep_units("3 trips and 4 words") == f"3{NBSP}trips and 4 words"  # "words" is no unit
    assert keep_units("读了 1,200 字块") == f"读了 1,200{NBSP}字块"
    assert plain(keep_units("2 TB/s")) == "2 TB/s"


def test_a_formula_is_one_run():
    joined = keep_together("time = bytes / bandwidth")
    assert " " not in joined and joined.count(WJ) == 2 and plain(joined) == "time = bytes / bandwidth"


def test_tokens_are_shown_as_what_they_mean(qapp):
    from gui import i18n
    assert token_text("<|endoftext|>") == f"⟨end{NBSP}of{NBSP}text⟩"  # a token never breaks
    assert token_text("<E6 97>") == f"‹e6{NBSP}97›"
    assert token_text("\ufffd") == "‹?›"
    assert token_text("␣the") == "␣the"
    assert bytes_text("日".encode()[:2]) == "‹e6 97›"
    try:
        i18n.set_language("zh")
        assert token_text("<|endoftext|>") == "⟨文末⟩"
    finally:
        i18n.set_language("en")
