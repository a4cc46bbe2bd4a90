"""One type scale for the whole app, and the role tag every piece of visible text carries.

Sizes are proportional to the window height, in device-independent pixels, so that a screen reads the same
from the back of a room at 1280×720 and at 3840×2160. No text is smaller than ``height / 60`` (18 px at
1080p, 12 px at 720p); ``presenter`` mode is one step larger again (× 1.2). Items and widgets ask for a
*role* ("caption", "label", "number", ...), never for a pixel size.

Every text item on a stage or tour scene is tagged with its role (``set_role``), so that the layout audit
(``screenshot --layout-json``) can list it with a short name of what it is (``seat``, ``desk``, ``chapter``,
``pill``, ``caption``, ``axis``, ...). The role tag is ``QGraphicsItem.data(ROLE_KEY)``; for widgets it is the
Qt property ``"role"``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont
from PySide6.QtWidgets import QGraphicsItem, QWidget

ROLE_KEY = 0x0E17  # QGraphicsItem.data() key holding the role name (str)

# Size of each text style as a fraction of the window height. "small" is the floor: height / 60.
_FRACTIONS: dict[str, float] = {
    "small": 1 / 60,  # chapter sizes, axis ticks, legends: the smallest text on any screen
    "label": 1 / 52,  # names of things on the stage, buttons, slider labels
    "body": 1 / 44,  # captions and running text
    "number": 1 / 30,  # the readout's figures
    "heading": 1 / 26,  # card and panel titles
    "title": 1 / 18,  # page titles
}
MIN_FRACTION = _FRACTIONS["small"]
PRESENTER_STEP = 1.2


@dataclass(frozen=True)
class TypeScale:
    """Pixel sizes of the named text styles for a window ``height`` px tall (device-independent pixels)."""

    height: float
    presenter: bool = False

    def px(self, style: str) -> float:
        """Font pixel size of ``style`` (one of ``STYLES``). Raises KeyError for an unknown style."""
        size = self.height * _FRACTIONS[style]
        return size * (PRESENTER_STEP if self.presenter else 1.0)

    @property
    def minimum(self) -> float:
        """The smallest font size any visible text may have at this height: ``height / 60`` px."""
        return self.height * MIN_FRACTION


STYLES = tuple(_FRACTIONS)


# OpenType features that make the CJK family's full-width punctuation proportional in English text: "pwid"
# swaps “ ” ‘ ’ … for proportional glyphs, "palt" narrows what has no swap (·). Chinese keeps full width.
LATIN_PUNCTUATION = ("pwid", "palt")


def set_text_features(font: QFont, lang: str) -> QFont:
    """Set (``lang`` "en") or clear (any other) the ``LATIN_PUNCTUATION`` features on ``font``; returns it.

    The app draws both languages in one family, the bundled Noto Sans SC subset, whose quotes, ellipsis and
    middle dot are full-width (the CJK convention, 1 em); in English they would leave holes around the words.
    """
    for tag in LATIN_PUNCTUATION:
        if lang == "en":
            font.setFeature(QFont.Tag(tag), 1)
        else:
            font.unsetFeature(QFont.Tag(tag))
    return font


def set_role(item: QGraphicsItem | QWidget, role: str) -> None:
    """Tag a scene item (``data(ROLE_KEY)``) or a widget (property ``"role"``) with what its text is."""
    if isinstance(item, QWidget):
        item.setProperty("role", role)
    else:
        item.setData(ROLE_KEY, role)


def role_of(item: QGraphicsItem | QWidget) -> str | None:
    """The role set by ``set_role``, or None."""
    if isinstance(item, QWidget):
        value = item.property("role")
    else:
        value = item.data(ROLE_KEY)
    return str(value) if value else None
