"""Sections 9–11: how big the cheat sheet is, sending the answer back (streaming), reasoning models."""

from __future__ import annotations

import json

from PySide6.QtGui import QColor

from animations.scenes.base import (
    ACCENT, BLUE, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PAPER, PURPLE, RED, TEXT, T, TourScene, fmt_bytes,
    fmt_ms,
)
from animations.scenes.trips import _analysis


class KVSizeScene(TourScene):
    """§9: the KV-cache formula for several models, drawn to scale against the 16 GB book."""

    title = "How big is the cheat sheet"
    number = 9

    def draw(self, ctx: dict) -> None:
        n = int(ctx.get("kv_tokens") or 2000)
        rows = (ctx.get("kv_table") or {}).get(n, [])
        book = float(ctx.get("llama_bytes") or 16_060_522_496)
        self.text(T("KV cache = 2 × layers × KV heads × head dim × length × batch × bytes"), 40, 80, "number", ACCENT,
                  True)
        self.badge("source", 40, 124, T("formula of the source, §09"))
        x0, full = 40.0, 1200.0
        y = 170.0
        bar = self.box(x0, y + 34, full, 30, BLUE, None, radius=4)
        self.text(T("the book: Llama 3 8B weights, FP16, {size}").format(size=fmt_bytes(book)), x0, y, "label", TEXT)
        self.fade_in(bar, 0.1)
        y += 84
        colors = [GREEN, RED, PURPLE, BLUE_LIGHT, ACCENT]
        for i, r in enumerate(rows):
            frac = r["bytes"] / book
            w = min(full, max(3.0, full * frac))
            self.text(f"{T(r['name'])}: {r['formula']}", x0, y, "small", DIM)
            b = self.box(x0, y + 28, w, 26, colors[i % len(colors)], None, radius=4)
            self.call(lambda p, b=b: b.setScale(1.0) or b.setOpacity(min(1.0, p * 1.5)), 0.4 + 0.3 * i,
                      0.8 + 0.3 * i)
            label = fmt_bytes(r["bytes"])
            if frac > 1:
                label += "  " + T("({x:.1f} × the book)").format(x=frac)
            self.text(label, x0 + w + 14, y + 26, "body", TEXT, True)
            self.badge(r.get("kind", "formula"), 1300, y + 26)
            y += 68
        self.text(T("{n:,} tokens, one sequence; bars to scale against the book").format(n=n), x0, y + 4, "label", DIM)
        live = ctx.get("live_kv")
        if live:
            txt = T("This model: formula {f} per token; its engine allocates {m} per token").format(
                f=fmt_bytes(live["formula_per_token"]), m=fmt_bytes(live["engine_per_token"])) \
                if live.get("engine_per_token") else T("This model: formula {f} per token (engine not running)").format(
                f=fmt_bytes(live["formula_per_token"]))
            self.text(txt, x0, y + 40, "label", TEXT)
            if live.get("engine_per_token"):
                self.badge("measured", x0 + 1000, y + 42, T("from the allocated cache tensors"))


def sse_frame(text: str) -> str:
    """One server-sent-events frame of a streamed chat answer (the OpenAI-style delta)."""
    return "data: " + json.dumps({"choices": [{"delta": {"content": text}}]}, ensure_ascii=False)


class StreamingScene(TourScene):
    """§10: each token leaves as an SSE frame the moment it exists; TTFT and inter-token latency measured."""

    title = "Sending it back (streaming)"
    number = 10

    def draw(self, ctx: dict) -> None:
        st = _analysis(ctx, "stream")
        if st:
            toks = [(t["text"], t["t_ms"]) for t in st["tokens"]]
            kind = "measured"
        else:
            toks = [(w, 10.0 + 8 * i) for i, w in enumerate(["One", " trip", ",", " one", " token", "."])]
            kind = "illustrative"
        self.box(40, 84, 940, 600, PANEL, EDGE)
        self.text(T("What travels back, frame by frame"), 60, 94, "label", DIM)
        last = max([t for _, t in toks] + [1.0])
        for i, (text, t) in enumerate(toks[:12]):
            y = 134 + 38 * i
            line = self.text(f"+{t:6.1f} ms   {sse_frame(text)}", 60, y, "label", GREEN if i == 0 else TEXT)
            self.fade_in(line, 0.3 + 2.5 * t / last, 0.45 + 2.5 * t / last)
        self.badge(kind, 60, 650, T("times since the request arrived, this computer") if st else None)
        x0 = 1010.0
        cards = []
        if st:
            cards = [(T("time to first token"), fmt_ms(st["ttft_ms"]), "measured"),
                     (T("between tokens (mean)"), fmt_ms(st["mean_itl_ms"]), "measured"),
                     (T("tokens per second"), f"{st['tokens_per_s']:.0f}" if st.get("tokens_per_s") else "—", "measured")]
        cards.append((T("in production, typically"), T("20–80 tokens/s"), "source"))
        for i, (name, value, k) in enumerate(cards):
            y = 84 + 120 * i
            c = self.box(x0, y, 550, 106, PANEL, EDGE)
            self.pop_in(c, 0.2 + 0.2 * i)
            self.text(name, x0 + 20, y + 10, "label", DIM)
            self.text(value, x0 + 20, y + 42, "heading", ACCENT, True)
            self.badge(k, x0 + 330, y + 60)
        y = 84 + 120 * len(cards)
        if st:
            self.text(T("Behind a {n}-token system prompt that is not cached, the first token takes {ms} instead "
                        "of {short}.").format(n=st["long_prompt_tokens"], ms=fmt_ms(st["long_ttft_ms"]),
                                              short=fmt_ms(st["ttft_ms"])), x0, y, "label", TEXT, width=550)
            self.badge("measured", x0, y + 90)
        else:
            self.text(T("A 10,000-token system prompt that is not cached makes a long pause."), x0, y, "label", TEXT,
                      width=550)


class ReasoningScene(TourScene):
    """§11: hidden thinking tokens before the visible answer; first token vs first visible token, measured."""

    title = "Reasoning models"
    number = 11

    def draw(self, ctx: dict) -> None:
        r = _analysis(ctx, "reasoning")
        if r:
            hidden, visible = r["hidden"], r["visible"]
            ttft, first_vis = r["ttft_ms"], r["first_visible_ms"]
        else:
            hidden, visible = ["…"] * 24, ["One", "␣trip", ",", "␣one", "␣token", "."]
            ttft, first_vis = None, None
        self.text(T("The model writes {n} tokens nobody sees (its “thinking”), then the answer:").format(
            n=len(hidden)), 40, 84, "body", TEXT)
        x, y = 40.0, 130.0
        t = 0.3
        for lab in hidden:
            card, w = self.chip(lab, x, y, QColor("#2a3440"), DIM, style="label")
            if x + w > 1560:
                x, y = 40.0, y + 52
                card.setPos(x, y)
            self.pop_in(card, t)
            t += 0.06
            x += w + 6
        x, y = 40.0, y + 72
        self.text(T("visible answer:"), 40, y, "label", DIM)
        y += 34
        for lab in visible:
            card, w = self.chip(lab, x, y, PAPER, style="body")
            self.pop_in(card, t)
            t += 0.12
            x += w + 8
        # the time line
        ty = 470.0
        self.line(40, ty, 1560, ty, DIM, 3)
        end = first_vis or ttft or 1.0
        span = end * 1.1
        marks = [(0.0, T("request"), DIM)]
        if ttft is not None:
            marks.append((ttft, T("first token (hidden): {ms}").format(ms=fmt_ms(ttft)), ORANGE))
        if first_vis is not None:  # None when the model stopped before its visible answer
            marks.append((first_vis, T("first visible token: {ms}").format(ms=fmt_ms(first_vis)), GREEN))
        for i, (tm, name, color) in enumerate(marks):
            xx = 40 + 1500 * tm / span
            self.line(xx, ty - 16, xx, ty + 16, color, 4)
            self.fade_in(self.text(name, xx, ty + 24 + 34 * (i % 2), "label", color, True,
                                   align="left" if xx < 1100 else "right"), t + 0.2 * i)
        self.badge("measured" if r else "illustrative", 40, 600,
                   T("this model; the hidden tokens are its first {n}").format(n=len(hidden)) if r else None)
        self.text(T("The source: a 200-token answer may be billed for thousands of decode steps."), 40, 640, "label",
                  TEXT)
        self.badge("source", 900, 642)
