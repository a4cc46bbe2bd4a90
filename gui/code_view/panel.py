"""``CodePanel``: one stage's source, as the installed package has it now, with line numbers and its lines lit.

    ┌ Layer 2 · Attention: softmax(QKᵀ/√d)·V ─────────────────────────┐  heading ("caption" role, translated)
    │ model/gpt2.py, lines 253–282 · CausalSelfAttention.forward       │  where (the path and names stay as they are)
    │ 253 │ def forward(self, x, layer, batch, kv_cache):                │
    │ 255 ▌ if isinstance(batch, RaggedBatch):   ← the stage's lines    │  the code: role "code" (type scale's label
    └──────────────────────────────────────────────────────────────────┘  rung), Pygments colours

The panel shows only whole lines that fit its height (long lines wrap, never cut): the window of lines is chosen
around the stage's own lines (``model.stages.source_of``: the function's range and the anchored lines), the
function's ``def`` first where there is room, then the rest of the function, then the file's lines around it.
Nothing scrolls, so what ``facts()`` says is shown is exactly what is painted.

For the layout audit (``gui.audit.layout_audit``) the text box lists each shown line as an item of role "code" and each
number as "line-number" (``CodeText.audit_lines``), and ``facts()`` is the layout JSON's "code" object.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetricsF, QPainter, QTextCursor, QTextDocument, QTextFormat
from PySide6.QtWidgets import QFrame, QLabel, QSizePolicy, QTextEdit, QVBoxLayout, QWidget

from animations.typescale import TypeScale, set_role
from gui.code_view import titles
from gui.code_view.highlight import BACKGROUND, FOREGROUND, PygmentsHighlighter

MONO_FAMILIES = ("DejaVu Sans Mono", "Noto Sans Mono", "Liberation Mono", "Menlo", "Consolas", "Courier New")
HIGHLIGHT = "#3a3212"  # the stage's lines: a warm ground, the app's accent (#ffc94a) in the gutter
ACCENT = "#ffc94a"
NUMBER = "#7d8590"
CONTEXT_AFTER = 2  # lines before the stage's first line shown where there is room, before growing down


def mono_family(fallback: str | None) -> str | None:
    """The first monospaced family installed (``MONO_FAMILIES``), else ``fallback`` (the app's family)."""
    have = set(QFontDatabase.families())
    return next((f for f in MONO_FAMILIES if f in have), fallback)


class _Gutter(QWidget):
    def __init__(self, text: CodeText):
        super().__init__(text)
        self.text = text

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.fillRect(event.rect(), QColor(BACKGROUND))
        p.setFont(self.text.font())
        for n, rect, lit in self.text.number_rects():
            p.setPen(QColor(ACCENT if lit else NUMBER))
            p.drawText(rect, int(Qt.AlignRight | Qt.AlignTop), str(n))
            if lit:
                p.fillRect(QRectF(self.width() - 4, rect.top(), 4, rect.height()), QColor(ACCENT))


def hang_indents(doc: QTextDocument, font: QFont) -> None:
    """A wrapped line goes on under its own indent, four columns in (a hanging indent): it still reads as code."""
    char = QFontMetricsF(font).horizontalAdvance(" ")
    block = doc.firstBlock()
    while block.isValid():
        text = block.text()
        hang = (len(text) - len(text.lstrip(" ")) + 4) * char
        fmt = block.blockFormat()
        fmt.setLeftMargin(hang)
        fmt.setTextIndent(-hang)
        QTextCursor(block).setBlockFormat(fmt)
        block = block.next()


def line_heights(lines: list[str], font: QFont, width: float, margin: float) -> list[float]:
    """The height each of ``lines`` takes wrapped at ``width`` px in ``font`` (with the hanging indent), measured
    on a plain document: no colours to compute, so choosing the lines costs a layout, not a highlight."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(margin)
    doc.setPlainText("\n".join(lines))
    doc.setTextWidth(width)
    hang_indents(doc, font)
    out, block = [], doc.firstBlock()
    while block.isValid():
        out.append(doc.documentLayout().blockBoundingRect(block).height())
        block = block.next()
    return out


class CodeText(QTextEdit):
    """Read-only source lines with a line-number gutter; ``first_line`` is the file line of the first block."""

    GUTTER_PAD = 10

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("codeText")
        self.setReadOnly(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setLineWrapMode(QTextEdit.WidgetWidth)
        self.setAcceptRichText(False)
        self.setWordWrapMode(self.wordWrapMode().WrapAtWordBoundaryOrAnywhere)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setTextInteractionFlags(Qt.NoTextInteraction)
        self.setFocusPolicy(Qt.NoFocus)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Ignored)
        self.setStyleSheet(f"QTextEdit {{ background: {BACKGROUND}; color: {FOREGROUND}; border: none; }}")
        self.setProperty("auditLines", True)  # gui.audit.layout_audit lists each line (audit_lines), not one block
        set_role(self, "code")
        self.highlighter = PygmentsHighlighter(self.document())
        self.first_line = 1
        self.lit: tuple[int, int] = (0, -1)
        self.gutter = _Gutter(self)

    def gutter_width(self) -> int:
        digits = len(str(self.first_line + max(0, self.blockCount() - 1)))
        return int(QFontMetricsF(self.font()).horizontalAdvance("9" * max(3, digits))) + 2 * self.GUTTER_PAD

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        cr = self.contentsRect()
        self.gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))
        if self.on_resized is not None:
            self.on_resized()

    on_resized = None  # the panel chooses its lines again for the new size

    def overflows(self) -> bool:
        """True when the laid-out lines are taller than the box (they would be cut at its bottom)."""
        # the blocks' own laid-out heights (the document's size may still be the previous text's right after
        # setPlainText: the layout catches up later)
        used = sum(self.block_heights()) + 2 * self.document().documentMargin()
        return used > self.viewport().height() + 0.5

    def set_lines(self, lines: list[str], first_line: int, lit: tuple[int, int]) -> None:
        """Show ``lines`` (file lines ``first_line`` … ) and light the file lines ``lit`` (first, last)."""
        self.first_line, self.lit = first_line, lit
        doc = self.document()
        self.highlighter.setDocument(None)  # colour once, after the indents (each block format change re-colours)
        self.setPlainText("\n".join(lines))
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)
        # a narrower viewport (the gutter) does not lay the text out again by itself (QTextEdit does on its own
        # resize only): wrap at the width the lines are shown in, or they run past its right edge
        doc.setTextWidth(self.viewport().width())
        hang_indents(doc, self.font())
        self.highlighter.setDocument(doc)
        sel = []
        block = self.document().firstBlock()
        while block.isValid():
            if lit[0] <= first_line + block.blockNumber() <= lit[1]:
                s = QTextEdit.ExtraSelection()
                s.format.setBackground(QColor(HIGHLIGHT))
                s.format.setProperty(QTextFormat.FullWidthSelection, True)
                s.cursor = QTextCursor(block)
                s.cursor.movePosition(QTextCursor.EndOfBlock, QTextCursor.KeepAnchor)
                sel.append(s)
            block = block.next()
        self.setExtraSelections(sel)
        self.gutter.update()

    def contentOffset(self) -> QPointF:  # noqa: N802 - as QPlainTextEdit names it
        return QPointF(0.0, -float(self.verticalScrollBar().value()))

    def blockBoundingGeometry(self, block) -> QRectF:  # noqa: N802 - as QPlainTextEdit names it
        return self.document().documentLayout().blockBoundingRect(block)

    def blockCount(self) -> int:  # noqa: N802
        return self.document().blockCount()

    def block_heights(self) -> list[float]:
        """The laid-out height of every block (wrapped lines count all their rows), in pixels."""
        out = []
        block = self.document().firstBlock()
        while block.isValid():
            out.append(self.document().documentLayout().blockBoundingRect(block).height())
            block = block.next()
        return out

    def number_rects(self) -> list[tuple[int, QRectF, bool]]:
        """(file line, rect in the gutter, lit) of every block's number."""
        out = []
        offset = self.contentOffset()
        w = self.gutter_width() - self.GUTTER_PAD
        line_h = QFontMetricsF(self.font()).height()
        block = self.document().firstBlock()
        while block.isValid():
            top = self.blockBoundingGeometry(block).translated(offset).top()
            n = self.first_line + block.blockNumber()
            out.append((n, QRectF(0, top, w, line_h), self.lit[0] <= n <= self.lit[1]))
            block = block.next()
        return out

    def audit_lines(self, window: QWidget) -> list[dict]:
        """Every shown line as a layout item: {"text", "rect" (window px), "font_px", "clipped", "role": "code",
        "line": file line}, and every number as role "line-number"."""
        out = []
        vp = self.viewport()
        origin = vp.mapTo(window, QPoint(0, 0))
        area = QRectF(vp.rect())
        offset = self.contentOffset()
        px = float(self.font().pixelSize())
        block = self.document().firstBlock()
        while block.isValid():
            layout = block.layout()
            rect, rows = QRectF(), []
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                # QTextEdit's block layouts sit at their document position: only the scroll offset to add
                r = line.naturalTextRect().translated(layout.position()).translated(offset)
                rect = r if rect.isNull() else rect.united(r)
                rows.append(block.text()[line.textStart():line.textStart() + line.textLength()])
            n = self.first_line + block.blockNumber()
            if block.text().strip():
                entry = {"text": block.text(), "rect": _rect(rect.translated(origin.x(), origin.y())),
                         "font_px": px, "clipped": not area.adjusted(-0.5, -0.5, 0.5, 0.5).contains(rect),
                         "role": "code", "line": n}
                if len(rows) > 1:
                    entry["lines"] = rows
                out.append(entry)
            block = block.next()
        g_origin = self.gutter.mapTo(window, QPoint(0, 0))
        fm = QFontMetricsF(self.font())
        for n, r, _lit in self.number_rects():
            w = fm.horizontalAdvance(str(n))
            painted = QRectF(r.right() - w, r.top(), w, fm.height())
            out.append({"text": str(n), "rect": _rect(painted.translated(g_origin.x(), g_origin.y())),
                        "font_px": px, "clipped": not QRectF(self.gutter.rect()).contains(painted),
                        "role": "line-number", "line": n})
        return out


def _rect(r: QRectF) -> list[float]:
    return [round(r.x(), 1), round(r.y(), 1), round(r.width(), 1), round(r.height(), 1)]


def choose_window(heights: dict[int, float], room: float, first: int, last: int, lit: tuple[int, int],
                  n_lines: int) -> tuple[int, int]:
    """The file lines (a, b) to show: the lit lines first (from their first, as many as fit), then up to
    ``CONTEXT_AFTER`` lines above them, the rest of the function below, the function's def above, then the file's
    lines before it (its class, what it uses) and after it, each while the sum of ``heights`` (file line -> px)
    stays within ``room``."""
    a = b = max(1, min(lit[0], n_lines))
    used = heights.get(a, 0.0)

    def fits(n: int) -> bool:
        return 1 <= n <= n_lines and used + heights.get(n, float("inf")) <= room

    while b + 1 <= lit[1] and fits(b + 1):
        b += 1
        used += heights[b]
    goals = [("up", max(first, lit[0] - CONTEXT_AFTER)), ("down", last), ("up", first),
             ("up", 1), ("down", n_lines)]
    for way, goal in goals:
        if way == "up":
            while a - 1 >= goal and fits(a - 1):
                a -= 1
                used += heights[a]
        else:
            while b + 1 <= goal and fits(b + 1):
                b += 1
                used += heights[b]
    return a, b


_SOURCES: dict = {}  # stage name -> model.stages.StageSource, read once per run


class CodePanel(QFrame):
    """Heading, file line and the code of one stage (``show_stage``); hidden until a stage is shown."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("codePanel")
        self.setStyleSheet(f"QFrame#codePanel {{ background: {BACKGROUND}; border: 1px solid #30363d; "
                           "border-radius: 6px; } QLabel { color: #e6edf3; background: transparent; }")
        self.heading = QLabel()
        self.heading.setObjectName("codeHeading")
        self.heading.setWordWrap(True)
        set_role(self.heading, "caption")
        self.where = QLabel()
        self.where.setObjectName("codeWhere")
        self.where.setWordWrap(True)
        self.where.setTextFormat(Qt.PlainText)
        self.where.setStyleSheet("color: #9fb3c8;")
        set_role(self.where, "source")  # a path and code names: content, as the code (gui.audit.layout_faults)
        self.text = CodeText()
        self.text.on_resized = self.refill
        box = QVBoxLayout(self)
        box.setContentsMargins(8, 4, 4, 4)
        box.setSpacing(2)
        box.addWidget(self.heading)
        box.addWidget(self.where)
        box.addWidget(self.text, 1)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Ignored)
        self.entry: str | None = None
        self.source = None
        self.shown: tuple[int, int] | None = None
        self._filled_for: tuple | None = None
        self._scale: TypeScale | None = None
        self._filling = False

    def sizeHint(self) -> QSize:  # noqa: D102 - Qt override: the code takes the room it is given
        return QSize(200, 120)

    def minimumSizeHint(self) -> QSize:  # noqa: D102
        return QSize(120, 80)

    def apply_type_scale(self, window_height: float, presenter: bool, family: str | None) -> None:
        """Fonts from the window height: heading at the body rung, the file line and code at the label rung."""
        scale = TypeScale(float(window_height), presenter)
        self._scale = scale

        def font(role: str, fam: str | None) -> QFont:
            f = QFont(fam) if fam else QFont()
            f.setPixelSize(max(int(round(scale.role_px(role))), int(-(-scale.minimum // 1))))
            return f
        self.heading.setFont(font("caption", family))
        self.where.setFont(font("label", family))  # the label rung, as the code's lines
        mono = font("code", mono_family(family))
        mono.setStyleHint(QFont.Monospace)
        self.text.setFont(mono)
        self.text.gutter.setFont(mono)
        self.refill()

    def show_stage(self, entry: str) -> None:
        """Show the source of ``entry`` ("attention:2", "sample"): heading, file line, lines lit."""
        from model import stages  # names and files only: no torch (model/stages.py)
        name, layer = stages.parse(entry)
        self.entry = entry
        source = _SOURCES.get(name)
        if source is None:  # read from the installed package once per stage and run: ~10 ms of ast a file
            source = _SOURCES[name] = stages.source_of(name)
        if source is not self.source:
            self._filled_for = None
        self.source = source
        self.heading.setText(titles.heading(entry, name, layer))
        self.refill()

    def retranslate(self) -> None:
        if self.entry is not None:
            from model import stages
            name, layer = stages.parse(self.entry)
            self.heading.setText(titles.heading(self.entry, name, layer))
            self._filled_for = None
            self.refill()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.refill()

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self.refill()

    def refill(self) -> None:
        """Choose and show the lines that fit the code box now (after a resize, a font or a stage change)."""
        src = self.source
        if src is None or not self.isVisible() or self._filling:
            return  # a hidden text box does not lay its lines out: nothing to measure (showEvent comes back)
        self._filling = True  # setting the text resizes the box (its margins): that resize must not refill here
        try:
            self._refill(src)
        finally:
            self._filling = False

    def _key(self) -> tuple:
        # the stage's name, not its layer: layer 2's attention is layer 1's code (only the heading says which)
        return (self.source.stage, self.text.size(), self.text.font().pixelSize(), self.heading.height())

    def _refill(self, src) -> None:
        self.layout().activate()
        if self._key() == self._filled_for:
            return
        lo = max(1, src.first_line - 40)
        hi = min(len(src.lines), src.last_line + 40)
        self.text.setViewportMargins(self.text.gutter_width(), 0, 0, 0)
        margin = self.text.document().documentMargin()
        measured = line_heights(src.lines[lo - 1:hi], self.text.font(), self.text.viewport().width(), margin)
        heights = {lo + i: h for i, h in enumerate(measured)}
        room = self.text.viewport().height() - 2 * margin - 1
        a, b = choose_window(heights, room, src.first_line, src.last_line, src.highlight, len(src.lines))
        self.text.set_lines(src.lines[a - 1:b], a, src.highlight)
        while self.text.overflows() and b > a:  # the estimate was a hair short: never a line cut at the bottom
            b -= 1
            self.text.set_lines(src.lines[a - 1:b], a, src.highlight)
        self.shown = (a, b)
        self.where.setText(titles.where(src.rel_path, a, b, src.qualname))
        self._filled_for = self._key()

    def facts(self) -> dict | None:
        """The layout JSON's "code" object: file, first and last line shown, the highlighted line, the stage."""
        if self.source is None or self.shown is None:
            return None
        src = self.source
        return {"file": src.rel_path, "path": src.path, "function": src.qualname, "first_line": self.shown[0],
                "last_line": self.shown[1], "highlighted_line": src.highlight[0],
                "highlight": [src.highlight[0], min(src.highlight[1], self.shown[1])], "stage": self.entry}
