"""Tap-to-reveal for ``gui.kiosk.touch``: what a hover would have shown (``tooltip_at``) and the card a finger gets
instead (``TipCard``)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtWidgets import QFrame, QGraphicsView, QLabel, QWidget

CARD_S = 6.0  # a card closes by itself after this long


def within(widget: QWidget | None, kind) -> QWidget | None:
    """``widget`` or its nearest ancestor that is a ``kind``, else None."""
    w = widget
    while w is not None:
        if isinstance(w, kind):
            return w
        w = w.parentWidget()
    return None


def tooltip_at(widget: QWidget | None, pos_in_widget: QPoint, stop: QWidget | None = None) -> str:
    """The tooltip a hover would show at ``pos_in_widget`` of ``widget``: a scene item's under the point in a
    ``QGraphicsView`` (or its parent item's), else the widget's or its nearest ancestor's (up to ``stop``)."""
    view = within(widget, QGraphicsView)
    if view is not None and view.scene() is not None:
        p = widget.mapTo(view.viewport(), pos_in_widget) if widget is not view.viewport() else pos_in_widget
        for item in view.items(p):
            it = item
            while it is not None:
                if it.toolTip():
                    return it.toolTip()
                it = it.parentItem()
    w = widget
    while w is not None:
        if w.toolTip():
            return w.toolTip()
        if w is stop:
            break
        w = w.parentWidget()
    return ""



class TipCard(QLabel):
    """A tooltip's text as a card for a finger: opens where the finger is, closes on the next tap or by itself."""

    def __init__(self, host: QWidget):
        super().__init__(host)
        self.setObjectName("touchCard")
        self.setWordWrap(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet("QLabel#touchCard { background: #fdf6d8; color: #1b1d21; border: 3px solid #ffc94a;"
                           " border-radius: 10px; padding: 10px 14px; }")
        self._timer = QTimer(self)
        self._timer.setObjectName("touchCardTimer")
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def open_at(self, text: str, pos: QPoint) -> None:
        """Show ``text`` near ``pos`` (host coordinates), kept inside the host."""
        host = self.parentWidget()
        font = self.font()
        font.setPixelSize(max(18, round(host.height() / 30)))
        self.setFont(font)
        self.setText(text)
        width = min(max(240, host.width() * 2 // 5), host.width() - 16)
        self.setFixedWidth(width)
        self.adjustSize()
        x = min(max(8, pos.x() - width // 2), host.width() - width - 8)
        y = pos.y() - self.height() - 24  # above the finger, so the finger does not hide it
        if y < 8:
            y = min(pos.y() + 32, host.height() - self.height() - 8)
        self.move(x, max(8, y))
        self.raise_()
        self.show()
        self._timer.start(int(CARD_S * 1000))

    def hideEvent(self, event) -> None:  # noqa: N802 - Qt override
        self._timer.stop()
        super().hideEvent(event)


