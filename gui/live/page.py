"""The Live page's widgets and their layout: an exhibit by default, an engineer's view one tap away.

Default (what a visitor meets):

    ┌──────────────────────────── stage (≥ 92 % of the page's width) ─────────────────────┐
    │ headline: what this trip shows (the stage's caption)                                 │
    └──────────────────────────────────────────────────────────────────────────────────────┘
      readout: this trip: step ms · tokens in → out · tok/s · shown N× slower
      [reading ▌ paperwork ████] reading the weights 0.1 ms, paperwork 7 ms · what that means here
    ┌ the answer, large ──────────────┐ [Run] [Pause] [Step one trip] [Reset]
    └─────────────────────────────────┘ [Sharing a table] [The apprentice] [Tear the book]

Details (``set_details(True)``, the top bar's "Details" toggle) shows, in place of the stage and between the
readout and the big buttons (one row), the strip of the engineer's view (prompt box, seats, answer with token
chips, the two plots, every slider) and a footer (status line, model line). The strip takes the height the other
rows leave (it gives way, never the rows: nothing leaves the window), and the plots take all of the strip's that
their titles leave (a quarter of the window's height each, or more, where the rows leave that much). The sliders'
column scrolls (a frameless scroll area; a finger drags it in touch mode) when the strip is shorter than it, so it
never makes the page taller. The stage, squeezed beside them, would be too small to read from a room: it waits in
the visitor's view, where its desks show the per-layer timings and its cheat sheet the pages in use.

Every text widget has a role (``animations.typescale.set_role``); ``LivePage.apply_type_scale`` gives each its
font from the window height (``gui.live.typeset``), so the page is the same picture from 1280×720 to 3840×2160.
"""

from __future__ import annotations

import math

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QGraphicsView,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QScrollBar,
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from animations.stage.style import PRESENTER_SCENE_MIN_HEIGHT, SCENE_MIN_HEIGHT, SCENE_RECT
from animations.typescale import TypeScale, set_role
from gui import i18n
from gui.kiosk.touch_targets import GAP_PX
from gui.live.controls import ApprenticeControl, TearControl
from gui.live.exhibit import ExhibitRow
from gui.live.frame_jobs import AfterPaint
from gui.live.paperwork import SplitRow
from gui.live.plots import RatePlot, TripPlot
from gui.live.readout import ReadoutPanel
from gui.live.seats import SeatPanel
from gui.live.typeset import apply_type_scale, style_sheet

# of the page width (the window less its margins): fitted with fitInView's margin, the scene spans >= 90 % of
# the window's width
STAGE_SHARE = 0.935
MIN_SCALE_BACK = 0.5  # minimumSizeHint: the least share of its present size the page asks for
STAGE_MAX_HEIGHT = 0.62  # details view: past this share of the page height the strip below gets the room
PLOT_SHARE = 0.25  # details view: each plot this share of the window's height where the other rows leave room
SCENE_STEP = 10.0  # scene units: the stage's height changes in steps (every step rebuilds the scene)
GIVE_WAY_SHARE = 0.75  # with the apprentice's or the torn book's lines shown, the stage may give way to this
DETAILS_STAGE_SHARE = 0.3  # details view: the stage keeps at least this share of the page width
MAX_PROMPT_CHARS = 2000
MAX_BATCH = 16


class _Refit(QObject):
    """Calls ``fit()`` after the watched widget is resized (the view changes size when a line wraps)."""

    def __init__(self, fit, parent: QObject):
        super().__init__(parent)
        self._fit = fit

    def eventFilter(self, obj, event):  # noqa: N802 - Qt override
        if event.type() == QEvent.Resize:
            QTimer.singleShot(0, self, self._fit)  # dropped if the page goes first (the context object)
        return False


class _FingerBar(QScrollBar):
    """A scroll bar whose size hint honours its minimum: touch mode makes the bar a finger wide
    (``gui.kiosk.touch_targets``), and the scroll area lays its bar out from the hint (it overhung the window)."""

    def sizeHint(self):  # noqa: N802 - Qt override
        return super().sizeHint().expandedTo(self.minimumSize())


class ControlsScroll(QScrollArea):
    """The details view's column of sliders, scrolled vertically when the strip is shorter than the column.

    Frameless, no horizontal scrolling: it asks for its column's width (and the bar's, while the bar shows) and
    for no height of its own. A finger drags it through touch mode's router (``gui.kiosk.touch``, property
    ``fingerScroll``), which owns every touch wherever there is a touch screen; the mouse keeps the wheel and the
    bar, as anywhere on a desktop."""

    def __init__(self, inner: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("controlsScroll")
        inner.setObjectName("controlsInner")
        self.setFrameShape(QFrame.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBar(_FingerBar(Qt.Vertical, self))
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.setWidget(inner)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Ignored)
        # touch mode's router owns the touches: it scrolls this (gui.kiosk.touch)
        self.setProperty("fingerScroll", True)
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt override
        if obj is self.widget() and event.type() == QEvent.LayoutRequest:
            self.updateGeometry()  # the column's width changed (fonts, words): the strip's layout asks again
        return super().eventFilter(obj, event)

    def _on_range(self, _low: int, high: int) -> None:
        """The bar comes or goes: a finger's gap between it and the controls, and the width the column asks."""
        gap = GAP_PX if high > 0 else 0
        if self.viewportMargins().right() != gap:
            self.setViewportMargins(0, 0, gap, 0)
        self.updateGeometry()

    def _bar_width(self) -> int:
        bar = self.verticalScrollBar()  # touch mode makes it a finger wide (gui.kiosk.touch_targets)
        return bar.sizeHint().width() + GAP_PX if bar.maximum() > 0 else 0

    def minimumSizeHint(self):  # noqa: N802 - Qt override
        return QSize(self.widget().minimumSizeHint().width() + self._bar_width(), 0)

    def sizeHint(self):  # noqa: N802 - Qt override
        inner = self.widget().sizeHint()
        return QSize(inner.width() + self._bar_width(), inner.height())

    def scrolls(self) -> bool:
        """True when the column is taller than what shows of it."""
        return self.verticalScrollBar().maximum() > 0


def _label(role: str, name: str = "", wrap: bool = False) -> QLabel:
    label = QLabel()
    if name:
        label.setObjectName(name)
    label.setWordWrap(wrap)
    set_role(label, role)
    return label


class LivePage(QWidget):
    """All widgets of the Live page, laid out; no behaviour (``MainWindow`` connects and drives them)."""

    def __init__(self, scene, presets: list[str], batch: int, trip_s: float, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("livePage")
        self.scene = scene
        self.presenter_mode = False
        self._scale_key: tuple | None = None
        self._fitted_for: tuple | None = None
        self.font_family: str | None = None
        self._build_stage(scene)
        self.readout_panel = ReadoutPanel()
        prompt_row = self._build_prompt_row(presets)
        self.exhibit = ExhibitRow()
        self.exhibit.place_buttons([self.run_button, self.pause_button, self.step_button, self.reset_button])
        self.split_row = SplitRow()
        self.details = False
        self.seats = SeatPanel()
        words = QVBoxLayout()
        words.setSpacing(4)
        words.addLayout(prompt_row)
        words.addWidget(self.seats, 1)
        plots = self._build_plots()
        self._build_controls(batch, trip_s)
        self._build_strip(words, plots)
        self._build_footer()
        for w in (self.view, self.readout_panel, self.split_row, self.strip, self.exhibit, self.footer):
            w.setParent(self)
        self.seats.mirrors.append(self.exhibit.answer)
        self._measure = QLabel(self)  # measures a wrapped title (a label's own answer counts its minimum height)
        self._measure.setWordWrap(True)
        self._measure.hide()
        self.set_details(False)

    def _build_stage(self, scene) -> None:
        """The stage's view: no scroll bars, no frame, refitted to the scene whenever it resizes."""
        self.view = QGraphicsView(scene)
        self.view.setObjectName("stageView")
        self.view.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.view.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.view.setFrameShape(QFrame.NoFrame)
        self.view.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.view.setOptimizationFlags(QGraphicsView.DontSavePainterState)
        self.view.setMinimumHeight(0)
        self.view.installEventFilter(_Refit(self.fit_stage, self))
        # work at a trip's boundary (new words, the plots' redraws) runs just after the stage's next paint
        self.frame_jobs = AfterPaint(self.view.viewport(), parent=self)

    def _build_prompt_row(self, presets: list[str]) -> QHBoxLayout:
        """The prompt's caption and box (the presets in it), and the Run, Pause, Step and Reset buttons."""
        self.prompt_caption = _label("caption")
        self.prompt_box = QComboBox()
        self.prompt_box.setObjectName("promptBox")
        self.prompt_box.setEditable(True)
        self.prompt_box.setInsertPolicy(QComboBox.NoInsert)
        self.prompt_box.lineEdit().setMaxLength(MAX_PROMPT_CHARS)
        for p in presets:
            self.prompt_box.addItem(p.replace("\n", "⏎"), p)
        self.prompt_box.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.prompt_box.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.prompt_box.setMinimumContentsLength(6)
        set_role(self.prompt_box, "prompt")
        self.run_button, self.pause_button = QPushButton(), QPushButton()
        self.step_button, self.reset_button = QPushButton(), QPushButton()
        prompt_row = QHBoxLayout()
        prompt_row.setSpacing(4)
        prompt_row.addWidget(self.prompt_caption)
        prompt_row.addWidget(self.prompt_box, 1)
        for b, name in ((self.run_button, "runButton"), (self.pause_button, "pauseButton"),
                        (self.step_button, "stepButton"), (self.reset_button, "resetButton")):
            b.setObjectName(name)
            b.setFocusPolicy(Qt.TabFocus)
        return prompt_row

    def _build_plots(self) -> QVBoxLayout:
        """The two plots (ms per trip, tokens per second), each under its title."""
        self.trip_plot_title = _label("plot-title", wrap=True)
        self.rate_plot_title = _label("plot-title", wrap=True)
        self.trip_plot = TripPlot(after_paint=self.frame_jobs.defer)
        self.rate_plot = RatePlot(after_paint=self.frame_jobs.defer)
        plots = QVBoxLayout()
        plots.setSpacing(2)
        for w, stretch in ((self.trip_plot_title, 0), (self.trip_plot, 1), (self.rate_plot_title, 0),
                           (self.rate_plot, 1)):
            plots.addWidget(w, stretch)
        return plots

    def _build_controls(self, batch: int, trip_s: float) -> None:
        """The details' column of controls: the table's size, seconds per trip, real time, the apprentice and
        the torn book (``controls_inner``)."""
        self.batch_caption, self.batch_value = _label("caption"), _label("value")
        self.batch_slider = QSlider(Qt.Horizontal)
        self.batch_slider.setObjectName("batchSlider")
        self.batch_slider.setRange(1, MAX_BATCH)
        self.batch_slider.setPageStep(1)
        self.batch_slider.setValue(max(1, min(MAX_BATCH, int(batch))))
        self.speed_caption, self.speed_value = _label("caption"), _label("value")
        self.speed_slider = QSlider(Qt.Horizontal)
        self.speed_slider.setObjectName("speedSlider")
        self.speed_slider.setRange(25, 300)  # hundredths of a second per trip on screen
        self.speed_slider.setSingleStep(5)
        self.speed_slider.setPageStep(25)
        self.speed_slider.setValue(int(round(trip_s * 100)))
        self.real_time_box = QCheckBox()
        self.real_time_box.setObjectName("realTimeBox")
        set_role(self.real_time_box, "caption")
        for s in (self.batch_slider, self.speed_slider):
            s.setMinimumWidth(40)
        self.apprentice = ApprenticeControl()
        self.tear = TearControl()
        self.controls_inner = QWidget()
        grid = QGridLayout(self.controls_inner)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setHorizontalSpacing(6)
        grid.setVerticalSpacing(2)
        grid.addWidget(self.batch_caption, 0, 0)
        grid.addWidget(self.batch_slider, 0, 1)
        grid.addWidget(self.batch_value, 0, 2)
        grid.addWidget(self.speed_caption, 1, 0)
        grid.addWidget(self.speed_slider, 1, 1)
        grid.addWidget(self.speed_value, 1, 2)
        grid.addWidget(self.real_time_box, 2, 0, 1, 3)
        grid.addWidget(self.apprentice, 3, 0, 1, 3)
        grid.addWidget(self.tear, 4, 0, 1, 3)
        grid.setColumnStretch(1, 1)
        grid.setRowStretch(5, 1)

    def _build_strip(self, words: QVBoxLayout, plots: QVBoxLayout) -> None:
        """The details' strip: the words, the plots and the scrolling column of controls side by side."""
        self.strip = QWidget()
        strip = QHBoxLayout(self.strip)
        # a finger's gap (gui.kiosk.touch_targets) between the column's scroll bar or last control and the big buttons
        strip.setContentsMargins(0, 0, 0, max(0, GAP_PX - self.GAP))
        strip.setSpacing(10)
        strip.addLayout(words, 8)
        strip.addLayout(plots, 7)
        self.controls_scroll = ControlsScroll(self.controls_inner)
        strip.addWidget(self.controls_scroll, 5)

    def _build_footer(self) -> None:
        """The details' footer: the status line (what the controls can do next) beside the model line."""
        self.status_line = _label("status", "statusLine", wrap=True)
        self.status_line.setTextFormat(Qt.PlainText)
        self.footer = QWidget()  # the status line (what the controls can do next) and the model line
        foot = QHBoxLayout(self.footer)
        foot.setContentsMargins(0, 0, 0, 0)
        foot.setSpacing(12)
        foot.addWidget(self.status_line, 2)
        foot.addWidget(self.readout_panel.model_label, 3)

    def set_details(self, on: bool) -> None:
        """Show the engineer's view (strip and footer; the big answer gives way to the one with chips) or the
        visitor's (``on`` False: stage, readout, split bar, big answer, big buttons)."""
        self.details = bool(on)
        self.strip.setVisible(self.details)
        self.view.setVisible(not self.details)  # too small to read beside the plots: the numbers take its place
        self.footer.setVisible(self.details)
        self.exhibit.answer.setVisible(not self.details)
        self.exhibit.set_one_row(self.details or self.presenter_mode)
        self.arrange()

    def set_presenter(self, on: bool) -> None:
        """Presenter mode: every text one type step larger (``TypeScale(presenter=True)``, applied by the next
        ``apply_type_scale``) and the big buttons in one row beside the answer: with Pause, Step and Reset
        hidden (the clicker's keys do those) one row holds them, and the height a second row took goes to the
        stage, which the larger type would otherwise squeeze under 90 % of the width."""
        self.presenter_mode = bool(on)
        self.exhibit.set_one_row(self.details or self.presenter_mode)
        self.arrange()

    def set_presets(self, presets: list[str]) -> None:
        """Offer ``presets`` in the prompt box (a line break shows as ⏎) and put the first one in it."""
        self.prompt_box.clear()
        for p in presets:
            self.prompt_box.addItem(p.replace("\n", "⏎"), p)
        if presets:
            self.prompt_box.setCurrentIndex(0)

    # ---- sizes -----------------------------------------------------------------------------------------------
    def apply_type_scale(self, window_height: int, family: str | None) -> None:
        """Fonts and style sheet from the window height (and presenter mode); cheap when nothing changed."""
        key = (int(window_height), self.presenter_mode, family, i18n.current_language())  # fonts follow the language
        if key == self._scale_key:
            return
        self._scale_key = key
        self.font_family = family
        scale = TypeScale(window_height, self.presenter_mode)
        apply_type_scale(self, scale, family)
        self.setStyleSheet(style_sheet(scale))
        answer = self.seats.answer
        answer.setMinimumHeight(int(answer.fontMetrics().lineSpacing() * 2 + 2 * answer.document().documentMargin()
                                    + 2 * answer.frameWidth() + 1))  # two lines: the box cuts to fit (_render)
        big = self.exhibit.answer
        big.setMinimumHeight(int(big.fontMetrics().lineSpacing() * 2 + 2 * big.document().documentMargin()
                                 + 2 * big.frameWidth() + 1))
        small = self.trip_plot_title.font()
        small.setBold(False)
        for plot in (self.trip_plot, self.rate_plot):
            plot.set_text_font(small)
        self.fit_stage()

    # The page's four rows are placed by hand (``arrange``): Qt's box layout, once any row wraps text
    # (height-for-width), treats every row's size hint as its minimum, and the stage could not keep its share.
    GAP = 3

    def event(self, event) -> bool:  # noqa: D102 - Qt override
        if event.type() == QEvent.LayoutRequest:  # a line wrapped or appeared: the rows' heights change
            self.arrange()
        return super().event(event)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.arrange()

    def _title_height(self, title: QLabel, width: int) -> int:
        """The height ``title`` needs at ``width``, all its lines (its own ``heightForWidth`` never returns less
        than its minimum height, which ``arrange`` sets from this: a title once tall stayed so)."""
        if title.isHidden() or width <= 0:
            return 0
        m = self._measure
        m.setFont(title.font())
        m.setText(title.text())
        margins = title.contentsMargins()
        return m.heightForWidth(width - margins.left() - margins.right()) + margins.top() + margins.bottom()

    def place_beside_real_time(self, w: QWidget) -> None:
        """Put ``w`` (the int8 switch) beside "Real time", among the engineer's controls in the details."""
        grid = self.controls_inner.layout()
        grid.removeWidget(self.real_time_box)
        grid.addWidget(self.real_time_box, 2, 0)
        grid.addWidget(w, 2, 1, 1, 2)

    def _hfw(self, w: QWidget, width: int) -> int:
        if w.isHidden():
            return 0
        h = w.heightForWidth(width) if w.hasHeightForWidth() else -1
        return h if h >= 0 else w.sizeHint().height()

    def _row_heights(self, width: int) -> dict[str, int]:
        """The height each row needs at ``width`` (0 for a hidden row); the stage's is not among them."""
        split = 0 if self.split_row.isHidden() else self.split_row.height_for(width)
        rows = {"readout": self._hfw(self.readout_panel, width), "split": split,
                "footer": self._hfw(self.footer, width), "strip": 0}
        if not self.strip.isHidden():
            # the strip's box layout does not count wrapped titles at their width: add the plots column up by hand
            col = self.trip_plot_title.width() or int(width * 7 / 20)
            plots = sum(self._title_height(t, col) for t in (self.trip_plot_title, self.rate_plot_title))
            plots += sum(p.minimumHeight() for p in (self.trip_plot, self.rate_plot)) + 3 * 2
            rows["strip"] = max(self.strip.minimumSizeHint().height(), plots)
        ex = self.exhibit
        buttons = ex.grid.sizeHint().height()
        if ex.answer.isHidden():
            rows["exhibit"] = buttons
        else:
            rows["exhibit"] = max(buttons, ex.answer.minimumHeight())
        return rows

    def _stage_heights(self, width: int) -> tuple[float, float]:
        """(the least stage height, the stage height that uses the whole width) at ``width``."""
        rect = self.scene.sceneRect()
        ratio = rect.height() / rect.width() if rect.isValid() and rect.width() > 0 else 0.4375
        share = DETAILS_STAGE_SHARE if self.details else STAGE_SHARE
        if not self.details and not self.readout_panel.extra_readout.isHidden():
            share = GIVE_WAY_SHARE  # the extras' lines and their "why" must fit whole in the window
        return width * share * ratio, width * ratio

    def minimumSizeHint(self):  # noqa: N802 - Qt override
        width = max(self.width(), 640)
        rows = self._row_heights(width)
        floor, _full = self._stage_heights(width)
        if self.details:  # the details view never makes the window bigger: the stage gives way (``arrange``)
            floor = 0.0
            rows["strip"] = 0
        hint = self.exhibit.minimumSizeHint()
        text = sum(rows.values()) + 6 * self.GAP
        # Every row above is text, and text follows the window's height (the type scale): measured with the
        # fonts of the present size, the rows would hold a window made tall once from ever shrinking back (a
        # 1920x1080 window resized to 1280x720 stayed 1076 tall). At k times the present height the rows take
        # about k times their height and the stage keeps its floor: the least k that leaves the floor is the
        # least size (never under half the present one: fonts have floors, so below that they stop scaling).
        # The stage's floor is counted at the narrowest the page may be: a minimum counted at the present width
        # would hold a maximised window from being restored to a narrower, shorter size in one step (Qt applies
        # the old width's minimum); a window wider than tall gets a stage that gives way (``arrange``).
        # Hidden (before the first show, or while a window is re-created, as the kiosk does when it sets its
        # window flags), the same rule at k = 1: the floor at the narrowest width, the rows at the present fonts.
        # The floor at the present width was asked there once, and Qt made the window that tall as it showed it
        # (a kiosk window at 1280x720 came up 1280x726 in English, 1280x736 in Chinese: 513.8 px of stage floor
        # + 158 px (en) or 170 px (zh) of rows and gaps at finger size > the 665 px the page has there) and never
        # shrank it back.
        page = self.height()
        narrowest = floor * 640 / width
        if self.isVisible() and page > text:
            k = min(1.0, max(MIN_SCALE_BACK, narrowest / (page - text)))
            return QSize(int(hint.width() * k), int(math.ceil(page * k)))
        return QSize(hint.width(), int(math.ceil(narrowest)) + text)

    def sizeHint(self):  # noqa: N802 - Qt override
        return self.minimumSizeHint()

    def arrange(self) -> None:
        """Place the rows: the stage (its whole width's worth when there is room, never under its share of the
        width: ``STAGE_SHARE``, or ``DETAILS_STAGE_SHARE`` in the details view), the readout, the split bar, the
        strip (details), the exhibit row (the rest) and the footer (details)."""
        W, H = self.width(), self.height()
        if W <= 0 or H <= 0:
            return
        rows = self._row_heights(W)
        floor, full = self._stage_heights(W)
        if self.details:
            # the strip takes what the other rows leave (below: it gives way, never they) and the plots all of
            # it that their titles leave; the sliders' column scrolls when it is taller (``ControlsScroll``)
            col = int(W * 7 / 20) - 10  # the plots column's share of the strip (never a stale width)
            for t in (self.trip_plot_title, self.rate_plot_title):  # a wrapped title keeps all its lines
                h = self._title_height(t, col)
                if t.minimumHeight() != h:
                    t.setMinimumHeight(h)
            rows["strip"] = 0
            floor = 0.0
        others = sum(rows.values()) + 6 * self.GAP
        if not self.details and not self.view.isHidden():
            self._fit_scene_height(W, H - others)
            floor, full = self._stage_heights(W)
        cap = H * STAGE_MAX_HEIGHT if self.details else H
        # never under its floor while the rows leave room for it; in a window too short for both the stage
        # gives way, never the rows under it (they would leave the window)
        stage = int(max(min(floor, H - others), min(full, cap, H - others), 0))
        if self.view.isHidden():
            stage = 0  # no row (its gap stays as slack)
        spare = max(0, H - stage - others)
        if self.details:
            rows["strip"] = spare  # the rest of the page, however little: nothing below leaves the window
        else:
            rows["exhibit"] += spare
        y = self.GAP
        view_size = self.view.size()
        for w, h in ((self.view, stage), (self.readout_panel, rows["readout"]), (self.split_row, rows["split"]),
                     (self.strip, rows["strip"]), (self.exhibit, rows["exhibit"]), (self.footer, rows["footer"])):
            if w.isHidden():
                continue
            if w.geometry().getRect() != (0, y, W, h):
                w.setGeometry(0, y, W, h)
            y += h + self.GAP
        if self.view.size() != view_size or self._fitted_for != (self.view.size(), self.scene.sceneRect()):
            self.fit_stage()

    def _fit_scene_height(self, width: int, room: int) -> None:
        """Ask the stage for the tallest scene (``SCENE_STEP`` units at a time, 700 at most) that is drawn at
        ``STAGE_SHARE`` of ``width`` in ``room`` px of height: where the rows under it take more height (the
        apprentice's and the torn book's lines) the stage gets shorter, not narrower (``StageRegions``)."""
        set_height = getattr(self.scene, "set_scene_height", None)
        if set_height is None or width <= 0:
            return
        tallest = SCENE_RECT.height()
        height = room / (width * STAGE_SHARE) * SCENE_RECT.width()
        height = tallest if height >= tallest else math.floor(height / SCENE_STEP) * SCENE_STEP
        set_height(max(PRESENTER_SCENE_MIN_HEIGHT if self.presenter_mode else SCENE_MIN_HEIGHT, height))

    def fit_stage(self) -> None:
        """Fit the whole scene into the view, keeping its proportions."""
        if not shiboken6.isValid(self.scene):  # the window is being torn down
            return
        set_view = getattr(self.scene, "set_view", None)
        # fitInView fits into the viewport (inside the view's frame) less its 2 px margin a side (Qt's
        # QGraphicsView::fitInView): the stage picks its font sizes for that, so none is drawn under the floor
        port = self.view.viewport().size()
        if set_view is not None and port.width() > 4 and port.height() > 4:
            set_view(float(port.width() - 4), float(port.height() - 4), float(self.window().height()),
                     self.presenter_mode)
        rect = self.scene.sceneRect()
        if rect.isValid():
            self.view.fitInView(rect, Qt.KeepAspectRatio)
            self._fitted_for = (self.view.size(), rect)
