"""The words of the Live page: one text per seat at the table, a button per seat, the answer box and the chips.

Every request's prompt and answer reach here as plain data (``add_request`` from the GUI's own submit, tokens
from each step report's ``tokens`` list, which carries every seat's tokens with their ``request_id``). With two
or more seats the row of seat buttons lets a visitor read any of them; the visitor's own answer is seat 1.

The answer box follows the newest text and keeps the prompt in view: when prompt and answer no longer fit,
the prompt shrinks to a one-line summary and the oldest part of the answer gives way ("…"). It never scrolls,
so no scroll bar is ever drawn.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from animations.typescale import set_role
from gui.i18n import tr_window as _tr
from gui.widgets import TokenChips
from model.loops import LoopWatch

PROMPT_SUMMARY_CHARS = 48
MAX_SEAT_CHIPS = 240
MAX_SEAT_BUTTONS = 16  # the table's size: a finished seat's button goes when a new request needs the room


@dataclass
class SeatText:
    """One request's words: its prompt, the answer so far and its chips (label, token id, kind)."""

    request_id: str
    prompt: str
    answer: str = ""
    chips: list[tuple[str, int, str]] = field(default_factory=list)
    done: bool = False
    loop: str | None = None  # the phrase it wrote three times in a row: its answer stops before the third
    watch: LoopWatch = field(default_factory=LoopWatch, repr=False)


def summary(prompt: str, n: int = PROMPT_SUMMARY_CHARS) -> str:
    """The prompt on one line, at most ``n`` characters ("…" at the end when cut)."""
    line = " ".join(prompt.split())
    return line if len(line) <= n else line[: n - 1].rstrip() + "…"


class AnswerBox(QTextEdit):
    """Prompt (grey) and answer (white); always shows the newest text and a piece of the prompt, never scrolls."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("answer")
        self.setReadOnly(True)
        self.setFocusPolicy(Qt.NoFocus)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextEdit.WidgetWidth)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        set_role(self, "answer")
        self._prompt = ""
        self._answer = ""
        self._shown_html = ""
        self._probe = QTextDocument(self)

    def show_text(self, prompt: str, answer: str) -> None:
        """Show ``prompt`` then ``answer``; cut the prompt to a summary and the answer's head until it fits."""
        self._prompt, self._answer = prompt, answer
        self._render()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._render()

    def _html(self, prompt: str, answer: str) -> str:
        p = html.escape(prompt).replace("\n", "<br>")
        a = html.escape(answer).replace("\n", "<br>")
        return f"<span style='color:#7d8b99'>{p}</span><span style='color:#eef3f8'>{a}</span>"

    def _fits(self, html_text: str) -> bool:
        """Would ``html_text`` fit the box? Measured on a spare document (the box itself is set once)."""
        doc = self._probe
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(self.document().documentMargin())
        doc.setTextWidth(self.viewport().width())
        doc.setHtml(html_text)
        return doc.size().height() <= self.viewport().height() + 1

    def _render(self) -> None:
        """Whole prompt and answer if they fit; else the prompt's one-line summary, then as much of the answer's
        end as fits (the smallest cut of its head, by bisection); the summary shrinks last."""
        prompt, answer = self._prompt, self._answer
        best = self._html(prompt, answer)
        if (prompt or answer) and not self._fits(best):
            most = None  # (cut, html): the summary length that leaves the most of the answer in view
            for n in (PROMPT_SUMMARY_CHARS, 24, 12):
                head = summary(prompt, n) + " "
                if self._fits(self._html(head, answer)):
                    most = (0, self._html(head, answer))
                    break
                lo, hi = 0, len(answer)
                while lo < hi:
                    mid = (lo + hi) // 2
                    if self._fits(self._html(head, "…" + answer[mid:])):
                        hi = mid
                    else:
                        lo = mid + 1
                if most is None or lo < most[0]:
                    most = (lo, self._html(head, "…" + answer[lo:]))
            best = most[1]
        if best != self._shown_html:
            self._shown_html = best
            self.setHtml(best)
        self.verticalScrollBar().setValue(0)


class SeatPanel(QWidget):
    """Seat buttons (batch ≥ 2), the answer box and the chips of the seat being read.

    ``seat_chosen(request_id)`` when the visitor picks a seat.
    """

    seat_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(2)  # tight: at 1280×720 with seat buttons every pixel of height is the stage's
        self.seat_row = QWidget()
        self._seat_layout = QHBoxLayout(self.seat_row)
        self._seat_layout.setContentsMargins(0, 0, 0, 0)
        self._seat_layout.setSpacing(3)
        self.seat_caption = QLabel()
        set_role(self.seat_caption, "seat")
        self._seat_layout.addWidget(self.seat_caption)
        self._seat_layout.addStretch(1)
        self._group = QButtonGroup(self)
        self._group.setExclusive(True)
        self.seat_buttons: dict[str, QPushButton] = {}
        self.answer = AnswerBox()
        self.chips = TokenChips(max_chips=MAX_SEAT_CHIPS)
        set_role(self.chips, "chip")
        col.addWidget(self.seat_row)
        col.addWidget(self.answer, 1)
        col.addWidget(self.chips)
        self.seat_row.setVisible(False)
        self.seats: dict[str, SeatText] = {}
        self.order: list[str] = []
        self.shown: str | None = None
        self.main_id: str | None = None
        self._count = 0  # requests seated since the last clear (a seat button's number)
        self.mirrors: list[AnswerBox] = []  # other boxes showing the same words (the Live page's big answer)
        self.retranslate()

    # ---- data --------------------------------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget every seat (a new answer or a reset)."""
        self.seats.clear()
        self.order.clear()
        for b in self.seat_buttons.values():
            self._group.removeButton(b)
            self._seat_layout.removeWidget(b)
            b.hide()  # gone from the screen now, not at the next turn of the event loop
            b.deleteLater()
        self.seat_buttons.clear()
        self._count = 0
        self.shown = None
        self.main_id = None
        self.chips.clear()
        self._set_text("", "")
        self.seat_row.setVisible(False)

    def add_request(self, request_id: str, prompt: str, main: bool = False) -> None:
        """A request sat down at the table (the visitor's own when ``main``)."""
        self.seats[request_id] = SeatText(request_id, prompt)
        self.order.append(request_id)
        self._count += 1
        while len(self.order) > MAX_SEAT_BUTTONS and self._drop_one_done():
            pass
        if main:
            self.main_id = request_id
            self.shown = request_id
        button = QPushButton(str(self._count))
        button.setCheckable(True)
        button.setFocusPolicy(Qt.NoFocus)
        button.setToolTip(summary(prompt))
        set_role(button, "seat")
        button.setFont(self.seat_caption.font())
        button.clicked.connect(lambda _=False, rid=request_id: self.choose(rid))
        self._group.addButton(button)
        self.seat_buttons[request_id] = button
        self._seat_layout.insertWidget(self._seat_layout.count() - 1, button)
        button.setChecked(request_id == self.shown)
        self.seat_row.setVisible(len(self.order) >= 2)
        if request_id == self.shown:
            self._show()

    def _drop_one_done(self) -> bool:
        """Forget the oldest finished seat other than the visitor's and the one being read. False if none."""
        for rid in self.order:
            if self.seats[rid].done and rid not in (self.main_id, self.shown):
                self.order.remove(rid)
                del self.seats[rid]
                b = self.seat_buttons.pop(rid)
                self._group.removeButton(b)
                self._seat_layout.removeWidget(b)
                b.hide()
                b.deleteLater()
                return True
        return False

    def add_prompt_chips(self, request_id: str, labels: list[str], token_ids: list[int]) -> None:
        """The prompt's tokens (from the engine's ``accepted``)."""
        seat = self.seats.get(request_id)
        if seat is None:
            return
        seat.chips.extend((lab, int(tid), "prompt") for tid, lab in zip(token_ids, labels))
        if request_id == self.shown:
            for lab, tid, kind in seat.chips[-len(labels):] if labels else []:
                self.chips.add(lab, tid, kind=kind)

    def add_tokens(self, tokens: list[dict]) -> set[str]:
        """Append a trip's tokens to their seats. Returns the request ids that got text."""
        touched: set[str] = set()
        for tok in tokens:
            rid = tok.get("request_id")
            seat = self.seats.get(rid)
            if seat is None or seat.loop is not None:
                continue  # a seat that looped shows no more of it (model/loops.py)
            loop = seat.watch.feed(tok.get("text", ""))
            if loop is None:
                seat.answer = seat.watch.text
            else:  # two copies at most, never the third
                seat.answer, seat.loop, seat.done = seat.watch.text[:loop.cut].rstrip(), loop.phrase, True
            chip = (tok.get("label", ""), int(tok.get("token_id", -1)), "answer")
            seat.chips.append(chip)
            del seat.chips[:-MAX_SEAT_CHIPS]
            touched.add(rid)
            if rid == self.shown:
                self.chips.add(*chip[:2])
        if self.shown in touched:
            self._show_text()
        return touched

    def finish(self, request_id: str) -> None:
        """The request is complete (its button stays, so its text can still be read)."""
        if request_id in self.seats:
            self.seats[request_id].done = True

    def seat_list(self) -> list[dict]:
        """Plain data for the stage: [{"request_id", "prompt", "answer", "main", "done"}] in seat order."""
        return [{"request_id": rid, "prompt": s.prompt, "answer": s.answer, "main": rid == self.main_id,
                 "done": s.done} for rid, s in ((r, self.seats[r]) for r in self.order)]

    # ---- view --------------------------------------------------------------------------------------------------
    def choose(self, request_id: str) -> None:
        """Read seat ``request_id``'s prompt and answer."""
        if request_id not in self.seats:
            return
        self.shown = request_id
        self.seat_buttons[request_id].setChecked(True)
        self._show()
        self.seat_chosen.emit(request_id)

    def _show(self) -> None:
        seat = self.seats.get(self.shown)
        self.chips.clear()
        if seat is None:
            self._set_text("", "")
            return
        for lab, tid, kind in seat.chips[-self.chips.max_chips:]:
            self.chips.add(lab, tid, kind=kind)
        self._show_text()

    def _show_text(self) -> None:
        seat = self.seats.get(self.shown)
        if seat is not None:
            self._set_text(seat.prompt, seat.answer)

    def _set_text(self, prompt: str, answer: str) -> None:
        for box in (self.answer, *self.mirrors):
            box.show_text(prompt, answer)

    def retranslate(self) -> None:
        self.seat_caption.setText(_tr("Seats"))
        self.seat_caption.setToolTip(_tr("Every request at the table: pick one to read its prompt and answer"))
