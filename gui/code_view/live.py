"""``CodeView``: the code view of a ``MainWindow``, on the Live page and on the tour pages the engine carries out.

- A "Code" toggle (in the details view's footer, and beside Back / Next on a tour page with code; a finger's
  target in touch mode), the speaker's C key
  (``gui.presenter``), and ``set_open``. A kiosk shows the toggle only when its settings file says
  ``[kiosk] code_view = true`` (``set_allowed``; a museum visitor does not need it).
- Live page: opening the code view opens the details view, where the panel takes the plots' and the sliders'
  columns (one idea at a time; the big buttons stay; closing it gives the columns back). It follows the stage:
  ``StageScene.code_stage`` says which of the trip's reported stages the stage on screen has reached
  (``animations.stage.code``), and the panel lights that stage's lines. Before the first trip it shows the
  first stage of a step (schedule).
- Tour: on the pages in ``TOUR_STAGES`` the panel stands beside the page's scene (``gui.code_view.tour``).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QPushButton

from gui.code_view.button import code_button
from gui.code_view.panel import CodePanel
from gui.code_view.tour import TourCode

PLOT_WIDGETS = ("trip_plot_title", "trip_plot", "rate_plot_title", "rate_plot")
CODE_STRETCH = 20  # the strip's share of the code column beside the words' 8 (plots and sliders give way)
IDLE_STAGE = "schedule"  # shown before the first trip: where every step starts


class CodeView(QObject):
    """The code view of ``window`` (a ``MainWindow``); ``window.code_view``."""

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.open = False
        self.allowed = True
        # the toggle lives where the code does: in the details view's footer (the top bar has no width to spare
        # at 4:3) and, on the tour, beside Back and Next on the pages with code (``TourCode.button``)
        self.button = code_button()
        page = window.live_page
        page.footer.layout().addWidget(self.button)
        self.button.toggled.connect(self.set_open)
        self.panel = CodePanel()
        self.panel.hide()
        strip = page.strip.layout()
        strip.insertWidget(2, self.panel, CODE_STRETCH)
        self._plots_stretch = strip.stretch(1)  # the plots' column: its share goes to the code while it is open
        self.tour_code: TourCode | None = None
        self.stage_entry = IDLE_STAGE
        scene = window.scene
        if hasattr(scene, "code_stage"):
            scene.code_stage.connect(self._on_stage)
        window.installEventFilter(self)
        window.pages.currentChanged.connect(lambda _i: self._sync())

    # ---- toggles -------------------------------------------------------------------------------------------
    def set_allowed(self, on: bool) -> None:
        """Show the toggle (``on``) or hide it and close the view (a kiosk without ``code_view`` set)."""
        self.allowed = bool(on)
        self.button.setVisible(self.allowed)
        if self.tour_code is not None:
            self.tour_code.sync()
        if not self.allowed:
            self.set_open(False)

    def toggle(self) -> None:
        """The speaker's key: open or close the code view of the page on screen."""
        if self.allowed:
            self.set_open(not self.open)

    def set_open(self, on: bool) -> None:
        on = bool(on) and self.allowed
        for button in self.buttons():
            if button.isChecked() != on:
                button.blockSignals(True)
                button.setChecked(on)
                button.blockSignals(False)
        if on == self.open and (not on or self._shown_where() is not None):
            self._sync()
            return
        self.open = on
        if on and not self.window.is_tour_visible() and not self.window.live_page.details:
            self.window.set_details(True)
        self._sync()

    def buttons(self) -> list[QPushButton]:
        return [self.button] + ([self.tour_code.button] if self.tour_code is not None else [])

    def _shown_where(self):
        if self.panel.isVisibleTo(self.window):
            return self.panel
        if self.tour_code is not None and self.tour_code.panel.isVisibleTo(self.window):
            return self.tour_code.panel
        return None

    # ---- placing -------------------------------------------------------------------------------------------
    def _sync(self) -> None:
        """Show the panel where the page on screen has room for it (Live details, or a tour page with code)."""
        w = self.window
        tour_shown = w.is_tour_visible()
        live = self.open and not tour_shown and w.live_page.details
        self.panel.setVisible(live)
        for name in PLOT_WIDGETS:
            getattr(w.live_page, name).setVisible(not live)
        w.live_page.controls_scroll.setVisible(not live)  # the code needs the width: its lines are long
        w.live_page.strip.layout().setStretch(1, 0 if live else self._plots_stretch)  # an empty column keeps its share
        if live:
            self._apply_scale(self.panel)
            self.panel.show_stage(self.stage_entry)
        if tour_shown and self.tour_code is None:
            self.tour_code = TourCode(w.tour, self.apply_scale, self)
        if self.tour_code is not None:
            self.tour_code.set_open(self.open and tour_shown)
        w.live_page.arrange()

    def _apply_scale(self, panel: CodePanel) -> None:
        w = self.window
        panel.apply_type_scale(max(1, w.height()), bool(w.live_page.presenter_mode), w.font_family)

    def apply_scale(self, panel: CodePanel) -> None:
        """Fonts of ``panel`` from the window's height and presenter mode (the tour's panel asks too)."""
        self._apply_scale(panel)

    def _on_stage(self, entry: str) -> None:
        """The stage on screen reached ``entry``: light its lines (remembered while the panel is closed)."""
        self.stage_entry = entry
        if self.panel.isVisible():
            self.panel.show_stage(entry)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.window and event.type() == QEvent.Resize:  # shown or not: the fonts follow the height
            self._apply_scale(self.panel)
            if self.tour_code is not None:
                self._apply_scale(self.tour_code.panel)
        elif obj is self.window and event.type() == QEvent.LanguageChange:
            for panel in (self.panel, getattr(self.tour_code, "panel", None)):
                if panel is not None:
                    panel.retranslate()
        return False
