"""The tour's frame: its style sheet, the stage view, the progress strip of page chips, and the widgets around
the stage (caption, term line, model line, section controls, the question and back/next), sized by the type scale.

``TourLayout`` is mixed into ``TourWidget`` (``gui/tour/tour.py``): it builds and re-sizes those widgets; the
page flow itself lives in the widget.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication, QSize, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QButtonGroup,
    QFrame,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from animations.scenes import look as scene_look
from animations.scenes.look import T
from animations.typescale import TypeScale, set_role
from gui.tour.flow import flow_widget
from gui.tour.sections import PAGES, chip_text, page_title

REFIT_DELAY_MS = 40  # a view's resizes closer than this are one: the scene is built again once, after the last
CONTROL_PX = 20  # the least a control's text gets
CHIP_PX = 18  # the least a chip's number gets
# Text sizes follow the window height (animations.typescale), one step larger in presenter mode: the page title
# "title", the caption and a tapped term's line "body" (18 px at 720p, 27 at 1080p), the model line "small" (a
# footnote, the label rung); controls and chips "label", never under the floors above. The scene between title
# and caption is drawn at about the same scale (animations.scenes.look.VIEW_FRACTION), so that the hierarchy
# title > heading > body >= label holds across the widgets and the stage.

STYLE = """
QWidget#tour { background: #0f1419; color: #eef3f8; }
QLabel { color: #eef3f8; }
QLabel#caption { color: #eef3f8; padding: 6px 18px; }
QLabel#pageTitle { color: #eef3f8; padding: 0px 18px; }
QPushButton { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px;
              padding: 6px 14px; min-height: 34px; }
QPushButton:hover { border-color: #86aad3; }
QPushButton:checked { background: #4a74a3; border-color: #ffc94a; }
QPushButton:disabled { color: #6b7a8a; border-color: #253240; }
QPushButton#chip { min-width: 0px; padding: 4px 4px; min-height: 30px; }
QPushButton#chip:checked { background: #ffc94a; color: #1b1d21; border-color: #ffc94a; }
QPushButton:focus { border-color: #ffc94a; }
QLineEdit { background: #17202a; color: #eef3f8; border: 2px solid #33465b; border-radius: 8px; padding: 4px 8px; }
QLineEdit:focus { border-color: #ffc94a; }
QLabel#termLine { color: #9fd0ff; padding: 2px 18px; }
QLabel#modelLine { color: #aab7c4; padding: 2px 18px; }
QTextBrowser#glossary { background: #0f1419; color: #eef3f8; border: none; padding: 8px 18px; }
QSlider { border: 2px solid transparent; border-radius: 8px; padding: 0px 4px; min-height: 34px; }
QSlider:focus { border: 2px solid #ffc94a; }
QSlider::groove:horizontal { height: 8px; background: #33465b; border-radius: 4px; }
QSlider::handle:horizontal { width: 26px; margin: -10px 0; background: #ffc94a; border-radius: 13px; }
"""


class _View(QGraphicsView):
    """Shows a scene scaled to fit, keeping its aspect ratio."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing | QPainter.SmoothPixmapTransform)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setStyleSheet("background: #0f1419;")
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def fit(self) -> None:
        if self.scene() is not None:
            # the scene's rect, and anything a page drew past it (never cut: shown a little smaller instead)
            items = self.scene().itemsBoundingRect()
            rect = self.scene().sceneRect().united(items)
            # the lowest an item reaches once its intro has played: an item still scaled to nothing (pop-in) counts
            # at its full size (its position and its own rect), a rotated one by its scene rect
            low = max((max(it.sceneBoundingRect().bottom(), it.scenePos().y() + it.boundingRect().bottom())
                       for it in self.scene().items()), default=rect.bottom())
            if not items.isEmpty() and low < rect.bottom() - 8:
                # a page that ends above the scene's bottom is shown in the middle of the height (the free
                # height split above and under it, not one empty band under it); no item moves
                rect.translate(0, -(rect.bottom() - low) / 2)
            self.setSceneRect(rect)  # the view's own area (the scene's stays): it may now reach above y = 0
            self.fitInView(rect, Qt.KeepAspectRatio)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.fit()
        if self.on_resized is not None:
            self.on_resized()  # the scene's text follows the view's size (the caption under it may have grown)

    on_resized = None  # called after every resize (TourLayout: _refit_scene)


class _ChipStrip(QWidget):
    """The progress strip: one chip per page, laid out by hand so that it never asks for more width than the
    window has. Where the full labels ("Game", "Terms", "Three questions") do not fit, every chip shows its page number
    (the title stays in its tooltip); chips then shrink to their numbers' width."""

    SPACING = 4

    def __init__(self, parent=None):
        super().__init__(parent)
        self.chips: list[QPushButton] = []
        self.full_labels: list[str] = []
        self.compact = False
        self.min_height = 0  # a finger's target in touch mode (set_touch_target)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def add(self, chip: QPushButton) -> None:
        chip.setParent(self)
        self.chips.append(chip)
        self.full_labels.append(chip.text())

    def set_labels(self, labels: list[str]) -> None:
        self.full_labels = list(labels)
        self.relayout()

    def _widths(self, labels: list[str]) -> list[int]:
        out = []
        for chip, label in zip(self.chips, labels):
            fm = chip.fontMetrics()
            out.append(max(fm.horizontalAdvance(label) + 24, fm.height() + 16))  # padding 4+4, border 2+2, air
        return out

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        widths = self._widths(self.full_labels)
        return QSize(sum(widths) + self.SPACING * max(0, len(widths) - 1), self._height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        numbers = [str(i + 1) for i in range(len(self.chips))]
        widths = self._widths(numbers)
        return QSize(sum(widths) + self.SPACING * max(0, len(widths) - 1), self._height())

    def _height(self) -> int:
        return max(max((c.sizeHint().height() for c in self.chips), default=30), self.min_height)

    def set_touch_target(self, px: int, gap: int) -> None:
        """Touch mode: chips at least ``px`` high and at least ``gap`` px apart (gui.kiosk.touch_targets)."""
        self.min_height = px
        self.SPACING = max(gap, self.SPACING)
        self.relayout()
        self.updateGeometry()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.relayout()

    def relayout(self) -> None:
        """Place the chips in the strip's width (numbers only where the full labels do not fit)."""
        if not self.chips:
            return
        full = self._widths(self.full_labels)
        gaps = self.SPACING * (len(self.chips) - 1)
        self.compact = sum(full) + gaps > self.width()
        labels = [str(i + 1) for i in range(len(self.chips))] if self.compact else self.full_labels
        widths = self._widths(labels)
        extra = max(0, self.width() - gaps - sum(widths))
        # share what is left in proportion, so the strip fills the width either way
        total = sum(widths) or 1
        widths = [w + extra * w // total for w in widths]
        x, h = 0, self._height()
        for chip, label, w in zip(self.chips, labels, widths):
            chip.setText(label)
            chip.setGeometry(x, 0, w, h)
            x += w + self.SPACING
        self.setFixedHeight(h)


class TourLayout:
    """The tour's widgets and their sizes (mixed into ``TourWidget``)."""

    def _font(self, px: int, bold: bool = False) -> QFont:
        return scene_look.font(px, bold)

    def _type_height(self) -> int:
        """The height the type scale follows: the window's (the tour's own when it is not in one yet)."""
        top = self.window()
        return max(1, top.height() if top is not None else self.height())

    def _px(self, role: str) -> int:
        """Pixel size of the tour's ``role`` at the current window height, presenter mode one step larger: "title"
        (the page title), "caption" (body), "note" (the model line: small), "control" and "chip" (label, never
        under ``CONTROL_PX`` / ``CHIP_PX``)."""
        return self._sizes_for(self._type_height())[role]

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        # the stage never taller than the scene drawn across the window's width: what a wide, tall window has
        # left goes to the caption (its text centred), not to an empty band under the picture
        self.stage_stack.setMaximumHeight(int(event.size().width() * scene_look.SCENE_H / scene_look.SCENE_W) + 12)
        super().resizeEvent(event)
        if self.isVisible():
            self._refit_scene()
        if getattr(self, "_sizes_at", None) is not None and \
                self._sizes_for(self._type_height()) != self._sizes_for(self._sizes_at):
            self._apply_fonts()  # the window grew or shrank past a type-scale step
            self._build_controls(self.pages_key())
            self.layout().activate()  # placed now, at the new sizes: not a moment later under a finger's swipe

    def _sizes_for(self, height: int) -> dict[str, int]:
        """Pixel sizes of the tour's roles (see ``_px``) for a window ``height`` px tall."""
        scale = TypeScale(height, bool(getattr(self, "presenter", False)))
        small = TypeScale(height).px("small")  # a footnote: the floor, presenter mode or not (it is no label's rival)
        return {"title": round(scale.px("title")), "caption": round(scale.px("body")), "note": math.ceil(small - 0.01),
                "control": max(CONTROL_PX, round(scale.px("label"))),
                "chip": max(CHIP_PX, round(scale.px("label")))}

    def _set_title_font(self) -> None:
        """The title's font at the type scale, and its height fixed to one line of it: the stage under it is
        placed once, not moved when the title's text arrives (a finger's swipe starts from that place)."""
        font = self._font(self._px("title"), True)
        self.title_label.setFont(font)
        self.title_label.setFixedHeight(QFontMetrics(font).height() + 4)

    def set_presenter(self, on: bool) -> None:
        """Presenter mode: the title, caption and controls one type step larger (``TypeScale(presenter=True)``);
        Back, Next and the model line hidden (the clicker pages; the speaker says which model), so the stage
        keeps its height. The question field stays: a speaker may type the audience's question."""
        if bool(on) == bool(getattr(self, "presenter", False)):
            return
        self.presenter = bool(on)
        for w in (self.prev_button, self.next_button):
            w.setVisible(not self.presenter)
        self._update_model_line(self.pages_key())
        self._apply_fonts()
        self._build_controls(self.pages_key())
        self._refit_scene()

    def _build_ui(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 8, 6)
        outer.setSpacing(4)
        outer.addWidget(self._build_chip_strip())
        outer.addWidget(self._build_title())
        outer.addWidget(self._build_stage_stack(), 1)
        for w in self._build_texts():
            outer.addWidget(w)
        self.controls, self.controls_layout = flow_widget(8)
        outer.addWidget(self.controls)
        outer.addLayout(self._build_bottom_row())
        self._sizes_at = self._type_height()

    def _build_chip_strip(self) -> QWidget:
        """The progress strip: one checkable chip per page, exclusive, each going to its page."""
        self.chip_strip = _ChipStrip(self)
        self.chips: list[QPushButton] = []
        self._chip_group = QButtonGroup(self)
        self._chip_group.setExclusive(True)
        for i, _page in enumerate(PAGES):
            b = QPushButton()
            b.setObjectName("chip")
            b.setCheckable(True)
            b.setFont(self._font(self._px("chip")))
            b.setFocusPolicy(Qt.NoFocus)
            b.clicked.connect(lambda _=False, i=i: self.goto(i))
            self._chip_group.addButton(b, i)
            self.chip_strip.add(b)
            self.chips.append(b)
        return self.chip_strip

    def _build_title(self) -> QLabel:
        """The page's title line, one line that never asks for width."""
        self.title_label = QLabel()  # the page's title ("07 · Writing (decode)"): the scene under it has none
        self.title_label.setObjectName("pageTitle")
        self._set_title_font()
        self.title_label.setWordWrap(False)
        self.title_label.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Fixed)
        set_role(self.title_label, "title")
        return self.title_label

    def _build_stage_stack(self) -> QWidget:
        """The scene's view (refitted once its size settles) stacked with the glossary (Terms)."""
        self.view = _View(self)
        # the view's size settles over a few layout passes (caption, controls row): one rebuild after the last
        self._refit_timer = QTimer(self)
        self._refit_timer.setSingleShot(True)
        self._refit_timer.setInterval(REFIT_DELAY_MS)
        self._refit_timer.timeout.connect(self._refit_scene)
        self.view.on_resized = lambda: self._refit_timer.start() if self.isVisible() else None
        self.view.setFocusPolicy(Qt.StrongFocus)  # the page takes the focus back from a field (focus_home)
        self.glossary_view = QTextBrowser()
        self.glossary_view.setObjectName("glossary")
        self.glossary_view.setOpenLinks(False)
        set_role(self.glossary_view, "legend")
        self.stage_stack = QStackedWidget()
        self.stage_stack.addWidget(self.view)
        self.stage_stack.addWidget(self.glossary_view)
        self.stage_stack.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.stage_stack.setMinimumSize(200, 120)
        return self.stage_stack

    def _build_texts(self) -> list[QLabel]:
        """The caption (its terms tapped or hovered), a tapped term's line and the model line, top to bottom."""
        self.caption = QLabel()
        self.caption.setObjectName("caption")
        self.caption.setWordWrap(True)
        self.caption.setFont(self._font(self._px("caption")))
        self.caption.setMinimumHeight(int(self._px("caption") * 1.5 + 12))  # one line: a short caption gives way
        self.caption.setAlignment(Qt.AlignLeft | Qt.AlignVCenter)
        self.caption.setTextFormat(Qt.RichText)
        self.caption.setTextInteractionFlags(Qt.LinksAccessibleByMouse)
        self.caption.setFocusPolicy(Qt.NoFocus)
        self.caption.linkHovered.connect(self._on_term_hovered)
        self.caption.linkActivated.connect(self._on_term_tapped)
        set_role(self.caption, "caption")
        self.term_line = QLabel()  # a tapped term's one-line explanation
        self.term_line.setObjectName("termLine")
        self.term_line.setWordWrap(True)
        self.term_line.setFont(self._font(self._px("caption")))
        self.term_line.hide()
        set_role(self.term_line, "caption")
        self.model_line = QLabel()  # what the model writing on this page is, in one line
        self.model_line.setObjectName("modelLine")
        self.model_line.setWordWrap(True)
        self.model_line.setFont(self._font(self._px("note")))
        set_role(self.model_line, "legend")
        return [self.caption, self.term_line, self.model_line]

    def _build_bottom_row(self) -> QHBoxLayout:
        """The visitor's own question (its label and field) and the Back and Next buttons."""
        bottom = QHBoxLayout()
        self.prompt_label = QLabel()
        self.prompt_label.setFont(self._font(self._px("control")))
        bottom.addWidget(self.prompt_label)
        self.prompt_edit = QLineEdit(self.prompt)
        self.prompt_edit.setFont(self._font(self._px("control")))
        self.prompt_edit.setMaxLength(400)
        self.prompt_edit.setMinimumWidth(160)
        self.prompt_edit.returnPressed.connect(self._ask_own_question)
        bottom.addWidget(self.prompt_edit, 1)
        self.prev_button = QPushButton()
        self.next_button = QPushButton()
        for b, slot in ((self.prev_button, self.prev), (self.next_button, self.next)):
            b.setFont(self._font(self._px("control"), True))
            b.clicked.connect(slot)
            bottom.addWidget(b)
        return bottom

    def _apply_fonts(self) -> None:
        self._sizes_at = self._type_height()
        for chip in self.chips:
            chip.setFont(self._font(self._px("chip")))
        self.chip_strip.updateGeometry()
        self.chip_strip.relayout()
        self._set_title_font()
        self.caption.setFont(self._font(self._px("caption")))
        # one line: a short caption gives way; in touch mode never under a finger's target (its terms are tapped;
        # gui.kiosk.touch_targets keeps the target in the caption's "touchMinPx")
        one_line = int(self._px("caption") * 1.5 + 12)
        self.caption.setMinimumHeight(max(one_line, self.caption.property("touchMinPx") or 0))
        for w in (self.prompt_label, self.prompt_edit):
            w.setFont(self._font(self._px("control")))
        self.term_line.setFont(self._font(self._px("caption")))
        self.model_line.setFont(self._font(self._px("note")))
        for b in (self.prev_button, self.next_button):
            b.setFont(self._font(self._px("control"), True))

    def retranslate(self) -> None:
        """Re-apply every string in the current language."""
        for page, chip in zip(PAGES, self.chips):
            chip.setToolTip(page_title(page))
        self.chip_strip.set_labels([chip_text(page) for page in PAGES])
        self.prompt_label.setText(T("Your question:"))
        self.prev_button.setText(T("◀ Back"))
        self.next_button.setText(T("Next ▶"))
        self.game.sentences = [tuple(x) for x in self.game_sentences() if x]  # newcomers write in the new language
        self._rebuild(replay=False)


    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._refit_scene()
        self._update_clock()

    def settle(self) -> None:
        """Let the layout settle and build the page's scene again for its view now if it needs it (screenshots,
        clips and tests call this instead of waiting ``REFIT_DELAY_MS``)."""
        for _ in range(3):
            QCoreApplication.processEvents()
            self._refit_timer.stop()
            scene = self.view.scene()
            needs = getattr(scene, "needs_rebuild", None)
            if needs is None or not needs(self.view):
                self.view.fit()
                return
            self._refit_scene()

    def _refit_scene(self) -> None:
        """Fit the page's scene to its view; when its text, fitted, would be off the window's type scale
        (``TourScene.needs_rebuild``), the scene is built again for this view, at the same moment of its animation."""
        self._refit_timer.stop()
        self.view.fit()
        scene = self.view.scene()
        needs = getattr(scene, "needs_rebuild", None)
        if needs is not None and needs(self.view):
            t, done = scene.t, scene.t >= scene.duration
            scene.build(self.context())
            if done:
                scene.finish()  # a finished intro stays finished (the new build's may be longer)
            else:
                scene.seek(t)
            self._annotate_scene(scene)
            self.view.fit()

