"""The code view on the tour: in the scene's place, on the pages whose step the engine carries out.

``TOUR_STAGES`` says which stage of ``model.stages`` each such page shows (page keys of ``gui.tour.sections``).
With the code view open, the panel takes the scene's place in the page's stage stack (one idea at a time: the
page's title, caption, controls and question stay; the scene keeps its own size and type scale, and comes back
when the code view is closed or on a page without code). A scene squeezed beside the code drew its text under
the room's floor, so the two never share the width.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer

from gui.code_view.button import code_button
from gui.code_view.panel import CodePanel

TOUR_STAGES = {
    "tokenize": "tokenize",  # 2
    "embedding": "embedding",  # 3
    "prefill": "attention",  # 5
    "sampling": "sample",  # 6
    "decode": "lm_head",  # 7: only the last position's logits (logit_index)
    "kv_cache": "kv_write",  # 8
    "batching": "pack",  # 12
    "speculative": "verify",  # 13
    "parallel": "all_reduce",  # 14
    "prefix": "prefix_lookup",  # 15
}


class TourCode(QObject):
    """The panel in ``tour`` (a ``TourWidget``), a page of its stage stack. ``apply_scale(panel)`` gives the panel
    its fonts (the window's ``CodeView.apply_scale``); by default from the tour's window height and presenter
    mode."""

    def __init__(self, tour, apply_scale=None, view=None):
        super().__init__(tour)
        self.tour, self.view = tour, view  # view: the window's CodeView (None: a tour on its own, a screenshot)
        self.apply_scale = apply_scale or self._own_scale
        self.open = False
        self.panel = CodePanel()
        tour.stage_stack.addWidget(self.panel)
        self.button = code_button()  # beside Back / Next, on the pages with code, in their font (the tour's
        self.button.setProperty("role", None)  # controls: its own rule, as Back / Next, not the Live page's roles)
        self.button.setFont(tour.prev_button.font())
        self.button.hide()
        tour.installEventFilter(self)
        row = next(item.layout() for item in (tour.layout().itemAt(i) for i in range(tour.layout().count()))
                   if item.layout() is not None and item.layout().indexOf(tour.prev_button) >= 0)
        row.insertWidget(row.indexOf(tour.prev_button), self.button)
        self.button.toggled.connect(self._toggled)
        # the tour shows its scene again on every rebuild (a page turn, a language, a measurement): the code
        # takes its place back at once while it is open
        tour.stage_stack.currentChanged.connect(lambda _i: QTimer.singleShot(0, self.sync))
        tour.section_changed.connect(lambda _i: self.sync())

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.tour and event.type() in (QEvent.Resize, QEvent.Show, QEvent.LanguageChange):
            QTimer.singleShot(0, self._follow_fonts)  # after the tour's own _apply_fonts
        return False

    def _follow_fonts(self) -> None:
        self.button.setFont(self.tour.prev_button.font())
        if self.panel.isVisible():
            self.apply_scale(self.panel)

    def _own_scale(self, panel: CodePanel) -> None:
        tour = self.tour
        panel.apply_type_scale(max(1, tour.window().height()), bool(getattr(tour, "presenter", False)),
                               getattr(tour, "font_family", None))

    def stage(self) -> str | None:
        """The stage the page on screen shows, or None (a page without code)."""
        return TOUR_STAGES.get(self.tour.pages_key())

    def set_open(self, on: bool) -> None:
        self.open = bool(on)
        self.sync()

    def _toggled(self, on: bool) -> None:
        if self.view is not None:
            self.view.set_open(on)  # the window's one state: the Live page's toggle follows
        else:
            self.set_open(on)

    def sync(self) -> None:
        stack = self.tour.stage_stack
        allowed = self.view is None or self.view.allowed
        self.button.setVisible(allowed and self.stage() is not None)
        if self.button.isChecked() != self.open:
            self.button.blockSignals(True)
            self.button.setChecked(self.open)
            self.button.blockSignals(False)
        self.button.setFont(self.tour.prev_button.font())
        stage = self.stage() if self.open else None
        if stage is not None:
            self.apply_scale(self.panel)
            if stack.currentWidget() is self.tour.view:  # a tapped term's glossary stays until it is closed
                stack.setCurrentWidget(self.panel)
            self.panel.show_stage(stage)
        elif stack.currentWidget() is self.panel:
            stack.setCurrentWidget(self.tour.view)
            self.tour.settle()
