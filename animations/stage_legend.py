"""The legend: every mark on the stage, in words, and the one line that says why a measurement goes against
the lesson (when it does)."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

from animations.items import CELL_USED, CHAPTER, CHAPTER_LIT, PAPER, TEXT
from animations.stage_cheat import SHARED
from animations.stage_desks import WAITING
from animations.stage_style import (PAD, StageType, add_panel, add_text, line_height, regions_of, set_elided, tr,
                                    wrap_lines)
from animations.stage_warehouse import DICTIONARY

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
        self.entries: list[tuple[QColor, QColor | None, str]] = []
        self.note_text = ""

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

    def layout(self) -> None:
        lh = line_height(self.font)
        left, w = self.region.left() + PAD, self.region.width() - 2 * PAD
        room = int((self.region.height() - PAD) // lh)
        note_lines = wrap_lines(self.font, self.note_text, w, 3) if self.note_text else []
        shown = self.entries[:max(0, room - len(note_lines))]
        y = self.region.top() + PAD * 0.5
        for k, (sw, words) in enumerate(zip(self.swatches, self.words)):
            if k >= len(shown):
                sw.setVisible(False)
                words.setVisible(False)
                continue
            fill, edge, text = shown[k]
            sw.setVisible(True)
            words.setVisible(True)
            sw.setRect(QRectF(left, y + lh * 0.2, 28, lh * 0.6))
            sw.setBrush(fill)
            sw.setPen(QPen(edge, 3) if edge is not None else QPen(fill.darker(130), 1))
            set_elided(words, text, w - 38)
            words.setPos(left + 38, y)
            y += lh
        self.note.setText("\n".join(note_lines))
        self.note.setVisible(bool(note_lines))
        self.note.setPos(left, y + 2)

