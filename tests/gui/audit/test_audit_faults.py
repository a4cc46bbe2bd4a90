"""Each fault class of the layout audit (gui.audit.layout_faults) is found on a small synthetic window that has it, and
not on the same window without it: removing a check fails its test."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from animations.typescale import TypeScale, set_role
from gui.audit.layout_audit import collect_layout
from gui.audit.layout_faults import bad_break, elided_text, faults

SIZE = (1280, 720)


def _font(px: float) -> QFont:
    f = QFont()
    f.setPixelSize(round(px))
    return f


def _window(qtbot, labels: list[tuple[str, str, float]], size=SIZE, width: int | None = None) -> QWidget:
    """A window of QLabels (text, role, font px) stacked top to bottom, shown at ``size``."""
    w = QWidget()
    qtbot.addWidget(w)
    lay = QVBoxLayout(w)
    for text, role, px in labels:
        lab = QLabel(text)
        lab.setFont(_font(px))
        set_role(lab, role)
        if width is not None:
            lab.setFixedWidth(width)
        lay.addWidget(lab)
    lay.addStretch(1)
    w.resize(*size)
    w.show()
    QApplication.processEvents()
    return w


def _kinds(window, kind: str, lang: str = "en", bands: bool = False) -> list:
    return [f for f in faults(collect_layout(window, lang, bands=bands)) if f.kind == kind]


def test_text_under_the_floor(qtbot):
    floor = TypeScale(720).minimum
    assert floor == pytest.approx(15.0)  # height / 48
    bad = _kinds(_window(qtbot, [("tiny", "caption", 12)]), "floor")
    assert [f.text for f in bad] == ["tiny"]
    assert not _kinds(_window(qtbot, [("fine", "caption", 15)]), "floor")


def test_inverted_hierarchy(qtbot):
    scale = TypeScale(720)
    good = [("Title", "title", scale.px("title")), ("Heading", "heading", scale.px("heading")),
            ("Body", "caption", scale.px("body")), ("Label", "button", scale.px("label"))]
    assert not _kinds(_window(qtbot, good), "hierarchy")
    # buttons bigger than the caption (the Live page's 31 px diagram labels beside 21 px buttons, inverted)
    bad = _kinds(_window(qtbot, [("Body", "caption", 20), ("Run", "button", 26)]), "hierarchy")
    assert [f.text for f in bad] == ["Run"]
    # a title that is not 1.6 × the body
    flat = _kinds(_window(qtbot, [("Title", "title", 26), ("Body", "caption", 20)]), "hierarchy")
    assert [f.text for f in flat] == ["Title"]


def test_cut_text_clipped_or_elided(qtbot):
    w = _window(qtbot, [("a caption much wider than the label that shows it", "caption", 18)], width=120)
    assert [f.text for f in _kinds(w, "cut")] == ["a caption much wider than the label that shows it"]
    elided = _window(qtbot, [("副本 · 19.5 …", "label", 18)])
    assert [f.detail.split()[0] for f in _kinds(elided, "cut", "zh")] == ["elided"]
    assert elided_text("副本 · 19.5 …") and not elided_text("Loading the model…")
    assert not _kinds(_window(qtbot, [("Loading the model…", "status", 18)]), "cut")


def _scene_window(qtbot, items, size=SIZE, name: str = "") -> QWidget:
    w = QWidget()
    qtbot.addWidget(w)
    lay = QVBoxLayout(w)
    lay.setContentsMargins(0, 0, 0, 0)
    scene = QGraphicsScene(0, 0, 1600, 900)
    for item in items:
        scene.addItem(item)
    view = QGraphicsView(scene)
    view.setObjectName(name)
    lay.addWidget(view)
    w.resize(*size)
    w.show()
    QApplication.processEvents()
    view.fitInView(scene.sceneRect(), Qt.KeepAspectRatio)
    QApplication.processEvents()
    w._keep = (scene, view)
    return w


def _text(s: str, x: float, y: float, px: float = 40) -> QGraphicsSimpleTextItem:
    t = QGraphicsSimpleTextItem(s)
    t.setFont(_font(px))
    t.setPos(x, y)
    set_role(t, "caption")
    return t


def test_text_on_a_border(qtbot):
    panel = QGraphicsRectItem(QRectF(100, 100, 600, 300))
    on_edge = _text("on the edge", 600, 200)  # starts inside, ends outside the panel
    inside = _text("inside", 150, 200)
    w = _scene_window(qtbot, [panel, on_edge, inside])
    bad = _kinds(w, "border")
    assert [f.text for f in bad] == ["on the edge"]


def _widths_that_break(text: str, px: int) -> list[tuple[int, list[str]]]:
    from PySide6.QtGui import QTextDocument

    from gui.audit.layout_facts import doc_lines
    out = []
    for width in range(80, 400, 4):  # wider than the longest word and '2 TB/s': no break inside a word
        doc = QTextDocument()
        doc.setDefaultFont(_font(px))
        doc.setDocumentMargin(0)
        doc.setPlainText(text)
        doc.setTextWidth(width)
        out.append((width, doc_lines(doc)))
    return out


def test_break_inside_a_unit_is_found_and_the_join_prevents_it(qtbot):
    from animations.textset import keep_units
    text = "the bus moves 2 TB/s here"
    broken = [(wd, ls) for wd, ls in _widths_that_break(text, 20)
              if any(bad_break(a, b) for a, b in zip(ls, ls[1:]))]
    assert broken, "some width must break the plain text inside '2 TB/s'"
    width = broken[0][0]
    bad = _kinds(_wrapped(qtbot, text, width), "break")
    assert bad and "2 TB/s" in bad[0].text
    for wd, ls in _widths_that_break(keep_units(text), 20):
        assert not any(bad_break(a, b) for a, b in zip(ls, ls[1:])), (wd, ls)
    assert not _kinds(_wrapped(qtbot, keep_units(text), width), "break")


def _wrapped(qtbot, text: str, width: int) -> QWidget:
    w = QWidget()
    qtbot.addWidget(w)
    lab = QLabel(text, w)
    lab.setFont(_font(20))
    lab.setWordWrap(True)
    lab.setMargin(0)
    lab.setIndent(0)
    set_role(lab, "caption")
    lab.setGeometry(10, 10, width + lab.contentsMargins().left() + lab.contentsMargins().right(), 200)
    w.resize(*SIZE)
    w.show()
    QApplication.processEvents()
    return w


def test_break_rules():
    assert bad_break("took 12", "ms")
    assert bad_break("2 TB/", "s)")
    assert bad_break("time = bytes ÷", "bandwidth")
    assert bad_break("␣W", "hi")
    assert bad_break("top-", "k")
    assert bad_break("the cart ", "moves") is None
    assert bad_break("a copy\n", "travels") is None  # a break the text asks for
    assert bad_break("17.4 MB · ", "1 thread") is None  # a separator may end a line
    assert bad_break("一趟", "一个字") is None


def test_raw_special_tokens_and_replacement_characters(qtbot):
    from animations.textset import token_text
    for raw in ("<|endoftext|>", "\ufffd", "□"):
        bad = _kinds(_window(qtbot, [(f"next {raw}", "token-list", 18)]), "raw")
        assert [f.text for f in bad] == [f"next {raw}"]
    shown = [token_text(s) for s in ("<|endoftext|>", "<E6 97>", "\ufffd")]
    assert not _kinds(_window(qtbot, [(" ".join(shown), "token-list", 18)]), "raw")


def test_wrong_language(qtbot):
    zh = _window(qtbot, [("座位 seats taken", "caption", 18), ("KV 缓存 · GPU · 12 ms · One Trip", "caption", 18),
                         ("块数 × d_model 的表", "caption", 18), ("块数 × model 的表", "caption", 18)])
    # an identifier (d_model) is a name in code; the same word alone is English prose
    assert [f.text for f in _kinds(zh, "language", "zh")] == ["座位 seats taken", "块数 × model 的表"]
    en = _window(qtbot, [("seats 座位", "caption", 18), ("One Trip · 一趟一个字", "caption", 18)])
    assert [f.text for f in _kinds(en, "language", "en")] == ["seats 座位"]
    # the model's words and the visitor's question are content, not interface
    assert not _kinds(_window(qtbot, [("床前明月光", "answer", 18)]), "language", "en")


def test_a_narrow_stage(qtbot):
    wide = _scene_window(qtbot, [_text("stage", 100, 100)], name="stageView")
    assert not _kinds(wide, "stage")
    narrow = _scene_window(qtbot, [_text("stage", 100, 100)], size=(1280, 400), name="stageView")
    bad = _kinds(narrow, "stage")
    assert bad and "of the window" in bad[0].detail


def _rows_window(qtbot, rows: list[str], stretch_at: int | None) -> QWidget:
    w = QWidget()
    qtbot.addWidget(w)
    lay = QVBoxLayout(w)
    for i, row in enumerate(rows):
        if i == stretch_at:
            lay.addStretch(1)
        lay.addWidget(QLabel(row))
    w.setStyleSheet("background: #0f1419; color: #eef3f8;")
    w.resize(*SIZE)
    w.show()
    QApplication.processEvents()
    return w


def test_an_empty_band_on_a_tour_page(qtbot):
    bad = _kinds(_rows_window(qtbot, ["top " * 20, "bottom " * 20], stretch_at=1), "band", bands=True)
    assert len(bad) == 1 and "% of the height" in bad[0].detail
    # the same window with its rows spread over the height has no band
    assert not _kinds(_rows_window(qtbot, ["row " * 30] * 24, stretch_at=None), "band", bands=True)
