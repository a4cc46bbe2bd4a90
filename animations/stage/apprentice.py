"""The apprentice (the draft model or the n-gram one) on verify trips: its guesses in pencil, then the master's
verdicts in one trip.

Rows of one guessing seat: "ink" (accepted), "wrong" (crossed out, the master's own token beside it),
"pencil" (thrown away after the first wrong one), "bonus" (every guess right: the master's free token).
The words under the figure say how many guesses were kept, and why fewer than guessed when so.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene

from animations.items import TEXT, TEXT_DIM, ApprenticeItem, GuessSlipItem
from animations.stage.style import PAD, StageType, add_text, line_height, regions_of, tr, wrap_lines
from animations.typescale import set_role

MAX_GUESSES = 8


def guess_rows(trip: dict) -> tuple[str | None, list[tuple[str, str, str]]]:
    """(request id, rows) for the first seat of a verify trip that guessed; rows are (state, text, master's
    token beside a wrong guess). (None, []) when there is nothing to show."""
    if trip.get("phase") != "verify" or not int(trip.get("proposed") or 0):
        return None, []
    guesses = {str(g.get("request_id")): [str(x) for x in g.get("labels") or []] for g in trip.get("guesses") or []}
    tokens: dict[str, list[dict]] = {}
    for t in trip.get("tokens") or []:
        tokens.setdefault(str(t.get("request_id", "")), []).append(t)
    for rid in [str(r) for r in trip.get("request_ids") or []]:
        emitted = tokens.get(rid, [])
        labels = guesses.get(rid)
        accepted = sum(1 for t in emitted if t.get("accepted_from_draft"))
        if labels is None:  # an engine without guess labels: the accepted ones equal the emitted tokens
            labels = [str(t.get("label", "")) for t in emitted[:accepted]]
            if accepted < int(trip.get("proposed") or 0) and len(trip.get("request_ids") or []) == 1:
                labels.append("?")
        if not labels:
            continue
        labels = labels[:MAX_GUESSES]
        rows = []
        for i, guess in enumerate(labels):
            if i < accepted:
                rows.append(("ink", guess, ""))
            elif i == accepted:
                rows.append(("wrong", guess, str(emitted[i].get("label", "")) if i < len(emitted) else ""))
            else:
                rows.append(("pencil", guess, ""))
        if accepted >= len(labels) and len(emitted) > accepted:
            rows.append(("bonus", str(emitted[accepted].get("label", "")), ""))
        return rid, rows
    return None, []


def apprentice_title(trip: dict) -> str:
    """The figure's name for the apprentice that guessed on this trip (the report's ``draft_kind``): the draft
    model, or the n-gram apprentice that copies its guesses from the text already written (prompt lookup)."""
    if trip.get("draft_kind") == "ngram":
        return tr("Apprentice (n-gram)")
    return tr("Apprentice (draft model)")


class Apprentice:
    """The figure, two lines of words and up to MAX_GUESSES + 1 guess slips, at the bottom of the table."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType):
        self.region = regions_of(scene).table  # the scene's height decides it (StageRegions)
        self.font = type_.font(family, "small")
        self.figure = ApprenticeItem(self.font)
        self.figure.setZValue(8)
        scene.addItem(self.figure)
        self.title = add_text(scene, type_.font(family, "small", bold=True), "apprentice", TEXT, z=25)
        self.count = add_text(scene, self.font, "apprentice", TEXT, z=25)
        self.verdict = add_text(scene, self.font, "apprentice", TEXT_DIM, z=25)
        self.guesses: list[GuessSlipItem] = []
        for _ in range(MAX_GUESSES + 1):
            g = GuessSlipItem(self.font, self.font)
            g.setZValue(7.5)
            set_role(g, "apprentice")
            scene.addItem(g)
            self.guesses.append(g)
        self.hide()

    def texts(self):
        return [t for t in (self.title, self.count, self.verdict) if t.opacity() > 0.01]

    def hide(self) -> None:
        for it in (self.figure, self.title, self.count, self.verdict, *self.guesses):
            it.setOpacity(0.0)

    def visible(self) -> bool:
        return self.title.opacity() > 0.01

    def layout(self, trip: dict, rows: list[tuple[str, str, str]], color: QColor, note: str = "",
               bottom: float | None = None) -> float:
        """Place the words and ``rows`` of slips at the bottom of the table (above ``bottom`` when given);
        returns the top of the area used. ``note``: this trip's words when it wrote fewer tokens than guessed
        ("This trip: 2 tokens, not 5: …"), in place of the verdict."""
        lh = line_height(self.font)
        w = self.region.width() - 2 * PAD
        slip_h = lh + 10
        gap = 6.0
        fig_w = ApprenticeItem.W * 0.6
        left = self.region.left() + PAD
        text_x = left + fig_w + 10
        k = int(trip.get("proposed") or 0)
        kept = int(trip.get("accepted") or 0)
        tw = w - fig_w - 10
        why = tr("all right: the master adds one more") if kept >= k else tr("a wrong guess throws away the rest")
        why = note or why
        foot = self.region.bottom() if bottom is None else min(self.region.bottom(), bottom + PAD * 0.6)
        words = ((self.title, apprentice_title(trip)),
                 (self.count, tr("{k} guesses in {ms} ms · {a} kept").format(
                     k=k, a=kept, ms=f"{float(trip.get('draft_ms') or 0.0):.1f}")),
                 (self.verdict, why))
        # each takes a second (third) line where one is too narrow for it ("… throws away the r…" was cut), where
        # the table has the height for it under its header and one line of a seat; where it has not, the slips go
        # two to a row (half the height) before the words are cut to fewer lines (presenter mode's larger type)
        room_top = self.region.top() + PAD + 2 * lh + 12  # the table's header and a one-line seat card above
        for cols, most in ((1, 3), (2, 3), (1, 2), (2, 2), (1, 1), (2, 1)):
            height = 0.0
            for item, text in words:
                item.setText("\n".join(wrap_lines(item.font(), text, tw, most)))
                height += max(lh, item.boundingRect().height())
            slips_h = -(-len(rows) // cols) * (slip_h + gap)
            top = foot - PAD * 0.6 - slips_h - height - 8
            if top - 18 >= room_top:
                break
        self.figure.setScale(0.6)
        self.figure.setPos(left, top - 14)
        y = top
        for item, _text in words:
            item.setPos(text_x, y)
            y += max(lh, item.boundingRect().height())
        y += 8
        for i, g in enumerate(self.guesses):
            if i >= len(rows):
                g.setOpacity(0.0)
                continue
            state, text, fix = rows[i]
            slip_w = (tw - gap * (cols - 1)) / cols
            rect = QRectF(text_x + (i % cols) * (slip_w + gap), y + (i // cols) * (slip_h + gap), slip_w, slip_h)
            if state == "bonus":
                g.set_content(rect, text, "bonus", color, tag=tr("free"))
            else:
                g.set_content(rect, text, "pencil", color)
        return top - 18

    def guess_states(self) -> list[tuple[str, str, str]]:
        return [(g.state, g.text, g.fix) for g in self.guesses if g.opacity() > 0.01]


def judge(g: GuessSlipItem, state: str, text: str, fix: str):
    """The master's verdict on one guess (p 0 … 1): ink it, cross it out (writing its own token), or drop it."""
    def fn(p: float) -> None:
        if state == "pencil":  # after the first wrong guess the rest are thrown away
            g.setOpacity(1.0 - 0.75 * p)
            return
        if p > 0 and g.state != state:
            g.set_content(g.rect(), text, state, g.color, fix=fix)
        elif p <= 0 and g.state != "pencil":
            g.set_content(g.rect(), text, "pencil", g.color)
        g.set_verdict(p)
    return fn


__all__ = ["Apprentice", "guess_rows", "judge", "MAX_GUESSES"]
