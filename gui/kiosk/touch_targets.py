"""Targets for a finger: every control of a window at least ``target_px(height)`` on each side, ``GAP_PX`` apart.

``TargetSizer(host)`` applies it to every control inside ``host`` (a top-level widget), also to those built later
(a tour page builds its own controls) and again after a style sheet change (a style sheet's ``min-height`` is
re-applied by Qt on every repolish) or a resize of the window (the target grows with its height). It is one
application event filter, so no widget needs to know about touch. ``presets_only(host)`` is the kiosk's
"no keyboard": the question fields become lists of preset questions to tap.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QApplication,
    QBoxLayout,
    QComboBox,
    QGridLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QWidget,
)

TARGET_AT_720 = 44  # px at 720 lines: Apple's 44 pt; Material asks 48 dp
GAP_PX = 8  # between neighbouring targets
CONTROL_KINDS = (QAbstractButton, QAbstractSlider, QComboBox, QLineEdit)
_MIN_PROP = "touchMinPx"  # the minimum this module set, so that a smaller window can shrink it again


def target_px(height: int) -> int:
    """The least side of a finger's target in a window ``height`` px tall: 44 px at 720, growing in proportion
    (66 px at 1080; Apple HIG 44 pt, Material 48 dp, scaled to the screen's lines)."""
    return max(TARGET_AT_720, round(height * TARGET_AT_720 / 720))


def is_link_label(w: QWidget) -> bool:
    """A text whose links a finger taps (the tour's caption with its glossary terms): the whole label is the
    target (``gui.audit.controls_audit`` lists it as a "link"), so it is at least a target tall."""
    return (isinstance(w, QLabel) and bool(w.textInteractionFlags() & Qt.LinksAccessibleByMouse)
            and "<a " in w.text())  # Qt lets every label take links by default: only one that has a link counts


def is_control(w: QWidget) -> bool:
    """A widget a visitor presses or drags (a line edit inside a combo box is part of the combo box)."""
    if isinstance(w, QLineEdit) and isinstance(w.parentWidget(), QComboBox):
        return False
    return isinstance(w, CONTROL_KINDS)


class TargetSizer(QObject):
    """Keeps every control inside ``host`` finger-sized (``target_px``) with ``GAP_PX`` between neighbours."""

    def __init__(self, host: QWidget):
        super().__init__(host)
        self.host = host
        self.px = target_px(host.height())
        QApplication.instance().installEventFilter(self)
        self.apply_all()

    def stop(self) -> None:
        QApplication.instance().removeEventFilter(self)

    def apply_all(self) -> None:
        self.px = target_px(self.host.height())
        for w in self.host.findChildren(QWidget):
            if is_control(w):
                self.fit(w)
            elif is_link_label(w):
                self.fit_height(w)
        for layout in self.host.findChildren(QLayout):
            self._space(layout)  # findChildren also finds the layouts nested in layouts
        for strip in self._chip_strips():
            self._fit_strip(strip)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind == QEvent.Resize and obj is self.host:
            if target_px(self.host.height()) != self.px:
                self.apply_all()
        elif kind in (QEvent.Show, QEvent.StyleChange) and isinstance(obj, QWidget) \
                and self.host.isAncestorOf(obj):
            if is_control(obj):
                self.fit(obj)
            elif is_link_label(obj):
                self.fit_height(obj)
            elif obj.layout() is not None:  # a page or a row built later: its layouts get the gap
                for layout in (obj.layout(), *obj.layout().findChildren(QLayout)):
                    self._space(layout)
            if hasattr(obj, "set_touch_target"):
                self._fit_strip(obj)
        return False

    def fit(self, w: QWidget) -> None:
        """At least ``px`` high and wide (a maximum below that is raised; a fixed size grows)."""
        px = self.px
        mine = w.property(_MIN_PROP)
        for get, set_min, get_max, set_max in ((w.minimumHeight, w.setMinimumHeight, w.maximumHeight,
                                                 w.setMaximumHeight),
                                                (w.minimumWidth, w.setMinimumWidth, w.maximumWidth,
                                                 w.setMaximumWidth)):
            current = get()
            if current < px or (mine is not None and current == mine):
                set_min(px)
            if get_max() < px:
                set_max(px)
        w.setProperty(_MIN_PROP, px)
        if isinstance(w, QComboBox):  # the list of presets is tapped too
            w.view().setStyleSheet(f"QAbstractItemView::item {{ min-height: {px}px; }}")

    def fit_height(self, w: QWidget) -> None:
        """At least ``px`` high (a label of links: its width is the text's, its height one line or more)."""
        mine = w.property(_MIN_PROP)
        if w.minimumHeight() < self.px or (mine is not None and w.minimumHeight() == mine):
            w.setMinimumHeight(self.px)
        w.setProperty(_MIN_PROP, self.px)

    def _space(self, layout: QLayout) -> None:
        if isinstance(layout, QGridLayout):
            layout.setHorizontalSpacing(max(GAP_PX, layout.horizontalSpacing()))
            layout.setVerticalSpacing(max(GAP_PX, layout.verticalSpacing()))
        elif isinstance(layout, QBoxLayout):
            if layout.spacing() < GAP_PX:
                layout.setSpacing(GAP_PX)
        elif hasattr(layout, "set_gap") and layout.gap() < GAP_PX:  # gui.tour.flow.FlowLayout
            layout.set_gap(GAP_PX)

    def _chip_strips(self) -> list[QWidget]:
        return [w for w in self.host.findChildren(QWidget) if hasattr(w, "set_touch_target")]

    def _fit_strip(self, strip: QWidget) -> None:
        """The tour's page strip lays its chips out by hand from their size hints: give it the target height
        and the gap (its ``set_touch_target``)."""
        strip.set_touch_target(self.px, GAP_PX)


def presets_only(host: QWidget) -> None:
    """No keyboard: the Live page's question box keeps its presets but takes no typing (a tap opens the list),
    and the tour's "Your question" field is hidden (the tour asks the Live page's question)."""
    from gui.live.state import SessionState
    if not isinstance(getattr(host, "session", None), SessionState):  # a tour shown alone, not a LiveHost
        _hide_question(host if hasattr(host, "prompt_edit") else None)
        return
    box = host.prompt_box
    if isinstance(box, QComboBox) and box.lineEdit() is not None:
        box.lineEdit().setReadOnly(True)
        box.lineEdit().setFocusPolicy(Qt.NoFocus)
        box.setFocusPolicy(Qt.NoFocus)
    _hide_question(host.built_tour())
    host.pages.widgetAdded.connect(lambda _i: _hide_question(host.built_tour()))  # the tour, once it is built


def _hide_question(tour) -> None:
    if tour is None:
        return
    tour.keyboard_hints = False  # no keyboard: the game's "or → / PageDown / Space" is not said
    for name in ("prompt_edit", "prompt_label"):
        w = getattr(tour, name, None)
        if w is not None:
            w.hide()
            w.setProperty("kioskHidden", True)
