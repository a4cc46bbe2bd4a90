"""The presenter's help overlay (H or F1): every clicker key and what it does, on one card over the page.

A speaker on stage has no menu to look in, so the keys that ``gui.presenter.presenter.Presenter`` installs are listed
here, big enough to read from the lectern (body text of the window's type scale, ``animations.typescale``), in the
current language. The card opens over whatever page is shown and closes on the next key, click or touch (that
input does nothing else), like the black screen (B).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from animations.typescale import TypeScale, set_role
from gui.presenter.cover import Cover


def _(text: str) -> str:
    """Marks ``text`` for translation (context "Presenter") without translating it now."""
    return text


# (keys, what they do). Keep in step with gui.presenter.presenter.KEYS and the table in gui/presenter/presenter.py's
# docstring.
ROWS: tuple[tuple[str, str], ...] = (
    ("→  PgDn", _("next page; on the Live page one trip")),
    ("Space", _("as →; on the Live page run / pause")),
    ("←  PgUp", _("previous page")),
    ("Home", _("first page of the deck")),
    ("1 … 9, 0", _("tour sections 1 to 10")),
    ("L  /  T", _("the Live page / the tour")),
    ("B", _("black screen (any key brings the picture back)")),
    ("F", _("full screen, and back")),
    ("+  /  −", _("faster / slower")),
    ("R", _("reset the run")),
    ("V", _("record this page as a 10 s video into the videos folder")),
    ("C", _("the engine's code for this page, and back")),
    ("H", _("this list of keys")),
)


def tr(text: str) -> str:
    return QCoreApplication.translate("Presenter", text)


class KeysOverlay(Cover):
    """The card of presenter keys over ``window`` (hidden until ``toggle``). The next key press, click or touch
    only closes it. Sizes follow ``TypeScale(window height)``: keys and descriptions in the body style, the title
    in the heading style, so the card fits a 1280×720 window in both languages."""

    def __init__(self, parent: QWidget, family: str | None = None):
        super().__init__(parent)  # gui.presenter.cover: over the window, the next input only takes it down
        self.setObjectName("keysOverlay")
        self.setAttribute(Qt.WA_StyledBackground, True)
        self.setStyleSheet("QFrame#keysOverlay { background: rgba(12, 16, 22, 238); border: 2px solid #ffc94a; "
                           "border-radius: 14px; } QLabel { color: #e8edf2; background: transparent; }")
        self.family = family
        self.title = QLabel(self)
        set_role(self.title, "heading")
        self.title.setStyleSheet("color: #ffc94a;")
        self.key_labels: list[QLabel] = []
        self.what_labels: list[QLabel] = []
        grid = QGridLayout()
        for row, _row in enumerate(ROWS):
            key, what = QLabel(self), QLabel(self)
            set_role(key, "label")
            set_role(what, "body")
            key.setStyleSheet("color: #ffc94a;")
            grid.addWidget(key, row, 0, Qt.AlignRight | Qt.AlignTop)
            grid.addWidget(what, row, 1, Qt.AlignLeft | Qt.AlignTop)
            self.key_labels.append(key)
            self.what_labels.append(what)
        grid.setColumnStretch(1, 1)
        self.grid = grid
        box = QVBoxLayout(self)
        box.setSizeConstraint(QVBoxLayout.SetFixedSize)  # the card is exactly as big as its lines
        box.addWidget(self.title)
        box.addLayout(grid)

    def retranslate(self) -> None:
        self.title.setText(tr("Presenter keys"))
        for (key, what), key_label, what_label in zip(ROWS, self.key_labels, self.what_labels):
            key_label.setText(key)
            what_label.setText(tr(what))

    def fit(self) -> None:
        """Fonts from the window's height; the card as big as its lines (one line each: the texts are short),
        centred."""
        height = max(1, self.window_.height())
        scale = TypeScale(height)
        body = max(int(round(scale.px("body"))), 1)
        for label, style, bold in ([(self.title, "heading", True)]
                                   + [(k, "body", True) for k in self.key_labels]
                                   + [(w, "body", False) for w in self.what_labels]):
            font = QFont(self.family) if self.family else QFont()
            font.setPixelSize(max(int(round(scale.px(style))), body))
            font.setBold(bold)
            label.setFont(font)
        gap = max(4, body // 3)
        self.grid.setHorizontalSpacing(body)
        self.grid.setVerticalSpacing(gap)
        self.layout().setContentsMargins(body, gap * 2, body, gap * 2)
        self.layout().setSpacing(gap * 2)
        self.layout().activate()
        self.adjustSize()
        self.move((self.window_.width() - self.width()) // 2, max(0, (height - self.height()) // 2))

    def show_keys(self) -> None:
        self.retranslate()
        self.cover()

    def hide_keys(self) -> None:
        self.uncover()

    def toggle(self) -> None:
        if self.isVisible():
            self.hide_keys()
        else:
            self.show_keys()
