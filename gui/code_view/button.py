"""The code view's "Code" toggle, one kind for the Live page's details view and the tour's Back / Next row
(``gui.code_view.live``, ``gui.code_view.tour``)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QPushButton

from animations.typescale import set_role
from gui.code_view import titles


class _CodeButton(QPushButton):
    def changeEvent(self, event) -> None:  # noqa: N802 - Qt override
        if event.type() == QEvent.LanguageChange:
            self.setText(titles.toggle_text())
        super().changeEvent(event)


def code_button() -> QPushButton:
    """The "Code" toggle (checkable, role "button", its text translated when the language changes)."""
    button = _CodeButton(titles.toggle_text())
    button.setObjectName("codeButton")
    button.setCheckable(True)
    button.setFocusPolicy(Qt.TabFocus)
    set_role(button, "button")
    return button
