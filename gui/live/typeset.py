"""The type scale applied to widgets: every text widget carries a role; its font comes from the window height.

``apply_type_scale(root, scale, family)`` sets the font of ``root`` and of every descendant widget that has a
role in ``ROLE_STYLE`` (``animations.typescale.set_role``), and returns a style sheet whose paddings, radii and
handle sizes are proportional to the same scale. Children without a role inherit their parent's font (Qt's
font propagation), so a chip inside the chips row gets the row's size.

No pixel size is written anywhere else in ``gui/live``: a window resized from 1280×720 to 3840×2160 calls this
again and every text grows with it.
"""

from __future__ import annotations

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QWidget

from animations.typescale import TypeScale, role_of, set_text_features
from gui import i18n

# role -> (style of animations.typescale, bold)
ROLE_STYLE: dict[str, tuple[str, bool]] = {
    "tab": ("label", True),
    "readout": ("body", True),
    "info": ("small", False),
    "extra": ("small", False),
    "why": ("small", False),
    "button": ("label", True),
    "prompt": ("label", False),
    "answer": ("body", False),
    "seat": ("small", True),
    "chip": ("small", False),
    "caption": ("label", False),
    "value": ("label", False),
    "status": ("small", False),
    "plot-title": ("small", True),
    "overlay": ("small", False),
    "reason": ("small", False),
    "big-button": ("body", True),
    "big-answer": ("number", False),
    "split": ("small", False),
}

# A room's floor (issue 24): no text under height / 48, body text at least height / 40, whatever the type scale's
# own fractions are. Roles not listed here get FLOOR.
FLOOR = 1 / 48
BODY_FLOOR = 1 / 40
ROLE_FLOOR: dict[str, float] = {"readout": BODY_FLOOR, "big-button": BODY_FLOOR, "big-answer": BODY_FLOOR,
                                "answer": BODY_FLOOR}


def font_for(role: str, scale: TypeScale, family: str | None) -> QFont:
    """The font of ``role`` at ``scale`` (pixel size rounded up, never under the scale's minimum nor the room's
    floor: ``ROLE_FLOOR`` or ``FLOOR`` of the height), with the
    current language's punctuation (proportional in English: ``typescale.set_text_features``)."""
    style, bold = ROLE_STYLE[role]
    font = QFont(family) if family else QFont()
    floor = scale.height * ROLE_FLOOR.get(role, FLOOR)
    font.setPixelSize(max(int(round(scale.px(style))), int(-(-max(scale.minimum, floor) // 1))))
    font.setBold(bold)
    return set_text_features(font, i18n.current_language())


def apply_type_scale(root: QWidget, scale: TypeScale, family: str | None) -> None:
    """Give ``root`` and every descendant with a known role its font at ``scale``."""
    for w in [root, *root.findChildren(QWidget)]:
        role = role_of(w)
        if role in ROLE_STYLE:
            font = font_for(role, scale, family)
            if w.font() != font:
                w.setFont(font)


def style_sheet(scale: TypeScale) -> str:
    """The Live page's style sheet with every length proportional to ``scale`` (colours from the stage)."""
    u = max(1, round(scale.px("small") / 6))  # one spacing unit: 2 px at 720p, 3 px at 1080p
    r = 3 * u
    handle = max(12, round(scale.px("label") * 1.1))
    groove = max(4, handle // 3)
    return "\n" + _surface_rules(u, r, handle) + _button_rules(u, r) + _scroll_and_check_rules(u, r, handle) + \
        _slider_rules(u, r, handle, groove)


def _surface_rules(u: int, r: int, handle: int) -> str:
    """The page's surfaces and texts: background, stage, labels, answer box, prompt and model boxes."""
    return f"""\
QWidget#central {{ background: #0f1419; }}
QWidget {{ color: #eef3f8; }}
QGraphicsView#stageView {{ background: #0f1419; border: 1px solid #33465b; border-radius: {r}px; }}
QLabel#readout {{ color: #ffc94a; }}
QLabel#modelLabel {{ color: #a9b8c8; }}
QLabel#whyLabel {{ color: #ffb347; }}
QLabel#statusLine {{ color: #7ec8ff; }}
QLabel#frameOverlay {{ background: rgba(0, 0, 0, 200); color: #f0f0f0; padding: {2 * u}px {3 * u}px;
                      border-radius: {r}px; }}
QTextEdit#answer {{ background: #17202a; border: 1px solid #33465b; border-radius: {r}px; padding: {u}px; }}
QTextEdit#answer QScrollBar:vertical {{ background: #17202a; width: {2 * u + 4}px; margin: 0; }}
QTextEdit#answer QScrollBar::handle:vertical {{ background: #33465b; border-radius: {u + 1}px; min-height: 20px; }}
QTextEdit#answer QScrollBar::add-line, QTextEdit#answer QScrollBar::sub-line {{ height: 0; }}
QTextEdit#answer QScrollBar::add-page, QTextEdit#answer QScrollBar::sub-page {{ background: none; }}
QComboBox#promptBox, QComboBox#modelBox {{ background: #17202a; border: 1px solid #33465b; border-radius: {r}px;
                       padding: {u}px {2 * u}px; }}
QComboBox#promptBox QAbstractItemView, QComboBox#modelBox QAbstractItemView {{ background: #17202a; color: #eef3f8;
                       selection-background-color: #2b5a8c; }}
QComboBox#promptBox::drop-down, QComboBox#modelBox::drop-down {{ border: none; width: {handle}px; }}
"""


def _button_rules(u: int, r: int) -> str:
    """Buttons, tabs and token chips."""
    return f"""\
QPushButton {{ background: #1f2b38; border: 1px solid #33465b; border-radius: {r}px; padding: {u}px {3 * u}px; }}
QPushButton:hover {{ background: #273647; }}
QPushButton:pressed {{ background: #2f4257; }}
QPushButton#runButton {{ background: #ffc94a; color: #0f1419; border: none; }}
QPushButton#runButton:hover {{ background: #ffd66e; }}
QPushButton:checked {{ background: #2b5a8c; border: 1px solid #7ec8ff; }}
QPushButton#liveTab, QPushButton#tourTab {{ padding: 0px {5 * u}px; }}
QTabBar#seatTabs::tab {{ background: #1f2b38; border: 1px solid #33465b; border-radius: {r}px;
                         padding: 0px {2 * u}px; margin-right: {u}px; }}
QTabBar#seatTabs::tab:selected {{ background: #2b5a8c; border: 1px solid #7ec8ff; }}
QTabBar#seatTabs QToolButton {{ background: #1f2b38; border: 1px solid #33465b; }}
QLabel#chip {{ background: #1f2b38; border: 1px solid #3b5570; border-radius: {r}px; padding: 0px {2 * u}px; }}
QLabel#chipPrompt {{ background: #141b23; border: 1px solid #2a3947; border-radius: {r}px; padding: 0px {2 * u}px;
                     color: #a9b8c8; }}
QLabel#chipMore {{ background: transparent; border: 1px dashed #3b5570; border-radius: {r}px; padding: 0px {2 * u}px;
                   color: #a9b8c8; }}
"""


def _scroll_and_check_rules(u: int, r: int, handle: int) -> str:
    """The scroll areas and their bars, check boxes and radio buttons."""
    return f"""\
QScrollArea#chips, QWidget#chipsInner {{ background: transparent; }}
QScrollArea#controlsScroll, QWidget#controlsInner {{ background: transparent; }}
QScrollArea#controlsScroll QScrollBar:vertical {{ background: #17202a; width: {2 * u + 4}px; margin: 0; }}
QScrollArea#controlsScroll QScrollBar::handle:vertical {{ background: #33465b; border-radius: {u + 1}px;
                                                         min-height: 20px; }}
QScrollArea#controlsScroll QScrollBar::add-line, QScrollArea#controlsScroll QScrollBar::sub-line {{ height: 0; }}
QScrollArea#controlsScroll QScrollBar::add-page, QScrollArea#controlsScroll QScrollBar::sub-page {{
    background: none; }}
QCheckBox::indicator {{ width: {handle}px; height: {handle}px; border: 1px solid #7ea6cf; border-radius: {r}px;
                       background: #17202a; }}
QCheckBox::indicator:checked {{ background: #ffc94a; border: 1px solid #ffc94a; }}
QRadioButton::indicator {{ width: {handle}px; height: {handle}px; border: 2px solid #7ea6cf;
                          border-radius: {handle // 2 + 1}px; background: #17202a; }}
QRadioButton::indicator:checked {{ background: #ffc94a; border: 2px solid #ffc94a; }}
QRadioButton::indicator:disabled {{ border: 2px solid #33465b; }}
"""


def _slider_rules(u: int, r: int, handle: int, groove: int) -> str:
    """Sliders, tooltips and the details' coloured lines and big buttons."""
    return f"""\
QSlider:horizontal {{ min-height: {handle + 2}px; }}
QSlider::groove:horizontal {{ height: {groove}px; background: #2a3947; border-radius: {groove // 2}px; }}
QSlider::handle:horizontal {{ background: #ffc94a; width: {handle}px; margin: -{(handle - groove) // 2}px 0;
                              border-radius: {handle // 2}px; }}
QSlider::sub-page:horizontal {{ background: #7ea6cf; border-radius: {groove // 2}px; }}
QSlider::handle:horizontal:disabled {{ background: #4a5a6a; }}
QSlider::sub-page:horizontal:disabled {{ background: #33465b; }}
QToolTip {{ background: #17202a; color: #eef3f8; border: 1px solid #33465b; }}
QLabel#extraReadout {{ color: #b5f5c5; }}
QLabel#reasonLabel {{ color: #ff9c9c; }}
QLabel#splitLabel {{ color: #c9d6e3; }}
QTextEdit#bigAnswer {{ background: #17202a; border: 1px solid #33465b; border-radius: {r}px; padding: {u}px; }}
QPushButton[role="big-button"] {{ padding: {2 * u}px {3 * u}px; }}
QPushButton#detailsButton {{ padding: 0px {4 * u}px; }}
"""
