"""``FlowLayout``: widgets left to right, wrapping onto the next line when the row is full (like words).

The tour's section controls use it so that no page needs more width than the window has: at 1280 px the game's
seven buttons take two lines instead of widening the window to 1,900 px. Height follows width
(``heightForWidth``), so the layout above gives it the lines it needs.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLayout, QLayoutItem, QSizePolicy, QWidget


class FlowLayout(QLayout):
    """Items in reading order, wrapped at the layout's width; ``spacing`` px between items and lines."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 8):
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def gap(self) -> int:
        """The px between items and between lines."""
        return self._spacing

    def set_gap(self, px: int) -> None:
        """Put ``px`` between items and between lines (from the next layout pass on)."""
        self._spacing = px

    # ---- QLayout's item API ---------------------------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 - Qt override
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int):  # noqa: N802 - Qt override
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int):  # noqa: N802 - Qt override
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self):  # noqa: N802 - Qt override
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802 - Qt override
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802 - Qt override
        """As wide as the widest single item: the layout never asks for a whole row's width."""
        size = QSize()
        for item in self._items:
            if not item.isEmpty():
                size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        return size + QSize(m.left() + m.right(), m.top() + m.bottom())

    # ---- placing ----------------------------------------------------------------------------------------------
    def _place(self, rect: QRect, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, line_h = area.x(), area.y(), 0
        for item in self._items:
            if item.isEmpty():
                continue
            hint = item.sizeHint()
            w = min(hint.width(), area.width()) if area.width() > 0 else hint.width()
            if x > area.x() and x + w > area.right() + 1:
                x, y, line_h = area.x(), y + line_h + self._spacing, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), QSize(w, hint.height())))
            x += w + self._spacing
            line_h = max(line_h, hint.height())
        return y + line_h - rect.y() + m.bottom()


def flow_widget(spacing: int = 8) -> tuple[QWidget, FlowLayout]:
    """A plain widget holding a ``FlowLayout`` (preferred width, height for width)."""
    w = QWidget()
    layout = FlowLayout(w, spacing)
    policy = QSizePolicy(QSizePolicy.Preferred, QSizePolicy.Preferred)
    policy.setHeightForWidth(True)
    w.setSizePolicy(policy)
    return w, layout
