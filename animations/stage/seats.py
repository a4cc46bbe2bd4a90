"""The table: one card per seat, each showing its own request — a few words of its prompt, its answer growing
token by token in the seat's colour (the most recent tokens when long) and its state in words.

Up to 16 seats stay legible: one column up to 8 seats, two columns beyond; each card gets as many answer
lines as its height allows at the stage's "small" size (never fewer than one; never a single character).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QGraphicsScene

from animations.items import PANEL_EDGE, TEXT, TEXT_DIM
from animations.stage.style import (
    MAX_SEATS,
    PAD,
    StageType,
    add_panel,
    add_text,
    line_height,
    regions_of,
    set_elided,
    set_lines,
    tail_lines,
    tr,
)

CARD = QColor("#1f2b38")
STATES = ("reading", "writing", "done", "waiting")
JOIN_S = 0.5  # a new request's card fades in over this much stage time
TABLE_PLACES = 4  # a table of fewer requests shows its free places up to this many: room the next request takes


@dataclass(frozen=True)
class SeatText:
    """One seat at the table, as the window knows it.

    seat: 0-based seat number (0 … 15), the order the cards are drawn in. request_id: the engine's id.
    prompt: the request's prompt text. answer: the answer written so far. state: "reading" (prefill),
    "writing" (decode), "done" (finished this trip), "waiting" (queued, no seat yet).
    """

    seat: int
    request_id: int | str
    prompt: str
    answer: str
    state: str


def state_words(state: str, short: bool = False) -> str:
    if short:
        return {"reading": tr("reading"), "writing": tr("writing"), "done": tr("done"),
                "waiting": tr("waiting")}.get(state, state)
    return {"reading": tr("reading the question"), "writing": tr("writing"), "done": tr("done"),
            "waiting": tr("waiting for a seat")}.get(state, state)


class Seats:
    """A pool of ``MAX_SEATS`` seat cards in the table panel (``StageRegions.table``)."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType):
        self.region = regions_of(scene).table  # the scene's height decides it (StageRegions)
        self.panel = add_panel(scene, self.region)
        self.header = add_text(scene, type_.font(family, "label", bold=True), "seat")
        self.font = type_.font(family, "small")
        self.bold = type_.font(family, "small", bold=True)
        self.cards = []
        for _ in range(MAX_SEATS):
            card = QGraphicsRectItem()
            card.setBrush(CARD)
            card.setPen(QPen(PANEL_EDGE, 1))
            card.setZValue(3)
            scene.addItem(card)
            band = QGraphicsRectItem(card)
            band.setPen(Qt.PenStyle.NoPen)
            state = add_text(scene, self.bold, "seat", TEXT, parent=card)
            prompt = add_text(scene, self.font, "seat-text", TEXT_DIM, parent=card)  # the visitor's words
            answer = add_text(scene, self.font, "seat-text", TEXT, parent=card)  # the model's words
            self.cards.append({"card": card, "band": band, "state": state, "prompt": prompt, "answer": answer,
                               "drawn": None})
        self.free = []  # the free places drawn beside fewer than TABLE_PLACES requests
        for _ in range(TABLE_PLACES - 1):
            place = QGraphicsRectItem()
            place.setBrush(Qt.BrushStyle.NoBrush)
            place.setPen(QPen(PANEL_EDGE, 1.5, Qt.PenStyle.DashLine))
            place.setZValue(3)
            place.setVisible(False)
            scene.addItem(place)
            label = add_text(scene, self.font, "seat", TEXT_DIM, parent=place)
            self.free.append({"place": place, "label": label})
        self.area = QRectF(self.region)
        self.seats: list[SeatText] = []
        self.colors: list[QColor] = []
        self.ages: dict[str, float] = {}  # seconds of stage time since a request took its seat (it fades in)

    def texts(self):
        out = [self.header]
        for c in self.cards:
            if c["card"].isVisible():
                out += [t for t in (c["state"], c["prompt"], c["answer"]) if t.isVisible()]
        return out + [f["label"] for f in self.free if f["place"].isVisible()]

    def free_places(self) -> int:
        """How many free places are drawn now (dashed outlines beside the seats taken)."""
        return sum(f["place"].isVisible() for f in self.free)

    def set_area(self, area: QRectF) -> None:
        """The part of the table panel the seats may use (the apprentice takes the rest on verify trips).
        The same area again costs nothing (every trip sets it)."""
        if QRectF(area) == self.area:
            return
        self.area = QRectF(area)
        self.show(self.seats, self.colors)

    def show(self, seats: list[SeatText], colors: list[QColor], max_redraws: int | None = None) -> bool:
        """Draw ``seats`` (at most MAX_SEATS, in seat order) with one colour each. A card whose seat, colour and
        place have not changed costs nothing; with ``max_redraws`` at most that many changed cards are redrawn
        now (the others keep their old words until the next call). Returns True when every card is drawn."""
        self.seats, self.colors = list(seats)[:MAX_SEATS], list(colors)
        ids = {str(s.request_id) for s in self.seats}
        self.ages = {rid: age for rid, age in self.ages.items() if rid in ids}
        for rid in ids:
            self.ages.setdefault(rid, 0.0)
        n = len(self.seats)
        w_all = self.region.width() - 2 * PAD
        top = self._show_header(n, w_all)
        bottom = self.area.bottom() - PAD * 0.6
        cols = 1 if n <= 8 else 2
        gap = 8.0
        lh = line_height(self.font)
        fit_rows = max(1, int((bottom - top + gap) // (lh + 6 + gap)))  # a card is at least one line tall
        n = min(n, fit_rows * cols)  # the rest wait off the table's picture (the header still counts them)
        places = min(max(n, TABLE_PLACES), fit_rows * cols) if n else 0
        rows = max(1, math.ceil(max(n, places) / cols))
        card_h = min(5 * lh + 12, (bottom - top - gap * (rows - 1)) / rows)
        card_w = (w_all - gap * (cols - 1)) / cols
        self.visible_count = n
        self._show_free_places(n, places, cols, gap, card_w, card_h, top, lh)
        redraws = 0
        for k, c in enumerate(self.cards):
            if k >= n:
                c["card"].setVisible(False)
                continue
            seat, color = self.seats[k], self.colors[k % len(self.colors)] if self.colors else TEXT
            x = self.region.left() + PAD + (k % cols) * (card_w + gap)
            y = top + (k // cols) * (card_h + gap)
            c["card"].setVisible(True)
            c["card"].setOpacity(self._opacity(seat))
            drawn = (seat, color.rgba(), x, y, card_w, card_h, lh)
            if c["drawn"] == drawn:  # this card has not changed since it was last drawn: nothing to redo
                continue
            if max_redraws is not None and redraws >= max_redraws:
                return False
            redraws += 1
            c["drawn"] = drawn
            self._draw_card(c, seat, color, x, y, card_w, card_h, lh)
        return True

    def _show_header(self, n: int, w_all: float) -> float:
        """The header with the seats taken: the requests in this trip (reading or writing), the batch; a
        finished card that is still shown for reading and a request still waiting hold no seat. Returns the
        top of the cards under it."""
        taken = sum(1 for s in self.seats if s.state in ("reading", "writing"))
        head = tr("The table · seats taken: {n}").format(n=taken) if n else tr("The table · empty")
        set_elided(self.header, head, w_all)
        self.header.setPos(self.region.left() + PAD, self.region.top() + PAD * 0.6)
        return max(self.area.top(), self.header.y() + self.header.boundingRect().height() + 6)

    def _show_free_places(self, n: int, places: int, cols: int, gap: float, card_w: float, card_h: float,
                          top: float, lh: float) -> None:
        """The free places after the ``n`` seats taken, in the same grid, up to ``places`` in all."""
        for j, f in enumerate(self.free):
            k = n + j
            f["place"].setVisible(n > 0 and k < places)
            if not f["place"].isVisible():
                continue
            drawn = (k % cols, k // cols, card_w, card_h, top, lh, tr("free seat"))
            if f.get("drawn") == drawn:  # unchanged since the last trip: nothing to measure again
                continue
            f["drawn"] = drawn
            f["place"].setRect(QRectF(0, 0, card_w, card_h))
            f["place"].setPos(self.region.left() + PAD + (k % cols) * (card_w + gap),
                              top + (k // cols) * (card_h + gap))
            set_elided(f["label"], drawn[-1], card_w - 22)
            f["label"].setPos(16, (card_h - lh) / 2)

    def _draw_card(self, c: dict, seat: SeatText, color: QColor, x: float, y: float, card_w: float, card_h: float,
                   lh: float) -> None:
        """One seat's card at (x, y): its colour band, its state, its question and the end of its answer, as
        many lines as the card's height holds (``lh`` px a line)."""
        c["card"].setRect(QRectF(0, 0, card_w, card_h))
        c["card"].setPos(x, y)
        c["band"].setRect(QRectF(0, 0, 8, card_h))
        c["band"].setBrush(color)
        inner = card_w - 22
        lines = max(1, int((card_h - 6) // lh))
        c["state"].setBrush(color)
        set_elided(c["state"], state_words(seat.state, short=lines < 3), inner)
        c["state"].setPos(16, 3)
        # one line and an answer to show: the answer (the story) takes the whole line; the card's fade
        # still tells a finished or waiting seat from a writing one
        c["state"].setVisible(lines >= 2 or not seat.answer)
        answer_x, answer_w, answer_top, answer_lines = self._card_prompt(c, seat, inner, lines, lh)
        c["answer"].setBrush(color)
        tail = tail_lines(self.font, seat.answer, answer_w, max(1, answer_lines)) if seat.answer else []
        c["answer"].setText("\n".join(tail))
        c["answer"].setPos(answer_x, answer_top)
        c["answer"].setVisible(answer_lines >= 1 and bool(tail))

    def _card_prompt(self, c: dict, seat: SeatText, inner: float, lines: int,
                     lh: float) -> tuple[float, float, float, int]:
        """A card's question: on its own line, beside the state, or left out where it does not fit whole (its
        end shown while the seat still reads it). Returns the answer's x, width, top and lines."""
        prompt = " ".join(seat.prompt.split())
        sw = c["state"].boundingRect().width()
        whole = True
        if lines >= 3 or not prompt:  # the prompt on its own line
            set_elided(c["prompt"], f"“{prompt}”" if prompt else "", inner)
            c["prompt"].setPos(16, 3 + lh)
            answer_top, answer_lines = 3 + 2 * lh, lines - 2
        else:  # beside the state, from its measured width; left out where it does not fit whole (a narrow
            # card at a full table: "· “床前明…" told nothing the seat's colour does not)
            quote, room = f"· “{prompt}”", inner - sw - 8
            whole = QFontMetricsF(c["prompt"].font()).horizontalAdvance(quote) <= room
            set_elided(c["prompt"], quote, room)
            c["prompt"].setPos(16 + sw + 8, 3)
            answer_top, answer_lines = 3 + lh, lines - 1
        if not prompt and lines >= 3:
            answer_top, answer_lines = 3 + lh, lines - 1
        c["prompt"].setVisible(bool(prompt) and whole)
        answer_x, answer_w = 16, inner
        if lines < 2:  # one line: the answer (the story) alone on it, in place of the state and the prompt
            c["prompt"].setVisible(False)
            answer_x, answer_w, answer_top, answer_lines = 16, inner, 3, 1
        if seat.state == "reading" and not seat.answer and prompt and not c["prompt"].isVisible():
            # a narrow card at a full table still reading its question: what it reads, the question's end
            # ("读题" alone told nothing), under the state or beside it on a one-line card
            quote = f"“{prompt}”"
            room = inner if lines >= 2 else inner - sw - 8
            if room >= 2 * lh:  # room for a few glyphs after the "…"
                set_lines(c["prompt"], tail_lines(self.font, quote, room, max(1, lines - 1)))
                c["prompt"].setPos(16 if lines >= 2 else 16 + sw + 8, 3 + lh if lines >= 2 else 3)
                c["prompt"].setVisible(True)
        return answer_x, answer_w, answer_top, answer_lines

    def _opacity(self, seat: SeatText) -> float:
        base = 0.55 if seat.state in ("done", "waiting") else 1.0
        return base * min(1.0, self.ages.get(str(seat.request_id), JOIN_S) / JOIN_S)

    def tick(self, dt_s: float) -> None:
        """Stage time passes: a request that just took its seat fades in over ``JOIN_S`` seconds."""
        for k, seat in enumerate(self.seats):
            rid = str(seat.request_id)
            age = self.ages.get(rid, JOIN_S)
            if age < JOIN_S:
                self.ages[rid] = age + dt_s
                self.cards[k]["card"].setOpacity(self._opacity(seat))

    def shown(self) -> list[tuple[str, str, str]]:
        """(request_id, prompt text shown, answer text shown) per visible seat, in seat order."""
        return [(str(s.request_id), c["prompt"].text() if c["prompt"].isVisible() else "",
                 c["answer"].text() if c["answer"].isVisible() else "")
                for s, c in zip(self.seats, self.cards) if c["card"].isVisible()]
