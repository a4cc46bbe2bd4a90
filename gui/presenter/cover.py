"""A widget over the whole window that the next key, click or touch only takes down (the presenter's black
screen, B, and its card of keys, H). While it is up, that input does nothing else: a clicker's → that brings the
picture back must not also turn the page."""

from __future__ import annotations

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication, QFrame, QWidget

# what takes a cover down; a key's ShortcutOverride is accepted too, so that no shortcut fires for that key
_CLOSING = (QEvent.KeyPress, QEvent.ShortcutOverride, QEvent.MouseButtonPress, QEvent.TouchBegin)


class Cover(QFrame):
    """Hidden until ``cover()``; ``uncover()`` (or the next input) hides it. ``fit()`` places it: called when it
    is put up and whenever ``window`` is resized while it is up (subclasses say where)."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.window_ = parent  # any widget to cover (the app passes its window): only its size is read
        parent.installEventFilter(self)
        self.hide()

    def fit(self) -> None:
        self.setGeometry(self.window_.rect())

    def cover(self) -> None:
        self.fit()
        self.show()
        self.raise_()
        QApplication.instance().installEventFilter(self)

    def uncover(self) -> None:
        QApplication.instance().removeEventFilter(self)
        self.hide()

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        kind = event.type()
        if obj is self.window_ and kind == QEvent.Resize:
            if self.isVisible():
                self.fit()
            return False
        if not self.isVisible() or kind not in _CLOSING:
            return False
        if kind == QEvent.KeyPress and event.isAutoRepeat():
            return True
        event.accept()
        if kind != QEvent.ShortcutOverride:  # the KeyPress that follows an accepted override takes it down
            self.uncover()
        return True
