"""Facts about a shown window that the fault checks (``gui.audit.layout_faults``) need beyond each text's rect and size.

- ``doc_lines(doc)``: the lines a ``QTextDocument`` is laid out in (where wrapping broke them);
- ``scene_boxes(view, window)``: window rects of the panels, cards and pills a scene draws (closed shapes with
  an outline or a fill), so that text lying across their edges can be found;
- ``stage_rect(window)``: where the Live page's stage scene is drawn, in window pixels, or None;
- ``empty_bands(image)``: runs of rows of a rendered window in which nothing is drawn.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QGraphicsPathItem, QGraphicsRectItem, QGraphicsView, QWidget

MIN_BOX_PX = 8.0  # a shape smaller than this either way is a mark (a dot, a tick), not a box text sits in
ROW_EDGE_STEP = 24  # a change of more than this (0-255, any channel) between neighbouring pixels is an edge
ROW_EMPTY_EDGES = 4  # a row with at most this many edges shows nothing but plain fills and a border or two


def doc_lines(doc: QTextDocument) -> list[str]:
    """The text of each laid-out line of ``doc`` (its text width set), top to bottom; trailing spaces kept, and
    a line that ends a paragraph ends with "\\n" (an explicit break, not one wrapping made)."""
    doc.documentLayout().documentSize()  # lays the document out if it has not been yet
    out: list[str] = []
    block = doc.begin()
    while block.isValid():
        layout = block.layout()
        text = block.text()
        if layout is None or layout.lineCount() == 0:
            out.append(text + "\n")
        else:
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                out.append(text[line.textStart():line.textStart() + line.textLength()])
            out[-1] += "\n"
        block = block.next()
    if out:
        out[-1] = out[-1][:-1]
    return out


def _is_box(item) -> bool:
    if isinstance(item, QGraphicsRectItem):
        has_pen = item.pen().style() != Qt.NoPen
        has_fill = item.brush().style() != Qt.NoBrush
        return has_pen or has_fill
    if isinstance(item, QGraphicsPathItem):
        path = item.path()
        n = path.elementCount()
        if n < 4 or n > 40:
            return False
        first, last = path.elementAt(0), path.elementAt(n - 1)
        closed = abs(first.x - last.x) < 0.5 and abs(first.y - last.y) < 0.5
        bounds = path.boundingRect()
        filled = item.brush().style() != Qt.NoBrush
        return closed and (filled or item.pen().style() != Qt.NoPen) and path.contains(bounds.center())
    return False


def scene_boxes(view: QGraphicsView, window: QWidget) -> list[list[float]]:
    """Window rects ([x, y, w, h]) of the visible boxes of ``view``'s scene: rect items and closed path items
    (``base.box`` panels, pills), at least ``MIN_BOX_PX`` on each side once on screen and wholly inside the
    view (a box the view cuts off shows no edge there)."""
    scene = view.scene()
    if scene is None:
        return []
    origin = view.viewport().mapTo(window, QPoint(0, 0))
    shown = QRectF(view.viewport().rect()).translated(origin.x(), origin.y()).adjusted(-3, -3, 3, 3)
    vt = view.viewportTransform()
    full = scene.sceneRect()
    out = []
    for item in scene.items():
        if not item.isVisible() or item.effectiveOpacity() < 0.05 or not _is_box(item):
            continue
        if item.sceneBoundingRect().contains(full):
            continue  # the scene's own background
        r = item.deviceTransform(vt).mapRect(item.boundingRect()).translated(origin.x(), origin.y())
        if r.width() >= MIN_BOX_PX and r.height() >= MIN_BOX_PX and shown.contains(r):  # edges one can see
            out.append([round(r.x(), 1), round(r.y(), 1), round(r.width(), 1), round(r.height(), 1)])
    return out


def stage_rect(window: QWidget) -> list[float] | None:
    """Window rect of the Live page's stage scene as drawn (``QGraphicsView`` named "stageView", its scene rect
    mapped into the viewport and cut to it), or None when no stage is shown."""
    for view in window.findChildren(QGraphicsView, "stageView"):
        if not view.isVisibleTo(window) or view.scene() is None:
            continue
        drawn = QRectF(view.mapFromScene(view.scene().sceneRect()).boundingRect())
        drawn = drawn.intersected(QRectF(view.viewport().rect()))
        origin = view.viewport().mapTo(window, QPoint(0, 0))
        drawn.translate(origin.x(), origin.y())
        return [round(drawn.x(), 1), round(drawn.y(), 1), round(drawn.width(), 1), round(drawn.height(), 1)]
    return None


def empty_bands(image: QImage, min_rows: int = 1) -> list[list[int]]:
    """Runs of empty rows of ``image`` as [top, height] in its pixels, at least ``min_rows`` tall.

    A row is empty when it has at most ``ROW_EMPTY_EDGES`` edges (neighbouring pixels differing by more than
    ``ROW_EDGE_STEP`` in a channel): plain background, perhaps crossed by a panel's side borders. Any text,
    chart or picture gives a row many edges.
    """
    img = image.convertToFormat(QImage.Format_RGB32)
    w, h = img.width(), img.height()
    if w < 2 or h < 1:
        return []
    buf = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.bytesPerLine() * h)
    rows = buf.reshape(h, img.bytesPerLine())[:, :w * 4].reshape(h, w, 4)[:, :, :3].astype(np.int16)
    edges = (np.abs(np.diff(rows, axis=1)).max(axis=2) > ROW_EDGE_STEP).sum(axis=1)
    empty = edges <= ROW_EMPTY_EDGES
    out, start = [], None
    for y, e in enumerate([*empty.tolist(), False]):
        if e and start is None:
            start = y
        elif not e and start is not None:
            if y - start >= min_rows:
                out.append([start, y - start])
            start = None
    return out
