"""Sections 5–8: reading the question (prefill), drawing lots (sampling), writing (decode), the cheat sheet.

Measured numbers come from ``ctx["analysis"]`` (the engine's ``analyze`` answer, ``model/analysis.py``); without
it each scene draws illustrative numbers and says so.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QColor, QImage

from animations.scenes.base import (
    ACCENT, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PAPER, RED, TEXT, T, TourScene,
    fmt_bytes, fmt_ms, seq_color,
)


def _analysis(ctx: dict, kind: str) -> dict | None:
    a = (ctx.get("analysis") or {}).get(kind)
    return a if a and "error" not in a else None


# --------------------------------------------------------------------------------------------------------------
class PrefillScene(TourScene):
    """§5: one trip reads every prompt token; the causal attention map of the live model; GQA."""

    title = "Reading the question (prefill)"
    number = 5

    def draw(self, ctx: dict) -> None:
        a = _analysis(ctx, "attention")
        if a:
            labels = a["labels"]
            layer = min(ctx.get("attn_layer", 0), a["n_layer"] - 1)
            head = min(ctx.get("attn_head", 0), a["n_head"] - 1)
            w = a["weights"][layer][head]
            kind, note = "measured", T("this model's attention, layer {l}, head {h}").format(l=layer + 1, h=head + 1)
        else:
            labels = [t["label"] for t in (ctx.get("tokens") or [])][:16] or ["a", "b", "c", "d"]
            n = len(labels)
            w = [[(1.0 / (q + 1) if k <= q else 0.0) for k in range(n)] for q in range(n)]
            kind, note = "illustrative", T("even attention, not the model's")
        n = len(w)
        size = min(400.0, 34.0 * n)
        cell = size / n
        mx, my = 260.0, 96.0
        img = QImage(n, n, QImage.Format_RGB32)
        for q in range(n):
            for k in range(n):
                if k > q:
                    img.setPixel(k, q, QColor("#141b22").rgb())
                else:
                    r, g, b = seq_color(w[q][k])
                    img.setPixel(k, q, QColor(r, g, b).rgb())
        self.image(img, mx, my, size, size)
        lh = self.measure("Ag", "small").height()
        for i, lab in enumerate(labels[:n]):
            self.text(lab, mx - 10, my + i * cell + cell / 2 - lh / 2, "small", TEXT, align="right", role="axis")
            col = self.text(lab, 0, 0, "small", DIM, role="axis")
            col.setRotation(-90)
            col.setPos(mx + i * cell + cell / 2 - lh / 2, my + size + 10 + col.boundingRect().width())
        # a sweep: the whole question goes through in one trip
        cover = self.box(mx, my, size, size, QColor("#0f1419"), None, radius=0, z=3)
        self.call(lambda p: (cover.setPos(mx + size * p, my), cover.setOpacity(0 if p >= 1 else 1)), 0.3, 1.6)
        self.text(T("row: a token reading · column: the token it looks at · dark above the diagonal: the future is "
                    "hidden (causal)"), 40, 596, "small", DIM, width=780)
        self.badge(kind, 40, 660, note)
        # measured prefill times
        x0 = 860.0
        self.box(x0, 90, 700, 250, PANEL, EDGE)
        self.text(T("One trip reads the whole question"), x0 + 20, 100, "body", TEXT, True)
        p = _analysis(ctx, "prefill")
        rows = ([(p["short_tokens"], p["short_ms"]), (p["long_tokens"], p["long_ms"])] if p
                else [(14, 8.0), (384, 60.0)])
        top = max(ms for _, ms in rows) or 1.0
        for i, (tokens, ms) in enumerate(rows):
            y = 150 + 80 * i
            self.text(T("{n} tokens").format(n=tokens), x0 + 20, y + 4, "label", TEXT)
            bar = self.box(x0 + 170, y, max(4.0, 400 * ms / top), 34, ORANGE, None, radius=4)
            self.fade_in(bar, 0.5 + 0.3 * i)
            self.text(fmt_ms(ms), x0 + 180 + 400 * ms / top, y + 4, "label", TEXT)
        self.badge("measured" if p else "illustrative", x0 + 20, 300,
                   T("prefill on this computer, median of 3") if p else None)
        # grouped-query attention
        gy = 360.0
        self.box(x0, gy, 700, 320, PANEL, EDGE)
        self.text(T("Llama 3 8B: 32 query heads share 8 KV heads → the cheat sheet is 4× smaller"), x0 + 20,
                  gy + 10, "label", TEXT, True, width=660)
        for qh in range(32):
            qx = x0 + 40 + qh * 19.5
            dot = self.box(qx, gy + 100, 14, 14, BLUE_LIGHT, None, radius=7)
            kvx = x0 + 40 + (qh // 4) * 78 + 20
            self.line(qx + 7, gy + 114, kvx + 14, gy + 170, QColor(134, 170, 211, 120), 1.5)
            self.fade_in(dot, 0.4 + 0.02 * qh)
        for kv in range(8):
            self.box(x0 + 40 + kv * 78 + 20, gy + 170, 28, 28, GREEN, None, radius=4)
        self.text(T("query heads"), x0 + 20, gy + 74, "small", DIM)
        self.text(T("KV heads (what the cheat sheet stores)"), x0 + 20, gy + 206, "small", DIM)
        self.text(T("Some models let some layers look only at a nearby stretch (sliding-window attention)."),
                  x0 + 20, gy + 238, "small", DIM, width=660)
        self.badge("source", x0 + 20, gy + 282)


# --------------------------------------------------------------------------------------------------------------
ILLUSTRATIVE_TOP = [("␣the", 3.1), ("␣a", 2.4), ("␣it", 1.9), ("␣to", 1.5), ("␣and", 1.2), ("␣is", 1.0),
                    ("␣of", 0.8), ("␣in", 0.6)]


def candidates(ctx: dict) -> tuple[list[str], list[float], bool]:
    """(labels, logits, live?) of the next-token candidates: the live top-50, or an illustrative few."""
    a = _analysis(ctx, "next_token")
    if a:
        return list(a["labels"]), list(a["logits"]), True
    return [x for x, _ in ILLUSTRATIVE_TOP], [y for _, y in ILLUSTRATIVE_TOP], False


def reshape(ctx: dict) -> list[float]:
    """Probabilities of the candidates after temperature, top-k and top-p (renormalised over the candidates).

    temperature 0 → all on the best; top_k 0 → no limit; top_p 1 → no limit (Holtzman et al. 2020).
    """
    s = ctx.get("sampling") or {}
    temp, top_k, top_p = float(s.get("temperature", 1.0)), int(s.get("top_k", 0)), float(s.get("top_p", 1.0))
    _, logits, _ = candidates(ctx)
    n = len(logits)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: -logits[i])
    if temp <= 0.005:
        probs = [0.0] * n
        probs[order[0]] = 1.0
        return probs
    m = max(logits)
    e = [math.exp((x - m) / temp) for x in logits]
    keep = set(order[:top_k] if top_k > 0 else order)
    total = sum(e[i] for i in keep)
    probs = [e[i] / total if i in keep else 0.0 for i in range(n)]
    if top_p < 1.0:
        acc, nucleus = 0.0, set()
        for i in order:
            if i not in keep:
                continue
            nucleus.add(i)
            acc += probs[i]
            if acc >= top_p:
                break
        total = sum(probs[i] for i in nucleus)
        probs = [probs[i] / total if i in nucleus else 0.0 for i in range(n)]
    return probs


class SamplingScene(TourScene):
    """§6: the live model's next-token candidates as bars, reshaped by the sliders; a draw."""

    title = "Drawing lots (sampling)"
    number = 6

    def draw(self, ctx: dict) -> None:
        labels, logits, live = candidates(ctx)
        probs = reshape(ctx)
        s = ctx.get("sampling") or {}
        drawn = s.get("drawn")
        order = sorted(range(len(probs)), key=lambda i: -logits[i])[:8]
        prompt = ctx.get("prompt", "")
        tail = prompt if len(prompt) < 40 else "…" + prompt[-38:]
        self.text(T("After “{tail}”, the next token could be:").format(tail=tail), 40, 86, "body", TEXT)
        x0, y0, full = 230.0, 140.0, 760.0
        for r, i in enumerate(order):
            y = y0 + r * 58
            p = probs[i]
            color = ACCENT if drawn == i else (BLUE_LIGHT if p > 0 else QColor("#3a4652"))
            self.text(labels[i], x0 - 16, y + 4, "body", TEXT if p > 0 else DIM, align="right")
            bar = self.box(x0, y, max(3.0, full * p), 40, color, None, radius=5)
            self.pop_in(bar, 0.2 + 0.1 * r)
            self.text(f"{100 * p:.1f}%" if p > 0 else T("cut"), x0 + max(3.0, full * p) + 12, y + 6, "body",
                      TEXT if p > 0 else DIM)
        if drawn is not None and 0 <= drawn < len(labels):
            self.text(T("Drawn: {tok}").format(tok=labels[drawn]), x0, y0 + 8 * 58 + 10, "number", ACCENT, True)
        a = _analysis(ctx, "next_token")
        note = T("top 50 of {v:,}, renormalised").format(v=a["vocab_size"]) if a else T("model not loaded")
        self.badge("measured" if live else "illustrative", 40, 640, note)
        self.text(T("temperature {t:.2f} · top-p {p:.2f} · top-k {k}").format(
            t=float(s.get("temperature", 1)), p=float(s.get("top_p", 1)), k=int(s.get("top_k", 0)) or T("off")),
            1080, 96, "label", DIM)
        self.box(1080, 140, 480, 480, PANEL, EDGE)
        why = T("Why not always take the most likely token? Always taking the top one (greedy) makes text dull and "
                "repetitive: it can loop for ever. Drawing keeps some variety. Temperature below 1 sharpens the "
                "odds, above 1 flattens them; top-k keeps the k best; top-p keeps the fewest tokens whose odds "
                "add up to p. Reasoning models often use a lower temperature.")
        self.fade_in(self.text(why, 1100, 156, "label", TEXT, width=440), 0.8)


# --------------------------------------------------------------------------------------------------------------
class DecodeScene(TourScene):
    """§7: one trip per new token; the source's arithmetic beside this computer's measured trips and floor."""

    title = "Writing (decode)"
    number = 7

    def draw(self, ctx: dict) -> None:
        # the source's arithmetic
        self.box(40, 90, 700, 300, PANEL, EDGE)
        self.text(T("A big model on a big GPU"), 60, 100, "body", DIM)
        self.text("16 GB ÷ 2 TB/s ≈ 8 ms", 60, 150, "heading", ACCENT, True)
        self.text(T("Llama 3 8B in FP16, read once per token by an A100 (about 2 TB/s)"), 60, 224, "label", TEXT,
                  width=660)
        self.badge("formula", 60, 290, T("this page's check; the bandwidth is not the source's"))
        self.text(T("The source: 5–10 ms per step"), 60, 336, "body", TEXT)
        self.badge("source", 420, 338)
        # this computer
        d = _analysis(ctx, "decode")
        self.box(780, 90, 780, 420, PANEL, EDGE)
        self.text(T("This computer, this model"), 800, 100, "body", DIM)
        if d:
            ms_all = d["decode_ms_all"][:24]
            floor = d.get("floor_ms")
            top = max(ms_all + [floor or 0.0, 0.1]) * 1.15
            bx, by, bh = 820.0, 150.0, 240.0
            bw = 700.0 / max(1, len(ms_all))
            for i, ms in enumerate(ms_all):
                h = bh * ms / top
                bar = self.box(bx + i * bw, by + bh - h, bw - 4, h, BLUE_LIGHT, None, radius=2)
                self.fade_in(bar, 0.3 + 0.08 * i, 0.45 + 0.08 * i)
            if floor:
                fy = by + bh - bh * floor / top
                self.line(bx, fy, bx + 700, fy, RED, 3, dash=True)
                self.text(T("red line, the floor: {bytes} ÷ {bw}/s = {ms}").format(bytes=fmt_bytes(d["weight_bytes"]),
                          bw=fmt_bytes(d["bandwidth"]), ms=fmt_ms(floor)), 1540, 106, "small", RED, align="right")
            self.text(T("each bar: one trip, one new token · median {ms}").format(ms=fmt_ms(d["decode_ms"])),
                      820, 404, "label", TEXT)
            self.badge("measured", 820, 450)
            if floor and d["decode_ms"] < floor:
                self.text(T("Faster than the memory floor: this small book fits in the processor's cache, so a "
                            "trip does not go all the way to main memory."), 800, 520, "label", DIM, width=740)
        else:
            self.text(T("Start the engine to measure a trip here."), 800, 200, "body", TEXT)
            self.badge("illustrative", 800, 250)
        # tokens written one per trip
        st = _analysis(ctx, "stream")
        labels = [t["label"] for t in st["tokens"]] if st else ["One", "␣trip", ",", "␣one", "␣token", "."]
        x = 40.0
        self.text(T("one trip → one token:"), 40, 420, "label", DIM)
        for i, lab in enumerate(labels[:12]):
            card, w = self.chip(lab, x, 460, PAPER, style="body", sub=T("trip {i}").format(i=i + 1), min_w=60)
            if x + w > 740:
                card.hide()
                break
            self.pop_in(card, 0.6 + 0.25 * i)
            x += w + 8


# --------------------------------------------------------------------------------------------------------------
class KVCacheScene(TourScene):
    """§8: K/V rows computed with and without the cheat sheet (the source's 8-token, 6-step case, counted on the
    engine), and the visitor's own answer timed both ways."""

    title = "The cheat sheet (KV cache)"
    number = 8

    def draw(self, ctx: dict) -> None:
        k = _analysis(ctx, "kv_cache")
        P, S = 8, 6
        counted = k["rows_8x6"] if k else None
        without = sum(P + i for i in range(1, S + 1))  # 69: pass i re-feeds the prompt and all i tokens so far
        with_ = S
        cell, gap = 15.0, 3.0
        for col, (title, cached) in enumerate(((T("Without the cheat sheet"), False), (T("With the cheat sheet"), True))):
            x0 = 40.0 + col * 520
            self.text(title, x0, 84, "body", TEXT, True)
            for i in range(1, S + 1):
                y = 130 + (i - 1) * 34
                self.text(T("step {i}").format(i=i), x0, y - 2, "small", DIM)
                for j in range(P + i):
                    fresh = (not cached) or j == P + i - 1
                    c = self.box(x0 + 80 + j * (cell + gap), y, cell, 22, (ORANGE if not cached else GREEN) if fresh
                                 else None, QColor("#3d5670") if not fresh else None, radius=3)
                    if fresh:
                        self.fade_in(c, 0.3 + 0.35 * (i - 1) + 0.01 * j, 0.5 + 0.35 * (i - 1) + 0.01 * j)
            total = without if not cached else with_
            self.text(T("{n} K/V rows computed").format(n=total), x0, 340, "number", ORANGE if not cached else GREEN, True)
        self.text(T("8-token question, 6 steps after the first token: without, step i recomputes 8 + i rows, "
                    "Σ(8+i) for i = 1…6 = 69; with, one new row per step = 6."), 40, 390, "label", TEXT, width=1000)
        self.badge("source", 40, 456, T("the source draws only 6 steps: an illustration"))
        if counted:
            self.badge("measured", 40, 590, T("this engine fed {a} and {b} rows").format(
                a=counted["without"], b=counted["with"]))
        self.text(T("A 500-token answer: 1 + 2 + … + 500 = 125,250 rows without it, 500 with it: O(500²) against "
                    "500."), 40, 500, "label", TEXT, width=1000)
        self.badge("formula", 40, 540)
        # the visitor's answer, both ways, measured
        self.box(1090, 84, 470, 590, PANEL, EDGE)
        self.text(T("Your question, {n} new tokens").format(n=k["steps"] if k else 24), 1110, 96, "body", TEXT, True)
        if k:
            wo, wi = k["without_ms"], k["with_ms"]
            top = max(wo + wi + [0.1])
            for r, (series, color, name, total) in enumerate(((wo, ORANGE, T("without"), k["without_total_ms"]),
                                                               (wi, GREEN, T("with"), k["with_total_ms"]))):
                y0 = 150 + r * 220
                self.text(T("{name}: {ms} in all").format(name=name, ms=fmt_ms(total)), 1110, y0, "label", color)
                bw = 420.0 / max(1, len(series))
                for i, ms in enumerate(series):
                    h = 150 * ms / top
                    bar = self.box(1110 + i * bw, y0 + 190 - h, max(2.0, bw - 2), h, color, None, radius=1)
                    self.fade_in(bar, 0.5 + 0.05 * i)
            self.text(T("each bar: one trip (ms)"), 1110, 596, "small", DIM)
            self.badge("measured", 1110, 630, T("same answer both ways") if k.get("same_tokens") else None)
        else:
            self.text(T("Start the engine to time both ways here."), 1110, 160, "label", TEXT, width=420)
            self.badge("illustrative", 1110, 630)
