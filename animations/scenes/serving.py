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

    title = "12 · Sharing the table (batching)"

    def draw(self, ctx: dict) -> None:
        b = _analysis(ctx, "batching")
        modes = {}
        for mode in ("static", "continuous"):
            modes[mode] = [p["rows"] for p in b[mode]["passes"]] if b else _ILLUSTRATIVE[mode]
        longest = max(len(v) for v in modes.values())
        cw = min(56.0, 1180.0 / max(1, longest))
        names = {"static": T("Static batch: everyone waits for the longest"),
                 "continuous": T("Continuous batch: a free seat is taken at once")}
        for m, mode in enumerate(("static", "continuous")):
            y0 = 84 + m * 160
            self.text(names[mode], 40, y0, 22, TEXT, True)
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
                    cell = self.box(40 + i * cw, y0 + 36 + seat * 46, cw - 4, 40, fill, color, radius=4, width=2)
                    label = rid if phase == "decode" else f"{rid}{fed}"
                    if cw > 30 or phase == "prefill":
                        t = self.text(label, (cw - 4) / 2, 8, 18 if phase == "prefill" else 20, QColor("#0f1419"),
                                      True, align="center")
                        t.setParentItem(cell)
                    self.fade_in(cell, 0.2 + 0.05 * i + m * 0.2, 0.35 + 0.05 * i + m * 0.2)
            total = len(modes[mode])
            ms = b[mode]["total_ms"] if b else None
            self.text(T("{n} trips").format(n=total) + (f" · {fmt_ms(ms)}" if ms else ""), 1250, y0 + 54, 26,
                      ACCENT, True)
        self.text(T("Each column is one trip; two seats. Pale cells read a question (prefill): C's long question is "
                    "read in chunks of {k} tokens beside other people's writing (chunked prefill).").format(
                    k=b["step_tokens"] if b else 32), 40, 406, 20, DIM, width=1500)
        self.badge("measured" if b else "illustrative", 40, 462,
                   T("this engine's scheduler, 4 requests") if b else None)
        # block table
        self.box(40, 510, 700, 170, PANEL, EDGE)
        self.text(T("Block table (PagedAttention): each request's pages of the cheat sheet"), 60, 518, 20, TEXT,
                  width=660)
        tables = (b or {}).get("block_tables") or {"A": [0, 1], "C": [2, 3, 4]}
        for i, (rid, blocks) in enumerate(list(tables.items())[:2]):
            y = 576 + 48 * i
            self.text(rid, 60, y + 4, 22, REQ_COLORS.get(rid, BLUE), True)
            for j, blk in enumerate(blocks[:10]):
                c = self.box(100 + j * 62, y, 56, 36, PANEL, REQ_COLORS.get(rid, BLUE), radius=4)
                self.text(str(blk), 28, 5, 20, TEXT, align="center").setParentItem(c)
        # disaggregation
        x0 = 780.0
        self.box(x0, 510, 780, 170, PANEL, EDGE)
        self.text(T("Prefill/decode disaggregation"), x0 + 20, 518, 20, TEXT, True)
        g1 = self.box(x0 + 30, 570, 220, 80, QColor(224, 138, 30, 60), ORANGE)
        self.text(T("GPUs that read"), 110, 24, 20, TEXT, align="center").setParentItem(g1)
        g2 = self.box(x0 + 520, 570, 220, 80, QColor(74, 116, 163, 90), BLUE_LIGHT)
        self.text(T("GPUs that write"), 110, 24, 20, TEXT, align="center").setParentItem(g2)
        self.arrow(x0 + 260, 610, x0 + 510, 610, ACCENT, 3)
        self.text(T("KV cache over NVLink / RDMA"), x0 + 385, 576, 18, ACCENT, align="center")
        self.badge("illustrative", x0 + 520, 518)


class SpeculativeScene(TourScene):
    """§13: the apprentice (draft model) guesses, the book (target) checks all guesses in one trip."""

    title = "13 · Running ahead (speculative decoding)"

    def draw(self, ctx: dict) -> None:
        s = _analysis(ctx, "speculative")
        live = bool(s and s.get("available"))
        if live:
            passes = [(p["labels"], p["accepted"], p["proposed"]) for p in s["passes"][:6]]
        else:
            passes = [(["for", "␣i", "␣in", "␣range", "(", "10"], 4, 5), (["10", "):", "↵", "␣␣␣", "␣print"], 4, 5),
                      (["(", "i", ")", "↵"], 3, 5)]
        self.text(T("The apprentice guesses, the book checks every guess in one trip:"), 40, 84, 24, TEXT)
        t = 0.3
        for r, (labels, accepted, proposed) in enumerate(passes):
            y = 134 + 76 * r
            self.text(T("trip {i}").format(i=r + 1), 40, y + 10, 20, DIM)
            x = 130.0
            for j, lab in enumerate(labels):
                if j < accepted:
                    fill, fg = GREEN, QColor("#0f1419")
                else:
                    fill, fg = ACCENT, QColor("#0f1419")  # the book's own token
                card, w = self.chip(lab, x, y, fill, fg, px=24)
                self.pop_in(card, t)
                t += 0.1
                x += w + 6
            rejected = max(0, proposed - accepted)
            note = T("{a} of {k} guesses kept").format(a=accepted, k=proposed) + (
                "" if not rejected else " · " + T("{r} thrown away").format(r=rejected))
            self.text(note, x + 16, y + 10, 20, DIM)
        y = 134 + 76 * len(passes) + 10
        self.box(40, y, 24, 24, GREEN, None, radius=4)
        self.text(T("the apprentice's guess, kept"), 74, y, 20, TEXT)
        self.box(420, y, 24, 24, ACCENT, None, radius=4)
        self.text(T("the book's own token (free with the check)"), 454, y, 20, TEXT)
        if live:
            self.text(T("{n} tokens in {t} trips with the apprentice, {p} trips without; the same text either "
                        "way").format(n=s["tokens"], t=s["trips"], p=s["plain_trips"]), 40, y + 50, 24, ACCENT, True)
            self.badge("measured", 40, y + 92, T("the live draft and target models"))
        else:
            self.badge("illustrative", 40, y + 50, T("no draft model loaded; in the spirit of the source's picture"))
        self.box(1080, 84, 480, 420, PANEL, EDGE)
        self.text(T("In production: EAGLE-3, a light guessing head trained on the big model's hidden states; "
                    "DeepSeek-V3 and GLM-style MoE models build in multi-token prediction (MTP). Open-ended "
                    "writing gains less than code."), 1100, 100, 22, TEXT, width=440)
        self.badge("source", 1100, 460)


class ParallelScene(TourScene):
    """§14: weights against one GPU's memory; FP8 and 4-bit; pipeline, tensor and expert parallel."""

    title = "14 · Splitting the book (parallelism)"

    def draw(self, ctx: dict) -> None:
        rows = ctx.get("weights_table") or []
        gpus = ctx.get("gpu_table") or []
        x0, scale = 380.0, 1050.0 / 200e9  # px per byte: 200 GB across
        for g in gpus:
            gx = x0 + g["bytes"] * scale
            self.line(gx, 84, gx, 110 + 52 * len(rows), DIM, 2, dash=True)
            self.text(f"{g['name']} {g['bytes'] / 1e9:.0f} GB", gx, 84, 18, DIM, align="center")  # the line's own size
        for i, r in enumerate(rows):
            y = 116 + 52 * i
            self.text(T(r["name"]), x0 - 16, y + 4, 22, TEXT, align="right")
            w = min(1100.0, r["bytes"] * scale)
            bar = self.box(x0, y, max(3.0, w), 36, ORANGE if r["bytes"] > min((g["bytes"] for g in gpus), default=80e9) else GREEN, None, radius=4)
            self.fade_in(bar, 0.2 + 0.2 * i)
            self.text(fmt_bytes(r["bytes"]), x0 + w + 10, y + 4, 22, TEXT, True)
        yb = 116 + 52 * len(rows) + 4
        self.badge("formula", 40, yb, T("parameters × bytes per parameter; GPU sizes from the datasheets"))
        self.text(T("FP8, and 4-bit on Blackwell, let 70B fit one GPU with room left for the cheat sheet."), 40,
                  yb + 36, 22, TEXT)
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
            self.text(name, x + 16, y + 10, 22, ACCENT, True, width=464)
            self._split_icon(i, x + 16, y + 70)  # below a title that may wrap to two lines
            self.text(why, x + 16, y + 128, 20, DIM, width=464)
        live = ctx.get("live_workers")
        if live:
            how = T("tensor parallel") if live["mode"] == "tp" else T("pipeline parallel")
            self.badge("measured", 40, 652, T("{how} over {n} worker processes, median of the last {k} trips: "
                                              "compute {c} · communication {m} · idle {b}").format(
                how=how, n=live["n"], k=live["trips"], c=fmt_ms(live["compute_ms"]), m=fmt_ms(live["comm_ms"]),
                b=fmt_ms(live["bubble_ms"])))
        else:
            self.text(T("Tear the book on the Live page (拆书) to see real worker processes measured here."), 40,
                      652, 20, DIM)
        ds = ctx.get("deepseek") or {"params": 671e9, "active": 37e9}
        self.text(T("DeepSeek-V3: {p:.0f} billion parameters, about {a:.0f} billion active per token").format(
            p=ds["params"] / 1e9, a=ds["active"] / 1e9), 1560, yb + 2, 20, PURPLE, align="right")

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

    title = "15 · The same opening (prefix caching)"

    def draw(self, ctx: dict) -> None:
        p = _analysis(ctx, "prefix")
        bs = p["block_size"] if p else 16
        n_sys = p["system_tokens"] if p else 256
        hit = p["hit_tokens"] if p else 256
        q = p["question_tokens"] if p else 8
        sys_blocks = -(-n_sys // bs)
        q_blocks = -(-(n_sys + q) // bs) - hit // bs
        self.text(T("Two requests, the same {n}-token system prompt ({b} blocks of {s} tokens)").format(
            n=n_sys, b=sys_blocks, s=bs), 40, 84, 24, TEXT)
        w = min(52.0, 860.0 / (sys_blocks + q_blocks + 1))
        for r in range(2):
            y = 140 + 80 * r
            self.text(T("first") if r == 0 else T("second"), 40, y + 6, 22, TEXT, True)
            total = sys_blocks + (q_blocks if r else -(-(n_sys + 8) // bs) - sys_blocks)
            for j in range(total):
                reused = r == 1 and j < hit // bs
                fill = GREEN if reused else ORANGE
                c = self.box(160 + j * w, y, w - 6, 44, fill, None, radius=4)
                self.fade_in(c, 0.2 + r * 0.8 + 0.03 * j)
        self.box(160, 310, 26, 26, GREEN, None, radius=4)
        self.text(T("found in the cache: no work"), 196, 310, 20, TEXT)
        self.box(560, 310, 26, 26, ORANGE, None, radius=4)
        self.text(T("computed"), 596, 310, 20, TEXT)
        if p:
            top = max(p["cold_ms"], p["warm_ms"], 0.1)
            for i, (name, ms, color) in enumerate(((T("second request, cold"), p["cold_ms"], ORANGE),
                                                   (T("second request, after the first"), p["warm_ms"], GREEN))):
                y = 370 + 56 * i
                self.text(name, 40, y + 4, 22, TEXT)
                bar = self.box(420, y, max(3.0, 500 * ms / top), 38, color, None, radius=4)
                self.fade_in(bar, 1.4 + 0.3 * i)
                self.text(fmt_ms(ms), 430 + 500 * ms / top, y + 4, 22, TEXT, True)
            self.text(T("time saved on reading the question: {ms}").format(ms=fmt_ms(p["saved_ms"])), 40, 490, 26,
                      ACCENT, True)
            self.badge("measured", 40, 534, T("this engine's prefix cache, median of 3"))
        else:
            self.badge("illustrative", 40, 380)
        # routing
        x0 = 1040.0
        self.box(x0, 84, 520, 600, PANEL, EDGE)
        self.text(T("Routing: the cache helps only on the server that holds it"), x0 + 20, 94, 22, TEXT, True,
                  width=480)
        router = self.box(x0 + 190, 180, 140, 60, PANEL, ACCENT)
        self.text(T("router"), 70, 14, 22, TEXT, align="center").setParentItem(router)
        for i in range(3):
            sx = x0 + 30 + i * 165
            srv = self.box(sx, 400, 140, 110, PANEL, BLUE_LIGHT)
            self.text(T("server {i}").format(i=i + 1), 70, 12, 20, TEXT, align="center").setParentItem(srv)
            if i == 1:
                self.box(sx + 40, 450, 60, 40, GREEN, None, radius=4)
            self.arrow(x0 + 260, 244, sx + 70, 394, GREEN if i == 1 else DIM, 3 if i == 1 else 2)
        self.text(T("hit"), x0 + 262, 320, 22, GREEN, True)
        self.text(T("miss: computed again"), x0 + 30, 540, 20, DIM, width=480)
        self.badge("illustrative", x0 + 20, 640, T("machines and assignments"))
