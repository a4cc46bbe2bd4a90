"""Sections 1–4: the request, cutting it into tokens, looking the tokens up in the dictionary, the book.

Data comes in the ``ctx`` dict built by ``gui/tour/data.py`` (plain Python and numpy, no torch).
"""

from __future__ import annotations

import json

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage

from animations.scenes.base import (
    ACCENT, BLUE, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PAPER, PURPLE, SEAT_COLORS, TEXT, T, TourScene,
    fmt_bytes, heat_color,
)


def request_json(prompt: str) -> str:
    """The body of the HTTPS POST the source describes (§01): model, stream on, a system prompt, the question."""
    body = {"model": "llama-3-8b-instruct", "stream": True,
            "messages": [{"role": "system", "content": "You are a concise assistant."},
                         {"role": "user", "content": prompt}]}
    return json.dumps(body, ensure_ascii=False, indent=2)


class RequestScene(TourScene):
    """§1: the visitor's question leaves as an HTTPS POST with a JSON body."""

    title = "The request"
    number = 1

    def draw(self, ctx: dict) -> None:
        prompt = ctx.get("prompt", "")
        shown = prompt if len(prompt) <= 60 else prompt[:57] + "…"
        lines = ["POST https://api.example.com/v1/chat/completions"] + request_json(shown).splitlines()
        self.box(40, 90, 980, 560, PANEL, EDGE)
        y = 110
        for i, ln in enumerate(lines):
            color = ACCENT if ln.startswith("POST") else (GREEN if '"user"' in ln or shown in ln and i > 1 else TEXT)
            item = self.text(ln, 64, y, "body", color)
            self.fade_in(item, 0.15 + 0.12 * i)
            y += 36
        # the envelope travels from the visitor to the server
        you = self.box(1080, 100, 200, 100, PANEL, BLUE_LIGHT)
        self.text(T("You"), 1180, 130, "number", TEXT, True, align="center")
        server = self.box(1320, 330, 240, 110, PANEL, ACCENT)
        self.text(T("Server · GPU"), 1440, 365, "number", TEXT, True, align="center")
        self.arrow(1190, 210, 1420, 320, DIM, 3)
        env = self.box(0, 0, 90, 60, PAPER, QColor("#c9c0ad"), radius=4, z=6)
        self.line(0, 0, 45, 32, QColor("#8a826f"), 2).setParentItem(env)
        self.line(90, 0, 45, 32, QColor("#8a826f"), 2).setParentItem(env)
        t0 = 0.15 + 0.12 * len(lines)
        self.move(env, QPointF(1150, 190), QPointF(1395, 270), t0, t0 + 1.2)
        self.fade_in(env, t0 - 0.2, t0)
        for item in (you, server):
            self.pop_in(item, 0.1)
        note = self.text(T("“stream”: true means: send each word as soon as it is written. ChatGPT, Claude and "
                           "Cursor send much the same request."), 1080, 470, "label", DIM, width=480)
        self.fade_in(note, t0 + 0.6)
        self.badge("source", 40, 662, T("the source's example, with your question"))


class TokenizeScene(TourScene):
    """§2: the live tokenizer cuts the question into numbered pieces; Chinese whole or split into byte pieces."""

    title = "Cut into tokens"
    number = 2

    def draw(self, ctx: dict) -> None:
        toks = ctx.get("tokens") or []
        self.text(T("Your question, cut by this model's tokenizer:"), 40, 82, "label", DIM)
        x, y, t = 40.0, 120.0, 0.2
        row_h = 84
        for i, tok in enumerate(toks[:48]):
            piece = tok.get("piece")  # "whole", "split" or None (plain ASCII)
            fill = PAPER if piece != "split" else QColor("#f6d7b0")
            card, w = self.chip(tok["label"], x, y, fill, style="body", sub=str(tok["id"]), dash=piece == "split",
                                edge=ORANGE if piece == "split" else None)
            if x + w > 1560:
                x, y = 40.0, y + row_h
                card.setPos(x, y)
            self.pop_in(card, t)
            t += 0.08
            x += w + 8
        if len(toks) > 48:
            self.text(T("… {n} more").format(n=len(toks) - 48), x, y + 20, "label", DIM)
        y += row_h + 6
        n = len(toks)
        summary = T("{n} tokens · dashed: a piece of a character (its UTF-8 bytes split over tokens)").format(n=n)
        self.fade_in(self.text(summary, 40, y, "label", TEXT), t)
        self.badge("measured", 40, y + 36, T("this model's tokenizer, live"))
        # the same sentence, other models, other numbers
        y2 = min(y + 86, 430)
        self.box(40, y2, 930, 230, PANEL, EDGE)
        self.text(T("The same sentence gets other numbers in another model:"), 60, y2 + 14, "label", DIM)
        rows = [(T("one model"), "[9906, 1917]", "source"), (T("another model"), "[15496, 995]", "source"),
                (T("this model"), str(ctx.get("hello_ids", [])), "measured")]
        for i, (who, ids, kind) in enumerate(rows):
            yy = y2 + 56 + 52 * i
            if len(ids) > 34:
                ids = ids[:32] + "…]"
            item = self.text(f"\"Hello world\"  {who}:  {ids}", 60, yy, "body", TEXT)
            self.fade_in(item, t + 0.3 + 0.3 * i)
            self.badge(kind, 780, yy + 2)
        # vocabulary sizes, to scale
        vx = 1010
        self.box(vx, y2, 550, 230, PANEL, EDGE)
        self.text(T("Vocabulary size, to scale"), vx + 20, y2 + 14, "label", DIM)
        live_v = int(ctx.get("vocab_size") or 0)
        full = 500.0
        bars = [("Llama 3", 128_256, PURPLE, "source"), (T("this model"), live_v, GREEN, "measured")]
        for i, (name, v, color, kind) in enumerate(bars):
            yy = y2 + 60 + 80 * i
            bar = self.box(vx + 20, yy + 32, max(3.0, full * v / 128_256), 24, color, None, radius=4)
            self.text(f"{name}: {v:,}", vx + 20, yy, "label", TEXT)
            self.fade_in(bar, t + 0.5 + 0.3 * i)


class EmbeddingScene(TourScene):
    """§3: each token id picks one row of the embedding matrix; the rows, real, as a heat map."""

    title = "Look up the dictionary"
    number = 3

    def draw(self, ctx: dict) -> None:
        toks = (ctx.get("tokens") or [])[:24]
        rows = ctx.get("embed")
        cfg = ctx.get("config") or {}
        d = int(cfg.get("n_embd") or 0)
        v = int(cfg.get("vocab_size") or 0)
        hx, hy, hw = 230.0, 110.0, 860.0
        n = max(1, len(toks))
        hh = min(440.0, 38.0 * n)
        if rows is not None and len(rows):
            arr = np.asarray(rows[: len(toks)], dtype=np.float32)
            scale = float(np.percentile(np.abs(arr), 98)) or 1.0
            img = QImage(arr.shape[1], arr.shape[0], QImage.Format_RGB32)
            for r in range(arr.shape[0]):
                for c in range(arr.shape[1]):
                    red, green, blue = heat_color(float(arr[r, c]) / scale)
                    img.setPixel(c, r, QColor(red, green, blue).rgb())
            kind, note = "measured", T("real rows of this model's embedding matrix")
        else:
            img = QImage(max(1, d or 64), n, QImage.Format_RGB32)
            rng = np.random.default_rng(0)
            for r in range(n):
                for c in range(img.width()):
                    red, green, blue = heat_color(float(rng.normal(0, 0.4)))
                    img.setPixel(c, r, QColor(red, green, blue).rgb())
            kind, note = "illustrative", T("model not loaded")
        row_h = hh / n
        for i, tok in enumerate(toks):
            label = self.text(f"{tok['label']}  {tok['id']}", hx - 16, hy + i * row_h + row_h / 2 - 13, "label",
                              TEXT, align="right")
            self.fade_in(label, 0.2 + 0.1 * i)
        pix = self.image(img, hx, hy, hw, hh)
        # reveal the rows top to bottom: one lookup per token
        cover = self.box(hx, hy, hw, hh, QColor("#0f1419"), None, radius=0, z=3)
        self.call(lambda p: (cover.setPos(hx, hy + hh * p), cover.setScale(1.0),
                             cover.setOpacity(1.0 if p < 1 else 0.0)), 0.2, 0.2 + 0.1 * n + 0.6)
        del pix
        self.text(T("{n} tokens × {d} numbers").format(n=len(toks), d=d), hx, hy + hh + 12, "label", DIM)
        self.badge(kind, hx, hy + hh + 48, note)
        # the dictionary's shape, this model against Llama 3 8B, to scale by area
        bx, by = 1140.0, 110.0
        self.text(T("The dictionary (embedding matrix), to scale by area"), bx, by - 6, "label", DIM, width=430)
        big_w, big_h = 400.0, 400.0 * 4096 / 128_256 * 8  # Llama 3 8B: 128,256 × 4,096 (drawn 1:8 wide)
        big_area = 128_256 * 4_096
        big = self.box(bx, by + 70, big_w, big_h, QColor(180, 142, 224, 50), PURPLE, radius=2)
        self.pop_in(big, 0.6)
        self.text(T("Llama 3 8B: 128,256 rows × 4,096"), bx, by + 80 + big_h, "label", TEXT)
        self.badge("source", bx, by + 114 + big_h)
        if v and d:
            side = (v * d / big_area) ** 0.5
            sw, sh = big_w * side, big_h * side
            small = self.box(bx, by + 70, max(2.0, sw), max(2.0, sh), GREEN, GREEN, radius=1, z=3)
            self.pop_in(small, 1.0)
            self.text(T("this model: {v:,} rows × {d}").format(v=v, d=d), bx, by + 170 + big_h, "label", TEXT)
            self.badge("measured", bx, by + 204 + big_h, T("green square, top left"))


class BookScene(TourScene):
    """§4: the weights are a book, one chapter per layer; one trip carries a copy from the warehouse to the desk."""

    title = "The book and its chapters"
    number = 4
    loop_s = 6.0

    def draw(self, ctx: dict) -> None:
        layer_bytes = list(ctx.get("layer_bytes") or [])
        total = int(ctx.get("total_bytes") or sum(layer_bytes))
        dict_bytes = int(ctx.get("embed_bytes") or 0)
        # warehouse (memory) and desk (compute)
        self.box(40, 90, 520, 430, PANEL, EDGE)
        self.text(T("Warehouse · GPU memory"), 60, 100, "body", DIM)
        self.box(1040, 90, 520, 430, PANEL, EDGE)
        self.text(T("Desk · compute cores"), 1060, 100, "body", DIM)
        n = max(1, len(layer_bytes))
        biggest = max(layer_bytes + [dict_bytes, 1])
        spines = []
        x = 70.0
        width = min(70.0, 420.0 / (n + 1))
        entries = ([(T("dict."), dict_bytes)] if dict_bytes else []) + [(str(i + 1), b) for i, b in enumerate(layer_bytes)]
        for i, (name, b) in enumerate(entries):
            h = 60 + 220 * b / biggest
            color = SEAT_COLORS[1] if name == T("dict.") else BLUE
            self.box(x, 480 - h, width - 8, h, None, QColor("#3d5670"), radius=4, dash=True)  # stays in the warehouse
            spine = self.box(x, 480 - h, width - 8, h, color, BLUE_LIGHT, radius=4, z=4)
            lab = self.text(name, (width - 8) / 2, h - 34, "small", TEXT, align="center")
            lab.setParentItem(spine)
            spines.append((spine, QPointF(x, 480 - h)))
            x += width
        for i, (spine, home) in enumerate(spines):
            desk = QPointF(home.x() + 1000, home.y())
            self.move(spine, home, desk, 0.8 + 0.05 * i, 2.0 + 0.05 * i)
        self.hold(6.0)
        self.arrow(580, 300, 1020, 300, ACCENT, 4)
        self.text(T("one trip = one forward pass: a copy of every chapter is read"), 800, 200, "label", ACCENT,
                  width=400, align="center")
        # captions with the numbers
        self.text(T("This model: {n} chapters (layers), {size} in all").format(n=len(layer_bytes),
                  size=fmt_bytes(total)), 40, 540, "body", TEXT, True)
        per = fmt_bytes(layer_bytes[0]) if layer_bytes else "—"
        self.text(T("each chapter {size}; the dictionary (embeddings) {dict}").format(size=per, dict=fmt_bytes(dict_bytes)),
                  40, 580, "label", DIM)
        self.badge("measured" if layer_bytes else "illustrative", 40, 618, T("bytes of the real weight file"))
        llama = ctx.get("llama_bytes") or 16_060_522_496
        self.text(T("Llama 3 8B in FP16: 32 chapters, about {size}").format(size=fmt_bytes(llama)), 860, 540, "body",
                  TEXT, True)
        if total:
            self.text(T("{x:,.0f} times this model's book").format(x=llama / total), 860, 580, "label", DIM)
        self.badge("formula", 860, 618, T("8.03 billion parameters × 2 bytes"))
