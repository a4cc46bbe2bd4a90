"""Sections 5, 7 and 8: reading the question (prefill), writing (decode), the cheat sheet (section 6, drawing lots:
``animations.scenes.sampling``).

Measured numbers come from ``ctx["analysis"]`` (the engine's ``analyze`` answer, ``model/teaching/analysis.py``);
without it each scene draws illustrative numbers and says so.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QImage

from animations.scenes import trip_words
from animations.scenes.base import TourScene
from animations.scenes.look import (
    ACCENT,
    BLUE_LIGHT,
    DIM,
    EDGE,
    GREEN,
    ORANGE,
    PANEL,
    PAPER,
    RED,
    SCENE_H,
    TEXT,
    T,
    seq_color,
)
from animations.scenes.look import analysis_of as _analysis
from animations.scenes.look import formula_text as _set
from animations.units import fmt_bytes, fmt_ms


def _attention_weights(ctx: dict) -> tuple[list[str], list[list[float]], str, str]:
    """The token labels, the attention weights (rows: the token reading, columns: the token it looks at), and the
    pill's kind and note: this model's chosen layer and head when measured, else even causal attention."""
    a = _analysis(ctx, "attention")
    if a:
        layer = min(ctx.get("attn_layer", 0), a["n_layer"] - 1)
        head = min(ctx.get("attn_head", 0), a["n_head"] - 1)
        note = T("this model's attention, layer {l}, head {h}").format(l=layer + 1, h=head + 1)
        return a["labels"], a["weights"][layer][head], "measured", note
    labels = [t["label"] for t in (ctx.get("tokens") or [])][:16] or ["a", "b", "c", "d"]
    n = len(labels)
    w = [[(1.0 / (q + 1) if k <= q else 0.0) for k in range(n)] for q in range(n)]
    return labels, w, "illustrative", T("even attention, not the model's")


def _upright(lab: str) -> bool:
    """Whether a label is Chinese or Japanese, which read top to bottom, never on their side."""
    return bool(lab.strip()) and all(ord(ch) >= 0x2E80 for ch in lab.strip())


# --------------------------------------------------------------------------------------------------------------
class PrefillScene(TourScene):
    """§5: one trip reads every prompt token; the causal attention map of the live model; GQA."""

    title = "Reading the question (prefill)"
    number = 5

    def draw(self, ctx: dict) -> None:
        labels, w, kind, note = _attention_weights(ctx)
        n_all = len(w)
        n, col_bottom = self._attention_map(labels, w)
        x0 = 860.0
        left_w = x0 - 40 - 30
        y = col_bottom + 10
        legend = T("row: a token reading · column: the token it looks at · dark above the diagonal: the future is "
                   "hidden (causal)")
        if n < n_all:  # the map's rows are one line tall at least: a long question's tail does not fit
            legend += " · " + T("its first {n} of {total} tokens").format(n=n, total=n_all)
        _, y = self.para(legend, 40, y, left_w, "small", DIM, role="legend")
        y = self.badge(kind, 40, y + 6, note, max_w=left_w).sceneBoundingRect().bottom()
        # the right column: measured prefill times, then grouped-query attention; the sliding-window note under
        # the map when the column has no room for it
        left_y = y
        for place in ("right", "right-tight", "right-inline", "left", "left-low"):
            if self.attempt(lambda: self._right(ctx, x0, place, left_y, left_w), bottom=SCENE_H - 4):
                break
        else:  # a long question's map fills the left column: the aside on sliding windows is left out
            self._right(ctx, x0, "none", left_y, left_w)

    def _attention_map(self, labels: list[str], w: list[list[float]]) -> tuple[int, float]:
        """The causal attention map (``w``: rows reading, columns looked at) with its rows' and columns' labels,
        and the sweep that uncovers it in one trip; the tail of a long question is left out (rows are at least a
        line of text tall). Returns the tokens drawn and the bottom of the column labels."""
        top = self.top
        lh = self.lh("small")
        n_all = len(w)
        longest = max([self.measure(lab, "small").width() for lab in labels[:n_all]] + [10.0])
        # a column's label: level when it fits the column, else characters stacked (CJK) or turned -90°
        col_room = max([lh * len(lab.strip()) if _upright(lab) else self.measure(lab, "small").width()
                        for lab in labels[:n_all]] + [lh])
        size_max = SCENE_H - top - col_room - 150
        n = max(1, min(n_all, int(size_max // (lh + 1))))
        w = [row[:n] for row in w[:n]]
        size = min(size_max, max(lh + 1, 48.0) * n)
        cell = size / n
        mx, my = 40 + longest + 14, top + 6
        img = QImage(n, n, QImage.Format_RGB32)
        for q in range(n):
            for k in range(n):
                if k > q:
                    img.setPixel(k, q, QColor("#141b22").rgb())
                else:
                    r, g, b = seq_color(w[q][k])
                    img.setPixel(k, q, QColor(r, g, b).rgb())
        self.image(img, mx, my, size, size)
        col_bottom = my + size + 8 + lh
        for i, lab in enumerate(labels[:n]):
            self.text(lab, mx - 10, my + i * cell + (cell - lh) / 2, "small", TEXT, align="right", role="axis")
            if self.measure(lab, "small").width() <= cell - 2:
                col = self.text(lab, mx + (i + 0.5) * cell, my + size + 8, "small", DIM, align="center", role="axis")
            elif _upright(lab):
                col = self.text("\n".join(lab.strip()), mx + (i + 0.5) * cell, my + size + 8, "small", DIM,
                                align="center", role="axis")
            else:  # turned on its side a leading ␣ reads as "]": the row's label keeps it, the column drops it
                col = self.text(lab.lstrip("␣") or lab, 0, 0, "small", DIM, role="axis")
                col.setRotation(-90)
                col.setPos(mx + i * cell + (cell - lh) / 2, my + size + 8 + col.boundingRect().width())
            col_bottom = max(col_bottom, col.sceneBoundingRect().bottom())
        # a sweep: the whole question goes through in one trip
        cover = self.box(mx, my, size, size, QColor("#0f1419"), None, radius=0, z=3)
        self.call(lambda p: (cover.setPos(mx + size * p, my), cover.setOpacity(0 if p >= 1 else 1)), 0.3, 1.6)
        return n, col_bottom

    def _right(self, ctx: dict, x0: float, place: str, left_y: float, left_w: float) -> bool:
        """The prefill timings and the grouped-query attention panel in the column from ``x0``. ``place``:
        "right" (the sliding-window note at the panel's foot, its pill below), "right-tight" (the pill beside the
        KV heads' name), "right-inline" (that, and the query heads' name before their row), "left" (the note and
        its pill under the map's, from ``left_y``) or "none" (no note)."""
        pw = 1560 - x0
        y = self._prefill_times(ctx, x0, pw)
        self._grouped_query_attention(x0, pw, y, place, left_y, left_w)
        return True

    def _prefill_times(self, ctx: dict, x0: float, pw: float) -> float:
        """The panel of measured prefill times, a short and a long question, from ``x0``, ``pw`` wide. Returns
        its bottom."""
        y = self.top
        head, y = self.para(T("One trip reads the whole question"), x0 + 20, y + 10, pw - 40, "heading", TEXT, True,
                            role="heading")
        p = _analysis(ctx, "prefill")
        rows = ([(p["short_tokens"], p["short_ms"]), (p["long_tokens"], p["long_ms"])] if p
                else [(14, 8.0), (384, 60.0)])
        top_ms = max(ms for _, ms in rows) or 1.0
        name_w = max(self.measure(T("{n} tokens").format(n=tk), "small").width() for tk, _ in rows) + 16
        ms_w = max(self.measure(fmt_ms(ms), "label").width() for _, ms in rows) + 12
        full = pw - 40 - name_w - ms_w
        y += 10
        for i, (tokens, ms) in enumerate(rows):
            self.text(T("{n} tokens").format(n=tokens), x0 + 20, y, "small", TEXT, role="axis")
            bh = self.lh("label")
            bar = self.box(x0 + 20 + name_w, y, max(4.0, full * ms / top_ms), bh, ORANGE, None, radius=4)
            self.fade_in(bar, 0.5 + 0.3 * i)
            self.text(fmt_ms(ms), x0 + 20 + name_w + full * ms / top_ms + 8, y, "label", TEXT, role="readout")
            y += bh + 10
        y = self.badge("measured" if p else "illustrative", x0 + 20, y,
                       T("prefill on this computer, median of 3") if p else None, max_w=pw - 40
                       ).sceneBoundingRect().bottom()
        self.box(x0, self.top, pw, y + 12 - self.top, PANEL, EDGE, z=0)
        return y

    def _grouped_query_attention(self, x0: float, pw: float, y: float, place: str, left_y: float,
                                 left_w: float) -> None:
        """The grouped-query attention panel under ``y``: 32 query heads fanning into 8 KV heads, and the note on
        sliding windows where ``place`` puts it (see ``_right``)."""
        low = place in ("left-low", "none")  # the fan from query heads to KV heads drawn lower (less tall)
        fan = 36.0 if low else 60.0
        gy = y + (14 if low else 24)
        _, y = self.para(T("Grouped-query attention"), x0 + 20, gy + 10, pw - 40, "heading", TEXT, True,
                         role="heading")
        _, y = self.para(_set(T("Llama 3 8B: 32 query heads share 8 KV heads → the cheat sheet is 4× smaller")),
                         x0 + 20, y + 4, pw - 40, "body", TEXT, role="caption")
        q_lab = self.text(T("query heads"), x0 + 20, y + 6, "small", DIM, role="legend")
        qx0, qw = x0 + 40, pw - 80  # the row of query heads
        if place in ("right-inline", "left-low", "none"):  # the name before the row, level with it
            qr = q_lab.sceneBoundingRect()
            dy = qr.center().y() - 7
            qx0 = qr.right() + 16
            qw = x0 + pw - 40 - qx0
        else:
            dy = q_lab.sceneBoundingRect().bottom() + 6
        step = qw / 32
        for qh in range(32):
            qx = qx0 + qh * step
            dot = self.box(qx, dy, 14, 14, BLUE_LIGHT, None, radius=7)
            kvx = qx0 + (qh // 4) * (step * 4) + step * 1.5
            self.line(qx + 7, dy + 14, kvx + 14, dy + fan, QColor(134, 170, 211, 120), 1.5)
            self.fade_in(dot, 0.4 + 0.02 * qh)
        for kv in range(8):
            self.box(qx0 + kv * step * 4 + step * 1.5, dy + fan, 28, 28, GREEN, None, radius=4)
        kv_lab = self.text(T("KV heads (what the cheat sheet stores)"), x0 + 20, dy + fan + 36, "small", DIM,
                           role="legend")
        y = kv_lab.sceneBoundingRect().bottom()
        note = T("Some models let some layers look only at a nearby stretch (sliding-window attention).")
        if place == "right":
            _, y = self.para(note, x0 + 20, y + 8, pw - 40, "body", DIM, role="caption")
            y = self.badge("source", x0 + 20, y + 6).sceneBoundingRect().bottom()
        else:  # the source's pill beside the KV heads' name, at the panel's right edge
            pill = self.badge("source", x0 + pw - 20, kv_lab.sceneBoundingRect().top(), align="right")
            if pill.sceneBoundingRect().left() < kv_lab.sceneBoundingRect().right() + 12:  # no room: below it
                pill.setPos(x0 + 20, y + 6)
            y = max(y, pill.sceneBoundingRect().bottom())
            if place in ("right-tight", "right-inline"):
                _, y = self.para(note, x0 + 20, y + 8, pw - 40, "body", DIM, role="caption")
            elif place in ("left", "left-low"):
                _, ly = self.para(note, 40, left_y + 10, left_w, "body", DIM, role="caption")
                self.badge("source", 40, ly + 6)
        self.box(x0, gy, pw, y + 12 - gy, PANEL, EDGE, z=0)


# --------------------------------------------------------------------------------------------------------------
class DecodeScene(TourScene):
    """§7: one trip per new token; the source's arithmetic beside this computer's measured trips and floor."""

    title = "Writing (decode)"
    number = 7

    def draw(self, ctx: dict) -> None:
        top = self.top
        # the source's arithmetic
        lw = 700.0
        y = top + 10
        h1 = self.text(T("A big model on a big GPU"), 60, y, "heading", TEXT, True, role="heading")
        y = h1.sceneBoundingRect().bottom() + 6
        big = self.text("16 GB ÷ 2 TB/s ≈ 8 ms", 60, y, "heading", ACCENT, True, role="readout")
        y = big.sceneBoundingRect().bottom() + 6
        _, y = self.para(T("Llama 3 8B in FP16, read once per token by an A100 (about 2 TB/s)"), 60, y, lw - 40,
                         "body", TEXT, role="caption")
        y = self.badge("formula", 60, y + 6, T("this page's check; the bandwidth is not the source's"),
                       max_w=lw - 40).sceneBoundingRect().bottom()
        src = self.text(T("The source: 5–10 ms per step"), 60, y + 12, "body", TEXT, role="caption")
        sb = self.badge("source", src.sceneBoundingRect().right() + 14, y + 14)
        y = max(src.sceneBoundingRect().bottom(), sb.sceneBoundingRect().bottom())
        self.box(40, top, lw, y + 14 - top, PANEL, EDGE, z=0)
        left_bottom = y + 14
        # this computer: the tallest chart and largest notes that fit
        right_bottom = None
        for bh in (380.0, 330.0, 290.0, 250.0, 210.0, 170.0, 130.0, 90.0):
            right_bottom = self.attempt(lambda: self._computer(ctx, top, bh, "body"), bottom=SCENE_H - 4)
            if right_bottom:
                break
        else:
            right_bottom = self._computer(ctx, top, 70.0, "body")
        # tokens written one per trip
        st = _analysis(ctx, "stream")
        # not measured: an illustration in the page's language, one token a chip ("|" between them)
        labels = [t["label"] for t in st["tokens"]] if st else T("One|␣trip|,|␣one|␣token|.").split("|")
        # with no measurement the right panel is short: the row takes the whole width, larger, in the free height
        wide = float(right_bottom) < left_bottom
        y = left_bottom + 24
        cap = self.text(T("one trip → one token:").rstrip(":："), 40, y, "heading", TEXT, True, role="heading")
        y = cap.sceneBoundingRect().bottom() + 10

        def chips(style: str) -> list:
            x, out = 40.0, []
            for i, lab in enumerate(labels[:12]):
                card, w = self.chip(lab, x, y, PAPER, style=style, sub=T("trip {i}").format(i=i + 1), min_w=60)
                if x + w > (1560 if wide else 740) or card.sceneBoundingRect().bottom() > SCENE_H - 4:
                    self.removeItem(card)
                    break
                self.pop_in(card, 0.6 + 0.25 * i)
                out.append(card)
                x += w + 8
            return out or False  # not one chip fits: the next style
        row = [cap] + ((wide and self.attempt(lambda: chips("title"))) or self.attempt(lambda: chips("number"))
                       or self.attempt(lambda: chips("small")) or [])
        low = max(it.sceneBoundingRect().bottom() for it in row)
        if wide:  # the free height shared in three: above the heading, between it and the row, under the row
            gap = max(0.0, (SCENE_H - 4 - low) / 3)
            for k, it in enumerate(row):
                it.moveBy(0, gap * (1 if k == 0 else 2))
        else:  # the row of tokens ends level with the right panel (no empty band under the left column)
            dy = min(SCENE_H - 4 - low, max(0.0, float(right_bottom) - low))
            for it in row:
                it.moveBy(0, dy)

    def _computer(self, ctx: dict, top: float, bh: float, style: str) -> bool:
        """The right panel: this computer's measured trips as bars ``bh`` tall, the floor, the notes in ``style``."""
        d = _analysis(ctx, "decode")
        rx, rw = 780.0, 780.0
        y = top + 10
        h2 = self.text(T("This computer, this model"), rx + 20, y, "heading", TEXT, True, role="heading")
        y = h2.sceneBoundingRect().bottom() + 6
        if d:
            split = d.get("split") if trip_words.measured(d.get("split")) else None
            # with a measured split each bar is the whole step, its reading part in orange; else the forward pass
            ms_all = (d.get("whole_ms_all") if split else d["decode_ms_all"])[:24]
            read_all = (d.get("read_ms_all") or [])[:24] if split else []
            floor = d.get("floor_ms")
            if floor:
                where = {"cache": T("red line, the floor: {bytes} ÷ {bw}/s, the read speed of the {llc} cache it "
                                    "fits in = {ms}"),
                         "dram": T("red line, the floor: {bytes} ÷ {bw}/s, the read speed of RAM (the book is "
                                   "larger than the {llc} cache) = {ms}")}
                text = where.get(d.get("lives_in"), T("red line, the floor: {bytes} ÷ {bw}/s = {ms}"))
                fl, y = self.para(text.format(bytes=fmt_bytes(d["weight_bytes"]), bw=fmt_bytes(d["bandwidth"]),
                                              ms=fmt_ms(floor), llc=fmt_bytes(d.get("l3_bytes") or 0)),
                                  rx + 20, y, rw - 40, "label", RED, role="legend")
                y += 6
            top_ms = max(ms_all + [floor or 0.0, 0.1]) * 1.15
            bx, by = rx + 40, y
            bw = (rw - 80) / max(1, len(ms_all))
            for i, ms in enumerate(ms_all):
                h = bh * ms / top_ms
                bar = self.box(bx + i * bw, by + bh - h, bw - 4, h, BLUE_LIGHT, None, radius=2)
                self.fade_in(bar, 0.3 + 0.08 * i, 0.45 + 0.08 * i)
                if i < len(read_all) and read_all[i] > 0:
                    rh = bh * min(read_all[i], ms) / top_ms
                    self.fade_in(self.box(bx + i * bw, by + bh - rh, bw - 4, rh, ORANGE, None, radius=2),
                                 0.3 + 0.08 * i, 0.45 + 0.08 * i)
            if floor:
                fy = by + bh - bh * floor / top_ms
                self.line(bx, fy, bx + rw - 80, fy, RED, 3, dash=True)
            y = by + bh + 8
            if split:
                _, y = self.para(T("each bar: one trip, one new token; orange: reading the weights; blue: the rest of "
                                   "the step"), rx + 20, y, rw - 40, "label", TEXT, role="legend")
                y = self.badge("measured", rx + 20, y + 6).sceneBoundingRect().bottom()
                _, y = self.para(trip_words.figures(split), rx + 20, y + 8, rw - 40, "label", TEXT, role="readout")
                _, y = self.para(trip_words.page7_lesson(split), rx + 20, y + 6, rw - 40, style, DIM, role="caption")
            else:
                _, y = self.para(T("each bar: one trip, one new token · median {ms}").format(
                    ms=fmt_ms(d["decode_ms"])), rx + 20, y, rw - 40, "label", TEXT, role="legend")
                y = self.badge("measured", rx + 20, y + 6).sceneBoundingRect().bottom()
            if floor and d["decode_ms"] < floor and d.get("lives_in") != "dram":
                _, y = self.para(T("Faster than the memory floor: this small book fits in the processor's cache, "
                                   "so a trip does not go all the way to main memory."), rx + 20, y + 8, rw - 40,
                                 style, DIM, role="caption")
        else:
            t1 = self.text(T("Start the engine to measure a trip here."), rx + 20, y, "body", TEXT, role="caption")
            y = self.badge("illustrative", rx + 20, t1.sceneBoundingRect().bottom() + 8).sceneBoundingRect().bottom()
        self.box(rx, top, rw, y + 14 - top, PANEL, EDGE, z=0)
        return y + 14  # the panel's bottom


# --------------------------------------------------------------------------------------------------------------
class KVCacheScene(TourScene):
    """§8: K/V rows computed with and without the cheat sheet (the source's 8-token, 6-step case, counted on the
    engine), and the visitor's own answer timed both ways."""

    title = "The cheat sheet (KV cache)"
    number = 8

    def draw(self, ctx: dict) -> None:
        k = _analysis(ctx, "kv_cache")
        counted = k["rows_8x6"] if k else None
        # the grids' rows a line of small text tall and more, else just that; the notes in the label style, else
        # the small one; each pill below its text, else beside it
        full, tight = max(28.0, self.lh("small") + 4), self.lh("small")
        tries = [(row_h, style, beside) for row_h in (full + 8, full, tight) for style in ("body",)
                 for beside in (False, True)]
        for row_h, style, beside in tries:
            if self.attempt(lambda: self._left(counted, row_h, style, beside), bottom=SCENE_H - 4):
                break
        else:
            self._left(counted, tight, "small", True)
        for chart_h in (130.0, 110.0, 90.0, 70.0):
            if self.attempt(lambda: self._answer(ctx, k, self.top, chart_h), bottom=SCENE_H - 4):
                break
        else:
            self._answer(ctx, k, self.top, 50.0)

    def _left(self, counted: dict | None, row_h: float, style: str, beside: bool) -> bool:
        """The two grids (rows ``row_h`` tall) with their totals, and the notes below them (``_notes``)."""
        P, S = 8, 6
        without = sum(P + i for i in range(1, S + 1))  # 69: pass i re-feeds the prompt and all i tokens so far
        with_ = S
        top = self.top
        left_w = 1010.0
        cell, gap = 15.0, 3.0
        step_w = max(self.measure(T("step {i}").format(i=S), "small").width() for _ in (0,)) + 12
        bottoms = []
        columns = ((T("Without the cheat sheet"), False), (T("With the cheat sheet"), True))
        for col, (title, cached) in enumerate(columns):
            x0 = 40.0 + col * 520
            _, y = self.para(title, x0, top, 500, "heading", TEXT, True, role="heading")
            y += 6
            for i in range(1, S + 1):
                self.text(T("step {i}").format(i=i), x0, y, "small", DIM, role="axis")
                for j in range(P + i):
                    fresh = (not cached) or j == P + i - 1
                    c = self.box(x0 + step_w + j * (cell + gap), y + 4, cell, row_h - 8,
                                 (ORANGE if not cached else GREEN) if fresh else None,
                                 QColor("#3d5670") if not fresh else None, radius=3)
                    if fresh:
                        self.fade_in(c, 0.3 + 0.35 * (i - 1) + 0.01 * j, 0.5 + 0.35 * (i - 1) + 0.01 * j)
                y += row_h
            total = without if not cached else with_
            _, y = self.para(T("{n} K/V rows computed").format(n=total), x0, y + 6, 500, "number",
                             ORANGE if not cached else GREEN, True, role="readout")
            bottoms.append(y)
        return self._notes(max(bottoms) + 10, left_w, counted, style, beside)

    def _notes(self, y: float, left_w: float, counted: dict | None, style: str, beside: bool) -> bool:
        """How the grids' totals come about, their pills, and the 500-token case with its formula pill, from y."""
        _, y = self.para(_set(T("8-token question, 6 steps after the first token: without, step i recomputes 8 + i "
                                "rows, Σ(8+i) for i = 1…6 = 69; with, one new row per step = 6.")), 40, y, left_w,
                         style, TEXT, role="caption")
        pills = [self.badge("source", 40, y + 6, T("the source draws only 6 steps: an illustration"), max_w=left_w)]
        if counted:
            r = pills[0].sceneBoundingRect()
            kind_note = T("this engine fed {a} and {b} rows").format(a=counted["without"], b=counted["with"])
            p2 = self.badge("measured", r.right() + 12, y + 6, kind_note)
            if p2.sceneBoundingRect().right() > 40 + left_w:
                p2.setPos(40, r.bottom() + 6)
            pills.append(p2)
        y = max(p.sceneBoundingRect().bottom() for p in pills) + 12
        big = _set(T("A 500-token answer: 1 + 2 + … + 500 = 125,250 rows without it, 500 with it: O(500²) against "
                     "500."))
        if beside:  # the pill right-aligned on the sentence's first line, the sentence wrapped before it
            pill = self.badge("formula", 40 + left_w, y, align="right")
            self.para(big, 40, y, left_w - pill.boundingRect().width() - 16, style, TEXT, role="caption")
        else:
            _, y = self.para(big, 40, y, left_w, style, TEXT, role="caption")
            self.badge("formula", 40, y + 6)
        return True

    def _answer(self, ctx: dict, k: dict | None, top: float, chart_h: float) -> bool:
        """The right panel: the visitor's own answer timed with and without the cheat sheet (measured), each way's
        trips as bars ``chart_h`` tall."""
        # the visitor's answer, both ways, measured
        rx, rw = 1090.0, 470.0
        _, y = self.para(T("Your question, {n} new tokens").format(n=k.get("new_tokens", k["steps"]) if k else 24),
                         rx + 20, top + 10, rw - 40, "heading", TEXT, True, role="heading")
        if k:
            wo, wi = k["without_ms"], k["with_ms"]
            top_ms = max(wo + wi + [0.1])
            for _r, (series, color, name, total) in enumerate(((wo, ORANGE, T("without"), k["without_total_ms"]),
                                                               (wi, GREEN, T("with"), k["with_total_ms"]))):
                words = (T("{name}: {ms} in all, median of {n} runs").format(name=name, ms=fmt_ms(total), n=k["runs"])
                         if k.get("runs") else T("{name}: {ms} in all").format(name=name, ms=fmt_ms(total)))
                lab, y0 = self.para(words, rx + 20, y + 10, rw - 40, "small", color, role="legend")
                y0 += 6
                bw = (rw - 40) / max(1, len(series))
                for i, ms in enumerate(series):
                    h = chart_h * ms / top_ms
                    bar = self.box(rx + 20 + i * bw, y0 + chart_h - h, max(2.0, bw - 2), h, color, None, radius=1)
                    self.fade_in(bar, 0.5 + 0.05 * i)
                y = y0 + chart_h
            _, y = self.para(T("each bar: one trip (ms)"), rx + 20, y + 8, rw - 40, "small", DIM, role="axis")
            y = self.badge("measured", rx + 20, y + 6, T("same answer both ways") if k.get("same_tokens") else None,
                           max_w=rw - 40).sceneBoundingRect().bottom()
        else:
            _, y = self.para(T("Start the engine to time both ways here."), rx + 20, y + 10, rw - 40, "label", TEXT,
                             role="caption")
            y = self.badge("illustrative", rx + 20, y + 8).sceneBoundingRect().bottom()
        self.box(rx, top, rw, y + 14 - top, PANEL, EDGE, z=0)
        return True
