"""The layout audit: every piece of text visible in a window, where it is painted, how big, and whether it fits.

``collect_layout(window)`` walks the widget tree of a shown window and returns one JSON-ready dict::

    {"size": [w, h], "lang": "zh", "items": [{"text": str, "rect": [x, y, w, h], "font_px": float,
                                             "clipped": bool, "role": str}, ...]}

- ``rect`` is the painted text's own bounds in window pixels (device-independent), not its widget's.
- ``font_px`` is the font's pixel size as seen on screen: scene items are scaled by their view's transform.
- ``clipped`` is true when the text does not fit the area that shows it: wider or taller than its widget's
  contents, or outside its widget's/ancestors'/view's visible area (an item that elides its text says so
  through ``audit_texts``, below).
- ``role`` is ``animations.typescale.role_of`` of the widget or item (or of its nearest tagged ancestor item),
  else the class name in lower case; pyqtgraph tick labels are "axis".

Where text comes from:
- widgets: ``QLabel`` (plain or rich text), buttons (``QAbstractButton``), ``QLineEdit`` (also inside an editable
  ``QComboBox``), a non-editable ``QComboBox``'s current text, ``QTextEdit``/``QPlainTextEdit``;
- scenes shown in a ``QGraphicsView`` (the stage, the tour, pyqtgraph plots): ``QGraphicsSimpleTextItem``,
  ``QGraphicsTextItem`` (which covers pyqtgraph's ``TextItem``, ``LabelItem``, ``LegendItem`` and the axis
  labels), pyqtgraph ``AxisItem`` tick strings (from ``generateDrawSpecs``), and any item that paints text
  itself and says so through the protocol below.

Protocol for items that paint text with ``QPainter.drawText``: give the item a method
``audit_texts() -> list[dict]``, each dict ``{"text": str, "rect": QRectF (item coordinates: the painted
text's bounds), "font_px": float (item coordinates), "clipped": bool, "role": str (optional)}``.
Items without it whose class paints text are invisible to the audit (they cannot be checked).

Besides ``items``, the layout says which ``page`` it is ("live", "tour" or "other"), lists the scenes' ``boxes``
(window rects of panels, cards and pills), the Live ``stage`` as drawn ([x, y, w, h], when shown), the code view's
``code`` ({file, first_line, last_line, highlighted_line, stage}, when shown; its lines are items of role "code"),
each wrapped item's ``lines`` (the text of each line as laid out), and with ``bands=True`` (``write_layout_json`` and so
``--layout-json``) the ``empty_bands`` ([top, height] runs of rows where nothing is drawn). The fault classes of
issue 24 are checked by ``gui.audit.layout_faults.faults(layout)``; ``python -m gui.audit.audit_matrix`` runs them
over every screen.

``audit_problems(layout)`` returns the human-readable problems of a layout (overlaps, clipping, empty text,
text under the type scale's minimum); tests assert it is empty.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QImage, QPainter, QTextDocument
from PySide6.QtGui import Qt as QtGuiNS
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QGraphicsItem,
    QGraphicsSimpleTextItem,
    QGraphicsTextItem,
    QGraphicsView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QTextEdit,
    QWidget,
)

from animations.typescale import MIN_FRACTION, role_of
from gui.audit.layout_facts import doc_lines, empty_bands, scene_boxes, stage_rect
from gui.audit.layout_faults import LATIN_TERMS, english_ui_words, untranslated_items  # noqa: F401 - importable here

OVERLAP_TOLERANCE_PX = 1.0  # rects that share at most this much (rounding) do not count as overlapping
FONT_TOLERANCE_PX = 0.25  # font sizes are floats; a hair under the minimum is rounding, not a problem


# ---- small helpers -----------------------------------------------------------------------------------------------
def font_px(font: QFont, widget: QWidget | None = None) -> float:
    """Pixel size of ``font`` (a point-sized font is converted with the widget's logical DPI, else 96)."""
    if font.pixelSize() > 0:
        return float(font.pixelSize())
    dpi = float(widget.logicalDpiY()) if widget is not None else 96.0
    return float(font.pointSizeF()) * dpi / 72.0


def _plain(text: str, rich: bool) -> str:
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def _rect_list(r: QRectF) -> list[float]:
    return [round(r.x(), 1), round(r.y(), 1), round(r.width(), 1), round(r.height(), 1)]


def _widget_role(w: QWidget) -> str:
    return role_of(w) or type(w).__name__.lower()


def _item_role(item: QGraphicsItem) -> str:
    it = item
    while it is not None:
        role = role_of(it)
        if role:
            return role
        it = it.parentItem()
    return type(item).__name__.lower()


def _visible_area(w: QWidget, window: QWidget) -> QRectF:
    """The part of ``w`` (in window coordinates) that its ancestors up to ``window`` let through."""
    top_left = w.mapTo(window, QPoint(0, 0))
    area = QRectF(QRect(top_left, w.size()))
    p = w.parentWidget()
    while p is not None and p is not window:
        # a scroll area's viewport clips its contents; every ancestor clips to its own rect
        pr = QRectF(QRect(p.mapTo(window, QPoint(0, 0)), p.size()))
        area = area.intersected(pr)
        p = p.parentWidget()
    return area.intersected(QRectF(window.rect()))


def _inside(inner: QRectF, outer: QRectF, slack: float = 0.5) -> bool:
    return (inner.left() >= outer.left() - slack and inner.top() >= outer.top() - slack
            and inner.right() <= outer.right() + slack and inner.bottom() <= outer.bottom() + slack)


def _aligned(box: QRectF, w: float, h: float, align) -> QRectF:
    """A w×h rect placed in ``box`` by Qt alignment flags (left/top by default)."""
    a = int(align)
    if a & int(Qt.AlignHCenter):
        x = box.center().x() - w / 2
    elif a & int(Qt.AlignRight):
        x = box.right() - w
    else:
        x = box.left()
    if a & int(Qt.AlignVCenter):
        y = box.center().y() - h / 2
    elif a & int(Qt.AlignBottom):
        y = box.bottom() - h
    else:
        y = box.top()
    return QRectF(x, y, w, h)


# ---- widgets ------------------------------------------------------------------------------------------------------
def _label_item(label: QLabel, window: QWidget) -> dict | None:
    raw = label.text()
    if not raw or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    rich = label.textFormat() == Qt.RichText or (label.textFormat() == Qt.AutoText and QtGuiNS.mightBeRichText(raw))
    text = _plain(raw, rich).strip()
    box = QRectF(label.contentsRect()).adjusted(label.margin(), label.margin(), -label.margin(), -label.margin())
    ind = max(0, label.indent())
    box = box.adjusted(ind if int(label.alignment()) & int(Qt.AlignLeft) else 0, 0, 0, 0)
    fm = QFontMetricsF(label.font())
    if rich or label.wordWrap():
        doc = QTextDocument()
        doc.setDefaultFont(label.font())
        doc.setDocumentMargin(0)
        if rich:
            doc.setHtml(raw)
        else:
            doc.setPlainText(raw)
        if label.wordWrap():
            doc.setTextWidth(max(1.0, box.width()))
        w, h = doc.idealWidth(), doc.size().height()
        lines = doc_lines(doc)
    else:
        lines = raw.splitlines(keepends=True) or [raw]
        w = max(fm.horizontalAdvance(line.rstrip("\n")) for line in lines)
        h = fm.height() * len(lines)
    painted = _aligned(box, w, h, label.alignment())
    clipped = w > box.width() + 1 or h > box.height() + 1
    entry = _finish(label, window, text, painted, font_px(label.font(), label), clipped, _widget_role(label))
    if entry is not None and len(lines) > 1:
        entry["lines"] = lines
    return entry


def _button_item(button: QAbstractButton, window: QWidget) -> dict | None:
    text = button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    if not text:
        return None
    fm = QFontMetricsF(button.font())
    w, h = fm.horizontalAdvance(text), fm.height()
    r = QRectF(button.rect())
    if isinstance(button, (QCheckBox, QRadioButton)):
        indicator = button.style().pixelMetric(button.style().PixelMetric.PM_IndicatorWidth, None, button)
        spacing = button.style().pixelMetric(button.style().PixelMetric.PM_CheckBoxLabelSpacing, None, button)
        box = r.adjusted(indicator + spacing, 0, 0, 0)
        painted = _aligned(box, w, h, Qt.AlignLeft | Qt.AlignVCenter)
    else:
        hint_pad = max(0.0, button.sizeHint().width() - w)  # the style's padding around the text
        box = r.adjusted(hint_pad / 2, 0, -hint_pad / 2, 0)
        painted = _aligned(r, w, h, Qt.AlignCenter)
    clipped = w > box.width() + 1 or h > r.height() + 1
    return _finish(button, window, text, painted, font_px(button.font(), button), clipped, _widget_role(button))


def _line_edit_item(edit: QLineEdit, window: QWidget, role_widget: QWidget) -> dict | None:
    text = edit.text() or edit.placeholderText()
    if not text:
        return None
    fm = QFontMetricsF(edit.font())
    cr = QRectF(edit.contentsRect()).adjusted(2, 0, -2, 0)  # QLineEdit's own 2 px horizontal margin
    w, h = fm.horizontalAdvance(text), fm.height()
    painted = _aligned(cr, min(w, cr.width()), h, edit.alignment() | Qt.AlignVCenter)
    clipped = w > cr.width() + 1
    return _finish(edit, window, text, painted, font_px(edit.font(), edit), clipped, _widget_role(role_widget))


def _combo_item(combo: QComboBox, window: QWidget) -> dict | None:
    text = combo.currentText()
    if not text:
        return None
    fm = QFontMetricsF(combo.font())
    w, h = fm.horizontalAdvance(text), fm.height()
    arrow = combo.style().pixelMetric(combo.style().PixelMetric.PM_ScrollBarExtent, None, combo)
    box = QRectF(combo.rect()).adjusted(6, 0, -arrow - 6, 0)
    painted = _aligned(box, min(w, box.width()), h, Qt.AlignLeft | Qt.AlignVCenter)
    return _finish(combo, window, text, painted, font_px(combo.font(), combo), w > box.width() + 1,
                   _widget_role(combo))


def _text_edit_item(edit: QTextEdit | QPlainTextEdit, window: QWidget) -> dict | None:
    text = edit.toPlainText().strip()
    if not text:
        return None
    viewport = edit.viewport()
    doc = edit.document()
    margin = doc.documentMargin()
    char_w = QFontMetricsF(edit.font()).averageCharWidth()
    doc_w = doc.idealWidth() if isinstance(edit, QTextEdit) else doc.size().width() * char_w
    line_h = QFontMetricsF(edit.font()).height()
    doc_h = doc.size().height() if isinstance(edit, QTextEdit) else edit.blockCount() * line_h
    vr = QRectF(viewport.rect())
    scroll_y = edit.verticalScrollBar().value()
    painted = QRectF(margin, margin - scroll_y, doc_w, max(0.0, doc_h - 2 * margin)).intersected(vr)
    if painted.isEmpty():
        return None
    # A box that scrolls to its newest line shows part of a longer text by design; only text that is cut
    # sideways (no wrapping) or a scroll bar that cannot be seen counts as clipped.
    clipped = doc_w > vr.width() + 1
    top_left = viewport.mapTo(window, QPoint(0, 0))
    painted.translate(top_left.x(), top_left.y())
    area = _visible_area(viewport, window)
    clipped = clipped or not _inside(painted, area)
    entry = {"text": text, "rect": _rect_list(painted.intersected(area)),
             "font_px": round(font_px(edit.font(), edit), 2), "clipped": bool(clipped), "role": _widget_role(edit)}
    lines = doc_lines(doc)
    if len(lines) > 1:
        entry["lines"] = lines
    return entry


def _finish(w: QWidget, window: QWidget, text: str, painted_local: QRectF, px: float, clipped: bool,
            role: str) -> dict | None:
    top_left = w.mapTo(window, QPoint(0, 0))
    painted = painted_local.translated(top_left.x(), top_left.y())
    area = _visible_area(w, window)
    if not painted.intersects(area):
        return None  # scrolled away or outside the window: not visible
    clipped = clipped or not _inside(painted, area)
    return {"text": text, "rect": _rect_list(painted), "font_px": round(px, 2), "clipped": bool(clipped),
            "role": role}


# ---- scenes -------------------------------------------------------------------------------------------------------
def _scale_of(t) -> float:
    return math.sqrt(abs(t.m11() * t.m22() - t.m12() * t.m21())) or 1.0


def _axis_texts(axis) -> list[tuple[str, QRectF, float]]:
    """pyqtgraph ``AxisItem`` tick strings as (text, rect in item coordinates, font px)."""
    if not axis.isVisible() or not axis.style.get("showValues", True):
        return []
    image = QImage(4, 4, QImage.Format_ARGB32)
    painter = QPainter(image)
    try:
        font = axis.style.get("tickFont") or QFont()
        painter.setFont(font)
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    if not specs:
        return []
    px = font_px(font)
    out = []
    fm = QFontMetricsF(font)
    for rect, flags, text in specs[2]:
        w, h = fm.horizontalAdvance(text), fm.height()
        out.append((text, _aligned(QRectF(rect), w, h, flags), px))
    return out


def _scene_items(view: QGraphicsView, window: QWidget) -> list[dict]:
    scene = view.scene()
    if scene is None:
        return []
    viewport = view.viewport()
    vp_origin = viewport.mapTo(window, QPoint(0, 0))
    vp_area = _visible_area(viewport, window)
    vt = view.viewportTransform()
    out: list[dict] = []

    def add(item: QGraphicsItem, text: str, local: QRectF, px_local: float, clipped: bool, role: str,
            lines: list[str] | None = None) -> None:
        text = text.strip()
        dt = item.deviceTransform(vt)
        r = dt.mapRect(local).translated(vp_origin.x(), vp_origin.y())
        if not r.intersects(vp_area):
            return
        clipped = clipped or not _inside(r, vp_area)
        out.append({"text": text, "rect": _rect_list(r), "font_px": round(px_local * _scale_of(dt), 2),
                    "clipped": bool(clipped), "role": role})
        if lines is not None and len(lines) > 1:
            out[-1]["lines"] = lines

    for item in scene.items():
        if not item.isVisible() or item.effectiveOpacity() < 0.05:
            continue
        for text in _item_texts(item):
            add(item, *text)
    return out


def _item_texts(item: QGraphicsItem) -> list[tuple]:
    """The texts a scene item draws, each as ``(text, local rect, font px, clipped, role[, lines])``: a text
    item's own, a plot axis's tick labels, and what an item with ``audit_texts`` says it draws."""
    try:
        from pyqtgraph import AxisItem
    except ImportError:  # pragma: no cover - pyqtgraph is a dependency
        AxisItem = ()  # noqa: N806
    texts: list[tuple] = []
    if isinstance(item, QGraphicsSimpleTextItem):
        if item.text():
            texts.append((item.text(), item.boundingRect(), font_px(item.font()), False, _item_role(item),
                          item.text().splitlines(keepends=True)))
        return texts
    if isinstance(item, QGraphicsTextItem):
        text = item.toPlainText()
        if text.strip():
            m = item.document().documentMargin()
            local = item.boundingRect().adjusted(m, m, -m, -m)
            tw = item.textWidth()
            clipped = tw > 0 and item.document().idealWidth() > tw + 1
            texts.append((text, local, font_px(item.font()), clipped, _item_role(item), doc_lines(item.document())))
        return texts
    if AxisItem and isinstance(item, AxisItem):
        bounds = item.boundingRect()
        for text, rect, px in _axis_texts(item):
            texts.append((text, rect, px, not _inside(rect, bounds), role_of(item) or "axis"))
    if hasattr(item, "audit_texts"):
        for t in item.audit_texts() or []:
            texts.append((str(t.get("text", "")), QRectF(t["rect"]), float(t.get("font_px", 0)),
                          bool(t.get("clipped", False)), str(t.get("role") or _item_role(item))))
    return texts


# ---- the walk -----------------------------------------------------------------------------------------------------
def _shown(w: QWidget, window: QWidget) -> bool:
    return w.isVisibleTo(window) and w.width() > 0 and w.height() > 0 and not w.isWindow()


def collect_layout(window: QWidget, lang: str | None = None, bands: bool = False) -> dict:
    """The layout of every visible text in ``window`` (shown, laid out): see the module docstring.

    ``lang`` defaults to ``gui.i18n.current_language()``. ``bands``: also render the window and list its
    empty bands of rows (``empty_bands``; costs a render).
    """
    if lang is None:
        from gui import i18n
        lang = i18n.current_language()
    items: list[dict] = []
    boxes: list[list[float]] = []
    for w in [window, *window.findChildren(QWidget)]:
        if w is not window and not _shown(w, window):
            continue
        if w.property("auditSkip"):
            continue
        if w.property("auditLines"):  # lists its own lines (the code view: gui/code_view/panel.py)
            items.extend(w.audit_lines(window))
            continue
        if isinstance(w, QGraphicsView):
            items.extend(_scene_items(w, window))
            boxes.extend(scene_boxes(w, window))
        elif (entry := _widget_item(w, window)) is not None:
            items.append(entry)
    layout = {"size": [window.width(), window.height()], "lang": lang, "page": _page_of(window), "items": items,
              "boxes": boxes}
    stage = stage_rect(window)
    if stage is not None:
        layout["stage"] = stage
    panels = ([window] if window.objectName() == "codePanel" else []) + window.findChildren(QWidget, "codePanel")
    code = next((w for w in panels if w is window or _shown(w, window)), None)
    if code is not None and code.facts() is not None:
        layout["code"] = code.facts()  # file, lines shown, the highlighted line, the stage (gui/code_view)
    if bands:
        layout["empty_bands"] = empty_bands(exact_image(window))
    return layout


def _widget_item(w: QWidget, window: QWidget) -> dict | None:
    """The text item of a label, button, line edit, read-only combo box or text edit; None for other widgets."""
    if isinstance(w, QLabel):
        return _label_item(w, window)
    if isinstance(w, QAbstractButton):
        return _button_item(w, window)
    if isinstance(w, QLineEdit):
        parent = w.parentWidget()
        return _line_edit_item(w, window, parent if isinstance(parent, QComboBox) else w)
    if isinstance(w, QComboBox) and not w.isEditable():
        return _combo_item(w, window)
    if isinstance(w, (QTextEdit, QPlainTextEdit)):
        return _text_edit_item(w, window)
    return None


def _page_of(window: QWidget) -> str:
    """"tour" when a tour page is shown, "live" when the Live stage is, else "other"."""
    for w in window.findChildren(QWidget):
        if type(w).__name__ == "TourWidget" and w.isVisibleTo(window):
            return "tour"
    if type(window).__name__ == "TourWidget":
        return "tour"
    return "live" if stage_rect(window) is not None else "other"


def write_layout_json(window: QWidget, path: str | Path, lang: str | None = None) -> dict:
    """``collect_layout`` (with the empty bands and every control's hit area) and write it to ``path`` as JSON
    (UTF-8). Returns the layout."""
    layout = collect_layout(window, lang, bands=True)
    from gui.audit.controls_audit import collect_controls  # every control and its hit area (a key of its own)
    layout["controls"] = collect_controls(window)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(layout, ensure_ascii=False, indent=1), encoding="utf-8")
    return layout


# ---- the checks ---------------------------------------------------------------------------------------------------
def _overlap(a: list[float], b: list[float]) -> tuple[float, float]:
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return w, h


def audit_problems(layout: dict, min_px: float | None = None, check_overlap: bool = True) -> list[str]:
    """Problems of a layout from ``collect_layout`` (or its JSON), one line each; [] when all is well.

    Checks: no empty text; nothing clipped; no font under ``min_px`` (default: window height / 48, the type
    scale's floor, ``animations.typescale.MIN_FRACTION``); no two texts' rects intersecting by more than
    ``OVERLAP_TOLERANCE_PX`` in both directions (``check_overlap=False`` skips that).
    """
    height = float(layout["size"][1])
    floor = height * MIN_FRACTION if min_px is None else float(min_px)
    items = layout["items"]
    problems: list[str] = []

    def name(it: dict) -> str:
        text = it["text"].replace("\n", " ")
        return f"{it['role']} {text[:40]!r} at {[round(v) for v in it['rect']]}"

    for it in items:
        if not it["text"].strip():
            problems.append(f"empty text: {name(it)}")
        if it["clipped"]:
            problems.append(f"clipped: {name(it)}")
        if it["font_px"] < floor - FONT_TOLERANCE_PX:
            problems.append(f"font {it['font_px']:.1f} px under the minimum {floor:.1f} px: {name(it)}")
    if check_overlap:
        for i, a in enumerate(items):
            for b in items[i + 1:]:
                w, h = _overlap(a["rect"], b["rect"])
                if w > OVERLAP_TOLERANCE_PX and h > OVERLAP_TOLERANCE_PX:
                    problems.append(f"overlap {w:.0f}×{h:.0f} px: {name(a)} and {name(b)}")
    return problems


def exact_image(widget: QWidget, size: tuple[int, int] | None = None) -> QImage:
    """``widget`` rendered into an image of exactly its size (or ``size``) in device-independent pixels.

    ``QWidget.grab()`` returns device pixels (3840×2160 for a 1920×1080 window at scale factor 2); this renders
    with a device pixel ratio of 1 instead, so the PNG is the size the window is in logical pixels.
    """
    w, h = size or (widget.width(), widget.height())
    image = QImage(w, h, QImage.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(1.0)
    image.fill(Qt.black)
    painter = QPainter(image)
    try:
        widget.render(painter, QPoint(0, 0))
    finally:
        painter.end()
    return image
