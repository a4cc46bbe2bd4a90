"""The warehouse (GPU memory): the whole book — every chapter (transformer layer) and the dictionary
(embeddings / LM head) — drawn to scale by bytes. The book never leaves: a trip carries a copy (see
animations/stage/desks.py), so every bar here is visible at every moment of every trip.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

from animations.items import CHAPTER, CHAPTER_EDGE, CHAPTER_LIT, TEXT, TEXT_DIM
from animations.stage.style import (
    PAD,
    StageType,
    add_panel,
    add_text,
    line_height,
    regions_of,
    set_elided,
    set_lines,
    stack,
    tr,
    wrap_lines,
)
from animations.units import fmt_bytes

DICTIONARY = QColor("#7d5ba6")
DICTIONARY_EDGE = QColor("#b99be0")


class Warehouse:
    """The warehouse panel. ``bars[i]`` is chapter i (0-based layer); ``dictionary_bar`` the embeddings."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType,
                 layer_bytes: list[int], dictionary_bytes: int, model_name: str):
        self.scene = scene
        self.region = regions_of(scene).warehouse  # the scene's height decides it (StageRegions)
        self.layer_bytes = list(layer_bytes)
        self.dictionary_bytes = int(dictionary_bytes)
        self.model_name = model_name
        self.panel = add_panel(scene, self.region)
        f_head = type_.font(family, "label", bold=True)
        f_small = type_.font(family, "small")
        self.header = add_text(scene, f_head, "warehouse")
        self.model = add_text(scene, f_small, "model-name", TEXT_DIM)
        self.total = add_text(scene, f_small, "warehouse", TEXT)
        self.note = add_text(scene, f_small, "warehouse", TEXT_DIM)
        self.bars: list[QGraphicsRectItem] = []
        self.labels = []
        for _ in self.layer_bytes:
            bar = QGraphicsRectItem()
            bar.setBrush(CHAPTER)
            bar.setPen(QPen(CHAPTER_EDGE, 1.5))
            bar.setZValue(5)
            scene.addItem(bar)
            self.bars.append(bar)
            self.labels.append(add_text(scene, f_small, "chapter", TEXT))
        self.dictionary_bar = QGraphicsRectItem()
        self.dictionary_bar.setBrush(DICTIONARY)
        self.dictionary_bar.setPen(QPen(DICTIONARY_EDGE, 1.5))
        self.dictionary_bar.setZValue(5)
        scene.addItem(self.dictionary_bar)
        self.dictionary_label = add_text(scene, f_small, "chapter", TEXT)
        self._copying: int | None = None

    # --- numbers ------------------------------------------------------------------------------------------------
    @property
    def total_bytes(self) -> int:
        """Chapters + dictionary, bytes: the figure the warehouse, the carts and the readout all add up to."""
        return sum(self.layer_bytes) + self.dictionary_bytes

    def header_text(self) -> str:
        """The warehouse and the memory it is here: GPU memory, or the computer's RAM when the engine runs on the
        CPU (``StageScene.set_device``); GPU memory, the usual place, until the device is known."""
        if getattr(self.scene, "memory_kind", None) == "cpu":
            return tr("Warehouse · RAM (on the CPU)")
        return tr("Warehouse · GPU memory")

    def texts(self):
        return [self.header, self.model, self.total, self.note, self.dictionary_label, *self.labels]

    # --- layout ---------------------------------------------------------------------------------------------------
    def layout(self) -> None:
        """Words first (measured), then the book fills the room between them, bars to scale by bytes."""
        w = self.region.width() - 2 * PAD
        left = self.region.left() + PAD
        top, bottom = self._layout_words(w, left)
        n = len(self.layer_bytes)
        label_h = line_height(self.note.font())
        rows = n + (1 if self.dictionary_bytes else 0)
        avail = max(rows, bottom - top - 4)
        gap = 4.0 if avail >= rows * 8 else 0.5
        h = max(0.5, min(label_h * 1.8, (avail - gap * (rows - 1)) / max(1, rows)))
        stride = max(1, math.ceil((label_h + 2) / (h + gap)))  # label every stride-th bar: labels never overlap
        room_for_labels = bottom - top >= label_h
        biggest = max([*self.layer_bytes, self.dictionary_bytes, 1])
        y = top + 4
        entries = self._entries()
        if not self.dictionary_bytes:
            self.dictionary_bar.setVisible(False)
            self.dictionary_label.setVisible(False)
        # a bar thinner than its label's line cannot hold the label (it would lie across the bar's top and
        # bottom edges): the bars then scale to the width that leaves a column for the short names at their right
        inside_ok = h >= label_h
        scale_w = w
        if not inside_ok and entries:
            fm = QFontMetricsF(self.dictionary_label.font())
            names = max(fm.horizontalAdvance(short) for *_, short in entries)
            scale_w = max(w * 0.35, w - names - 10)
        for k, (bar, label, b, text, short) in enumerate(entries):
            bw = max(6.0, scale_w * b / biggest) if b else scale_w * 0.5
            bar.setRect(QRectF(left, y, bw, h))
            label.setVisible(k % stride == 0 and room_for_labels)
            x = self._label_x(label, text, short, left, bw, w, inside_ok)
            lh = label.boundingRect().height()
            ly = min(max(y + (h - lh) / 2, top), bottom - lh)  # centred on its bar, never over the words around
            label.setPos(x, ly)
            y += h + gap
        self._hide_touching_labels()

    def _layout_words(self, w: float, left: float) -> tuple[float, float]:
        """The header, the model's name and the whole book's size at the top, the note at the bottom, ``w`` wide
        from ``left``. Returns the top and bottom of the room left between them for the bars."""
        # two lines where the name and its field term do not fit one (presenter mode's larger type, 4:3)
        set_lines(self.header, wrap_lines(self.header.font(), self.header_text(), w, 2))
        set_elided(self.model, self.model_name, w)
        self.model.setVisible(bool(self.model_name))
        if self.total_bytes:
            total = tr("Whole book: {size}").format(size=fmt_bytes(self.total_bytes))
        else:
            total = tr("The book: {n} chapters").format(n=len(self.layer_bytes))
        set_elided(self.total, total, w)
        top = stack([self.header, self.model, self.total], left, self.region.top() + PAD * 0.6)
        self.note.setText("\n".join(wrap_lines(self.note.font(), tr("The book stays home; a copy travels"), w, 2)))
        note_h = self.note.boundingRect().height()
        self.note.setPos(left, self.region.bottom() - PAD * 0.6 - note_h)
        return top, self.note.y() - 8

    def _entries(self) -> list[tuple]:
        """(bar, label, bytes, label text, short name) of the dictionary, when it has bytes, and each chapter."""
        entries = [(self.dictionary_bar, self.dictionary_label, self.dictionary_bytes,
                    tr("Dictionary · {size}").format(size=fmt_bytes(self.dictionary_bytes)),
                    tr("Dictionary"))] if self.dictionary_bytes else []
        entries += [(bar, label, b, tr("Ch. {i} · {size}").format(i=i + 1, size=fmt_bytes(b)) if b
                     else tr("Ch. {i}").format(i=i + 1), tr("Ch. {i}").format(i=i + 1))
                    for i, (bar, label, b) in enumerate(zip(self.bars, self.labels, self.layer_bytes))]
        return entries

    def _label_x(self, label, text: str, short: str, left: float, bw: float, w: float, inside_ok: bool) -> float:
        """Set a bar's label (``bw`` wide from ``left``) and return its x: inside the bar when it is wide enough,
        else just right of it; the name alone ("Ch. 2") when the name and size fit neither way; never across the
        bar's edge (half on the bar, half off reads badly)."""
        x = None
        for candidate in dict.fromkeys((text, short)):
            set_elided(label, candidate, w - 8)
            fm_w = label.boundingRect().width()
            if bw >= fm_w + 12 and inside_ok:
                x = left + 6
            elif bw + 8 + fm_w <= w:
                x = left + bw + 8
            if x is not None:
                break
        if x is None and not inside_ok:  # no room beside (only with a very long name): no label
            label.setVisible(False)
            x = left + bw + 8
        elif x is None:  # a bar too wide to have room beside it and too narrow for its name: elided inside
            set_elided(label, short, max(8.0, bw - 12))
            x = left + 6
        return x

    def _hide_touching_labels(self) -> None:
        """A label that would touch an earlier one stays hidden (a squeezed book keeps its bars)."""
        placed = []
        for label in [self.dictionary_label, *self.labels]:
            if label.isVisible():
                r = label.sceneBoundingRect()
                if any(r.intersects(p) for p in placed):
                    label.setVisible(False)
                else:
                    placed.append(r)

    # --- during a trip ----------------------------------------------------------------------------------------------
    def set_copying(self, i: int | None) -> None:
        """Outline chapter ``i`` (0-based; -1 = dictionary) while its copy is being loaded onto the cart."""
        if i == self._copying:
            return
        for k, bar in enumerate(self.bars):
            bar.setPen(QPen(CHAPTER_LIT if k == i else CHAPTER_EDGE, 3 if k == i else 1.5))
        self.dictionary_bar.setPen(QPen(CHAPTER_LIT if i == -1 else DICTIONARY_EDGE, 3 if i == -1 else 1.5))
        self._copying = i

    def bar_color(self, i: int) -> QColor:
        return DICTIONARY if i < 0 else CHAPTER

    def visible_fraction(self) -> float:
        """How much of the book is drawn in the warehouse now (1.0 always: the book stays home)."""
        items = self.bars + ([self.dictionary_bar] if self.dictionary_bytes else [])
        return sum(1 for b in items if b.isVisible() and b.opacity() > 0.99) / max(1, len(items))


__all__ = ["Warehouse", "DICTIONARY", "DICTIONARY_EDGE"]
