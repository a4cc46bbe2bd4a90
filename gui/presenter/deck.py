"""The deck: the order of a talk as one list that the clicker walks, forwards and backwards.

A deck is a list of items: a tour page (1–18: the 15 sections, 16 the game, 17 the terms, 18 the end) or the
Live page (``"live"``). The default is the order of a talk::

    1-15, live, 16, 17, 18

An operator sets another in the settings file (``[presenter] deck = ...``): comma-separated items, each a page
number, a range ``a-b`` (either direction), ``live``, or the names ``game`` (16), ``terms`` (17), ``end`` (18).
``parse_deck`` raises ``ValueError`` with a one-line reason; ``deck_or_default`` logs that reason and falls back
to the default, so a typo never stops a talk.

``Deck(window)`` moves through the window's pages: ``next()``, ``prev()``, ``first()``. What the speaker saw
last wins: a chip clicked, a digit pressed or L/T first re-anchors the deck on the item shown (``sync()``). Two
items answer the clicker's "next" themselves before the deck moves on (``Presenter.next_beat``):

* the Live page: each "next" is one real trip until the answer started on this visit is complete;
* the game (page 16): each "next" presses (one trip of the game) until a sentence is finished on this visit.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gui.live.host import LiveHost

log = logging.getLogger(__name__)

LIVE = "live"
PAGE_COUNT = 18  # tour pages (gui.tour.SECTION_COUNT; kept here so parsing needs no Qt)
DEFAULT_DECK = "1-15, live, 16, 17, 18"
NAMES = {"game": 16, "terms": 17, "end": 18, LIVE: LIVE}

Item = int | str  # a tour page number (1-based) or LIVE


def parse_deck(text: str) -> list[Item]:
    """Items of a deck string (see the module docstring). Raises ``ValueError`` (one line, naming the bad part)
    for an empty deck, an unknown word or a page outside 1–18."""
    items: list[Item] = []
    for part in str(text).replace(";", ",").split(","):
        part = part.strip().lower()
        if not part:
            continue
        if part in NAMES:
            items.append(NAMES[part])
            continue
        m = re.fullmatch(r"(\d+)\s*(?:-|–|\.\.)\s*(\d+)", part)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            for n in (a, b):
                if not 1 <= n <= PAGE_COUNT:
                    raise ValueError(f"page {n} in {part!r} is not a tour page (1-{PAGE_COUNT})")
            step = 1 if b >= a else -1
            items.extend(range(a, b + step, step))
            continue
        if part.isdigit():
            n = int(part)
            if not 1 <= n <= PAGE_COUNT:
                raise ValueError(f"page {n} is not a tour page (1-{PAGE_COUNT})")
            items.append(n)
            continue
        raise ValueError(f"{part!r} is neither a page number (1-{PAGE_COUNT}), a range a-b, nor live/game/terms/end")
    if not items:
        raise ValueError("the deck is empty")
    return items


def deck_or_default(text: str | None) -> list[Item]:
    """``parse_deck(text)``, or the default deck with a warning in the log when ``text`` is bad or missing."""
    if text is None or not str(text).strip():
        return parse_deck(DEFAULT_DECK)
    try:
        return parse_deck(text)
    except ValueError as exc:
        log.warning("presenter deck %r: %s; using the default deck %r", text, exc, DEFAULT_DECK)
        return parse_deck(DEFAULT_DECK)


def deck_problem(text: str | None) -> str | None:
    """Why ``text`` is not a deck (``parse_deck``'s one-line reason), or None when it is one (or is missing,
    which means the default)."""
    if text is None or not str(text).strip():
        return None
    try:
        parse_deck(text)
    except ValueError as exc:
        return str(exc)
    return None


def format_deck(items: list[Item]) -> str:
    """A deck string for ``items`` (runs of consecutive pages written as ranges)."""
    out: list[str] = []
    i = 0
    while i < len(items):
        item = items[i]
        if item == LIVE:
            out.append(LIVE)
            i += 1
            continue
        j = i
        while j + 1 < len(items) and items[j + 1] != LIVE and items[j + 1] == items[j] + 1:
            j += 1
        out.append(str(item) if j == i else f"{item}-{items[j]}")
        i = j + 1
    return ", ".join(out)


class Deck:
    """Walks ``items`` on ``window`` (a ``gui.live.host.LiveHost``: its ``tour``, ``show_tour``, ``show_live``,
    ``is_tour_visible``, and the Live ``session``). ``position`` is the index of the item shown (0-based)."""

    def __init__(self, window: LiveHost, items: list[Item] | None = None):
        self.window = window
        self.session = window.session  # the Live session's state: which answer, running or not
        self.items: list[Item] = list(items) if items else parse_deck(DEFAULT_DECK)
        self.position = 0
        self._live_entry_session: int | None = None  # the session's answer number when Live was entered
        self._game_entry: tuple[int, int] | None = None  # (id of the game, sentences done) when it was entered

    # ---- what is shown ---------------------------------------------------------------------------------------
    def _tour(self):
        return self.window.tour

    def shown(self) -> Item:
        """The item on screen now: the tour page number (1-based) or LIVE."""
        if self.window.is_tour_visible():
            return self._tour().current_index + 1
        return LIVE

    def sync(self) -> int:
        """Re-anchor ``position`` on the item shown (the nearest match to the current position; for a tour page
        not in the deck, the last item before it in page order). Returns the position."""
        shown = self.shown()
        if shown == LIVE and (self.items[self.position] != LIVE or self._live_entry_session is None):
            self._live_entry_session = self.session.answer_number  # Live reached without the deck
        if self.items[self.position] == shown:
            return self.position
        matches = [i for i, it in enumerate(self.items) if it == shown]
        if matches:
            self.position = min(matches, key=lambda i: abs(i - self.position))
        elif shown != LIVE:
            before = [i for i, it in enumerate(self.items) if it != LIVE and it < shown]
            if before:
                self.position = max(before, key=lambda i: self.items[i])
        return self.position

    # ---- moving ----------------------------------------------------------------------------------------------
    def show(self, position: int) -> None:
        """Show item ``position`` (clamped) of the deck; a text field that had the focus gives it back to the
        page, so the clicker's next key is not typed into it."""
        self.position = max(0, min(len(self.items) - 1, int(position)))
        self._show_item()
        from PySide6.QtWidgets import QApplication  # noqa: PLC0415 - parsing stays Qt-free

        from gui.kiosk.focus import hand_focus_back, is_text_field
        focus = QApplication.focusWidget()
        if focus is not None and is_text_field(focus):
            hand_focus_back(focus)

    def _show_item(self) -> None:
        item = self.items[self.position]
        if item == LIVE:
            self.window.show_live()
            self._live_entry_session = self.session.answer_number
            return
        tour = self._tour()
        self.window.show_tour()
        tour.goto(item - 1)
        if tour.pages_key() == "game":
            self._game_entry = (id(tour.game), tour.game.sentences_done)

    def _outside(self, later: bool) -> int | None:
        """For a tour page shown that is not in the deck: the position of the deck's first page after it
        (``later``) or last page before it, in page order; None if there is none or the page is in the deck."""
        shown = self.shown()
        if shown == LIVE or shown in self.items:
            return None
        pages = [(it, i) for i, it in enumerate(self.items) if it != LIVE and (it > shown if later else it < shown)]
        if not pages:
            return None
        return (min(pages) if later else max(pages))[1]

    def next(self) -> bool:
        """The next item; False (and nothing moves) on the last one. From a tour page outside the deck (a chip
        or a digit took the speaker there): the deck's first page after it."""
        outside = self._outside(later=True)
        if outside is not None:
            self.show(outside)
            return True
        self.sync()
        if self.position + 1 >= len(self.items):
            return False
        self.show(self.position + 1)
        return True

    def prev(self) -> bool:
        """The previous item; False on the first one. From a tour page outside the deck: the deck's last page
        before it."""
        outside = self._outside(later=False)
        if outside is not None:
            self.show(outside)
            return True
        self.sync()
        if self.position == 0:
            return False
        self.show(self.position - 1)
        return True

    def first(self) -> None:
        self.show(0)

    # ---- the two items that answer "next" themselves ------------------------------------------------------------
    def live_done(self) -> bool:
        """True when the Live page has nothing more to show on this visit: the answer started since it was
        entered is complete, or the model cannot be loaded."""
        if self.window.model_failed():
            return True
        entered = self._live_entry_session
        started_here = entered is not None and self.session.answer_number != entered
        return started_here and self.window.is_session_done() and not self.session.is_running()

    def game_done(self) -> bool:
        """True when a sentence has been finished in the game shown since it was entered (or since its mode
        changed: a new game counts from zero)."""
        game = self._tour().game
        if game is None:
            return True
        if self._game_entry is None or self._game_entry[0] != id(game):
            self._game_entry = (id(game), 0 if game.trips == 0 else game.sentences_done)
        return game.sentences_done > self._game_entry[1]


__all__ = ["Deck", "DEFAULT_DECK", "LIVE", "parse_deck", "deck_or_default", "deck_problem", "format_deck"]
