"""Sections 13–15: running ahead (speculative decoding), splitting the book (parallelism), the same opening
(prefix caching). Section 12, sharing the table (batching): ``animations.scenes.batching``."""

from __future__ import annotations

import itertools

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from animations.scenes import trip_words
from animations.scenes.base import TourScene
from animations.scenes.counts import claim, count
from animations.scenes.look import ACCENT, BLUE_LIGHT, DIM, EDGE, GREEN, ORANGE, PANEL, PURPLE, SCENE_H, TEXT, T, px
from animations.scenes.look import analysis_of as _analysis
from animations.scenes.thin_book import draw_thin_book
from animations.units import fmt_bytes, fmt_ms


def _speculative_passes(s: dict | None) -> list[tuple[list[str], int | None, int]]:
    """The trips to draw: (token labels, guesses kept, guesses made); measured (``s``) or the illustration's.
    Trip 1 reads the question and writes its first token (kept None); each later trip checks guesses."""
    if s is not None:
        return [(list(s.get("prefill_labels") or []), None, 0)] + [
            (p["labels"], p["accepted"], p["proposed"]) for p in s["passes"]]
    return [(["for", "␣i", "␣in", "␣range", "(", "10"], 4, 5), (["10", "):", "↵", "␣␣␣", "␣print"], 4, 5),
            (["(", "i", ")", "↵"], 3, 5)]


class SpeculativeScene(TourScene):
    """§13: the apprentice (draft model) guesses, the book (target) checks all guesses in one trip; the trips
    saved, measured; a measured acceptance below the source's figure is said so, with the reason."""

    title = "Running ahead (speculative decoding)"
    number = 13

    def draw(self, ctx: dict) -> None:
        s = _analysis(ctx, "speculative")
        live = bool(s and s.get("available"))
        passes = _speculative_passes(s if live else None)
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
        # the tokens as chips (figures, outside the type hierarchy): the illustration's three trips a size larger
        chip_style = "label" if live else "heading"
        groups, y = self._trip_rows(passes, y, chip_style, lw, block_h)
        for item in below:
            item.moveBy(0, y)
        # the column breathes: the free height under it is shared between the caption, the trips and the notes
        self.spread([g_intro] + groups + [below], bottom=SCENE_H - 10, most=40 if live else 64)
        self._right_box(ctx, s if live else None, 40 + lw + 30, top)

    def _trip_rows(self, passes: list[tuple], y: float, chip_style: str, lw: float,
                   block_h: float) -> tuple[list[list], float]:
        """As many trips as fit above the ``block_h`` px kept under them (at least two), one row each from ``y``,
        and a line naming those left out. Returns each row's items and the y below."""
        t = 0.3
        trip_w = max(self.measure(T("trip {i}").format(i=len(passes)), "small").width(), 40) + 14
        chip_h = self.lh(chip_style) + px("small") * 0.45  # a chip's height (``chip``)
        row_h = chip_h + 8  # and the gap under it
        groups = []
        note_h = self.lh("small") + 8  # "trips 6–7 are not drawn here", when some are left out
        shown = 0
        for r, (labels, accepted, proposed) in enumerate(passes):
            after = row_h + (note_h if r + 1 < len(passes) else 0)
            if r >= 2 and y + after > SCENE_H - 8 - block_h:
                break
            (y, t), g_row = self.collect(lambda: self._trip_row(r, labels, accepted, proposed, y, t, trip_w,
                                                                chip_style, lw))
            groups.append(g_row)
            shown += 1
        if shown < len(passes):  # the trips that did not fit are named, and counted with the drawn ones
            a, b = shown + 1, len(passes)
            left = T("trip {a} is not drawn here (no room)").format(a=a) if a == b else \
                T("trips {a}–{b} are not drawn here (no room)").format(a=a, b=b)
            item = self.text(left, 40, y, "small", DIM, role="label")
            count(item, "speculative: trips", b - a + 1)
            count(item, "speculative: tokens", sum(len(lab) for lab, _, _ in passes[shown:]))
            groups.append([item])
            y = item.sceneBoundingRect().bottom() + 8
        return groups, y

    def _trip_row(self, r: int, labels: list, accepted: int | None, proposed: int, y: float, t: float,
                  trip_w: float, chip_style: str, lw: float) -> tuple[float, float]:
        """One trip: its name, its chips, how many guesses it kept; returns (the y under it, the next start)."""
        chip_h = self.lh(chip_style) + px("small") * 0.45  # a chip's height (``chip``)
        count(self.text(T("trip {i}").format(i=r + 1), 40, y + (chip_h - self.lh("small")) / 2, "small", DIM,
                        role="axis"), "speculative: trips")
        x = 40 + trip_w
        row_bottom = y
        for j, lab in enumerate(labels):
            fill = GREEN if accepted is not None and j < accepted else ACCENT  # kept guess, or the book's own
            card, w = self.chip(lab, x, y, fill, QColor("#0f1419"), style=chip_style)
            count(card, "speculative: tokens")
            self.pop_in(card, t)
            t += 0.1
            x += w + 6
            row_bottom = card.sceneBoundingRect().bottom()
        if accepted is None:
            note = T("reading the question writes the first token")
        else:
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

    def _right_box(self, ctx: dict, s: dict | None, rx: float, top: float) -> None:
        """The right box from ``rx``: live (``s``), the trips with and without the apprentice and what it costs;
        then production's apprentices, with the source's pill."""
        rw = 1560 - rx
        y = top + 10
        if s is not None:
            y = self._trips_saved(s, rx, rw, y)
        if s is not None and s.get("plain_pass_ms") and s.get("draft_pass_ms") and s.get("weight_bytes"):
            y = self._apprentice_cost(s, _analysis(ctx, "decode"), rx + 20, y, rw - 40) + 10
        production = T("In production: EAGLE-3, a light guessing head trained on the big model's hidden states; "
                       "DeepSeek-V3 and GLM-style MoE models build in multi-token prediction (MTP). Open-ended "
                       "writing gains less than code.")
        pill_h = self.lh("small", True) + px("small") * 0.3
        _, y = self.para_fit(production, rx + 20, y, rw - 40, SCENE_H - 8 - 14 - 8 - pill_h, role="caption")
        y = self.badge("source", rx + 20, y + 8).sceneBoundingRect().bottom()
        self.box(rx, top, rw, y + 14 - top, PANEL, EDGE, z=0)

    def _trips_saved(self, s: dict, rx: float, rw: float, y: float) -> float:
        """Two measured bars: the trips for the same tokens without and with the apprentice. Returns the y below."""
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
        return self.badge("measured", rx + 20, y + 6).sceneBoundingRect().bottom() + 12

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
        claim(item, "speculative: trips", s["trips"])
        claim(item, "speculative: tokens", s["tokens"])
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
            # the source's reason (code repeats itself, a poem is open) only where the figures agree with it
            line = (T("The model cards, 4 guesses on held-out text: the code apprentice keeps {code:.0f}%, the poetry "
                      "apprentice {poems:.0f}%. Code repeats itself; a poem's next character is open.")
                    if card["code"] > card["poems"] else
                    T("The model cards, 4 guesses on held-out text: the code apprentice keeps {code:.0f}%, the poetry "
                      "apprentice {poems:.0f}%."))
            made.append(self.para(line.format(code=100 * card["code"], poems=100 * card["poems"]),
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
        labels, y = self._gpu_labels(gpus, x0, scale, top)
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
            self._gpu_line(gx, item, texts, y)
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
        self._ways_to_tear(ctx, y + 8)

    def _gpu_labels(self, gpus: list[dict], x0: float, scale: float, top: float) -> tuple[list, float]:
        """The GPU labels, each over its line (at ``x0 + bytes * scale``): on one row when some choice of centred,
        flush right or flush left of its line keeps them apart (the first such choice, centred preferred), else on
        as many rows as they need. Returns (line x, label item) per GPU and the y under the labels."""
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
        return labels, max([r.bottom() for r in placed] + [top]) + 4

    def _gpu_line(self, gx: float, item, texts: list, bottom: float) -> None:
        """A GPU's dashed line at ``gx`` from under its label ``item`` down to ``bottom``, broken where any of
        ``texts`` sits on it."""
        segs = [(item.sceneBoundingRect().bottom() + 2, bottom)]
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

    def _ways_to_tear(self, ctx: dict, y: float) -> None:
        """Three ways to tear the book: three cards from ``y`` down to the footer (the live workers measured, or
        where to see them), the footer measured first."""
        live = ctx.get("live_workers")
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
        ds = ctx.get("deepseek") or {"params": 671e9, "active": 37e9}
        # the cards' words in the label style, all three in the small one where a larger text (a smaller view)
        # would run past the footer
        ends = self.attempt(lambda: self._way_cards(y, ds, "label"), bottom=card_bottom - 6) or \
            self._way_cards(y, ds, "small")
        for i in range(3):  # three cards of one height: down to the footer, or to the longest card's text
            c = self.box(40 + i * 512, y, 496, max([card_bottom] + ends) - y, PANEL, EDGE, z=0)
            self.pop_in(c, 0.8 + 0.2 * i)

    def _way_cards(self, y: float, ds: dict, style: str) -> list[float]:
        """The three cards' words from ``y``, all in ``style``; returns where each card's words end."""
        ways = [(T("By chapters: pipeline parallel"), T("no syncing inside a layer; needs many requests to keep "
                                                        "every GPU busy")),
                (T("Every page torn apart: tensor parallel"), T("every layer syncs; worth it only with fast links "
                                                                 "such as NVLink")),
                (T("Experts living apart: expert parallel"), T("mixture-of-experts models only"))]
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
        q_blocks = max(1, -(-(n_sys + q) // bs) - sys_blocks)  # blocks that hold only the question's tokens
        top = self.top
        lw = 960.0
        (_, y), g_intro = self.collect(lambda: self.para(
            T("Two requests, the same {n}-token system prompt ({b} blocks of {s} tokens)").format(
                n=n_sys, b=sys_blocks, s=bs), 40, top, lw, "body", TEXT, role="caption"))
        claim(g_intro[0], "prefix: first request's system prompt blocks", sys_blocks)
        claim(g_intro[0], "prefix: second request's system prompt blocks", sys_blocks)
        bh = self.lh("label") + 10
        reused_n = min(hit // bs, sys_blocks)  # the second request's blocks found in the cache
        y, g_blocks = self.collect(lambda: self._request_blocks(y, lw, bh, sys_blocks, q_blocks, reused_n))
        if p:
            y, g_times = self.collect(lambda: self._second_request_times(p, y, lw, bh))
            _, g_saved = self.collect(lambda: self._time_saved(p, y, lw))
            # the page breathes: the free height below is shared between its blocks (no empty band)
            self.spread([g_intro, g_blocks, g_times, g_saved], bottom=SCENE_H - 10, most=70)
        else:
            _, g_badge = self.collect(lambda: self.badge("illustrative", 40, y))
            self.spread([g_intro, g_blocks + g_badge], bottom=SCENE_H - 10, most=70)  # the pill under its picture
        self._routing(top)

    def _request_blocks(self, y: float, lw: float, bh: float, sys_blocks: int, q_blocks: int, reused_n: int) -> float:
        """Each request's row: its system prompt's blocks, a gap, then its question's own blocks, the second
        request's first ``reused_n`` found in the cache (the picture counts the caption's blocks, and the question's
        are named apart); then the legend. Returns the y below."""
        name_w = max(self.measure(T("first"), "small", True).width(),
                     self.measure(T("second"), "small", True).width())
        bx = 40 + name_w + 16
        w = min(52.0, (40 + lw - bx) / (sys_blocks + q_blocks + 1.5))
        gap = w / 2
        y += 6
        head_h = self.lh("small")
        self.text(T("system prompt"), bx, y, "small", DIM, role="axis")
        self.text(T("question"), bx + sys_blocks * w + gap, y, "small", DIM, role="axis")
        y += head_h + 4
        for r, who in enumerate(("first", "second")):
            self.text(T("first") if r == 0 else T("second"), 40, y + (bh - self.lh("small", True)) / 2, "small",
                      TEXT, True, role="axis")
            for j in range(sys_blocks + q_blocks):
                reused = r == 1 and j < reused_n
                x = bx + j * w + (gap if j >= sys_blocks else 0)
                c = self.box(x, y, w - 6, bh, GREEN if reused else ORANGE, None, radius=4)
                if j < sys_blocks:
                    count(c, f"prefix: {who} request's system prompt blocks")
                self.fade_in(c, 0.2 + r * 0.8 + 0.03 * j)
            y += bh + 12
        sw = self.lh("small")
        self.box(40, y + 3, sw - 6, sw - 6, GREEN, None, radius=4)
        k1 = self.text(T("found in the cache: no work"), 40 + sw + 2, y, "small", TEXT, role="legend")
        x2 = k1.sceneBoundingRect().right() + 30
        self.box(x2, y + 3, sw - 6, sw - 6, ORANGE, None, radius=4)
        self.text(T("computed"), x2 + sw + 2, y, "small", TEXT, role="legend")
        return y + sw + 20

    def _second_request_times(self, p: dict, y: float, lw: float, bh: float) -> float:
        """The second request's measured time to read its question, cold and after the first, as bars (ms).
        Returns the y below."""
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

    def _time_saved(self, p: dict, y: float, lw: float) -> float:
        """The time saved on reading the question, with its pill."""
        _, y = self.para(T("time saved on reading the question: {ms}").format(ms=fmt_ms(p["saved_ms"])), 40,
                         y + 6, lw, "body", ACCENT, True, role="readout")
        self.badge("measured", 40, y + 6, T("this engine's prefix cache, median of 3"), max_w=lw)
        return y

    def _routing(self, top: float) -> None:
        """Routing: the router over three servers, the arrows drawn once the servers have come down the free
        height; the panel behind it."""
        x0, rw = 1040.0, 520.0
        head = self.text(T("Routing"), x0 + 20, top + 10, "heading", TEXT, True, role="heading")
        _, y = self.para(T("The cache helps only on the server that holds it."), x0 + 20,
                         head.sceneBoundingRect().bottom() + 2, rw - 40, "label", DIM, role="caption")
        router, g_router = self.collect(lambda: self.tag(T("router"), x0 + rw / 2, y + 14, "small", PANEL, ACCENT,
                                                         align="center", role="label", pad=16, min_w=140))
        rr = router.sceneBoundingRect()
        made, g_servers = self.collect(lambda: self._servers(x0, rw, rr.bottom() + 130))
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

    def _servers(self, x0: float, rw: float, sy: float) -> list:
        """Three servers in a row at ``sy``, the middle one's cache holding the opening, the miss noted, and the
        pill; returns the three servers and the pill."""
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
