"""The cheat sheet (paged KV cache) to scale: one cell per real block in use, bytes named, shared pages striped.

The grid is sized to the run, not to the whole cache: it shows ``capacity`` cells, the blocks in use rounded up
to whole rows with headroom (at least two rows), so a few blocks are a visible part of the grid; when requests
finish and their blocks are freed the cells empty and the grid shrinks back on the next trip. The cells of
blocks reused from the prefix cache (the same opening used by two seats) are drawn as shared pages: two-tone
with a gold edge.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from animations.items import CELL_EDGE, CELL_EMPTY, CELL_FRESH, CELL_USED, TEXT, TEXT_DIM
from animations.stage.style import PAD, StageType, add_panel, add_text, regions_of, set_elided, stack, tr, wrap_lines
from animations.units import fmt_bytes

SHARED = QColor("#ffc94a")
COLS_MAX = 24


class GridItem(QGraphicsItem):
    """``capacity`` cells in ``cols`` columns of ``cell`` units; ``in_use`` filled, the ones from ``fresh_from``
    on lighter (written this trip), the first ``shared`` ones striped (shared prefix pages)."""

    def __init__(self):
        super().__init__()
        self.cols, self.cell, self.capacity = 1, 10.0, 0
        self.in_use = self.fresh_from = self.shared = 0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt override
        rows = math.ceil(self.capacity / max(1, self.cols))
        return QRectF(-2, -2, self.cols * self.cell + 4, rows * self.cell + 4)

    def set_geometry(self, cols: int, cell: float, capacity: int) -> None:
        self.prepareGeometryChange()
        self.cols, self.cell, self.capacity = max(1, cols), cell, max(0, capacity)
        self.update()

    def set_state(self, in_use: int, fresh_from: int, shared: int) -> None:
        state = (max(0, in_use), max(0, fresh_from), max(0, min(shared, in_use)))
        if state != (self.in_use, self.fresh_from, self.shared):
            self.in_use, self.fresh_from, self.shared = state
            self.update()

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: D102 - Qt override
        gap = max(1.0, self.cell * 0.14)
        side = self.cell - gap
        for k in range(self.capacity):
            r = QRectF((k % self.cols) * self.cell, (k // self.cols) * self.cell, side, side)
            if k < self.shared:
                painter.setPen(QPen(SHARED, 2))
                painter.setBrush(CELL_USED)
                painter.drawRect(r)
                painter.fillRect(QRectF(r.left(), r.top(), r.width() / 2, r.height()), SHARED.darker(130))
            elif k < self.in_use:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(CELL_FRESH if k >= self.fresh_from else CELL_USED)
                painter.drawRect(r)
            else:
                painter.setPen(QPen(CELL_EDGE, 1))
                painter.setBrush(CELL_EMPTY)
                painter.drawRect(r)


class CheatSheet:
    """The cheat-sheet panel: header, page size, the grid and "N pages in use = X bytes"."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType, block_bytes: int, num_blocks: int,
                 block_tokens: int):
        self.region = regions_of(scene).cheat  # the scene's height decides it (StageRegions)
        self.block_bytes, self.num_blocks, self.block_tokens = int(block_bytes), int(num_blocks), int(block_tokens)
        self.panel = add_panel(scene, self.region)
        self.header = add_text(scene, type_.font(family, "label", bold=True), "cheatsheet")
        f_small = type_.font(family, "small")
        self.page = add_text(scene, f_small, "cheatsheet", TEXT_DIM)
        self.count = add_text(scene, type_.font(family, "small", bold=True), "cheatsheet", TEXT)
        self.grid = GridItem()
        self.grid.setZValue(5)
        scene.addItem(self.grid)
        self.in_use = 0
        self.capacity = 0
        self.page_shown = True  # the page's size (the stage's details: ``show_page``)

    def texts(self):
        return [self.header, self.page, self.count]

    @staticmethod
    def capacity_for(blocks: int) -> int:
        """Cells drawn for ``blocks`` in use: at least 16, else ``blocks`` × 1.5 rounded up to 8 cells."""
        return max(16, math.ceil(blocks * 1.5 / 8) * 8)

    def show_page(self, on: bool) -> None:
        """Show or hide the line with one page's size; the grid takes its room when it is hidden."""
        self.page_shown = bool(on)
        self.page.setVisible(self.page_shown)
        self.layout()

    def _count_text(self, n: int) -> str:
        if self.num_blocks:
            return (tr("{n} page in use = {size} · room for {total}") if n == 1 else
                    tr("{n} pages in use = {size} · room for {total}")).format(
                n=n, size=fmt_bytes(n * self.block_bytes), total=self.num_blocks)
        return (tr("{n} page in use") if n == 1 else tr("{n} pages in use")).format(n=n)

    def _lines(self, item, text: str) -> str:
        """``text`` in at most two lines of the panel's width (a narrow panel, or text a third wider for the
        scene in a 4:3 window: "… · room for 2…" was cut)."""
        w = self.region.width() - 2 * PAD
        one = wrap_lines(item.font(), text, w, 1)
        if one == [text]:
            return text
        head, sep, tail = text.rpartition(" · ")  # two lines: broken at the last " · " where both halves fit
        if sep and all(wrap_lines(item.font(), part, w, 1) == [part] for part in (head + " ·", tail)):
            return head + " ·\n" + tail
        return "\n".join(wrap_lines(item.font(), text, w, 2))

    def layout(self) -> None:
        w = self.region.width() - 2 * PAD
        left = self.region.left() + PAD
        set_elided(self.header, tr("Cheat sheet · KV cache"), w)
        if self.block_bytes:
            page = tr("one page = {size} · {t} tokens").format(size=fmt_bytes(self.block_bytes), t=self.block_tokens)
        else:
            page = ""
        self.page.setText(self._lines(self.page, page) if page else "")
        self.page.setVisible(self.page_shown)
        # the count's room is that of the longest count (every page in use): the grid never moves between trips
        lines = self._lines(self.count, self._count_text(self.num_blocks)).count("\n") + 1
        self.count.setText("\n".join([" "] * lines))
        bottom = stack([self.header, self.page, self.count], left, self.region.top() + PAD * 0.6)
        self._grid_box = QRectF(left, bottom + 2, w, self.region.bottom() - PAD * 0.6 - bottom - 2)
        self.set_in_use(self.in_use, self.in_use, 0, rescale=True)

    def set_in_use(self, in_use: int, fresh_from: int, shared: int, rescale: bool = False) -> None:
        """Draw ``in_use`` blocks (the real count); ``rescale`` refits the grid to them (between trips)."""
        key = (max(0, int(in_use)), fresh_from, shared)
        if not rescale and key == getattr(self, "_key", None):
            return
        self._key = key
        self.in_use = max(0, int(in_use))
        if rescale or self.in_use > self.capacity:
            self.capacity = self.capacity_for(self.in_use)
            box = self._grid_box
            best = (1, 1.0)
            for cols in range(4, COLS_MAX + 1, 4):  # the biggest cells that fit
                rows = math.ceil(self.capacity / cols)
                cell = min(box.width() / cols, box.height() / rows, 44.0)
                if cell > best[1]:
                    best = (cols, cell)
            cols, cell = best
            self.grid.set_geometry(cols, cell, self.capacity)
            self.grid.setPos(box.left(), box.top())
        self.grid.set_state(self.in_use, fresh_from, shared)
        text = self._lines(self.count, self._count_text(self.in_use))
        if self.count.text() != text:
            self.count.setText(text)
