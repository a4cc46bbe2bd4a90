"""The road and the desks: one desk per worker, one cart per desk carrying that desk's copy of its share.

Whole book (n = 1): one cart carries a copy of every chapter and the dictionary to one desk.
Tensor parallel ("tp", n desks): every cart carries a strip of every chapter (1/n of its heads and MLP columns)
and of the dictionary; after every chapter the desks pass notes (the all-reduce), drawn as a slip moving
between the desks, with the measured communication time on each desk.
Pipeline parallel ("pp"): each cart carries its desk's run of whole chapters (the dictionary rides with the
first desk); a desk whose chapters are not being read says "waiting" — the pipeline bubble, measured.

Positions are scene units inside ``DESKS``; the cart moves by ``set_cart_progress`` (0 = at the warehouse
door, 1 = parked at its desk), driven by the scene's timeline.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsLineItem, QGraphicsRectItem, QGraphicsScene

from animations.easing import clamp01
from animations.items import (
    CART_BED,
    CHAPTER,
    CHAPTER_EDGE,
    CHAPTER_LIT,
    DESK_COLORS,
    PAPER,
    RAIL,
    TEXT,
    TEXT_DIM,
    WHEEL_R,
    CartItem,
)
from animations.stage.style import (
    PAD,
    StageType,
    add_panel,
    add_text,
    line_height,
    regions_of,
    set_elided,
    set_lines,
    tr,
    wrap_lines,
)
from animations.stage.warehouse import DICTIONARY
from animations.units import fmt_bytes

CART_W = 170.0
READ = QColor("#fff3c4")  # the part of the lit chapter already read this trip
TEXT_W = 365.0  # room for "this trip: work 12.3 · notes 45.6 ms" at the room's type size (height / 48)
DESK_SURFACE = QColor("#2a3644")
WAITING = QColor("#6b7785")


class Desks:
    """``n`` desk rows, each with its rail, cart (carrying ``shares[d]``) and three lines of words."""

    def __init__(self, scene: QGraphicsScene, family: str, type_: StageType, mode: str, n: int,
                 layer_bytes: list[int], dictionary_bytes: int, layers: list[tuple[int, int]]):
        self.region = regions_of(scene).desks  # the scene's height decides it (StageRegions)
        self.scene, self.mode, self.n = scene, mode, max(1, n)
        self.layer_bytes, self.dictionary_bytes = list(layer_bytes), int(dictionary_bytes)
        self.layers = layers if len(layers) == self.n else [(0, len(layer_bytes))] * self.n
        self._items: list[QGraphicsItem] = []
        self.panel = self._own(add_panel(scene, self.region))
        f_head = type_.font(family, "label", bold=True)
        f_small = type_.font(family, "small")
        self.header = self._own(add_text(scene, f_head, "desk"))
        self.rows: list[dict] = []
        for d in range(self.n):
            row: dict = {"bars": {}, "lit": None}
            row["rail"] = self._own(QGraphicsLineItem())
            row["rail"].setPen(QPen(RAIL, 4, Qt.PenStyle.DashLine, Qt.PenCapStyle.RoundCap))
            row["surface"] = self._own(QGraphicsRectItem())
            row["surface"].setBrush(DESK_SURFACE)
            row["surface"].setPen(QPen(DESK_COLORS[d % len(DESK_COLORS)] if self.n > 1 else CHAPTER_EDGE, 2))
            for it in (row["rail"], row["surface"]):
                it.setZValue(1)
                scene.addItem(it)
            row["name"] = self._own(add_text(scene, f_small, "desk", TEXT))
            row["state"] = self._own(add_text(scene, f_small, "desk", CHAPTER_LIT))
            row["times"] = self._own(add_text(scene, f_small, "desk", TEXT_DIM))
            row["cart"] = None
            self.rows.append(row)
        self.note = self._own(QGraphicsRectItem(0, 0, 26, 18))  # the slip passed between desks (all-reduce)
        self.note.setBrush(PAPER)
        self.note.setPen(QPen(QColor("#c9c0ad"), 1))
        self.note.setZValue(30)
        self.note.setOpacity(0.0)
        scene.addItem(self.note)
        self._f_small = f_small
        self.times: list[tuple[float, float, float]] = []
        self.weights: list[int] = []
        self.wall_ms: float | None = None
        self._syncing = False

    def _own(self, item):
        self._items.append(item)
        return item

    def remove(self) -> None:
        for it in self._items:
            if it.scene() is self.scene and it.parentItem() is None:
                self.scene.removeItem(it)
        self._items.clear()

    def texts(self):
        out = [self.header]
        for row in self.rows:
            out += [row["name"], row["state"], row["times"]]
            if row["cart"] is not None:
                out.append(row["cart_label"])
        return out

    # --- shares -------------------------------------------------------------------------------------------------
    def chapters_of(self, d: int) -> list[int]:
        """Layers (0-based) whose copy desk ``d`` receives (all of them, as strips, in TP)."""
        if self.mode == "pp" and self.n > 1:
            a, b = self.layers[d]
            return list(range(a, b))
        return list(range(len(self.layer_bytes)))

    def has_dictionary(self, d: int) -> bool:
        return self.mode != "pp" or self.n == 1 or d == 0

    def share_bytes(self, d: int) -> int:
        """Bytes of desk ``d``'s copy: its strips (TP: 1/n of every chapter and of the dictionary) or its run of
        whole chapters (PP; the dictionary rides with desk 1). The shares add up to the whole book."""
        if self.mode == "tp" and self.n > 1:
            return round((sum(self.layer_bytes) + self.dictionary_bytes) / self.n)
        return (sum(self.layer_bytes[i] for i in self.chapters_of(d))
                + (self.dictionary_bytes if self.has_dictionary(d) else 0))

    # --- layout -------------------------------------------------------------------------------------------------
    def layout(self) -> None:
        """The header, then one row per desk: its lines of text, its rail and surface, and a new cart."""
        inner_w = self.region.width() - 2 * PAD
        set_elided(self.header, self._header_text(inner_w), inner_w)
        self.header.setPos(self.region.left() + PAD, self.region.top() + PAD * 0.6)
        top = self.header.y() + self.header.boundingRect().height() + 6
        gap = 10.0
        row_h = (self.region.bottom() - PAD * 0.6 - top - gap * (self.n - 1)) / self.n
        lh = line_height(self._f_small)
        text_x = self.region.right() - PAD - TEXT_W
        self.park_x = text_x - 20 - CART_W
        self.rest_x = self.region.left() + PAD + 6
        for d, row in enumerate(self.rows):
            y0 = top + d * (row_h + gap)
            row["rect"] = QRectF(self.region.left() + PAD, y0, inner_w, row_h)
            floor = y0 + row_h - 2
            row["rail"].setLine(self.rest_x, floor, self.park_x + CART_W, floor)
            row["surface"].setRect(QRectF(self.park_x - 8, y0, self.region.right() - PAD - self.park_x + 8, row_h))
            row["room"] = int((row_h - 4) // lh)  # the times take a second line where the row holds four
            fits = max(1, min(3, row["room"]))  # as many lines as the row holds (at least the name)
            lines = [row["name"], row["state"], row["times"]][:fits]
            for item in (row["name"], row["state"], row["times"]):
                item.setVisible(item in lines)
            for k, item in enumerate(lines):
                item.setPos(text_x, y0 + 4 + k * lh)
            self._new_cart(d, row, row_h, floor, lh)
            self.set_cart_progress(d, 0.0)
            self.set_loaded(d, 0.0)
        self._retext()

    def _header_text(self, inner_w: float) -> str:
        """The desks' header: how the book is torn, the short name where the long one does not fit ``inner_w``."""
        if self.n <= 1:
            return tr("The desk · compute")
        how = (tr("tensor parallel: every chapter cut in {n} strips") if self.mode == "tp"
               else tr("pipeline parallel: chapters split {n} ways")).format(n=self.n)
        head = tr("{n} desks · {how}").format(n=self.n, how=how)
        if QFontMetricsF(self.header.font()).horizontalAdvance(head) > inner_w:  # a 4:3 window: the short
            # name (the desks' own lines say what each holds: "1/2 of every chapter", "chapters 1–2")
            head = (tr("{n} desks · tensor parallel") if self.mode == "tp"
                    else tr("{n} desks · pipeline parallel")).format(n=self.n)
        return head

    def _new_cart(self, d: int, row: dict, row_h: float, floor: float, lh: float) -> None:
        """Desk ``d``'s cart, made anew for a row ``row_h`` tall over ``floor``: label on top, bars for the share,
        bed and wheels at the floor."""
        if row["cart"] is not None:
            self.scene.removeItem(row["cart"])
            self._items.remove(row["cart"])
        cart_label_h = lh if row_h >= lh + 40 else 0.0
        stack_h = max(8.0, row_h - 2 * WHEEL_R - CART_BED - cart_label_h - 8)
        cart = self._own(CartItem(CART_W, stack_h))
        cart.setZValue(6)
        self.scene.addItem(cart)
        row["cart"] = cart
        row["cart_y"] = floor - 2 * WHEEL_R - CART_BED
        label = add_text(self.scene, self._f_small, "cart", TEXT, parent=cart)
        label.setVisible(cart_label_h > 0)
        # the whole label, or the size alone when it does not fit the cart: never cut in the middle
        size = fmt_bytes(self.share_bytes(d))
        whole = tr("copy · {size}").format(size=size)
        fits = QFontMetricsF(label.font()).horizontalAdvance(whole) <= CART_W - 24
        set_elided(label, whole if fits else size, CART_W - 24)
        label.setPos(22, -stack_h - cart_label_h - 2)
        row["cart_label"] = label
        read = QGraphicsRectItem(cart)  # sweeps across the lit chapter as the desk reads it
        read.setPen(Qt.PenStyle.NoPen)
        read.setBrush(READ)
        read.setZValue(1)
        read.setVisible(False)
        row["read"] = read
        row["bars"] = self._cart_bars(d, cart, stack_h)

    def _cart_bars(self, d: int, cart: CartItem, stack_h: float) -> dict:
        """Desk ``d``'s share on its cart, stacked ``stack_h`` tall: a bar per chapter (and the dictionary),
        widths to scale by bytes (a strip of each for a book torn in strips). Returns them by chapter (-1:
        the dictionary)."""
        biggest = max([*self.layer_bytes, self.dictionary_bytes, 1])
        entries = ([-1] if self.has_dictionary(d) and self.dictionary_bytes else []) + self.chapters_of(d)
        bar_gap = 2.0 if stack_h / max(1, len(entries)) > 6 else 0.5
        bh = max(1.0, (stack_h - bar_gap * (len(entries) - 1)) / max(1, len(entries)))
        strip = 1.0 / self.n if self.mode == "tp" else 1.0
        bars = {}
        for k, i in enumerate(entries):
            b = self.dictionary_bytes if i < 0 else self.layer_bytes[i]
            bw = max(4.0, (CART_W - 8) * strip * b / biggest) if b else (CART_W - 8) * 0.5 * strip
            bar = QGraphicsRectItem(QRectF(4, -stack_h + k * (bh + bar_gap), bw, bh), cart)
            color = DICTIONARY if i < 0 else CHAPTER
            bar.setBrush(color)
            bar.setPen(QPen(DESK_COLORS[d % len(DESK_COLORS)] if self.n > 1 else CHAPTER_EDGE, 1))
            bars[i] = bar
        return bars

    # --- during a trip ------------------------------------------------------------------------------------------
    def set_cart_progress(self, d: int, p: float) -> None:
        """0 = at the warehouse door, 1 = parked at the desk."""
        row = self.rows[d]
        row["cart"].setPos(self.rest_x + (self.park_x - self.rest_x) * clamp01(p), row["cart_y"])

    def set_loaded(self, d: int, p: float) -> None:
        """0 … 1: how much of desk ``d``'s copy is on its cart (bars appear in order: dictionary, ch. 1, …)."""
        bars = list(self.rows[d]["bars"].values())
        for k, bar in enumerate(bars):
            bar.setOpacity(clamp01(p * len(bars) - k))
        self.rows[d]["cart_label"].setOpacity(1.0 if p > 0 else 0.35)

    def set_lit(self, layer: int | None) -> None:
        """Light chapter ``layer`` on every desk that holds it; other desks in PP are waiting."""
        for _d, row in enumerate(self.rows):
            if row["lit"] is not None and row["lit"] in row["bars"]:
                row["bars"][row["lit"]].setBrush(CHAPTER)
            holds = layer is not None and layer in row["bars"]
            if holds:
                row["bars"][layer].setBrush(CHAPTER_LIT)
            row["lit"] = layer if holds else None
            if layer is None:
                text, color = "", CHAPTER_LIT
            elif holds:
                text, color = tr("reading chapter {i}").format(i=layer + 1), CHAPTER_LIT
            else:
                text, color = tr("waiting for another desk"), WAITING
            set_elided(row["state"], text, TEXT_W)
            row["state"].setBrush(color)
            row["surface"].setOpacity(1.0 if holds or layer is None else 0.45)

    def set_reading(self, layer: int | None, f: float) -> None:
        """How far (0 … 1) the desks holding chapter ``layer`` have read it: a light band sweeps across the lit
        bar, left to right, over the chapter's measured share of the trip. None hides the band."""
        f = clamp01(f)
        for row in self.rows:
            band = row.get("read")
            if band is None:
                continue
            bar = row["bars"].get(layer) if layer is not None and row["lit"] == layer else None
            if bar is None or f <= 0.0:
                band.setVisible(False)
                continue
            r = bar.rect()
            band.setRect(QRectF(r.left(), r.top() + r.height() * 0.3, r.width() * f, r.height() * 0.4))
            band.setVisible(True)

    def busy(self, d: int) -> bool:
        """True while desk ``d`` reads a chapter (it holds the lit one)."""
        return self.rows[d]["lit"] is not None

    def set_sync(self, layer: int | None, p: float) -> None:
        """TP: the note passed between the desks after chapter ``layer`` (p 0 … 1 of its passing); else hidden."""
        if self.mode != "tp" or self.n < 2 or layer is None or not 0 < p < 1:
            self.note.setOpacity(0.0)
            if self._syncing:
                self._syncing = False
                lit, self.rows[0]["lit"] = self.rows[0]["lit"], self.rows[0]["lit"]
                self.set_lit(lit)
            return
        self._syncing = True
        first, last = self.rows[0]["rect"], self.rows[-1]["rect"]
        x = self.park_x + CART_W - 20
        y = first.center().y() + (last.center().y() - first.center().y()) * p
        self.note.setPos(QPointF(x, y))
        self.note.setOpacity(1.0)
        for row in self.rows:
            set_elided(row["state"], tr("passing notes"), TEXT_W)
            row["state"].setBrush(PAPER)

    def set_times(self, workers: list[dict], wall_ms: float | None = None) -> None:
        """Measured per-worker times of the trip on screen (ms): dicts with compute_ms, comm_ms, bubble_ms,
        weight_bytes; ``wall_ms``: that trip's whole measured step (ms), of which a desk's times are parts."""
        self.times = [(float(w.get("compute_ms") or 0.0), float(w.get("comm_ms") or 0.0),
                       float(w.get("bubble_ms") or 0.0)) for w in workers]
        self.weights = [int(w.get("weight_bytes") or 0) for w in workers]
        self.wall_ms = float(wall_ms) if wall_ms else None
        self._retext()

    def _retext(self) -> None:
        for d, row in enumerate(self.rows):
            chapters = self.chapters_of(d)
            if self.mode == "pp" and self.n > 1 and chapters:
                span = tr("chapters {a}–{b}").format(a=chapters[0] + 1, b=chapters[-1] + 1)
            elif self.n > 1:
                span = tr("1/{n} of every chapter").format(n=self.n)
            elif d < len(self.times):  # one desk: its times line is short, "this trip" goes on the name line
                span = tr("every chapter · this trip")
            else:
                span = tr("every chapter")
            name = tr("Desk {i} · {span}").format(i=d + 1, span=span) if self.n > 1 else span
            set_elided(row["name"], name, TEXT_W)
            short = None
            if d < len(self.times):
                c, m, b = self.times[d]
                if self.n == 1 and self.wall_ms:
                    t = tr("forward pass {c} of {w} ms").format(c=f"{c:.1f}", w=f"{self.wall_ms:.1f}")
                elif self.n == 1:
                    t = tr("forward pass {c} ms").format(c=f"{c:.1f}")
                elif self.mode == "pp":
                    t = tr("this trip: work {c} · wait {b} ms").format(c=f"{c:.1f}", b=f"{b:.1f}")
                    short = tr("work {c} · wait {b} ms").format(c=f"{c:.1f}", b=f"{b:.1f}")
                else:
                    t = tr("this trip: work {c} · notes {m} ms").format(c=f"{c:.1f}", m=f"{m:.1f}")
                    short = tr("work {c} · notes {m} ms").format(c=f"{c:.1f}", m=f"{m:.1f}")
            else:
                t = tr("copy · {size}").format(size=fmt_bytes(self.share_bytes(d)))
            self._set_times_text(row, t, short or t)

    def _set_times_text(self, row: dict, text: str, short: str) -> None:
        """The times line whole: on one line, or on two where the row holds four lines, or in its short form
        (the headline already says "one trip") where a 4:3 window makes it a third wider for the scene."""
        fm = QFontMetricsF(self._f_small)
        if fm.horizontalAdvance(text) > TEXT_W:
            two = wrap_lines(self._f_small, text, TEXT_W, 3)
            if len(two) <= 2 and row.get("room", 3) >= 4:
                set_lines(row["times"], two)
                return
            text = short
            if fm.horizontalAdvance(text) > TEXT_W and row.get("room", 3) >= 4:
                set_lines(row["times"], wrap_lines(self._f_small, text, TEXT_W, 2))
                return
        set_elided(row["times"], text, TEXT_W)

    def measure_note(self) -> str:
        """One line when the measured times of this trip go against the lesson ("more desks, faster"), else "";
        its figures are the average over the desks of the times the desks show."""
        if self.n < 2 or not self.times:
            return ""
        compute = sum(t[0] for t in self.times) / len(self.times)
        comm = sum(t[1] for t in self.times) / len(self.times)
        bubble = sum(t[2] for t in self.times) / len(self.times)
        if self.mode == "tp" and comm > compute:
            return tr("This trip, per desk on average: notes {m} ms, work {c} ms: on this CPU tearing a tiny book costs more than it saves").format(  # noqa: E501
                m=f"{comm:.1f}", c=f"{compute:.1f}")
        if self.mode == "pp" and bubble > 0:
            return tr("This trip, per desk on average: waits {b} ms: with one trip at a time the desks take turns, not work together").format(  # noqa: E501
                b=f"{bubble:.1f}")
        return ""


__all__ = ["Desks", "CART_W", "TEXT_W"]
