"""Keyboard focus that never traps a key: ``FocusGuard``, one event filter on the application.

Rules (issue #18):

* A text field keeps its keys only while it is being edited. Enter or Esc in a field hands the focus back to
  the page (Esc also puts back the text it had when the focus came in; Enter keeps what was typed and the
  field's own ``returnPressed`` runs first).
* A slider takes the arrow keys (← → ↑ ↓) only while it has the focus and shows it with a focus ring (a style
  sheet that applies to it draws ``QSlider:focus``); otherwise the arrows stay the presenter's keys. Esc
  releases it too.
* In presenter mode (``presenter=True``) a click anywhere outside the field being edited takes the focus out of
  that field, so the projector never shows a blinking cursor the speaker forgot.

"The page" is the nearest ancestor with a callable ``focus_home()`` (the tour gives the focus to its stage);
without one, the field just loses the focus, and the window's shortcuts get every key again.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

SLIDER_KEYS = (Qt.Key_Left, Qt.Key_Right, Qt.Key_Up, Qt.Key_Down)


def is_text_field(widget) -> bool:
    """True for a widget that takes typed text (line edits, editable combo boxes' edits, spin boxes, editable
    text edits)."""
    if isinstance(widget, QLineEdit):
        return not widget.isReadOnly()
    if isinstance(widget, QAbstractSpinBox):
        return not widget.isReadOnly()
    if isinstance(widget, (QTextEdit, QPlainTextEdit)):
        return not widget.isReadOnly()
    return False


def shows_focus_ring(slider: QWidget) -> bool:
    """True when a style sheet that applies to ``slider`` (its own, an ancestor's or the application's) draws
    ``QSlider:focus``: only such a slider takes the arrow keys, because only then can the speaker see which
    slider the arrows move."""
    w = slider
    while w is not None:
        if "QSlider:focus" in (w.styleSheet() or ""):
            return True
        w = w.parentWidget()
    app = QApplication.instance()
    return bool(app is not None and "QSlider:focus" in (app.styleSheet() or ""))


def hand_focus_back(widget: QWidget) -> None:
    """Give the focus from ``widget`` back to its page (see the module docstring)."""
    parent = widget.parentWidget()
    while parent is not None:
        home = getattr(parent, "focus_home", None)
        if callable(home):
            home()
            if widget.hasFocus():
                widget.clearFocus()
            return
        parent = parent.parentWidget()
    widget.clearFocus()


class FocusGuard(QObject):
    """The focus rules of the module docstring, for the whole application (``install()``)."""

    def __init__(self, parent: QObject | None = None, presenter: bool = False):
        super().__init__(parent)
        self.presenter = presenter
        self._text_at_focus: dict[int, str] = {}

    def install(self) -> FocusGuard:
        QApplication.instance().installEventFilter(self)
        return self

    def uninstall(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if kind == QEvent.ShortcutOverride:
            return self._shortcut_override(obj, event)
        if kind == QEvent.FocusIn and isinstance(obj, QLineEdit):
            self._text_at_focus[id(obj)] = obj.text()
            return False
        if kind == QEvent.KeyPress:
            return self._key_press(obj, event)
        if kind == QEvent.MouseButtonPress and self.presenter and isinstance(obj, QWidget):
            self._presenter_press(obj)
        return False

    @staticmethod
    def _shortcut_override(obj, event) -> bool:
        """A focused slider that shows its focus ring takes the arrows; a text field gets Escape and Enter."""
        if isinstance(obj, QAbstractSlider) and obj.hasFocus() and event.key() in SLIDER_KEYS \
                and not event.modifiers() & (Qt.ControlModifier | Qt.AltModifier) and shows_focus_ring(obj):
            event.accept()  # the slider that shows its focus ring takes the arrow
            return True
        if is_text_field(obj) and event.key() in (Qt.Key_Escape, Qt.Key_Return, Qt.Key_Enter):
            event.accept()  # these reach the field, which then gives the focus back
            return False
        return False

    def _key_press(self, obj, event) -> bool:
        """Escape in a field or slider: the field's text as it was, the focus back to the page; Enter in a field:
        the field's own Enter, then the focus back."""
        key = event.key()
        if key == Qt.Key_Escape and (is_text_field(obj) or isinstance(obj, QAbstractSlider)) and obj.hasFocus():
            if isinstance(obj, QLineEdit) and id(obj) in self._text_at_focus:
                obj.setText(self._text_at_focus[id(obj)])
            hand_focus_back(obj)
            return True
        if key in (Qt.Key_Return, Qt.Key_Enter) and isinstance(obj, QLineEdit) and obj.hasFocus():
            obj.event(event)  # the field's own Enter first (returnPressed, a combo box adds its item)
            self._text_at_focus[id(obj)] = obj.text()
            hand_focus_back(obj)
            return True
        return False

    @staticmethod
    def _presenter_press(obj: QWidget) -> None:
        """Presenter mode: a press outside the focused text field gives its focus back to the page."""
        focus = QApplication.focusWidget()
        if focus is None or not is_text_field(focus) or obj is focus or focus.isAncestorOf(obj):
            return
        if isinstance(obj, QComboBox) and obj.lineEdit() is focus:
            return  # the field's own combo box (its arrow, its list)
        if focus.window() is obj.window():
            hand_focus_back(focus)

__all__ = ["FocusGuard", "hand_focus_back", "is_text_field", "shows_focus_ring"]
