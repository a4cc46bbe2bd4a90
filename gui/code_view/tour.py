"""The code view on the tour: beside the page's scene, on the pages whose step the engine carries out.

``TOUR_STAGES`` says which stage of ``model.stages`` each such page shows (page keys of ``gui.tour.sections``);
on other pages the panel is hidden and the scene has the whole width. The panel takes ``CODE_SHARE`` of the
width beside the scene (the page's caption, controls and question stay under both): the scene is fitted into
what is left, at the type scale (``TourScene.needs_rebuild`` rebuilds it for the narrower view).
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QWidget

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
CODE_SHARE = 0.5  # of the row's width: the code's lines need it more than the scene, which scales


class TourCode:
    """The panel in ``tour`` (a ``TourWidget``), beside its stage; ``view`` is the window's ``CodeView``."""

    def __init__(self, tour, view):
        self.tour, self.view = tour, view
        self.open = False
        self.panel = CodePanel()
        self.panel.hide()
        outer = tour.layout()
        index = outer.indexOf(tour.stage_stack)
        self.row = QWidget()
        self.row.setObjectName("tourCodeRow")
        row = QHBoxLayout(self.row)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        outer.removeWidget(tour.stage_stack)
        row.addWidget(tour.stage_stack, round(100 * (1 - CODE_SHARE)))
        row.addWidget(self.panel, round(100 * CODE_SHARE))
        outer.insertWidget(index, self.row, 1)
        tour.section_changed.connect(lambda _i: self.sync())

    def stage(self) -> str | None:
        """The stage the page on screen shows, or None (a page without code)."""
        return TOUR_STAGES.get(self.tour.pages_key())

    def set_open(self, on: bool) -> None:
        self.open = bool(on)
        self.sync()

    def sync(self) -> None:
        stage = self.stage() if self.open else None
        was = self.panel.isVisible()
        self.panel.setVisible(stage is not None)
        if stage is not None:
            self.view.apply_scale(self.panel)
            self.panel.show_stage(stage)
        if was != (stage is not None):
            self.tour.settle()  # the scene's view changed width: build the scene for it now
