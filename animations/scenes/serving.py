"""Sections 12–15: sharing the table (batching), running ahead (speculative decoding), splitting the book
(parallelism), the same opening (prefix caching)."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from animations.scenes.base import (
    ACCENT, BLUE, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PURPLE, SCENE_H, SEAT_COLORS, TEXT, T, TourScene,
    fmt_bytes, fmt_ms, px,
)
from animations.scenes import trip_words
from animations.scenes.thin_book import draw_thin_book
from animations.scenes.trips import _analysis

REQ_COLORS = {"A": SEAT_COLORS[0], "B": SEAT_COLORS[1], "C": SEAT_COLORS[2], "D": SEAT_COLORS[4],
              "E": SEAT_COLORS[3], "F": SEAT_COLORS[5], "G": SEAT_COLORS[6], "H": BLUE_LIGHT}

# An illustrative schedule (two seats) used when the engine has not answered: static waits, continuous refills.
_ILLUSTRATIVE = {
    "static": [[["A", 14, "prefill"], ["B", 6, "prefill"]]] + [[["A", 1, "decode"], ["B", 1, "decode"]]] * 2
    + [[["A", 1, "decode"]]] * 7 + [[["C", 32, "prefill"], ["D", 14, "prefill"]]] + [[["C", 32, "prefill"],
       ["D", 1, "decode"]]] * 2 + [[["C", 1, "decode"], ["D", 1, "decode"]]] * 4,
    "continuous": [[["A", 14, "prefill"], ["B", 6, "prefill"]]] + [[["A", 1, "decode"], ["B", 1, "decode"]]] * 2
    + [[["A", 1, "decode"], ["C", 32, "prefill"]]] * 3 + [[["A", 1, "decode"], ["C", 1, "decode"]]] * 4
    + [[["C", 1, "decode"], ["D", 14, "prefill"]]] + [[["D", 1, "decode"]]] * 5,
}


def _batching_why_not(b: dict) -> str | None:
    """The page-12 verdict's text when the measured times disagree with the lesson (``model.teaching.lessons.why_not``
    chose the reason), else None."""
    key = b.get("why_not")
    if not key:
        return None
    f = {"tc": b["continuous"]["trips"], "ts": b["static"]["trips"], "c": fmt_ms(b["continuous"]["total_ms"]),
         "s": fmt_ms(b["static"]["total_ms"])}
    if key == "batching_no_trips_saved":
        return T("Measured here, continuous batching saved no trip ({tc} against {ts}): the answers ended early, "
                 "so no seat stood empty to refill.").format(**f)
    if key == "batching_trip_cost":
        return T("Measured here, continuous batching took fewer trips ({tc} against {ts}) but more time ({c} "
                 "against {s}): its trips also carry chunks of C's question, and on this CPU a trip's time grows "
                 "with the tokens it carries.").format(**f)
    return T("Measured here, the two times overlap (continuous {c}, static {s}): this computer was busy while "
             "measuring. The trips saved ({ts} against {tc}) are the lesson.").format(**f)


MIN_CELL = 16.0  # page 12: the least height of a chart's row of cells (scene units)


class BatchingScene(TourScene):
    """§12: static against continuous batching, pass by pass on the real scheduler; the block table; chunked
    prefill; disaggregation (illustration)."""

    title = "Sharing the table (batching)"
    number = 12

    def draw(self, ctx: dict) -> None:
        b = _analysis(ctx, "batching")
        modes = {}
        for mode in ("static", "continuous"):
            modes[mode] = [p["rows"] for p in b[mode]["passes"]] if b else _ILLUSTRATIVE[mode]
        longest = max(len(v) for v in modes.values())
        readouts, spreads = {}, {}
        for mode in modes:
            ms = b[mode]["total_ms"] if b else None
            readouts[mode] = T("{n} trips").format(n=len(modes[mode])) + (f" · {fmt_ms(ms)}" if ms else "")
            if b and b.get("runs"):  # the figure is a median: its spread and how many runs, right under it
                s_ms = b[mode]["ms"]
                spreads[mode] = T("median of {n} runs, {lo}–{hi}").format(n=b["runs"], lo=fmt_ms(s_ms["min"]),
                                                                        hi=fmt_ms(s_ms["max"]))
        ro_w = max([self.measure(r, "body", True).width() for r in readouts.values()]
                   + [self.measure(r, "label").width() for r in spreads.values()]) + 24
        cw = min(56.0, (1520 - ro_w) / max(1, longest))
        names = {"static": T("Static batch: everyone waits for the longest"),
                 "continuous": T("Continuous batch: a free seat is taken at once")}
        n_seats = int(b.get("max_batch", 2)) if b else 2
        legend = T("One column = one trip, {n} seats. Pale: reading a question; C's long one in chunks of {k} "
                   "tokens (chunked prefill).").format(n=n_seats, k=b["step_tokens"] if b else 32)
        pill_note = (T("this engine's scheduler, {n} requests; the two modes run in turn after a warm-up"
                       ).format(n=len(b["requests"])) if b else None)
        reason = _batching_why_not(b) if b else None
        # the page's budget, top to bottom: two charts (heading + one row per seat), the legend, the pill, the
        # measured verdict when it is said, and the two panels below (they give way to the verdict when both
        # would squeeze the charts' rows under MIN_CELL)
        head_h = self.lh("heading", True)
        legend_h = self.measure(legend, "small").height() * (2 if self.measure(legend, "small").width() > 1520
                                                             else 1)
        pill_h = self.lh("small", True) + px("small") * 0.3
        panel_h = self._panel_height()
        reason_item = None
        if reason:  # the figures disagree with the lesson: said as large as the figures, with the measured reason
            reason_item, _ = self.para(reason, 40, 0, 1520, "body", ACCENT, True, role="caption")
        reason_h = reason_item.boundingRect().height() + 8 if reason_item is not None else 0.0
        fixed = self.top + 2 * (head_h + 2 + 6) + legend_h + 4 + pill_h + reason_h + 10
        gap = 3

        def room(below: float) -> float:
            return (SCENE_H - 12 - fixed - below) / (2 * n_seats) - gap  # the most a row of cells may be, to fit

        panels = reason_item is None or room(panel_h) >= MIN_CELL
        rh = room(panel_h if panels else 0.0)
        cell_style = "label" if n_seats <= 2 else "small"
        text_h = self.measure("A14", cell_style, True).height()
        # letters in the cells when the columns are wide enough for one and the rows tall enough for its line;
        # else plain coloured cells (the colours name the requests): text never drawn under the scale
        letters = (self.measure("W", cell_style, True).width() <= cw - 6 and text_h + 2 <= rh)
        cell_h = min(text_h + (16 if n_seats <= 2 else 2), rh) if letters else max(MIN_CELL, min(32.0, rh))
        y = self.top
        groups = []
        for m, mode in enumerate(("static", "continuous")):
            y, g_chart = self.collect(lambda: self._chart(m, mode, names[mode], modes[mode], n_seats, y, cw, cell_h,
                                                          gap, letters, cell_style, text_h, readouts[mode],
                                                          spreads.get(mode)))
            groups.append(g_chart)

        def key(y: float) -> float:
            _, y = self.para(legend, 40, y, 1520, "small", DIM, role="legend")
            return self.badge("measured" if b else "illustrative", 40, y + 4, pill_note).sceneBoundingRect().bottom()

        y, g_key = self.collect(lambda: key(y))
        groups.append(g_key)
        if reason_item is not None:
            reason_item.setY(y + 8)
            y = reason_item.sceneBoundingRect().bottom()
            groups.append([reason_item])
        py = y + 10
        if panels:
            self._panels(b, py, max(panel_h, SCENE_H - 8 - py))
        else:  # the measured verdict took the panels' room: the charts, the key and the verdict share the page
            self.spread(groups, bottom=SCENE_H - 10, most=60)

    def _chart(self, m: int, mode: str, name: str, passes: list, n_seats: int, y: float, cw: float, cell_h: float,
               gap: float, letters: bool, cell_style: str, text_h: float, readout: str, spread: str | None) -> float:
        """One mode's chart from ``y``: its heading, a row of cells per seat (a column per trip), its measured
        readout and spread at the right; returns the y under it."""
        head = self.text(name, 40, y, "heading", TEXT, True, role="heading")
        y0 = head.sceneBoundingRect().bottom() + 2
        seats: dict[str, int] = {}
        for i, rows in enumerate(passes):
            present = {row[0] for row in rows}
            seats = {r: s for r, s in seats.items() if r in present}  # who left frees a seat
            for rid, _, _ in rows:
                if rid not in seats:
                    seats[rid] = min(set(range(n_seats + 2)) - set(seats.values()))
            for rid, fed, phase in rows[:n_seats]:
                seat = min(seats[rid], n_seats - 1)
                color = REQ_COLORS.get(rid, BLUE)
                fill = QColor(color) if phase == "decode" else QColor(color.red(), color.green(), color.blue(), 110)
                cell = self.box(40 + i * cw, y0 + seat * (cell_h + gap), cw - 4, cell_h, fill, color, radius=4,
                                width=2)
                label = rid if phase == "decode" else f"{rid}{fed}"
                if letters and self.measure(label, cell_style, True).width() <= cw - 6:
                    t = self.text(label, (cw - 4) / 2, (cell_h - text_h) / 2, cell_style, QColor("#0f1419"),
                                  True, align="center", role="cell")
                    t.setParentItem(cell)
                self.fade_in(cell, 0.2 + 0.05 * i + m * 0.2, 0.35 + 0.05 * i + m * 0.2)
        ro = self.text(readout, 1560, y0, "body", ACCENT, True, align="right", role="readout")
        if spread:
            self.text(spread, 1560, ro.sceneBoundingRect().bottom() + 2, "label", DIM, align="right", role="readout")
        return y0 + n_seats * (cell_h + gap) + 6

    def _panel_height(self) -> float:
        """Height of the two panels under the charts: a heading and a line under it (the block table's: what it
        shows), then one row (the block table's pages; the two kinds of GPU, each with what bounds it)."""
        head = self.lh("heading", True)
        left = head + 2 + self.lh("small") + 8 + self.lh("label") + 6
        right = head + 10 + self.lh("small") + px("small") * 0.6 + 4 + self.lh("small")
        return 8 + max(left, right) + 10

    def _panels(self, b: dict | None, py: float, ph: float) -> None:
        """The block table (the requests' pages, as many as fit) and prefill/decode disaggregation, side by side
        from ``py``, ``ph`` tall."""
        lw = 680.0  # the block table's panel; the disaggregation's takes the rest of the row
        self.box(40, py, lw, ph, PANEL, EDGE)
        head = self.text(T("Block table (PagedAttention)"), 60, py + 8, "heading", TEXT, True, role="heading")
        _, ty = self.para(T("each request's pages of the cheat sheet"), 60, head.sceneBoundingRect().bottom() + 2,
                          lw - 40, "small", DIM, role="legend")
        tables = (b or {}).get("block_tables") or {"A": [0, 1], "C": [2, 3, 4]}
        bh = self.lh("label") + 6
        bw = max(self.measure(str(blk), "label").width() for blocks in tables.values() for blk in blocks[:8]) + 16
        x, yy = 60.0, ty + 8
        for rid, blocks in tables.items():  # one entry per request, left to right, wrapping while rows fit
            shown = blocks[:8]
            need = self.measure(rid, "small", True).width() + 8 + len(shown) * (bw + 4)
            if x > 60 and x + need > 20 + lw:
                x, yy = 60.0, yy + bh + 6
            if yy + bh > py + ph - 6 or x + need > 20 + lw:
                break
            lab = self.text(rid, x, yy + (bh - self.lh("small", True)) / 2, "small", REQ_COLORS.get(rid, BLUE), True,
                            role="label")
            x = lab.sceneBoundingRect().right() + 8
            for blk in shown:
                c = self.box(x, yy, bw, bh, PANEL, REQ_COLORS.get(rid, BLUE), radius=4)
                self.text(str(blk), bw / 2, 3, "label", TEXT, align="center", role="cell").setParentItem(c)
                x += bw + 4
            x += 24
        # disaggregation: the GPUs that read (compute-bound) hand the cache to the GPUs that write (memory-bound)
        x0, rw = 40 + lw + 20, 1520 - lw - 20
        self.box(x0, py, rw, ph, PANEL, EDGE)
        head = self.text(T("Prefill/decode disaggregation"), x0 + 20, py + 8, "heading", TEXT, True, role="heading")
        pill = self.badge("illustrative", x0 + rw - 20, py + 8, align="right")
        pill.setY(head.sceneBoundingRect().center().y() - pill.boundingRect().height() / 2)
        gy = head.sceneBoundingRect().bottom() + 10
        g1 = self.tag(T("GPUs that read"), x0 + 20, gy, "small", QColor(224, 138, 30, 60), ORANGE, role="label",
                      pad=8)
        g2 = self.tag(T("GPUs that write"), x0 + rw - 20, gy, "small", QColor(74, 116, 163, 90), BLUE_LIGHT,
                      align="right", role="label", pad=8)
        r1, r2 = g1.sceneBoundingRect(), g2.sceneBoundingRect()
        for r, why in ((r1, T("compute-bound")), (r2, T("memory-bound"))):  # under its GPUs, inside the panel
            half = self.measure(why, "small").width() / 2
            cx = min(max(r.center().x(), x0 + 20 + half), x0 + rw - 20 - half)
            self.text(why, cx, r.bottom() + 4, "small", DIM, align="center", role="label")
        kv, cy = T("KV cache over NVLink / RDMA"), r1.center().y()
        room = r2.left() - r1.right() - 16
        self.arrow(r1.right() + 8, cy, r2.left() - 8, cy, ACCENT, 3)
        mid = (r1.right() + r2.left()) / 2
        if self.measure(kv, "small").width() <= room:  # under the arrow, between the two kinds of GPU
            self.text(kv, mid, cy + 6, "small", ACCENT, align="center", role="label")
        else:
            self.para(kv, mid, cy + 6, room, "small", ACCENT, role="label", align="center")


class SpeculativeScene(TourScene):
    """§13: the apprentice (draft model) guesses, the book (target) checks all guesses in one trip; the trips
    saved, measured; a measured acceptance below the source's figure is said so, with the reason."""

    title = "Running ahead (speculative decoding)"
    number = 13

    def draw(self, ctx: dict) -> None:
        s = _analysis(ctx, "speculative")
        live = bool(s and s.get("available"))
        if live:
            passes = [(p["labels"], p["accepted"], p["proposed"]) for p in s["passes"][:6]]
        else:
            passes = [(["for", "␣i", "␣in", "␣range", "(", "10"], 4, 5), (["10", "):", "↵", "␣␣␣", "␣print"], 4, 5),
                      (["(", "i", ")", "↵"], 3, 5)]
        top = self.top
        lw = 820.0 if live else 1000.0  # live: the right box takes more room for its measured figures
        (_, y), g_intro = self.collect(lambda: self.para(
            T("The apprentice guesses, the book checks every guess in one trip:"), 40, top, lw, "body", TEXT,
            role="caption"))
        y += 8
        # what stands under the rows (legend, headline, pills, notes), drawn first from y = 0 and moved under the
        # last row that fits above it
        below = self._below_rows(s if live else None, lw)
        block_h = max([i.sceneBoundingRect().bottom() for i in below] + [0.0])
        t = 0.3
        trip_w = max(self.measure(T("trip {i}").format(i=len(passes)), "small").width(), 40) + 14
        # the tokens as chips (figures, outside the type hierarchy): the illustration's three trips a size larger
        chip_style = "label" if live else "heading"
        chip_h = self.lh(chip_style) + px("small") * 0.45  # a chip's height (``chip``)
        row_h = chip_h + 8  # and the gap under it

        def row(r: int, labels: list, accepted: int, proposed: int, y: float, t: float) -> tuple[float, float]:
            """One trip: its name, its chips, how many guesses it kept; returns (the y under it, the next start)."""
            self.text(T("trip {i}").format(i=r + 1), 40, y + (chip_h - self.lh("small")) / 2, "small", DIM,
                      role="axis")
            x = 40 + trip_w
            row_bottom = y
            for j, lab in enumerate(labels):
                fill = GREEN if j < accepted else ACCENT  # kept guess, or the book's own token
                card, w = self.chip(lab, x, y, fill, QColor("#0f1419"), style=chip_style)
                self.pop_in(card, t)
                t += 0.1
                x += w + 6
                row_bottom = card.sceneBoundingRect().bottom()
            rejected = max(0, proposed - accepted)
            note = T("{a} of {k} guesses kept").format(a=accepted, k=proposed) + (
                "" if not rejected else " · " + T("{r} thrown away").format(r=rejected))
            nw = self.measure(note, "small").width()
            if x + 16 + nw <= 40 + lw:
                self.text(note, x + 16, y + (chip_h - self.lh("small")) / 2, "small", DIM, role="label")
            else:
                item = self.text(note, 40 + trip_w, row_bottom + 2, "small", DIM, role="label")
                row_bottom = item.sceneBoundingRect().bottom()
            return row_bottom + 8, t

        groups = [g_intro]
        for r, (labels, accepted, proposed) in enumerate(passes):
            if r >= 2 and y + row_h > SCENE_H - 8 - block_h:
                break
            (y, t), g_row = self.collect(lambda: row(r, labels, accepted, proposed, y, t))
            groups.append(g_row)
        for item in below:
            item.moveBy(0, y)
        # the column breathes: the free height under it is shared between the caption, the trips and the notes
        self.spread(groups + [below], bottom=SCENE_H - 10, most=40 if live else 64)
        # the right box: trips with and without the apprentice, then production
        rx = 40 + lw + 30
        rw = 1560 - rx
        y = top + 10
        if live:
            _, y = self.para(T("Trips for the same {n} tokens").format(n=s["tokens"]), rx + 20, y, rw - 40, "heading",
                             TEXT, True, role="heading")
            most = max(s["plain_trips"], s["trips"], 1)
            bars = ((T("without: {n} trips").format(n=s["plain_trips"]), s["plain_trips"], ORANGE),
                    (T("with the apprentice: {n} trips").format(n=s["trips"]), s["trips"], GREEN))
            name_w = max(self.measure(name, "small").width() for name, _, _ in bars) + 12
            full = max(40.0, rw - 40 - name_w)
            for i, (name, n, color) in enumerate(bars):  # the name, then its bar on the same line
                lab = self.text(name, rx + 20, y + 6, "small", color, role="legend")
                r = lab.sceneBoundingRect()
                bar = self.box(rx + 20 + name_w, r.center().y() - 11, max(3.0, full * n / most), 22, color, None,
                               radius=4)
                self.fade_in(bar, 0.6 + 0.3 * i)
                y = r.bottom()
            y = self.badge("measured", rx + 20, y + 6).sceneBoundingRect().bottom() + 12
        if live and s.get("plain_pass_ms") and s.get("draft_pass_ms") and s.get("weight_bytes"):
            y = self._apprentice_cost(s, _analysis(ctx, "decode"), rx + 20, y, rw - 40) + 10
        production = T("In production: EAGLE-3, a light guessing head trained on the big model's hidden states; "
                       "DeepSeek-V3 and GLM-style MoE models build in multi-token prediction (MTP). Open-ended "
                       "writing gains less than code.")
        pill_h = self.lh("small", True) + px("small") * 0.3
        _, y = self.para_fit(production, rx + 20, y, rw - 40, SCENE_H - 8 - 14 - 8 - pill_h, role="caption")
        y = self.badge("source", rx + 20, y + 8).sceneBoundingRect().bottom()
        self.box(rx, top, rw, y + 14 - top, PANEL, EDGE, z=0)

    def _below_rows(self, s: dict | None, lw: float) -> list:
        """The legend, and live: the headline, its pill and the notes on acceptance; else the illustrative pill.
        Drawn from y = 0 (the caller moves them under the rows); returns the top-level items made."""
        made = []
        sw = self.lh("small")
        made.append(self.box(40, 2, sw - 4, sw - 4, GREEN, None, radius=4))
        k1 = self.text(T("the apprentice's guess, kept"), 40 + sw + 4, 0, "small", TEXT, role="legend")
        own = T("the book's own token (free with the check)")
        x2, y2 = k1.sceneBoundingRect().right() + 30, 0.0
        if x2 + sw + 4 + self.measure(own, "small").width() > 40 + lw:  # the second key on a line of its own
            x2, y2 = 40.0, k1.sceneBoundingRect().bottom() + 4
        made.append(self.box(x2, y2 + 2, sw - 4, sw - 4, ACCENT, None, radius=4))
        k2 = self.text(own, x2 + sw + 4, y2, "small", TEXT, role="legend")
        made += [k1, k2]
        y = k2.sceneBoundingRect().bottom() + 10
        if s is None:
            made.append(self.badge("illustrative", 40, y, T("no draft model loaded; in the spirit of the source's "
                                                            "picture"), max_w=lw))
            return made
        item, y = self.para(T("{n} tokens in {t} trips with the apprentice, {p} trips without; the same text either "
                              "way").format(n=s["tokens"], t=s["trips"], p=s["plain_trips"]), 40, y, lw, "label",
                            ACCENT, True, role="readout")
        made.append(item)
        made.append(self.badge("measured", 40, y + 4, T("the live draft and target models"), max_w=lw))
        y = made[-1].sceneBoundingRect().bottom()
        rate = float(s.get("acceptance") or 0.0)
        if rate < 0.6:
            item, y = self.para(T("Measured here the apprentice kept {pct:.0f}% of its guesses, fewer than the "
                                  "source's 3–4 of 5: both models here are tiny and briefly trained, so they agree "
                                  "less often than a good draft agrees with a big model.").format(pct=100 * rate),
                                40, y + 6, lw, "label", DIM, role="caption")
            made.append(item)
        card = s.get("card_acceptance") or {}
        if card.get("code") is not None and card.get("poems") is not None:
            made.append(self.para(T("The model cards, 4 guesses on held-out text: the code apprentice keeps "
                                    "{code:.0f}%, the poetry apprentice {poems:.0f}%. Code repeats itself; a poem's "
                                    "next character is open.").format(code=100 * card["code"],
                                                                       poems=100 * card["poems"]),
                                  40, y + 6, lw, "label", DIM, role="caption")[0])
        return made

    def _apprentice_cost(self, s: dict, decode: dict | None, x: float, y: float, w: float) -> float:
        """Why a smaller apprentice is not proportionally cheaper: its measured pass against the book's, its
        dictionary (embedding + LM head, read whole on every guess) against the book's in bytes, and what
        dominates the book's trip here (the tour's one measured split, ``decode["split"]``, as §7 and §18 say
        it: ``animations.scenes.trip_words``). Returns the y below."""
        f = {"w": 100 * s["draft_weight_bytes"] / s["weight_bytes"], "t": 100 * s["draft_pass_ms"] / s["plain_pass_ms"],
             "d": fmt_ms(s["draft_pass_ms"]), "p": fmt_ms(s["plain_pass_ms"])}
        text = T("The apprentice has {w:.0f}% of the book's weights, yet one of its trips takes {t:.0f}% of the "
                 "book's ({d} against {p}).").format(**f)
        if line := trip_words.dictionary_line(s):
            text += " " + line
        split = (decode or {}).get("split")
        if trip_words.measured(split):
            text += " " + trip_words.page13_lesson(split)
        _, y = self.para(text, x, y, w, "label", DIM, role="caption")
        return y


ICON_H = 28.0  # the height of page 14's small pictures of a torn book


class ParallelScene(TourScene):
    """§14: weights against one GPU's memory, every figure in decimal GB (10⁹ bytes); FP8 and 4-bit; pipeline,
    tensor and expert parallel. The GPU lines stand at the memory ``model/teaching/costs.py`` gives each card in bytes,
    labelled with the card's product name ("H200 141GB") and that size in the bars' unit."""

    title = "Tearing the book (parallelism)"
    number = 14

    def draw(self, ctx: dict) -> None:
        rows = ctx.get("weights_table") or []
        gpus = ctx.get("gpu_table") or []
        top = self.top
        name_w = max([self.measure(T(r["name"]), "small").width() for r in rows] + [100.0]) + 16
        x0 = 40 + name_w
        value_w = max([self.measure(fmt_bytes(r["bytes"]), "label", True).width() for r in rows] + [60.0]) + 14
        most = max([r["bytes"] for r in rows] + [g["bytes"] for g in gpus] + [1.0]) * 1.02
        scale = (1560 - x0 - value_w) / most  # scene units per byte
        smallest = min((g["bytes"] for g in gpus), default=80e9)
        # the GPU labels first, each over its line: on one row when some choice of centred, flush right or flush
        # left of its line keeps them apart (the first such choice, centred preferred), else on as many rows as
        # they need; then the bars below them
        lh = self.lh("small")
        labels = []
        for g in gpus:
            gx = x0 + g["bytes"] * scale
            item = self.text(f"{g['name']} “{g['nominal']:g}GB” = {fmt_bytes(g['bytes'])}", gx, top, "small", DIM,
                             align="center", role="axis")
            labels.append((gx, item))
        spots = [[x for x in (min(max(gx - it.boundingRect().width() / 2, 40.0), 1560 - it.boundingRect().width()),
                              gx - it.boundingRect().width(), gx) if 40 <= x <= 1560 - it.boundingRect().width()]
                 for gx, it in labels]

        def apart(xs) -> bool:
            spans = sorted((x, x + it.boundingRect().width()) for x, (_, it) in zip(xs, labels))
            return all(a[1] + 16 <= b[0] for a, b in zip(spans, spans[1:]))

        one_row = next((xs for xs in itertools.product(*spots) if apart(xs)), None) if all(spots) else None
        placed: list = []
        for k, (gx, item) in enumerate(labels):
            if one_row is not None:
                item.setPos(one_row[k], top)
            else:  # rows: each label on the first row where it keeps clear of the others
                w, row = item.boundingRect().width(), 0
                x = spots[k][0] if spots[k] else min(max(gx - w / 2, 40.0), 1560 - w)
                while any(QRectF(x - 8, top + row * (lh + 2), w + 16, lh).intersects(o) for o in placed):
                    row += 1
                item.setPos(x, top + row * (lh + 2))
            placed.append(item.sceneBoundingRect())
        y = max([r.bottom() for r in placed] + [top]) + 4
        texts = [item for _, item in labels]  # a dashed line breaks where any text sits on it
        bh = self.lh("label", True)
        for i, r in enumerate(rows):
            texts.append(self.text(T(r["name"]), x0 - 12, y + (bh - self.lh("small")) / 2, "small", TEXT,
                                   align="right", role="axis"))
            w = r["bytes"] * scale
            fits = r["bytes"] <= smallest
            bar = self.box(x0, y, max(3.0, w), bh, GREEN if fits else ORANGE, None, radius=4)
            self.fade_in(bar, 0.2 + 0.2 * i)
            texts.append(self.text(fmt_bytes(r["bytes"]), x0 + w + 8, y, "label", TEXT, True, role="readout"))
            y += bh + 2
        for gx, item in labels:
            segs = [(item.sceneBoundingRect().bottom() + 2, y)]
            for t in texts:
                if t is item:
                    continue
                rr = t.sceneBoundingRect()
                if rr.left() - 4 <= gx <= rr.right() + 4:
                    new = []
                    for a0, a1 in segs:
                        if rr.bottom() < a0 or rr.top() > a1:
                            new.append((a0, a1))
                        else:
                            new += [(a0, rr.top() - 3), (rr.bottom() + 3, a1)]
                    segs = [(a0, a1) for a0, a1 in new if a1 - a0 > 2]
            for a0, a1 in segs:
                self.line(gx, a0, gx, a1, DIM, 2, dash=True)
        first = gpus[0]["name"] if gpus else "H100"
        _, y = self.para(T("Decimal GB (a billion bytes). Dashed: each card's reported memory. Green: fits one {gpu}; "
                           "orange: a bigger card or several.").format(gpu=first),
                         40, y + 2, 1520, "small", DIM, role="legend")
        # the formula pill says where every figure of the chart comes from: under the legend, the FP8 note beside it
        pill = self.badge("formula", 40, y + 4, T("parameters × bytes each; GPU sizes from datasheets"))
        pr = pill.sceneBoundingRect()
        fp8 = T("FP8, and 4-bit on Blackwell, let 70B fit one GPU with room left for the cheat sheet.")
        _, y = self.para(fp8, pr.right() + 16, pr.top(), 1560 - pr.right() - 16, "small", TEXT, role="caption")
        y = max(y, pr.bottom())
        y = draw_thin_book(self, _analysis(ctx, "thin_book"), 40, y + 8, 1520)  # this machine, measured
        y += 8
        # three ways to tear it: three cards down to the footer, the footer measured first
        ways = [(T("By chapters: pipeline parallel"), T("no syncing inside a layer; needs many requests to keep "
                                                        "every GPU busy")),
                (T("Every page torn apart: tensor parallel"), T("every layer syncs; worth it only with fast links "
                                                                 "such as NVLink")),
                (T("Experts living apart: expert parallel"), T("mixture-of-experts models only"))]
        live = ctx.get("live_workers")
        ds = ctx.get("deepseek") or {"params": 671e9, "active": 37e9}
        foot = (T("{how} over {n} worker processes, median of the last {k} trips: compute {c} · communication {m} · "
                  "idle {b}").format(how=T("tensor parallel") if live["mode"] == "tp" else T("pipeline parallel"),
                                     n=live["n"], k=live["trips"], c=fmt_ms(live["compute_ms"]),
                                     m=fmt_ms(live["comm_ms"]), b=fmt_ms(live["bubble_ms"]))
                if live else T("Use “tearing the book” on the Live page to see real worker processes measured here."))
        if live:
            foot_item = self.badge("measured", 40, 0, foot, max_w=1520)
        else:  # one line when it fits (its rect then ends with its words, clear of the cards beside it)
            wide = self.measure(foot, "small").width() > 1520
            foot_item = self.text(foot, 40, 0, "small", DIM, width=1520 if wide else None, role="caption")
        foot_item.setY(SCENE_H - 8 - foot_item.sceneBoundingRect().height())
        card_bottom = foot_item.sceneBoundingRect().top() - 6

        def cards(style: str) -> list[float]:
            """The three cards' words, all in ``style``; returns where each card's words end."""
            ends = []
            for i, (name, why) in enumerate(ways):
                x = 40 + i * 512
                _, ny = self.para(name, x + 12, y + 4, 472, "heading", ACCENT, True, role="heading")
                self._split_icon(i, x + 12, ny + 2, ICON_H)
                _, wy = self.para(why, x + 12, ny + 8 + ICON_H, 472, style, DIM)
                if i == 2:
                    _, wy = self.para(T("DeepSeek-V3: {p:.0f} billion parameters, about {a:.0f} billion active per "
                                        "token").format(p=ds["params"] / 1e9, a=ds["active"] / 1e9), x + 12, wy + 4,
                                      472, style, PURPLE)
                ends.append(wy + 6)
            return ends

        # the cards' words in the label style, all three in the small one where a larger text (a smaller view)
        # would run past the footer
        ends = self.attempt(lambda: cards("label"), bottom=card_bottom - 6) or cards("small")
        for i in range(3):  # three cards of one height: down to the footer, or to the longest card's text
            c = self.box(40 + i * 512, y, 496, max([card_bottom] + ends) - y, PANEL, EDGE, z=0)
            self.pop_in(c, 0.8 + 0.2 * i)

    def _split_icon(self, kind: int, x: float, y: float, h: float) -> None:
        """Two GPUs' share of the book, ``h`` tall: chapters split, every page torn in half, experts in rooms."""
        gpu_colors = (BLUE_LIGHT, GREEN)
        if kind == 0:  # chapters split between two GPUs
            for c in range(8):
                self.box(x + c * 26 + (20 if c >= 4 else 0), y, 20, h, gpu_colors[c >= 4], None, radius=3)
        elif kind == 1:  # each page torn in half
            for c in range(4):
                self.box(x + c * 52, y, 22, h, gpu_colors[0], None, radius=3)
                self.box(x + c * 52 + 24, y, 22, h, gpu_colors[1], None, radius=3)
        else:  # experts in rooms
            d = min(24.0, h)
            for c in range(8):
                self.box(x + c * 30 + (24 if c >= 4 else 0), y + (h - d) / 2, d, d, gpu_colors[c >= 4], None,
                         radius=d / 2)


class PrefixScene(TourScene):
    """§15: the second request finds the shared system prompt's blocks already computed; routing decides."""

    title = "The same opening (prefix caching)"
    number = 15

    def draw(self, ctx: dict) -> None:
        p = _analysis(ctx, "prefix")
        bs = p["block_size"] if p else 16
        n_sys = p["system_tokens"] if p else 256
        hit = p["hit_tokens"] if p else 256
        q = p["question_tokens"] if p else 8
        sys_blocks = -(-n_sys // bs)
        q_blocks = -(-(n_sys + q) // bs) - hit // bs
        top = self.top
        lw = 960.0
        (_, y), g_intro = self.collect(lambda: self.para(
            T("Two requests, the same {n}-token system prompt ({b} blocks of {s} tokens)").format(
                n=n_sys, b=sys_blocks, s=bs), 40, top, lw, "body", TEXT, role="caption"))
        bh = self.lh("label") + 10

        def blocks(y: float) -> float:
            name_w = max(self.measure(T("first"), "small", True).width(),
                         self.measure(T("second"), "small", True).width())
            bx = 40 + name_w + 16
            w = min(52.0, (40 + lw - bx) / (sys_blocks + q_blocks + 1))
            y += 10
            for r in range(2):
                self.text(T("first") if r == 0 else T("second"), 40, y + (bh - self.lh("small", True)) / 2, "small",
                          TEXT, True, role="axis")
                total = sys_blocks + (q_blocks if r else -(-(n_sys + 8) // bs) - sys_blocks)
                for j in range(total):
                    reused = r == 1 and j < hit // bs
                    c = self.box(bx + j * w, y, w - 6, bh, GREEN if reused else ORANGE, None, radius=4)
                    self.fade_in(c, 0.2 + r * 0.8 + 0.03 * j)
                y += bh + 12
            sw = self.lh("small")
            self.box(40, y + 3, sw - 6, sw - 6, GREEN, None, radius=4)
            k1 = self.text(T("found in the cache: no work"), 40 + sw + 2, y, "small", TEXT, role="legend")
            x2 = k1.sceneBoundingRect().right() + 30
            self.box(x2, y + 3, sw - 6, sw - 6, ORANGE, None, radius=4)
            self.text(T("computed"), x2 + sw + 2, y, "small", TEXT, role="legend")
            return y + sw + 20

        y, g_blocks = self.collect(lambda: blocks(y))

        def times(y: float) -> float:
            top_ms = max(p["cold_ms"], p["warm_ms"], 0.1)
            names = ((T("second request, cold"), p["cold_ms"], ORANGE),
                     (T("second request, after the first"), p["warm_ms"], GREEN))
            nw = max(self.measure(n, "small").width() for n, _, _ in names) + 16
            vw = max(self.measure(fmt_ms(ms), "label", True).width() for _, ms, _ in names) + 12
            full = lw - nw - vw
            for i, (name, ms, color) in enumerate(names):
                self.text(name, 40, y + (self.lh("label", True) - self.lh("small")) / 2, "small", TEXT, role="axis")
                bar = self.box(40 + nw, y + 2, max(3.0, full * ms / top_ms), bh - 4, color, None, radius=4)
                self.fade_in(bar, 1.4 + 0.3 * i)
                self.text(fmt_ms(ms), 40 + nw + full * ms / top_ms + 8, y, "label", TEXT, True, role="readout")
                y += bh + 8
            return y

        def saved(y: float) -> float:
            _, y = self.para(T("time saved on reading the question: {ms}").format(ms=fmt_ms(p["saved_ms"])), 40,
                             y + 6, lw, "body", ACCENT, True, role="readout")
            self.badge("measured", 40, y + 6, T("this engine's prefix cache, median of 3"), max_w=lw)
            return y

        if p:
            y, g_times = self.collect(lambda: times(y))
            _, g_saved = self.collect(lambda: saved(y))
            # the page breathes: the free height below is shared between its blocks (no empty band)
            self.spread([g_intro, g_blocks, g_times, g_saved], bottom=SCENE_H - 10, most=70)
        else:
            _, g_badge = self.collect(lambda: self.badge("illustrative", 40, y))
            self.spread([g_intro, g_blocks + g_badge], bottom=SCENE_H - 10, most=70)  # the pill under its picture
        # routing: the router over three servers, the arrows drawn once the servers have come down the free height
        x0, rw = 1040.0, 520.0
        head = self.text(T("Routing"), x0 + 20, top + 10, "heading", TEXT, True, role="heading")
        _, y = self.para(T("The cache helps only on the server that holds it."), x0 + 20,
                         head.sceneBoundingRect().bottom() + 2, rw - 40, "label", DIM, role="caption")
        router, g_router = self.collect(lambda: self.tag(T("router"), x0 + rw / 2, y + 14, "small", PANEL, ACCENT,
                                                         align="center", role="label", pad=16, min_w=140))
        rr = router.sceneBoundingRect()

        def servers() -> list:
            sy = rr.bottom() + 130
            made = []
            for i in range(3):
                sx = x0 + 20 + i * (rw - 40) / 3
                sw_ = (rw - 40) / 3 - 14
                made.append(self.tag(T("server {i}").format(i=i + 1), sx, sy, "small", PANEL, BLUE_LIGHT,
                                     role="label", pad=12, min_w=sw_))
            sr = made[1].sceneBoundingRect()
            self.box(sr.center().x() - 30, sr.bottom() + 8, 60, 30, GREEN, None, radius=4)
            hit_lab = self.text(T("its cache holds the opening"), sr.center().x(), sr.bottom() + 44, "small", GREEN,
                                align="center", role="legend")
            _, yy = self.para(T("miss: computed again"), x0 + 20, hit_lab.sceneBoundingRect().bottom() + 14, rw - 40,
                              "small", DIM, role="caption")
            made.append(self.badge("illustrative", x0 + 20, yy + 8, T("machines and assignments"), max_w=rw - 40))
            return made

        made, g_servers = self.collect(servers)
        # the panel reaches down with the page's left column: its servers come down the free height (longer arrows)
        self.spread([g_router, g_servers], bottom=SCENE_H - 10 - 14, most=120)
        for i, srv in enumerate(made[:3]):
            sr = srv.sceneBoundingRect()
            self.arrow(rr.center().x(), rr.bottom() + 4, sr.center().x(), sr.top() - 4, GREEN if i == 1 else DIM,
                       3 if i == 1 else 2)
            if i == 1:
                mid = (rr.bottom() + sr.top()) / 2
                self.text(T("hit"), rr.center().x() + 10, mid - self.lh("small", True) / 2, "small", GREEN, True,
                          role="label")
        y = made[-1].sceneBoundingRect().bottom()
        self.box(x0, top, rw, y + 14 - top, PANEL, EDGE, z=0)
