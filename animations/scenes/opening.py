"""Sections 1–4: the request, cutting it into tokens, looking the tokens up in the dictionary, the book.

Data comes in the ``ctx`` dict built by ``gui/tour/data.py`` (plain Python and numpy, no torch).
"""

from __future__ import annotations

import json

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QTransform

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
    SCENE_H,
    SEAT_COLORS,
    TEXT,
    T,
    heat_color,
    px,
)
from animations.units import fmt_bytes


def request_json(prompt: str) -> str:
    """The body of the HTTPS POST the source describes (§01): model, stream on, a system prompt, the question."""
    body = {"model": "llama-3-8b-instruct", "stream": True,
            "messages": [{"role": "system", "content": "You are a concise assistant."},
                         {"role": "user", "content": prompt}]}
    return json.dumps(body, ensure_ascii=False, indent=2)


def request_lines(prompt: str) -> list[str]:
    """``request_json``'s body laid out in fewer lines (each message on two), for the page: the same JSON."""
    q = json.dumps
    return ["{", f'  "model": {q("llama-3-8b-instruct")},', '  "stream": true,', '  "messages": [',
            '    {"role": "system",', f'     "content": {q("You are a concise assistant.")}}},',
            '    {"role": "user",', f'     "content": {q(prompt, ensure_ascii=False)}}}', "  ]", "}"]


REQUEST_LINES = 11  # the address line and the ten lines of ``request_lines``
MAX_PANEL_W = 720.0  # the request's panel; the rest of the width is the parts' column

REQUEST_PARTS = [
    ("POST …/chat/completions", "where it goes: the server's chat address, over HTTPS"),
    ("\"model\"", "which book to carry: the weights that will write the answer"),
    ("\"stream\": true", "send each word as soon as it is written"),
    ("\"system\"", "instructions that come before your question"),
    ("\"user\"", "your question, word for word"),
]


class RequestScene(TourScene):
    """§1: the visitor's question leaves as an HTTPS POST with a JSON body; its parts, named."""

    title = "The request"
    number = 1

    def draw(self, ctx: dict) -> None:
        prompt = ctx.get("prompt", "")
        top = self.top
        # the JSON panel in the largest code style that leaves room for its pill below it; its lines share out
        # the height left under the pill (a code block with air between its lines, not an empty band below it)
        for code_style in ("body", "label"):
            pw = self.attempt(lambda: self._request(prompt, top, code_style), bottom=SCENE_H - 4)
            if pw:
                break
        else:
            code_style = "small"
            pw = self._request(prompt, top, "small")
        # the envelope travels from the visitor to the server (names on a diagram: the label rung)
        x0 = 40 + pw + 50
        col_w = 1560 - x0
        you = self.tag(T("You"), x0, top, "small", PANEL, BLUE_LIGHT, bold=True, role="label", pad=20, min_w=120)
        server = self.tag(T("Server · GPU"), 1560, top, "small", PANEL, ACCENT, bold=True, align="right", pad=20)
        yr, sr = you.sceneBoundingRect(), server.sceneBoundingRect()
        self.arrow(yr.right() + 10, yr.center().y(), sr.left() - 10, sr.center().y(), DIM, 3)
        env = self.box(0, 0, 60, 40, PAPER, QColor("#c9c0ad"), radius=4, z=6)
        self.line(0, 0, 30, 22, QColor("#8a826f"), 2).setParentItem(env)
        self.line(60, 0, 30, 22, QColor("#8a826f"), 2).setParentItem(env)
        t0 = 0.15 + 0.12 * REQUEST_LINES
        ey = max(yr.bottom(), sr.bottom()) + 8
        self.move(env, QPointF(yr.center().x() - 30, ey), QPointF(sr.center().x() - 30, ey), t0, t0 + 1.2)
        self.fade_in(env, t0 - 0.2, t0)
        for item in (you, server):
            self.pop_in(item, 0.1)
        # the request's parts, named: the largest layout that fits below the envelope, its rows spread over the
        # height the column has
        for style, stacked in (("label", False), ("label", True), ("small", True)):
            groups = self.attempt(lambda: self._parts(x0, ey + 56, col_w, style, stacked, t0), bottom=SCENE_H - 4)
            if groups:
                break
        else:
            groups = self._parts(x0, ey + 56, col_w, "small", True, t0)
        self.spread(groups, bottom=SCENE_H - 4, most=24)

    def _request(self, prompt: str, top: float, style: str) -> float:
        """The request (address line and JSON body) on a panel at (40, top) in ``style``, its pill below it; the
        question shortened with "…" to keep the panel at most ``MAX_PANEL_W`` wide; the lines spaced out to take
        the height down to the scene's foot. Returns the panel's width."""
        pad = 18.0
        room = MAX_PANEL_W - 2 * pad
        shown = prompt
        while self.measure(request_lines(shown)[7], style).width() > room:
            cut = shown.rstrip("…")
            if len(cut) <= 1:
                break  # nothing left to shorten: the panel is as narrow as this style allows
            shown = cut[: max(1, len(cut) - 4)] + "…"  # strictly shorter every time round
        lines = ["POST https://api.example.com/v1/chat/completions"] + request_lines(shown)
        widest = max(self.measure(ln, style).width() for ln in lines)
        pw = min(MAX_PANEL_W, widest + 2 * pad)
        heights = [self.measure(ln, style).height() for ln in lines]
        pill_h = self.lh("small", True) + px("small") * 0.3 + 10  # the source pill under the panel, one line
        spare = SCENE_H - 4 - top - (sum(heights) + 2 * pad) - pill_h - 2
        lead = max(0.0, min(0.35 * heights[0], spare / len(lines)))
        panel = self.box(40, top, pw, sum(heights) + lead * len(lines) + 2 * pad, PANEL, EDGE)
        y = top + pad + lead / 2
        user = False
        for i, (ln, h) in enumerate(zip(lines, heights)):
            user = user or '"user"' in ln
            color = ACCENT if ln.startswith("POST") else (GREEN if user and '"' in ln else TEXT)
            item = self.text(ln, 40 + pad, y, style, color, role="code")
            self.fade_in(item, 0.15 + 0.12 * i)
            y += h + lead
        self.badge("source", 40, panel.sceneBoundingRect().bottom() + 10, T("the source's example, with your question"),
                   max_w=pw)
        return pw

    def _parts(self, x0: float, y: float, col_w: float, style: str, stacked: bool, t0: float) -> list:
        """The request's parts under their heading, key then meaning (beside it, or ``stacked`` below it): the
        keys are the request's own text (code), the meanings running text. Returns the rows' items, a list per row
        (heading first, the closing note last), for ``spread``."""
        head = self.text(T("What the request says"), x0, y, "heading", TEXT, True, role="heading")
        rows = [[head]]
        y = head.sceneBoundingRect().bottom() + 8
        key_w = 0.0 if stacked else max(self.measure(k, style, True).width() for k, _ in REQUEST_PARTS) + 16
        for i, (key, what) in enumerate(REQUEST_PARTS):
            k = self.text(key, x0, y, style, ACCENT if i == 0 else (GREEN if i == 4 else TEXT), True, role="code")
            ky = k.sceneBoundingRect().bottom() if stacked else y
            d, y2 = self.para(T(what), x0 + key_w + (12 if stacked else 0), ky, col_w - key_w - (12 if stacked else 0),
                              style, DIM, role="body")
            self.fade_in(k, t0 + 0.3 + 0.15 * i)
            self.fade_in(d, t0 + 0.3 + 0.15 * i)
            rows.append([k, d])
            y = max(y2, k.sceneBoundingRect().bottom()) + (4 if stacked else 8)
        note, _ = self.para(T("ChatGPT, Claude and Cursor send much the same request."), x0, y + 8, col_w, style,
                            TEXT, role="caption")
        self.fade_in(note, t0 + 1.2)
        return rows + [[note]]


class TokenizeScene(TourScene):
    """§2: the live tokenizer cuts the question into numbered pieces; Chinese whole or split into byte pieces;
    a bracket under the pieces of one character names it."""

    title = "Cut into tokens"
    number = 2

    def draw(self, ctx: dict) -> None:
        toks = ctx.get("tokens") or []
        chip_styles = [st for st, most in (("title", 10), ("number", 16), ("body", None))  # a short question: big
                       if most is None or len(toks) <= most]
        # the largest layout that fits: the comparison panels when there is room, else the question bigger
        tries = [(chip, why, compare) for compare in ("body", "label") for chip in chip_styles
                 for why in ("body", "label")]
        tries += [(chip, why, None) for chip in chip_styles for why in ("body", "label", "small")]
        for chip_style, why_style, compare in tries:
            if self.attempt(lambda: self._layout(ctx, chip_style, why_style, compare), bottom=SCENE_H - 4):
                return
        self._layout(ctx, "body", "small", None)

    def _layout(self, ctx: dict, chip_style: str, why_style: str, compare: str | None) -> bool:
        """The page with the question's chips in ``chip_style``, the note on split characters in ``why_style``
        and, unless ``compare`` is None, the panels of other models' numbers below in that style."""
        toks = ctx.get("tokens") or []
        sample = ctx.get("zh_sample_tokens") or []
        show_sample = sample and not any(tk.get("piece") for tk in toks)  # a question with no Chinese in it

        (y, t), g_chips = self.collect(lambda: self._question_chips(toks, sample if show_sample else [], chip_style))
        y, g_summary = self.collect(lambda: self._summary(len(toks), y, t))
        g_why = []
        if any(tk.get("piece") == "split" for tk in toks + (sample if show_sample else [])):
            (why, y), g_why = self.collect(lambda: self.para(
                T("Why are common characters split? This model's tokenizer learned from English code and "
                  "documentation, so it cut few Chinese characters whole; a tokenizer trained on Chinese (the Chinese "
                  "poetry model) keeps each common character as one piece. This page cuts with whichever model is "
                  "loaded."), 40, y, 1520, why_style, ACCENT, role="caption"))
            self.fade_in(why, t + 0.3)
            y += 10
        # the panels take up to half the height left as air between their rows, the gaps above them the rest
        room = SCENE_H - 10 - (y + 6)
        g_compare = self.collect(lambda: self._compare(ctx, y + 6, t, compare, room))[1] if compare else []
        self.spread([g_chips, g_summary, g_why, g_compare], bottom=SCENE_H - 4, most=60)
        return True

    def _question_chips(self, toks: list[dict], sample: list[dict], chip_style: str) -> tuple[float, float]:
        """The question's chips in ``chip_style`` (two rows at most) under their hint, then the Chinese
        ``sample``'s when given (a question with no Chinese in it). Returns (the y below, the next start time)."""
        y = self.top
        hint = self.text(T("Your question, cut by this model's tokenizer:"), 40, y, "label", DIM, role="caption")
        y, t = self._chips(toks, y + hint.boundingRect().height() + 8, 0.2, chip_style, max_rows=2,
                           count_as="tokenize: the question's tokens")
        if sample:
            hint2 = self.text(T("Chinese, cut by the same tokenizer:"), 40, y, "label", DIM, role="caption")
            y, t = self._chips(sample, hint2.sceneBoundingRect().bottom() + 8, t, "body", max_rows=1)
        return y, t

    def _summary(self, n: int, y: float, t: float) -> float:
        """The question's ``n`` tokens and what a dashed chip is, beside the live tokenizer's pill; returns the
        y below."""
        pill = self.badge("measured", 1560, y, T("this model's tokenizer, live"), align="right", max_w=700)
        words = self.text(T("your question: {n} tokens · dashed: a piece of a character (its UTF-8 bytes split "
                            "over tokens)").format(n=n), 40, y, "label", TEXT,
                          width=pill.sceneBoundingRect().left() - 60, role="caption")
        claim(words, "tokenize: the question's tokens", n)
        self.fade_in(words, t)
        return max(words.sceneBoundingRect().bottom(), pill.sceneBoundingRect().bottom()) + 10

    def _compare(self, ctx: dict, y2: float, t: float, style: str = "label", room: float = 0.0) -> None:
        """The same sentence's ids in other models, and the vocabulary sizes to scale, in two panels from y2: each
        panel under its heading, the sentence itself shown as the text it is (source), the ids as token ids."""
        # the same sentence, other models, other numbers
        rows = [(T("one model"), "[9906, 1917]", "source"), (T("another model"), "[15496, 995]", "source"),
                (T("this model"), str(ctx.get("hello_ids", [])), "measured")]
        lh = max(self.lh(style), self.lh("small", True) + px("small") * 0.3) + 10
        head_h = self.lh("heading", True) + 6
        ph = 14 + head_h + lh * len(rows) + 8
        if room > ph:  # air between the rows: half of what the page has left, at most half a row more each
            lh += min(0.5 * lh, (room - ph) / 2 / len(rows))
            ph = 14 + head_h + lh * len(rows) + 8
        self.box(40, y2, 930, ph, PANEL, EDGE)
        self.text(T("The same sentence, other numbers"), 60, y2 + 10, "heading", TEXT, True, role="heading")
        sentence = self.text('"Hello world"', 60, y2 + 14 + head_h + (lh - self.lh(style)) / 2 - 5, style, PAPER,
                             role="source")
        name_x = sentence.sceneBoundingRect().right() + 16
        name_w = max(self.measure(who + ":", "small").width() for who, _, _ in rows) + 12
        for i, (who, ids, kind) in enumerate(rows):
            yy = y2 + 14 + head_h + lh * i + (lh - self.lh(style)) / 2 - 5
            pill = self.badge(kind, 950, yy, align="right")
            name = self.text(who + ":", name_x, yy + (self.lh(style) - self.lh("small")) / 2, "small", DIM,
                             role="label")
            room = pill.sceneBoundingRect().left() - 12 - (name_x + name_w)
            while self.measure(ids, style).width() > room and len(ids) > 4:
                ids = ids[:-3].rstrip(", ") + "…]"
            item = self.text(ids, name_x + name_w, yy, style, TEXT, role="token id")
            for it in (name, item):
                self.fade_in(it, t + 0.3 + 0.3 * i)
        self.fade_in(sentence, t + 0.3)
        # vocabulary sizes, to scale
        vx = 1010
        self.box(vx, y2, 550, ph, PANEL, EDGE)
        self.text(T("Vocabulary size, to scale"), vx + 20, y2 + 10, "heading", TEXT, True, role="heading")
        live_v = int(ctx.get("vocab_size") or 0)
        full = 500.0
        bars = [("Llama 3", 128_256, PURPLE), (T("this model"), live_v, GREEN)]
        span = (ph - 14 - head_h - 8) / len(bars)
        for i, (name, v, color) in enumerate(bars):
            yy = y2 + 14 + head_h + span * i
            lab = self.text(f"{name}: {v:,}", vx + 20, yy, "small", TEXT, role="legend")
            bar = self.box(vx + 20, yy + lab.boundingRect().height() + 2, max(3.0, full * v / 128_256), 12, color,
                           None, radius=4)
            self.fade_in(bar, t + 0.5 + 0.3 * i)

    def _chips(self, toks: list[dict], y: float, t: float, style: str, max_rows: int,
               count_as: str | None = None) -> tuple[float, float]:
        """Token chips with their ids from (40, y), wrapping at the scene's edge for at most ``max_rows`` rows
        ("… n more" ends the last one); a bracket under the byte pieces of one character names it. Returns
        (the y below, the next start time)."""
        x = 40.0
        char_h = self.lh("body")
        row_h = None
        rows = 1
        placed: dict[int, list] = {}
        row_cards: list[tuple] = []  # (card, its x, the bracket items under it) on the current row
        shown = 0
        for tok in toks:
            piece = tok.get("piece")  # "whole", "split" or None (plain ASCII)
            fill = PAPER if piece != "split" else QColor("#f6d7b0")
            card, w = self.chip(tok["label"], x, y, fill, style=style, sub=str(tok["id"]), dash=piece == "split",
                                edge=ORANGE if piece == "split" else None)
            row_h = row_h or card.boundingRect().height() + (char_h + 14 if any("group" in k for k in toks) else 10)
            if x + w > 1560:
                if rows == max_rows:
                    self.removeItem(card)
                    break
                x, y, rows = 40.0, y + row_h, rows + 1
                card.setPos(x, y)
                row_cards = []
            extras = []
            if "group" in tok:
                placed.setdefault(tok["group"], []).append(card)
                if tok.get("group_text"):
                    extras = self._bracket(placed[tok["group"]], tok["group_text"], t)
            row_cards.append((card, x, extras))
            if count_as:
                count(card, count_as)
            self.pop_in(card, t)
            t += 0.08
            x += w + 8
            shown += 1
        if shown < len(toks):
            self._more(len(toks), shown, row_cards, x, y, count_as)
        return y + (row_h or 60) + 4, t

    def _bracket(self, cards: list, text: str, t: float) -> list:
        """Under the byte pieces of one character (``cards``, when they share a row): a bracket and the character
        they make (the text being cut, shown as it is). Returns the items drawn."""
        r0, r1 = cards[0].sceneBoundingRect(), cards[-1].sceneBoundingRect()
        if abs(r0.top() - r1.top()) >= 1:  # the bracket only when the pieces share a row
            return []
        by = r0.bottom() + 6
        br = self.line(r0.left() + 4, by, r1.right() - 4, by, ORANGE, 3)
        ch = self.text(text, (r0.left() + r1.right()) / 2, by + 4, "body", ORANGE, True, align="center",
                       role="source")
        self.fade_in(br, t)
        self.fade_in(ch, t)
        return [br, ch]

    def _more(self, total: int, shown: int, row_cards: list[tuple], x: float, y: float,
              count_as: str | None) -> None:
        """"… n more" after the last chip drawn (at ``x``) for the ``total - shown`` tokens not drawn; the row's
        last chips give way (``row_cards``: card, its x, its bracket items) until it fits."""
        more = self.text("…", x, y + 10, "small", DIM, role="label")
        while True:
            more.setText(T("… {n} more").format(n=total - shown))
            if x + more.boundingRect().width() <= 1560 or not row_cards:
                break
            card, x, extras = row_cards.pop()  # make room: the last chip of the row gives way
            for item in [card] + extras:
                self.removeItem(item)
            shown -= 1
        more.setPos(x, y + 10)
        if count_as:
            count(more, count_as, total - shown)  # the chips not drawn, named by number

def _embedding_image(rows, n_rows: int, d: int, n: int) -> tuple[QImage, str, str]:
    """The rows of the embedding matrix as a heat map (one pixel per number, scaled by the 98th percentile of
    the magnitudes) with its pill's kind and note; without the model's rows, ``n`` rows of ``d`` seeded random
    numbers, said to be illustrative."""
    if rows is not None and len(rows):
        arr = np.asarray(rows[:n_rows], dtype=np.float32)
        scale = float(np.percentile(np.abs(arr), 98)) or 1.0
        img = QImage(arr.shape[1], arr.shape[0], QImage.Format_RGB32)
        for r in range(arr.shape[0]):
            for c in range(arr.shape[1]):
                red, green, blue = heat_color(float(arr[r, c]) / scale)
                img.setPixel(c, r, QColor(red, green, blue).rgb())
        return img, "measured", T("real rows of this model's embedding matrix")
    img = QImage(max(1, d or 64), n, QImage.Format_RGB32)
    rng = np.random.default_rng(0)
    for r in range(n):
        for c in range(img.width()):
            red, green, blue = heat_color(float(rng.normal(0, 0.4)))
            img.setPixel(c, r, QColor(red, green, blue).rgb())
    return img, "illustrative", T("model not loaded")


class EmbeddingScene(TourScene):
    """§3: each token id picks one row of the embedding matrix; the rows, real, as a heat map."""

    title = "Look up the dictionary"
    number = 3

    def draw(self, ctx: dict) -> None:
        rows = ctx.get("embed")
        cfg = ctx.get("config") or {}
        d = int(cfg.get("n_embd") or 0)
        v = int(cfg.get("vocab_size") or 0)
        top = self.top
        lh = self.lh("label")
        hy = top + 6
        # the map takes the height the caption and the pill below it leave: few tokens, tall rows
        hh_max = SCENE_H - 4 - hy - 10 - 2 * lh - 8 - (self.lh("small", True) + px("small") * 0.3) - 8
        toks = (ctx.get("tokens") or [])[: max(1, min(24, int(hh_max // (lh + 2))))]
        n = max(1, len(toks))
        row_h = max(lh + 2, min(130.0, hh_max / n))  # few tokens: tall rows fill the height
        hh = row_h * n
        row_style = "body" if row_h >= self.lh("body") + 8 else "label"
        label_w = max([self.measure(f"{t['label']}  {t['id']}", row_style).width() for t in toks] + [60.0])
        hx, hw = 40 + label_w + 16, 860.0 - max(0.0, label_w - 170)
        img, kind, note = _embedding_image(rows, len(toks), d, n)
        for i, tok in enumerate(toks):
            label = self.text(f"{tok['label']}  {tok['id']}", hx - 12,
                              hy + i * row_h + (row_h - self.lh(row_style)) / 2, row_style, TEXT, align="right",
                              role="token")  # each row is named by its token and id, as on the chips of §2
            self.fade_in(label, 0.2 + 0.1 * i)
        self.image(img, hx, hy, hw, hh)
        # reveal the rows top to bottom: one lookup per token
        cover = self.box(hx, hy, hw, hh, QColor("#0f1419"), None, radius=0, z=3)
        # the cover shrinks from the top (it never reaches below the map: the view fits what the scene holds)
        self.call(lambda p: (cover.setPos(hx, hy + hh * p),
                             cover.setTransform(QTransform.fromScale(1.0, max(1e-3, 1 - p))),
                             cover.setOpacity(1.0 if p < 1 else 0.0)), 0.2, 0.2 + 0.1 * n + 0.6)
        cap_text = T("{n} tokens × {d} numbers").format(n=len(toks), d=d)
        total = len(ctx.get("tokens") or [])
        if total > len(toks):  # rows are one line of text tall at least: a long question's tail does not fit
            cap_text += " · " + T("its first {n} of {total} tokens").format(n=len(toks), total=total)
        cap, _ = self.para(cap_text, hx, hy + hh + 10, hw, "label", DIM, role="caption")
        self.badge(kind, hx, cap.sceneBoundingRect().bottom() + 8, note, max_w=hw)
        self._dictionary_shape(hx + hw + 40, top, v, d)

    def _dictionary_shape(self, bx: float, top: float, v: int, d: int) -> None:
        """The dictionary's shape from ``bx``, this model (``v`` rows × ``d``) against Llama 3 8B, to scale by
        area."""
        bw_max = 1560 - bx
        head, y = self.para(T("The dictionary (embedding matrix), to scale by area"), bx, top, bw_max, "heading",
                            TEXT, True, role="heading")
        big_w = min(400.0, bw_max)
        big_h = big_w * 4096 / 128_256 * 8  # Llama 3 8B: 128,256 × 4,096 (drawn 1:8 wide)
        big_area = 128_256 * 4_096
        y += 10
        big = self.box(bx, y, big_w, big_h, QColor(180, 142, 224, 50), PURPLE, radius=2)
        self.pop_in(big, 0.6)
        if v and d:
            side = (v * d / big_area) ** 0.5
            small = self.box(bx, y, max(2.0, big_w * side), max(2.0, big_h * side), GREEN, GREEN, radius=1, z=3)
            self.pop_in(small, 1.0)
        y += big_h + 10
        _, y = self.para(T("Llama 3 8B: 128,256 rows × 4,096"), bx, y, bw_max, "small", TEXT, role="legend")
        y = self.badge("source", bx, y + 4).sceneBoundingRect().bottom() + 12
        if v and d:
            _, y = self.para(T("this model: {v:,} rows × {d}").format(v=v, d=d), bx, y, bw_max, "small", TEXT,
                             role="legend")
            self.badge("measured", bx, y + 4, T("green square, top left"), max_w=bw_max)


class BookScene(TourScene):
    """§4: the weights are a book, one chapter per layer, always in the warehouse; one trip carries a copy of
    every chapter to the desk."""

    title = "The book and its chapters"
    number = 4
    loop_s = 6.0

    def draw(self, ctx: dict) -> None:
        # the tallest warehouse and desk that leave room for the captions below them
        for box_h in (500.0, 460.0, 420.0, 380.0, 340.0):
            if self.attempt(lambda: self._layout(ctx, box_h), bottom=SCENE_H - 4):
                return
        self._layout(ctx, 300.0)

    def _layout(self, ctx: dict, box_h: float) -> bool:
        """The page with the warehouse and the desk ``box_h`` tall."""
        layer_bytes = list(ctx.get("layer_bytes") or [])
        total = int(ctx.get("total_bytes") or sum(layer_bytes))
        dict_bytes = int(ctx.get("embed_bytes") or 0)
        top = self.top
        # warehouse (memory) and desk (compute)
        self.box(40, top, 520, box_h, PANEL, EDGE)
        self.text(T("Warehouse · GPU memory"), 60, top + 8, "heading", TEXT, True, role="heading")
        self.box(1040, top, 520, box_h, PANEL, EDGE)
        self.text(T("Desk · compute cores"), 1060, top + 8, "heading", TEXT, True, role="heading")
        floor_y = top + box_h - 20
        n = max(1, len(layer_bytes))
        biggest = max(layer_bytes + [dict_bytes, 1])
        copies = []
        x = 70.0
        width = min(70.0, 420.0 / (n + 1))
        dict_name = T("dict.")
        entries = ([(dict_name, dict_bytes)] if dict_bytes else []) + [(str(i + 1), b)
                                                                         for i, b in enumerate(layer_bytes)]
        lab_h = self.lh("small")
        for name, b in entries:
            h = lab_h + 30 + (box_h - 110 - lab_h) * b / biggest
            color = SEAT_COLORS[1] if name == dict_name else BLUE
            # the book stays in the warehouse, whole; its name inside the spine's foot
            spine = self.box(x, floor_y - h, width - 8, h, color, BLUE_LIGHT, radius=4, z=3)
            lab = self.text(name, (width - 8) / 2, h - lab_h - 4, "small", TEXT, align="center", role="chapter")
            if lab.boundingRect().width() > width - 10:  # a name wider than its spine: turned on its side
                lab.setRotation(-90)
                lab.setPos((width - 8 - lab_h) / 2, h - 6)
            lab.setParentItem(spine)
            # what travels is a copy (no label: the desk reads it)
            copy = self.box(x, floor_y - h, width - 8, h, QColor(color.red(), color.green(), color.blue(), 150),
                            ACCENT, radius=4, z=4, dash=True)
            copies.append((copy, QPointF(x, floor_y - h)))
            x += width
        for i, (copy, home) in enumerate(copies):
            desk = QPointF(home.x() + 1000, home.y())
            self.move(copy, home, desk, 0.8 + 0.05 * i, 2.0 + 0.05 * i)
            self.call(lambda p, c=copy: c.setOpacity(min(1.0, 4 * p)), 0.8 + 0.05 * i, 1.1 + 0.05 * i)
        self.hold(6.0)
        ay = top + box_h / 2 + 30
        self.arrow(580, ay, 1020, ay, ACCENT, 4)
        note, _ = self.para(T("one trip = one forward pass: a copy of every chapter is read"), 800, top + 40, 420,
                            "small", ACCENT, role="label", align="center")
        note.setPos(800 - 210, note.pos().y())
        stays, _ = self.para(T("the book never leaves the warehouse"), 800, ay + 16, 420, "small", DIM,
                             role="label", align="center")
        stays.setPos(800 - 210, stays.pos().y())
        self._book_captions(ctx, layer_bytes, total, dict_bytes, top + box_h + 14)
        return True

    def _book_captions(self, ctx: dict, layer_bytes: list[int], total: int, dict_bytes: int, y: float) -> None:
        """The captions with the numbers from ``y``: this model's chapters and bytes (left), Llama 3 8B's (right)."""
        a, ya = self.para(T("This model: {n} chapters (layers), {size} in all").format(
            n=len(layer_bytes), size=fmt_bytes(total)), 40, y, 760, "body", TEXT, True, role="card")
        per = fmt_bytes(layer_bytes[0]) if layer_bytes else "—"
        _, ya = self.para(T("each chapter {size}; the dictionary (embeddings) {dict}").format(
            size=per, dict=fmt_bytes(dict_bytes)), 40, ya + 4, 760, "label", DIM, role="caption")
        self.badge("measured" if layer_bytes else "illustrative", 40, ya + 8, T("bytes of the real weight file"),
                   max_w=760)
        llama = ctx.get("llama_bytes") or 16_060_522_496
        _, yb = self.para(T("Llama 3 8B in FP16: 32 chapters, about {size}").format(size=fmt_bytes(llama)), 840, y,
                          720, "body", TEXT, True, role="card")
        if total:
            _, yb = self.para(T("{x:,.0f} times this model's book").format(x=llama / total), 840, yb + 4, 720,
                              "label", DIM, role="caption")
        self.badge("formula", 840, yb + 8, T("8.03 billion parameters × 2 bytes"), max_w=720)
