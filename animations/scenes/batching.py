"""Section 12: sharing the table (batching): static against continuous batching, trip by trip, measured on this
computer's engine when it answered (illustrative schedule otherwise), with the measured verdict."""

from __future__ import annotations

from PySide6.QtGui import QColor

from animations.scenes.base import TourScene
from animations.scenes.look import ACCENT, BLUE, BLUE_LIGHT, DIM, EDGE, ORANGE, PANEL, SCENE_H, SEAT_COLORS, TEXT, T, px
from animations.scenes.look import analysis_of as _analysis
from animations.units import fmt_ms

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


def _readouts(b: dict | None, modes: dict[str, list]) -> tuple[dict[str, str], dict[str, str]]:
    """Each mode's readout (its trips, and measured: its time) and, for a median of several runs, its spread."""
    readouts, spreads = {}, {}
    for mode in modes:
        ms = b[mode]["total_ms"] if b else None
        readouts[mode] = T("{n} trips").format(n=len(modes[mode])) + (f" · {fmt_ms(ms)}" if ms else "")
        if b and b.get("runs"):  # the figure is a median: its spread and how many runs, right under it
            s_ms = b[mode]["ms"]
            spreads[mode] = T("median of {n} runs, {lo}–{hi}").format(n=b["runs"], lo=fmt_ms(s_ms["min"]),
                                                                    hi=fmt_ms(s_ms["max"]))
    return readouts, spreads


def _legend_texts(b: dict | None, n_seats: int) -> tuple[str, str | None]:
    """The charts' legend, and measured (``b``): the note of the pill under it."""
    legend = T("One column = one trip, {n} seats. Pale: reading a question; C's long one in chunks of {k} "
               "tokens (chunked prefill).").format(n=n_seats, k=b["step_tokens"] if b else 32)
    pill_note = (T("this engine's scheduler, {n} requests; the two modes run in turn after a warm-up"
                   ).format(n=len(b["requests"])) if b else None)
    return legend, pill_note


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
        readouts, spreads = _readouts(b, modes)
        ro_w = max([self.measure(r, "body", True).width() for r in readouts.values()]
                   + [self.measure(r, "label").width() for r in spreads.values()]) + 24
        cw = min(56.0, (1520 - ro_w) / max(1, longest))
        names = {"static": T("Static batch: everyone waits for the longest"),
                 "continuous": T("Continuous batch: a free seat is taken at once")}
        n_seats = int(b.get("max_batch", 2)) if b else 2
        legend, pill_note = _legend_texts(b, n_seats)
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
        y, g_key = self.collect(lambda: self._key(legend, bool(b), pill_note, y))
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

    def _key(self, legend: str, measured: bool, pill_note: str | None, y: float) -> float:
        """The charts' legend and its pill (measured by this engine's scheduler, or illustrative); returns the
        pill's bottom."""
        _, y = self.para(legend, 40, y, 1520, "small", DIM, role="legend")
        return self.badge("measured" if measured else "illustrative", 40, y + 4, pill_note).sceneBoundingRect().bottom()

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
