"""The layout audit's controls: every interactive control of a window and its hit area, so that target sizes can
be checked for any screen (``screenshot --layout-json``, key ``"controls"``).

``collect_controls(window)`` returns ``[{"kind": str, "text": str, "rect": [x, y, w, h]}, ...]`` in window pixels
(device-independent), for every control a visitor can see and press: kind "button", "checkbox", "radio",
"combo", "field" (a line edit), "slider", "slider-handle" (the part a finger drags), "link" (a text with links,
such as a caption's glossary terms), "scrollbar". ``rect`` is the hit area: the widget's rect, clipped to what its
ancestors show. A control inside a scroll area (the Live page's column of sliders) that is scrolled wholly out of
view is not listed; one scrolled partly out of view is listed with the part in view and ``"clipped": true`` (its
size is checked when it is scrolled into view, not here). A slider handle's hit area is the handle's rect from
the style, grown to ``target_px`` wide and the slider's full height when the window is in touch mode
(``gui.kiosk.touch``: a finger anywhere on the slider drags it).

``target_problems(controls, height)`` lists, one line each, the controls under ``target_px(height)`` on a side
and the neighbours closer than ``GAP_PX`` (``gui.kiosk.touch_targets``); [] when all is well.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSlider,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QRadioButton,
    QScrollBar,
    QStyle,
    QStyleOptionSlider,
    QWidget,
)

from gui.kiosk.touch_targets import GAP_PX, is_control, target_px

SIZE_TOLERANCE_PX = 0.5  # rounding


def _visible_rect(w: QWidget, window: QWidget) -> QRectF:
    area = QRectF(QRect(w.mapTo(window, QPoint(0, 0)), w.size()))
    p = w.parentWidget()
    while p is not None and p is not window:
        area = area.intersected(QRectF(QRect(p.mapTo(window, QPoint(0, 0)), p.size())))
        p = p.parentWidget()
    return area.intersected(QRectF(window.rect()))


def _scroll_view(w: QWidget, window: QWidget) -> QRectF | None:
    """The part of ``window`` through which the scroll areas around ``w`` show it (None: no scroll area)."""
    view = None
    p = w.parentWidget()
    while p is not None and p is not window:
        area = p.parentWidget()
        if isinstance(area, QAbstractScrollArea) and p is area.viewport():
            r = QRectF(QRect(p.mapTo(window, QPoint(0, 0)), p.size()))
            view = r if view is None else view.intersected(r)
        p = area
    return view


def _rect(r: QRectF) -> list[float]:
    return [round(r.x(), 1), round(r.y(), 1), round(r.width(), 1), round(r.height(), 1)]


def _kind(w: QWidget) -> str:
    if isinstance(w, QCheckBox):
        return "checkbox"
    if isinstance(w, QRadioButton):
        return "radio"
    if isinstance(w, QAbstractButton):
        return "button"
    if isinstance(w, QScrollBar):
        return "scrollbar"
    if isinstance(w, QComboBox):
        return "combo"
    if isinstance(w, QAbstractSlider):
        return "slider"
    if isinstance(w, QLineEdit):
        return "field"
    return type(w).__name__.lower()


def _text(w: QWidget) -> str:
    if isinstance(w, QAbstractButton):
        return w.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    if isinstance(w, QComboBox):
        return w.currentText()
    if isinstance(w, QLineEdit):
        return w.text() or w.placeholderText()
    if isinstance(w, QAbstractSlider):
        return w.toolTip() or w.accessibleName() or str(w.value())
    return w.toolTip()


def _handle_rect(slider: QAbstractSlider, window: QWidget) -> QRectF:
    opt = QStyleOptionSlider()
    slider.initStyleOption(opt)
    handle = slider.style().subControlRect(QStyle.CC_Slider, opt, QStyle.SC_SliderHandle, slider)
    r = QRectF(handle)
    if getattr(window, "touch_router", None) is not None:  # a finger anywhere on the slider drags the handle
        px = target_px(window.height())
        c = r.center()
        if slider.orientation() == Qt.Horizontal:  # kept on the slider: at an end, the square lies inside it
            r = QRectF(max(0.0, min(slider.width() - px, c.x() - px / 2)), 0, min(px, slider.width()), slider.height())
        else:
            r = QRectF(0, max(0.0, min(slider.height() - px, c.y() - px / 2)), slider.width(), min(px, slider.height()))
    top_left = slider.mapTo(window, QPoint(0, 0))
    return r.translated(top_left.x(), top_left.y()).intersected(_visible_rect(slider, window))


def _shown(w: QWidget, window: QWidget) -> bool:
    return w.isVisibleTo(window) and w.width() > 0 and w.height() > 0 and not w.isWindow()


def collect_controls(window: QWidget) -> list[dict]:
    """Every visible interactive control of ``window`` with its hit area: see the module docstring."""
    out: list[dict] = []
    for w in window.findChildren(QWidget):
        if not _shown(w, window) or w.property("auditSkip"):
            continue
        link = isinstance(w, QLabel) and bool(w.textInteractionFlags() & Qt.LinksAccessibleByMouse) \
            and "<a " in w.text()
        if not (is_control(w) or link):
            continue
        area = _visible_rect(w, window)
        if area.isEmpty():  # also a control scrolled wholly out of its scroll area's view
            continue
        view = _scroll_view(w, window)
        clipped = {"clipped": True} if view is not None and \
            not view.contains(QRectF(QRect(w.mapTo(window, QPoint(0, 0)), w.size()))) else {}
        if link:
            out.append({"kind": "link", "text": w.toolTip() or "", "rect": _rect(area), **clipped})
            continue
        out.append({"kind": _kind(w), "text": _text(w), "rect": _rect(area), **clipped})
        if isinstance(w, QAbstractSlider) and not isinstance(w, QScrollBar):
            handle = _handle_rect(w, window)
            if not handle.isEmpty():
                out.append({"kind": "slider-handle", "text": _text(w), "rect": _rect(handle), **clipped})
    return out


def _gap(a: list[float], b: list[float]) -> float:
    """The distance between two rects (0 when they touch or overlap)."""
    dx = max(b[0] - (a[0] + a[2]), a[0] - (b[0] + b[2]), 0.0)
    dy = max(b[1] - (a[1] + a[3]), a[1] - (b[1] + b[3]), 0.0)
    return max(dx, dy)


def target_problems(controls: list[dict], height: int, min_px: float | None = None,
                    gap_px: float = GAP_PX) -> list[str]:
    """Controls under ``min_px`` (default ``target_px(height)``) on a side, and neighbours nearer than ``gap_px``.

    A slider's handle is checked against its own slider only for size (it lies on it by design); a link's label
    is checked for its height only (a caption is as wide as its text); a control partly scrolled out of view
    (``"clipped"``) for its gaps only."""
    floor = target_px(height) if min_px is None else float(min_px)
    problems = []

    def name(c: dict) -> str:
        return f"{c['kind']} {c['text'][:30]!r} at {[round(v) for v in c['rect']]}"

    for c in controls:
        if c.get("clipped"):  # partly scrolled out of view: its size shows when it is scrolled in
            continue
        w, h = c["rect"][2], c["rect"][3]
        small = h < floor - SIZE_TOLERANCE_PX or (c["kind"] != "link" and w < floor - SIZE_TOLERANCE_PX)
        if small:
            problems.append(f"{w:.0f}×{h:.0f} px, under {floor:.0f} px: {name(c)}")
    solid = [c for c in controls if c["kind"] != "slider-handle"]
    for i, a in enumerate(solid):
        for b in solid[i + 1:]:
            g = _gap(a["rect"], b["rect"])
            if g < gap_px - SIZE_TOLERANCE_PX:
                problems.append(f"{g:.0f} px apart (under {gap_px} px): {name(a)} and {name(b)}")
    return problems
