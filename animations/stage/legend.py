"""The legend: every mark on the stage, in words, and the lines that say why a measurement goes against the
lesson (when it does).

Every entry the stage's marks need is shown, each in one line or two (a 4:3 window makes the text a third wider
for the scene than a 16:9 one); the note takes the lines the entries leave, and where they leave too few it goes
to the foot of the table (``table_top``), which has room beside a few seats: never an entry dropped for it."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

from animations.items import CELL_USED, CHAPTER, CHAPTER_LIT, PAPER, TEXT
from animations.stage.cheat import SHARED
from animations.stage.desks import WAITING
from animations.stage.style import PAD, StageType, add_panel, add_text, line_height, regions_of, tr, wrap_lines
from animations.stage.warehouse import DICTIONARY

NOTE = QColor("#ffb36b")
MAX_ENTRIES = 6


class Legend:
    """Swatch + words per entry, one per line, laid out from measured heights; then the measure note."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType):
        self.region = regions_of(scene).legend  # the scene's height decides it (StageRegions)
        self.panel = add_panel(scene, self.region)
        self.font = type_.font(family, "small")
        self.swatches, self.words = [], []
        for _ in range(MAX_ENTRIES):
            sw = QGraphicsRectItem()
            sw.setZValue(5)
            scene.addItem(sw)
            self.swatches.append(sw)
            self.words.append(add_text(scene, self.font, "legend", TEXT))
        self.note = add_text(scene, self.font, "note", NOTE)
        self.table = regions_of(scene).table  # where the note goes when the entries leave it too few lines
        self.entries: list[tuple[QColor, QColor | None, str]] = []
        self.note_text = ""
        self.note_on_table = False
        self.table_allowed = True  # False: the table has no room for the note (the apprentice's column is up)

    def texts(self):
        return [w for w in self.words if w.isVisible()] + ([self.note] if self.note.isVisible() else [])

    def set_marks(self, mode: str, n: int, shared_pages: bool) -> None:
        """Which marks the stage draws now: the torn book's ("tp"/"pp", n desks) and shared pages."""
        entries = [(CHAPTER, DICTIONARY, tr("chapters and dictionary, to scale by bytes")),
                   (CHAPTER_LIT, None, tr("lit: the chapter being read now")),
                   (CELL_USED, None, tr("a cheat-sheet page in use"))]
        if shared_pages:
            entries.append((CELL_USED, SHARED, tr("gold edge: a page two seats share")))
        if n > 1 and mode == "tp":
            entries.append((PAPER, None, tr("a note passed between desks (all-reduce)")))
        elif n > 1:
            entries.append((WAITING, None, tr("a dimmed desk is waiting (pipeline bubble)")))
        self.entries = entries
        self.layout()

    def set_note(self, text: str) -> None:
        self.note_text = text or ""
        self.layout()

    def allow_table(self, on: bool) -> None:
        """Let the note go to the foot of the table (True, default) or keep it in the legend."""
        if bool(on) != self.table_allowed:
            self.table_allowed = bool(on)
            self.layout()

    def table_top(self) -> float | None:
        """The top of the note where it stands at the foot of the table (the seats keep above it), else None."""
        if not self.note_on_table or not self.note.isVisible():
            return None
        return self.note.y() - 6

    def layout(self) -> None:
        lh = line_height(self.font)
        left, w = self.region.left() + PAD, self.region.width() - 2 * PAD
        room = int((self.region.height() - PAD) // lh)
        texts = [wrap_lines(self.font, text, w - 38, 2) for _fill, _edge, text in self.entries]
        shown, used = 0, 0
        for lines in texts:  # every entry that fits, whole (two lines where one is too narrow)
            if used + len(lines) > room:
                break
            shown, used = shown + 1, used + len(lines)
        y = self.region.top() + PAD * 0.5
        for k, (sw, words) in enumerate(zip(self.swatches, self.words)):
            if k >= shown:
                sw.setVisible(False)
                words.setVisible(False)
                continue
            fill, edge, _text = self.entries[k]
            sw.setVisible(True)
            words.setVisible(True)
            sw.setRect(QRectF(left, y + lh * 0.2, 28, lh * 0.6))
            sw.setBrush(fill)
            sw.setPen(QPen(edge, 3) if edge is not None else QPen(fill.darker(130), 1))
            words.setText("\n".join(texts[k]))
            words.setPos(left + 38, y)
            y += lh * len(texts[k])
        note_lines = wrap_lines(self.font, self.note_text, w, 3) if self.note_text else []
        whole = not note_lines or len(wrap_lines(self.font, self.note_text, w, 4)) <= 3
        self.note_on_table = (self.table_allowed and bool(note_lines)
                              and (used + len(note_lines) > room or not whole))
        if self.note_on_table:  # at the foot of the table, in as many lines as its width needs
            tw = self.table.width() - 2 * PAD
            note_lines = wrap_lines(self.font, self.note_text, tw, 6)
            top = self.table.bottom() - PAD * 0.6 - lh * len(note_lines)
            self.note.setText("\n".join(note_lines))
            self.note.setPos(self.table.left() + PAD, top)
        else:
            self.note.setText("\n".join(note_lines))
            self.note.setPos(left, y + 2)
        self.note.setVisible(bool(note_lines))

