"""Sections 9–11: how big the cheat sheet is, sending the answer back (streaming), reasoning models."""

from __future__ import annotations

import json

from PySide6.QtGui import QColor

from animations.scenes.base import TourScene
from animations.scenes.counts import claim, count
from animations.scenes.look import (
    ACCENT,
    BLUE,
    BLUE_LIGHT,
    DIM,
    EDGE,
    GREEN,
    ORANGE,
    PANEL,
    PAPER,
    PURPLE,
    RED,
    SCENE_H,
    TEXT,
    T,
    badge_text,
)
from animations.scenes.look import analysis_of as _analysis
from animations.units import fmt_bytes, fmt_ms


class KVSizeScene(TourScene):
    """§9: the KV-cache formula for several models, drawn to scale against the 16 GB book (decimal GB, 10⁹ bytes,
    for every figure on the page)."""

    title = "How big is the cheat sheet"
    number = 9

    def draw(self, ctx: dict) -> None:
        # the notes under the bars in the body style, else one step smaller, so that the bars keep their size
        # the rows of bars as far apart as the page leaves room for (no empty band under them)
        for gap in (40.0, 32.0, 24.0, 16.0, 10.0):
            if self.attempt(lambda: self._layout(ctx, "body", gap), bottom=SCENE_H - 4):
                return
        self._layout(ctx, "body", 10.0)

    def _layout(self, ctx: dict, note_style: str, gap: float = 10.0) -> bool:
        """The formula, the book and each model's cache as bars to scale (``gap`` between the rows), then the notes
        in ``note_style``."""
        n = int(ctx.get("kv_tokens") or 2000)
        rows = (ctx.get("kv_table") or {}).get(n, [])
        book = float(ctx.get("llama_bytes") or 16_060_522_496)
        top = self.top
        # the formula on a line of its own (it wraps only where the scene is too narrow for it), its pills at the
        # right of the book's line below it
        _, y = self.para(T("KV cache = 2 × layers × KV heads × head dim × length × batch × bytes"), 40, top, 1520,
                         "heading", ACCENT, True, role="heading")
        y += 14
        kinds = {r.get("kind", "formula") for r in rows}
        one_kind = len(kinds) == 1  # every row computed the same way: one pill says so, by the source's pill
        pill = self.badge("source", 1560, y, T("formula of the source, §09"), align="right")
        if one_kind:
            pill = self.badge(next(iter(kinds)), pill.sceneBoundingRect().left() - 14, y, align="right")
        fracs = [r["bytes"] / book for r in rows]
        biggest = max(fracs + [1.0])
        labels = [fmt_bytes(r["bytes"]) + ("  " + T("({x:.1f} × the book)").format(x=f) if f > 1 else "")
                  for r, f in zip(rows, fracs)]
        pills = [0.0 if one_kind else self.measure(badge_text(r.get("kind", "formula")), "small", True).width() + 30
                 for r in rows]
        value_w = max([self.measure(lab, "body", True).width() for lab in labels] + [80.0])
        full = 1520 - value_w - 20 - max(pills + [0.0]) - 20
        unit = full / biggest  # the book is 1 unit wide; every bar to the same scale
        book_lab, yb = self.para(T("the book: Llama 3 8B weights, FP16, {size}").format(size=fmt_bytes(book)), 40, y,
                                 pill.sceneBoundingRect().left() - 60, "label", TEXT, role="legend")
        y = max(yb, pill.sceneBoundingRect().bottom()) + 6
        bar = self.box(40, y, unit, 30, BLUE, None, radius=4)
        self.fade_in(bar, 0.1)
        y += 30 + gap + 4
        y = self._cache_bars(rows, [max(3.0, unit * f) for f in fracs], labels, pills, one_kind, y, gap)
        _, y = self.para(T("{n:,} tokens, one sequence; bars to scale against the book; GB = 1,000,000,000 bytes"
                           ).format(n=n), 40, y, 1520, note_style, DIM, role="caption")
        live = ctx.get("live_kv")
        if live:
            self._live_note(live, y, note_style)
        return True

    def _cache_bars(self, rows: list[dict], widths: list[float], labels: list[str], pills: list[float],
                    one_kind: bool, y: float, gap: float) -> float:
        """Each model's cache as a bar ``widths[i]`` wide, its formula beside or above it, its size, and its pill
        (``pills[i]`` wide) unless one pill says them all. Returns the y below."""
        colors = [GREEN, RED, PURPLE, BLUE_LIGHT, ACCENT]
        for i, r in enumerate(rows):
            w = widths[i]
            vh = self.lh("body", True)
            formula = f"{T(r['name'])}: {r['formula']}"
            # the formula on the bar's own line, right-aligned before the pill, when the bar leaves it room
            # (measured); else on a line of its own above the bar
            room = 1560 - pills[i] - 20 - (40 + w + 12 + self.measure(labels[i], "body", True).width() + 24)
            if self.measure(formula, "small").width() <= room:
                self.text(formula, 1560 - pills[i] - 20, y + (vh - self.lh("small")) / 2, "small", DIM,
                          align="right", role="legend")
            else:
                f = self.text(formula, 40, y, "small", DIM, role="legend")
                y = f.sceneBoundingRect().bottom() + 2
            b = self.box(40, y + 2, w, vh - 4, colors[i % len(colors)], None, radius=4)
            self.call(lambda p, b=b: b.setScale(1.0) or b.setOpacity(min(1.0, p * 1.5)), 0.4 + 0.3 * i,
                      0.8 + 0.3 * i)
            self.text(labels[i], 40 + w + 12, y, "body", TEXT, True, role="readout")
            if not one_kind:
                self.badge(r.get("kind", "formula"), 1560, y, align="right")
            y += vh + gap
        return y

    def _live_note(self, live: dict, y: float, note_style: str) -> None:
        """This model's cache per token: by the formula, and the engine's allocation (measured) when known."""
        txt = T("This model: formula {f} per token; its engine allocates {m} per token").format(
            f=fmt_bytes(live["formula_per_token"]), m=fmt_bytes(live["engine_per_token"])) \
            if live.get("engine_per_token") else T("This model: formula {f} per token").format(
            f=fmt_bytes(live["formula_per_token"]))
        if live.get("engine_per_token"):
            pill = self.badge("measured", 1560, y + 8, T("from the allocated cache tensors"), align="right")
            self.para(txt, 40, y + 8, pill.sceneBoundingRect().left() - 54, note_style, TEXT, role="caption")
        else:
            self.para(txt, 40, y + 8, 1520, note_style, TEXT, role="caption")


def sse_frame(text: str) -> str:
    """One server-sent-events frame of a streamed chat answer (the OpenAI-style delta)."""
    return "data: " + json.dumps({"choices": [{"delta": {"content": text}}]}, ensure_ascii=False)


class StreamingScene(TourScene):
    """§10: each token leaves as an SSE frame the moment it exists; TTFT and inter-token latency measured."""

    title = "Sending it back (streaming)"
    number = 10

    def draw(self, ctx: dict) -> None:
        # as many frames as leave room for the note on a long system prompt (under the cards, else under them)
        # first with the frames spread to fill the column (when the note fits beside them), then packed
        for fill in (True, False):
            for most in (12, 10, 8, 6, 4):
                if self.attempt(lambda: self._layout(ctx, most, fill), bottom=SCENE_H - 4):
                    return
        self._layout(ctx, 3, False)

    def _layout(self, ctx: dict, most: int, fill: bool) -> bool:
        """The frames (at most ``most``; ``fill``: spread down the column) with their times, the measured cards,
        the note."""
        st = _analysis(ctx, "stream")
        if st:
            toks = [(t["text"], t["t_ms"]) for t in st["tokens"]]
            kind = "measured"
        else:
            toks = [(w, 10.0 + 8 * i) for i, w in enumerate(["One", " trip", ",", " one", " token", "."])]
            kind = "illustrative"
        lw = 940.0
        pill_h = self.lh("small", True) + 30
        left_bottom = self._frames(toks, kind, bool(st), lw, most, fill, pill_h)
        x0, cw = 1010.0, 550.0
        y = self._stream_cards(st, x0, cw, pill_h)
        if st:
            self._long_prompt_note(st, x0, cw, y, left_bottom, lw)
        else:
            self.para(T("A 10,000-token system prompt that is not cached makes a long pause."), x0, y + 6, cw, "body",
                      TEXT, role="caption")
        return True

    def _frames(self, toks: list[tuple[str, float]], kind: str, measured: bool, lw: float, most: int, fill: bool,
                pill_h: float) -> float:
        """The SSE frames as they leave (text, ms since the request), at most ``most`` (``fill``: spread down the
        column), in a panel ``lw`` wide with its pill. Returns the panel's bottom."""
        top = self.top
        head = self.text(T("What travels back, frame by frame"), 60, top + 10, "heading", TEXT, True, role="heading")
        y = head.sceneBoundingRect().bottom() + 8
        last = max([t for _, t in toks] + [1.0])
        lh = self.lh("small") + 4
        room = int((SCENE_H - 20 - pill_h - y) // lh)
        shown = toks[:max(1, min(most, room))]
        if fill:  # few frames: more air between them, no empty band under the column
            lh = min(lh * 1.6, max(lh, (SCENE_H - 20 - pill_h - y) / len(shown)))
        for i, (text, t) in enumerate(shown):
            frame = sse_frame(text)
            line = self.text(f"+{t:6.1f} ms   {frame}", 60, y, "small", GREEN if i == 0 else TEXT, role="code")
            while line.boundingRect().width() > lw - 40 and len(frame) > 10:
                frame = frame[:-4] + "…"
                line.setText(f"+{t:6.1f} ms   {frame}")
            self.fade_in(line, 0.3 + 2.5 * t / last, 0.45 + 2.5 * t / last)
            y += lh
        y = self.badge(kind, 60, y + 8, T("times since the request arrived, this computer") if measured else None,
                       max_w=lw - 40).sceneBoundingRect().bottom()
        self.box(40, top, lw, y + 12 - top, PANEL, EDGE, z=0)
        return y + 12

    def _stream_cards(self, st: dict | None, x0: float, cw: float, pill_h: float) -> float:
        """The measured cards (time to first token, between tokens, tokens per second) and production's typical
        speed, in a column from ``x0``. Returns the y below."""
        cards = []
        if st:
            cards = [(T("time to first token"), fmt_ms(st["ttft_ms"]), "measured"),
                     (T("between tokens (mean)"), fmt_ms(st["mean_itl_ms"]), "measured"),
                     (T("tokens per second"), f"{st['tokens_per_s']:.0f}" if st.get("tokens_per_s") else "—",
                      "measured")]
        cards.append((T("in production, typically"), T("20–80 tokens/s"), "source"))
        y = self.top
        for i, (name, value, k) in enumerate(cards):
            n_item = self.text(name, x0 + 20, y + 8, "label", DIM, role="card")
            v_item = self.text(value, x0 + 20, n_item.sceneBoundingRect().bottom() + 2, "number", ACCENT, True,
                               role="readout")
            vr = v_item.sceneBoundingRect()
            pill = self.badge(k, x0 + cw - 16, vr.bottom() - pill_h + 30 - 4, align="right")
            if pill.sceneBoundingRect().left() < vr.right() + 12:  # no room beside the figure: below it
                pill.setPos(x0 + 20, vr.bottom() + 4)
            bottom = max(vr.bottom(), pill.sceneBoundingRect().bottom()) + 8
            c = self.box(x0, y, cw, bottom - y, PANEL, EDGE, z=0)
            self.pop_in(c, 0.2 + 0.2 * i)
            y = bottom + 10
        return y

    def _long_prompt_note(self, st: dict, x0: float, cw: float, y: float, left_bottom: float, lw: float) -> None:
        """The measured first token behind a long uncached system prompt: under the cards, else under the frames
        (``left_bottom``), where the left column leaves room."""
        note = T("Behind a {n}-token system prompt that is not cached, the first token takes {ms} "
                 "instead of {short}.").format(n=st["long_prompt_tokens"], ms=fmt_ms(st["long_ttft_ms"]),
                                               short=fmt_ms(st["ttft_ms"]))
        nx = x0
        item, end = self.para(note, x0, y + 6, cw, "body", TEXT, role="caption")
        if end + self.lh("small", True) + 16 > SCENE_H - 8:  # no room under the cards (the pill would be cut)
            self.removeItem(item)  # under the frames, where the left column leaves room
            nx = 40.0
            _, end = self.para(note, nx, left_bottom + 14, lw, "body", TEXT, role="caption")
        self.badge("measured", nx, end + 6)


class ReasoningScene(TourScene):
    """§11: hidden thinking tokens before the visible answer; the trips each takes; first token vs first visible
    token, measured."""

    title = "Reasoning models"
    number = 11

    def draw(self, ctx: dict) -> None:
        # the blocks as far apart as the page leaves room for (no empty band under them)
        for air in (72.0, 56.0, 40.0, 24.0, 12.0):
            if self.attempt(lambda: self._page(ctx, air), bottom=SCENE_H - 4):
                return
        self._page(ctx, 0.0)

    def _page(self, ctx: dict, air: float) -> bool:
        """The hidden and visible tokens, the trips each costs, the note and the time line, ``air`` more between
        the blocks."""
        r = _analysis(ctx, "reasoning")
        if r:
            hidden, visible = r["hidden"], r["visible"]
            ttft, first_vis = r["ttft_ms"], r["first_visible_ms"]
        else:
            hidden, visible = ["…"] * 24, ["One", "␣trip", ",", "␣one", "␣token", "."]
            ttft, first_vis = None, None
        if isinstance(hidden, int):  # counts only
            hidden = ["…"] * hidden
        if isinstance(visible, int):
            visible = ["…"] * visible
        top = self.top
        head, y = self.para(T("The model writes {n} tokens nobody sees (its “thinking”), then the answer:").format(
            n=len(hidden)), 40, top, 1520, "body", TEXT, role="caption")
        claim(head, "reasoning: hidden tokens", len(hidden))
        y, row_h, t = self._hidden_chips(hidden, y + 8, 0.3)
        y += (row_h or 40) + 6 + air
        vis = self.text(T("visible answer:"), 40, y + 8, "label", DIM, role="legend")
        x = vis.sceneBoundingRect().right() + 14
        for lab in visible:
            card, w = self.chip(lab, x, y - 4, PAPER, style="number")
            count(card, "reasoning: answer tokens")
            self.pop_in(card, t)
            t += 0.12
            x += w + 8
            y_vis = card.sceneBoundingRect().bottom()
        y = max(y_vis if visible else y, vis.sceneBoundingRect().bottom()) + 30 + air
        # the trips each part costs: what is billed
        nh, nv = len(hidden), len(visible)
        lab_w = max(self.measure(T("thinking: {n} trips").format(n=nh), "label").width(),
                    self.measure(T("answer: {n} trips").format(n=nv), "label").width()) + 16
        full = 1520 - lab_w
        unit = full / max(1, nh + nv)
        for i, (name, n_trips, color) in enumerate(((T("thinking: {n} trips").format(n=nh), nh, DIM),
                                                  (T("answer: {n} trips").format(n=nv), nv, GREEN))):
            lab = self.text(name, 40, y, "label", color, role="legend")
            claim(lab, "reasoning: hidden tokens" if i == 0 else "reasoning: answer tokens", n_trips)  # a trip each
            bh = max(lab.boundingRect().height(), self.lh("body"))
            bar = self.box(40 + lab_w, y + 4, max(3.0, unit * n_trips), bh - 8, color, None, radius=3)
            self.fade_in(bar, t + 0.2 * i)
            y += bh + 10
        y += air
        # the note on billing and the time line: the largest layout that fits
        for style, pill_right in (("body", False), ("body", True)):
            if self.attempt(lambda: self._tail(r, y, t, ttft, first_vis, len(hidden), style, pill_right),
                            bottom=SCENE_H - 4):
                return True
        return self._tail(r, y, t, ttft, first_vis, len(hidden), "body", True)

    def _hidden_chips(self, hidden: list[str], y: float, t: float) -> tuple[float, float | None, float]:
        """The hidden tokens as grey chips from ``y``, wrapping, popping in from ``t``. Returns (the last row's y,
        the rows' height, the next start time)."""
        x = 40.0
        row_h = None
        for lab in hidden:
            card, w = self.chip(lab, x, y, QColor("#2a3440"), DIM, style="body")
            count(card, "reasoning: hidden tokens")
            row_h = row_h or card.boundingRect().height() + 6
            if x + w > 1560:
                x, y = 40.0, y + row_h
                card.setPos(x, y)
            self.pop_in(card, t)
            t += 0.06
            x += w + 6
        return y, row_h, t

    def _tail(self, r, y: float, t: float, ttft, first_vis, n_hidden: int, style: str, pill_right: bool) -> bool:
        """What is billed (in ``style``), then the time line from the request to the first visible token, its
        pill below the marks' names, or (``pill_right``) beside them at the right edge."""
        _, y = self.para(T("Every decode trip is billed, seen or not: the source's 200-token answer may be billed "
                           "for thousands of decode steps."), 40, y + 8, 1200, style, TEXT, role="caption")
        self.badge("source", 1560, y - self.lh(style), align="right")
        # the time line
        ty = y + 36
        self.line(40, ty, 1560, ty, DIM, 3)
        end = first_vis or ttft or 1.0
        span = end * 1.1
        marks = [(0.0, T("request"), DIM)]
        if ttft is not None:
            marks.append((ttft, T("first token (hidden): {ms}").format(ms=fmt_ms(ttft)), ORANGE))
        if first_vis is not None:  # None when the model stopped before its visible answer
            marks.append((first_vis, T("first visible token: {ms}").format(ms=fmt_ms(first_vis)), GREEN))
        lh = self.lh("label", True)
        placed = []
        for i, (tm, name, color) in enumerate(marks):
            xx = 40 + 1500 * tm / span
            self.line(xx, ty - 12, xx, ty + 12, color, 4)
            item = self.text(name, xx, ty + 16, "label", color, True, align="left" if xx < 1100 else "right",
                             role="axis")
            while any(item.sceneBoundingRect().intersects(o) for o in placed):
                item.setPos(item.pos().x(), item.pos().y() + lh + 2)
            placed.append(item.sceneBoundingRect())
            self.fade_in(item, t + 0.2 * i)
        kind = "measured" if r else "illustrative"
        note = T("this model; the hidden tokens are its first {n}").format(n=n_hidden) if r else None
        if pill_right:  # on the lowest row of names that leaves it room at the right edge, else below them
            pill = self.badge(kind, 1560, ty + 16, note, align="right")
            for _ in range(len(marks) + 1):
                pr = pill.sceneBoundingRect()
                if not any(pr.adjusted(-12, 0, 0, 0).intersects(o) for o in placed):
                    break
                pill.moveBy(0, lh + 2)
            return True
        self.badge(kind, 40, max(o.bottom() for o in placed) + 8, note)
        return True
