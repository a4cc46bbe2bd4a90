"""Sections 12–15: sharing the table (batching), running ahead (speculative decoding), splitting the book
(parallelism), the same opening (prefix caching)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from animations.scenes.base import (
    ACCENT, BLUE, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PURPLE, SEAT_COLORS, TEXT, T, TourScene,
    fmt_bytes, fmt_ms,
)
from animations.scenes.trips import _analysis

REQ_COLORS = {"A": SEAT_COLORS[0], "B": SEAT_COLORS[1], "C": SEAT_COLORS[2], "D": SEAT_COLORS[4]}

# An illustrative schedule (two seats) used when the engine has not answered: static waits, continuous refills.
_ILLUSTRATIVE = {
    "static": [[["A", 14, "prefill"], ["B", 6, "prefill"]]] + [[["A", 1, "decode"], ["B", 1, "decode"]]] * 2
    + [[["A", 1, "decode"]]] * 7 + [[["C", 32, "prefill"], ["D", 14, "prefill"]]] + [[["C", 32, "prefill"],
       ["D", 1, "decode"]]] * 2 + [[["C", 1, "decode"], ["D", 1, "decode"]]] * 4,
    "continuous": [[["A", 14, "prefill"], ["B", 6, "prefill"]]] + [[["A", 1, "decode"], ["B", 1, "decode"]]] * 2
    + [[["A", 1, "decode"], ["C", 32, "prefill"]]] * 3 + [[["A", 1, "decode"], ["C", 1, "decode"]]] * 4
    + [[["C", 1, "decode"], ["D", 14, "prefill"]]] + [[["D", 1, "decode"]]] * 5,
}


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
        readouts = {}
        for mode in modes:
            ms = b[mode]["total_ms"] if b else None
            readouts[mode] = T("{n} trips").format(n=len(modes[mode])) + (f" · {fmt_ms(ms)}" if ms else "")
        ro_w = max(self.measure(r, "body", True).width() for r in readouts.values()) + 24
        cw = min(56.0, (1520 - ro_w) / max(1, longest))
        names = {"static": T("Static batch: everyone waits for the longest"),
                 "continuous": T("Continuous batch: a free seat is taken at once")}
        cell_h = self.measure("A14", "label", True).height() + 8
        y = self.top
        for m, mode in enumerate(("static", "continuous")):
            head = self.text(names[mode], 40, y, "body", TEXT, True, role="heading")
            y0 = head.sceneBoundingRect().bottom() + 4
            seats: dict[str, int] = {}
            for i, rows in enumerate(modes[mode]):
                present = {row[0] for row in rows}
                seats = {r: s for r, s in seats.items() if r in present}  # who left frees a seat
                for rid, _, _ in rows:
                    if rid not in seats:
                        seats[rid] = min(set(range(4)) - set(seats.values()))
                for rid, fed, phase in rows[:2]:
                    seat = min(seats[rid], 1)
                    color = REQ_COLORS.get(rid, BLUE)
                    fill = QColor(color) if phase == "decode" else QColor(color.red(), color.green(), color.blue(), 110)
                    cell = self.box(40 + i * cw, y0 + seat * (cell_h + 4), cw - 4, cell_h, fill, color, radius=4,
                                    width=2)
                    label = rid if phase == "decode" else f"{rid}{fed}"
                    if self.measure(label, "label", True).width() <= cw - 6:
                        t = self.text(label, (cw - 4) / 2, 4, "label", QColor("#0f1419"), True, align="center",
                                      role="cell")
                        t.setParentItem(cell)
                    self.fade_in(cell, 0.2 + 0.05 * i + m * 0.2, 0.35 + 0.05 * i + m * 0.2)
            self.text(readouts[mode], 1560, y0 + cell_h / 2, "body", ACCENT, True, align="right", role="readout")
            y = y0 + 2 * (cell_h + 4) + 8
        _, y = self.para(T("Each column is one trip; two seats. Pale cells read a question (prefill): C's long "
                           "question is read in chunks of {k} tokens beside other people's writing (chunked "
                           "prefill).").format(k=b["step_tokens"] if b else 32), 40, y, 1520, "label", DIM,
                         role="legend")
        pill = self.badge("measured" if b else "illustrative", 40, y + 4,
                          T("this engine's scheduler, 4 requests") if b else None)
        y = pill.sceneBoundingRect().bottom() + 6
        if b and b["continuous"]["total_ms"] > b["static"]["total_ms"]:
            _, y = self.para(T("Measured here, continuous batching took fewer trips but more time ({c} against "
                               "{s}): on two CPU cores a trip's time grows with the tokens it carries, so fuller "
                               "trips save less than on a GPU, where a trip costs about the same however full it "
                               "is.").format(c=fmt_ms(b["continuous"]["total_ms"]), s=fmt_ms(b["static"]["total_ms"])),
                             40, y, 1520, "label", ACCENT, role="caption")
        # block table
        py = y + 10
        if py > 700 - 140:
            py = 700 - 140
        ph = 700 - 8 - py
        self.box(40, py, 700, ph, PANEL, EDGE)
        _, ty = self.para(T("Block table (PagedAttention): each request's pages of the cheat sheet"), 60, py + 8, 660,
                          "label", TEXT, True, role="heading")
        tables = (b or {}).get("block_tables") or {"A": [0, 1], "C": [2, 3, 4]}
        bh = self.measure("0", "label").height() + 6
        for i, (rid, blocks) in enumerate(list(tables.items())[:3]):
            yy = ty + 6 + (bh + 6) * i
            if yy + bh > py + ph - 4:
                break
            self.text(rid, 60, yy + 3, "label", REQ_COLORS.get(rid, BLUE), True, role="label")
            for j, blk in enumerate(blocks[:10]):
                c = self.box(100 + j * 62, yy, 56, bh, PANEL, REQ_COLORS.get(rid, BLUE), radius=4)
                self.text(str(blk), 28, 3, "label", TEXT, align="center", role="cell").setParentItem(c)
        # disaggregation
        x0 = 780.0
        self.box(x0, py, 780, ph, PANEL, EDGE)
        head = self.text(T("Prefill/decode disaggregation"), x0 + 20, py + 8, "label", TEXT, True, role="heading")
        self.badge("illustrative", x0 + 760, py + 8, align="right")
        gy = head.sceneBoundingRect().bottom() + 8
        g1 = self.tag(T("GPUs that read"), x0 + 30, gy, "label", QColor(224, 138, 30, 60), ORANGE, role="label",
                      pad=14, min_w=200)
        g2 = self.tag(T("GPUs that write"), x0 + 750, gy, "label", QColor(74, 116, 163, 90), BLUE_LIGHT,
                      align="right", role="label", pad=14, min_w=200)
        r1, r2 = g1.sceneBoundingRect(), g2.sceneBoundingRect()
        self.arrow(r1.right() + 8, r1.center().y(), r2.left() - 8, r1.center().y(), ACCENT, 3)
        gap = r2.left() - r1.right() - 24
        _, y = self.para(T("KV cache over NVLink / RDMA"), (r1.right() + r2.left()) / 2 - gap / 2,
                         max(r1.bottom(), r2.bottom()) + 4, gap, "label", ACCENT, role="label", align="center")
        self.para(T("Reading a question is compute-bound, writing is memory-bound: each gets GPUs of its own, and "
                    "the cheat sheet is handed over between them."), x0 + 20, y + 6, 740, "small", DIM,
                  role="caption")


class SpeculativeScene(TourScene):
    """§13: the apprentice (draft model) guesses, the book (target) checks all guesses in one trip."""

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
        self.text(T("The apprentice guesses, the book checks every guess in one trip:"), 40, 84, "body", TEXT)
        t = 0.3
        for r, (labels, accepted, proposed) in enumerate(passes):
            y = 134 + 76 * r
            self.text(T("trip {i}").format(i=r + 1), 40, y + 10, "small", DIM)
            x = 130.0
            for j, lab in enumerate(labels):
                if j < accepted:
                    fill, fg = GREEN, QColor("#0f1419")
                else:
                    fill, fg = ACCENT, QColor("#0f1419")  # the book's own token
                card, w = self.chip(lab, x, y, fill, fg, style="body")
                self.pop_in(card, t)
                t += 0.1
                x += w + 6
            rejected = max(0, proposed - accepted)
            note = T("{a} of {k} guesses kept").format(a=accepted, k=proposed) + (
                "" if not rejected else " · " + T("{r} thrown away").format(r=rejected))
            self.text(note, x + 16, y + 10, "small", DIM)
        y = 134 + 76 * len(passes) + 10
        self.box(40, y, 24, 24, GREEN, None, radius=4)
        self.text(T("the apprentice's guess, kept"), 74, y, "small", TEXT)
        self.box(420, y, 24, 24, ACCENT, None, radius=4)
        self.text(T("the book's own token (free with the check)"), 454, y, "small", TEXT)
        if live:
            self.text(T("{n} tokens in {t} trips with the apprentice, {p} trips without; the same text either "
                        "way").format(n=s["tokens"], t=s["trips"], p=s["plain_trips"]), 40, y + 50, "body", ACCENT, True)
            self.badge("measured", 40, y + 92, T("the live draft and target models"))
        else:
            self.badge("illustrative", 40, y + 50, T("no draft model loaded; in the spirit of the source's picture"))
        self.box(1080, 84, 480, 420, PANEL, EDGE)
        self.text(T("In production: EAGLE-3, a light guessing head trained on the big model's hidden states; "
                    "DeepSeek-V3 and GLM-style MoE models build in multi-token prediction (MTP). Open-ended "
                    "writing gains less than code."), 1100, 100, "label", TEXT, width=440)
        self.badge("source", 1100, 460)


class ParallelScene(TourScene):
    """§14: weights against one GPU's memory; FP8 and 4-bit; pipeline, tensor and expert parallel."""

    title = "Splitting the book (parallelism)"
    number = 14

    def draw(self, ctx: dict) -> None:
        rows = ctx.get("weights_table") or []
        gpus = ctx.get("gpu_table") or []
        x0, scale = 380.0, 1050.0 / 200e9  # px per byte: 200 GB across
        for g in gpus:
            gx = x0 + g["bytes"] * scale
            self.line(gx, 84, gx, 110 + 52 * len(rows), DIM, 2, dash=True)
            self.text(f"{g['name']} {g['nominal']:g} GB", gx, 84, "small", DIM, align="center")
        for i, r in enumerate(rows):
            y = 116 + 52 * i
            self.text(T(r["name"]), x0 - 16, y + 4, "label", TEXT, align="right")
            w = min(1100.0, r["bytes"] * scale)
            bar = self.box(x0, y, max(3.0, w), 36, ORANGE if r["bytes"] > 80 * 2**30 else GREEN, None, radius=4)
            self.fade_in(bar, 0.2 + 0.2 * i)
            self.text(fmt_bytes(r["bytes"]), x0 + w + 10, y + 4, "label", TEXT, True)
        yb = 116 + 52 * len(rows) + 4
        self.badge("formula", 40, yb, T("parameters × bytes per parameter; GPU sizes from the datasheets"))
        self.text(T("FP8, and 4-bit on Blackwell, let 70B fit one GPU with room left for the cheat sheet."), 40,
                  yb + 36, "label", TEXT)
        # three ways to split
        y = yb + 86
        ways = [(T("By chapters: pipeline parallel"), T("no syncing inside a layer, but it needs many requests "
                                                        "to keep every GPU busy")),
                (T("Every page torn apart: tensor parallel"), T("every layer syncs; worth it only with fast links "
                                                                 "such as NVLink")),
                (T("Experts living apart: expert parallel"), T("mixture-of-experts models only"))]
        for i, (name, why) in enumerate(ways):
            x = 40 + i * 512
            c = self.box(x, y, 496, 644 - y - 6, PANEL, EDGE)
            self.pop_in(c, 0.8 + 0.2 * i)
            self.text(name, x + 16, y + 10, "label", ACCENT, True, width=464)
            self._split_icon(i, x + 16, y + 70)  # below a title that may wrap to two lines
            self.text(why, x + 16, y + 128, "small", DIM, width=464)
        live = ctx.get("live_workers")
        if live:
            how = T("tensor parallel") if live["mode"] == "tp" else T("pipeline parallel")
            self.badge("measured", 40, 652, T("{how} over {n} worker processes, median of the last {k} trips: "
                                              "compute {c} · communication {m} · idle {b}").format(
                how=how, n=live["n"], k=live["trips"], c=fmt_ms(live["compute_ms"]), m=fmt_ms(live["comm_ms"]),
                b=fmt_ms(live["bubble_ms"])))
        else:
            self.text(T("Tear the book on the Live page (拆书) to see real worker processes measured here."), 40,
                      652, "small", DIM)
        ds = ctx.get("deepseek") or {"params": 671e9, "active": 37e9}
        self.text(T("DeepSeek-V3: {p:.0f} billion parameters, about {a:.0f} billion active per token").format(
            p=ds["params"] / 1e9, a=ds["active"] / 1e9), 1560, yb + 2, "small", PURPLE, align="right")

    def _split_icon(self, kind: int, x: float, y: float) -> None:
        gpu_colors = (BLUE_LIGHT, GREEN)
        if kind == 0:  # chapters split between two GPUs
            for c in range(8):
                self.box(x + c * 26 + (20 if c >= 4 else 0), y, 20, 44, gpu_colors[c >= 4], None, radius=3)
        elif kind == 1:  # each page torn in half
            for c in range(4):
                self.box(x + c * 52, y, 22, 44, gpu_colors[0], None, radius=3)
                self.box(x + c * 52 + 24, y, 22, 44, gpu_colors[1], None, radius=3)
        else:  # experts in rooms
            for c in range(8):
                self.box(x + c * 30 + (24 if c >= 4 else 0), y + 10, 24, 24, gpu_colors[c >= 4], None, radius=12)


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
        self.text(T("Two requests, the same {n}-token system prompt ({b} blocks of {s} tokens)").format(
            n=n_sys, b=sys_blocks, s=bs), 40, 84, "body", TEXT)
        w = min(52.0, 860.0 / (sys_blocks + q_blocks + 1))
        for r in range(2):
            y = 140 + 80 * r
            self.text(T("first") if r == 0 else T("second"), 40, y + 6, "label", TEXT, True)
            total = sys_blocks + (q_blocks if r else -(-(n_sys + 8) // bs) - sys_blocks)
            for j in range(total):
                reused = r == 1 and j < hit // bs
                fill = GREEN if reused else ORANGE
                c = self.box(160 + j * w, y, w - 6, 44, fill, None, radius=4)
                self.fade_in(c, 0.2 + r * 0.8 + 0.03 * j)
        self.box(160, 310, 26, 26, GREEN, None, radius=4)
        self.text(T("found in the cache: no work"), 196, 310, "small", TEXT)
        self.box(560, 310, 26, 26, ORANGE, None, radius=4)
        self.text(T("computed"), 596, 310, "small", TEXT)
        if p:
            top = max(p["cold_ms"], p["warm_ms"], 0.1)
            for i, (name, ms, color) in enumerate(((T("second request, cold"), p["cold_ms"], ORANGE),
                                                   (T("second request, after the first"), p["warm_ms"], GREEN))):
                y = 370 + 56 * i
                self.text(name, 40, y + 4, "label", TEXT)
                bar = self.box(420, y, max(3.0, 500 * ms / top), 38, color, None, radius=4)
                self.fade_in(bar, 1.4 + 0.3 * i)
                self.text(fmt_ms(ms), 430 + 500 * ms / top, y + 4, "label", TEXT, True)
            self.text(T("time saved on reading the question: {ms}").format(ms=fmt_ms(p["saved_ms"])), 40, 490, "body",
                      ACCENT, True)
            self.badge("measured", 40, 534, T("this engine's prefix cache, median of 3"))
        else:
            self.badge("illustrative", 40, 380)
        # routing
        x0 = 1040.0
        self.box(x0, 84, 520, 600, PANEL, EDGE)
        self.text(T("Routing: the cache helps only on the server that holds it"), x0 + 20, 94, "label", TEXT, True,
                  width=480)
        router = self.box(x0 + 190, 180, 140, 60, PANEL, ACCENT)
        self.text(T("router"), 70, 14, "label", TEXT, align="center").setParentItem(router)
        for i in range(3):
            sx = x0 + 30 + i * 165
            srv = self.box(sx, 400, 140, 110, PANEL, BLUE_LIGHT)
            self.text(T("server {i}").format(i=i + 1), 70, 12, "small", TEXT, align="center").setParentItem(srv)
            if i == 1:
                self.box(sx + 40, 450, 60, 40, GREEN, None, radius=4)
            self.arrow(x0 + 260, 244, sx + 70, 394, GREEN if i == 1 else DIM, 3 if i == 1 else 2)
        self.text(T("hit"), x0 + 262, 320, "label", GREEN, True)
        self.text(T("miss: computed again"), x0 + 30, 540, "small", DIM, width=480)
        self.badge("illustrative", x0 + 20, 640, T("machines and assignments"))
