"""The layout audit of a tour scene: every visible text, its rect, size and role, and what is wrong with it.

A scene passes when no two visible texts overlap, no text or panel is clipped (outside the scene, or text outside the
card it sits on), no text is empty and no font is smaller than the minimum (``TypeScale.minimum`` of the window, i.e.
``height / 60`` window px, once the scene is fitted to its view: pass ``view_scale``, window px per scene unit).
Call it on the scene's end state (``finish()``). No torch; the same facts ``screenshot --layout-json`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QLineF, QRectF
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsTextItem,
)

from animations.typescale import role_of

TOLERANCE = 1.0  # scene units: rects that only touch (shared edges, antialiasing) do not count


@dataclass
class TextBox:
    """One visible text of a scene: ``rect`` in scene units, ``px`` its font's pixel size in scene units."""

    text: str
    rect: QRectF
    px: float
    role: str | None
    clipped: bool


def _visible(item: QGraphicsItem) -> bool:
    return item.isVisible() and item.effectiveOpacity() > 0.02


def _text_of(item: QGraphicsItem) -> str | None:
    if isinstance(item, QGraphicsSimpleTextItem):
        return item.text()
    if isinstance(item, QGraphicsTextItem):
        return item.toPlainText()
    return None


def _parents(items: list[QGraphicsItem]) -> dict[int, QGraphicsItem]:
    """id(child) -> parent, from ``childItems()``: PySide6 6.x can delete a top-level item whose ``parentItem()``
    was asked from a wrapper ``scene.items()`` made (the audit must never change the scene)."""
    out = {}
    for item in items:
        for child in item.childItems():
            out[id(child)] = item
    return out


def texts(scene: QGraphicsScene) -> list[TextBox]:
    """Every visible text item of ``scene`` (in its current state)."""
    area = scene.sceneRect().adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE, TOLERANCE)
    out = []
    items = scene.items()
    parents = _parents(items)
    for item in items:
        s = _text_of(item)
        if s is None or not _visible(item):
            continue
        rect = item.sceneBoundingRect()
        clipped = not area.contains(rect)
        parent = parents.get(id(item))
        if parent is not None and not isinstance(parent, (QGraphicsSimpleTextItem, QGraphicsTextItem)):
            holder = parent.sceneBoundingRect().adjusted(-TOLERANCE, -TOLERANCE, TOLERANCE, TOLERANCE)
            clipped = clipped or not holder.contains(rect)
        tf = item.sceneTransform()
        scale = (tf.m21() ** 2 + tf.m22() ** 2) ** 0.5  # rotated text keeps its size
        out.append(TextBox(s, rect, item.font().pixelSize() * scale, role_of(item), clipped))
    return out


def problems(scene: QGraphicsScene, view_scale: float = 1.0, min_px: float = 0.0) -> list[str]:
    """What is wrong with the scene's text, one line each ([] when it passes).

    view_scale: window px per scene unit once fitted; min_px: the smallest allowed font, window px.
    """
    boxes = texts(scene)
    bad = []
    for b in boxes:
        bad += _text_problems(b, view_scale, min_px)
    bad += _overlaps(boxes)
    bad += _clipped_shapes(scene)
    for line in _lines(scene):
        for b in boxes:
            if _crosses(line, b.rect.adjusted(2, 2, -2, -2)):
                bad.append(f"a line strikes through {b.role} {b.text[:30]!r}")
    return bad


def _text_problems(b: TextBox, view_scale: float, min_px: float) -> list[str]:
    """One text's own faults: empty, clipped by its holder, under ``min_px`` window px, or without a role."""
    bad = []
    name = f"{b.role or '?'} {b.text[:40]!r}"
    if not b.text.strip():
        bad.append(f"empty text ({b.role})")
    if b.clipped:
        bad.append(f"clipped: {name} at {b.rect.getRect()}")
    if b.px * view_scale < min_px - 0.01:
        bad.append(f"font {b.px * view_scale:.1f} px < {min_px:.1f} px: {name}")
    if b.role is None:
        bad.append(f"no role: {name}")
    return bad


def _overlaps(boxes: list[TextBox]) -> list[str]:
    """Every pair of texts that overlap by more than TOLERANCE both ways."""
    bad = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            r = a.rect.intersected(b.rect)
            if r.width() > TOLERANCE and r.height() > TOLERANCE:
                bad.append(f"overlap: {a.role} {a.text[:30]!r} × {b.role} {b.text[:30]!r}")
    return bad


def _clipped_shapes(scene: QGraphicsScene) -> list[str]:
    """Panels, bars and cards that reach outside the scene (the view shows no more)."""
    bad = []
    area = scene.sceneRect().adjusted(-2, -2, 2, 2)
    items = scene.items()
    parents = _parents(items)
    for item in items:
        if _text_of(item) is None and _visible(item) and id(item) not in parents:
            if not area.contains(item.sceneBoundingRect()):
                r = item.sceneBoundingRect()
                bad.append(f"clipped shape {type(item).__name__} at {tuple(round(v) for v in r.getRect())}")
    return bad

def _lines(scene: QGraphicsScene) -> list[QLineF]:
    """Visible straight lines (rules, dashed limits) in scene coordinates."""
    out = []
    for item in scene.items():
        if isinstance(item, QGraphicsLineItem) and _visible(item):
            ln = item.line()
            out.append(QLineF(item.mapToScene(ln.p1()), item.mapToScene(ln.p2())))
    return out


def _crosses(line: QLineF, rect: QRectF) -> bool:
    """True when the segment ``line`` passes through ``rect``."""
    if rect.width() <= 0 or rect.height() <= 0:
        return False
    if rect.contains(line.p1()) or rect.contains(line.p2()):
        return True
    edges = (QLineF(rect.topLeft(), rect.topRight()), QLineF(rect.topRight(), rect.bottomRight()),
             QLineF(rect.bottomRight(), rect.bottomLeft()), QLineF(rect.bottomLeft(), rect.topLeft()))
    return any(line.intersects(e)[0] == QLineF.BoundedIntersection for e in edges)
