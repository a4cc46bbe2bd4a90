"""The window's top bar: the "Live" | "Tour" switch, the model picker, the "Details" toggle and the language button."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QPushButton, QWidget

from animations.typescale import set_role


class TopBar(QWidget):
    """``live_tab`` and ``tour_tab`` (one checked), ``model_choice`` (given), ``details_button`` (checkable) and
    ``lang_button``; the owner connects them and sets their texts."""

    def __init__(self, model_choice: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        top = QHBoxLayout(self)
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(6)
        self.live_tab = QPushButton()
        self.tour_tab = QPushButton()
        self.page_group = QButtonGroup(self)
        for b, name in ((self.live_tab, "liveTab"), (self.tour_tab, "tourTab")):
            b.setObjectName(name)
            b.setCheckable(True)
            b.setFocusPolicy(Qt.TabFocus)
            set_role(b, "tab")
            self.page_group.addButton(b)
            top.addWidget(b)
        self.live_tab.setChecked(True)
        top.addSpacing(18)
        self.model_choice = model_choice
        model_choice.setObjectName("modelChoice")
        top.addWidget(model_choice)
        top.addStretch(1)
        self.details_button = QPushButton()
        self.details_button.setObjectName("detailsButton")
        self.details_button.setCheckable(True)
        self.lang_button = QPushButton()
        self.lang_button.setObjectName("langButton")
        for b in (self.details_button, self.lang_button):
            b.setFocusPolicy(Qt.TabFocus)
            set_role(b, "button")
            top.addWidget(b)
