"""One type scale for the whole app, and the role tag every piece of visible text carries.

Sizes are proportional to the window height, in device-independent pixels, so that a screen reads the same
from the back of a room at 1280×720 and at 3840×2160 (issue 24, "a type scale for a room"):

- no visible text under ``height / 48`` (15 px at 720p, 22.5 px at 1080p): the "small" style, ``MIN_FRACTION``;
- body text at least ``height / 40`` (18 px at 720p);
- a strict hierarchy ``title > heading > body >= label >= small``, the title at least ``TITLE_OVER_BODY`` (1.6)
  times the body;
- ``presenter`` mode is one step larger (× ``PRESENTER_STEP``), every style alike, so the hierarchy holds there.

Items and widgets ask for a *role* ("caption", "label", "number", ...), never for a pixel size. ``tier_of``
says which rung of the hierarchy a role stands on (the layout audit checks the order on every screen).

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

# Size of each text style as a fraction of the window height. "small" is the floor: height / 48.
_FRACTIONS: dict[str, float] = {
    "small": 1 / 48,  # chapter sizes, axis ticks, legends: the smallest text on any screen (15 px at 720p)
    "label": 1 / 44,  # names of things on the stage, buttons, slider labels (16.4 px at 720p)
    "body": 1 / 40,  # captions and running text (18 px at 720p): the body floor
    "heading": 1 / 30,  # card and panel titles (24 px at 720p)
    "number": 1 / 30,  # the readout's figures (outside the hierarchy: a figure may be as big as a heading)
    "title": 1 / 22,  # page titles (32.7 px at 720p): 1.82 × body
}
MIN_FRACTION = _FRACTIONS["small"]
BODY_FRACTION = _FRACTIONS["body"]
TITLE_OVER_BODY = 1.6  # the title is at least this many times the body text
PRESENTER_STEP = 1.2

# The rungs of the hierarchy, top first: a text of a higher rung is strictly larger than any of a lower one,
# except that "label" may equal "body" (title > heading > body >= label).
TIERS = ("title", "heading", "body", "label")

# Which rung the roles in use stand on (scene items and widgets, all pages). A role not listed (a figure, a
# token id) is outside the hierarchy; the floor still holds for it.
ROLE_TIER: dict[str, str] = {
    "title": "title", "headline": "title", "page-title": "title",
    "heading": "heading", "panel-title": "heading",
    "body": "body", "caption": "body", "answer": "body", "paragraph": "body",
    "label": "label", "button": "label", "tab": "label", "seat": "label", "chip": "label", "value": "label",
    "axis": "label", "legend": "label", "pill": "label", "desk": "label", "chapter": "label", "status": "label",
    "info": "label", "extra": "label", "why": "label", "prompt": "label", "plot-title": "label", "small": "label",
    "seat-text": "label", "model-name": "label", "cart": "label", "overlay": "label", "reason": "label",
    "apprentice": "label",
    # the code view's line numbers (gui/code_view); its source lines ("code") are content, like a chip
    "line-number": "label",
}


# Outside the hierarchy (the floor still holds): figures ("number", "readout") and the model's tokens drawn as chips
# ("token"): a token chip is an object on the stage, shown as large as the story needs, not running text.


def tier_of(role: str | None) -> str | None:
    """The rung of ``TIERS`` that ``role`` stands on, or None for a role outside the hierarchy."""
    return ROLE_TIER.get(role or "")


@dataclass(frozen=True)
class TypeScale:
    """Pixel sizes of the named text styles for a window ``height`` px tall (device-independent pixels)."""

    height: float
    presenter: bool = False

    def px(self, style: str) -> float:
        """Font pixel size of ``style`` (one of ``STYLES``). Raises KeyError for an unknown style."""
        size = self.height * _FRACTIONS[style]
        return size * (PRESENTER_STEP if self.presenter else 1.0)

    def role_px(self, role: str) -> float:
        """Font pixel size of a role: the style of its rung (``tier_of``), "number" for a role outside it."""
        return self.px(tier_of(role) or "number")

    @property
    def minimum(self) -> float:
        """The smallest font size any visible text may have at this height: ``height / 48`` px (the floor
        holds in presenter mode too, where every style is larger)."""
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
