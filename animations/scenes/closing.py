"""After the fifteen sections: the game “be the GPU”, the metaphor table, the three questions and the closing line."""

from __future__ import annotations

from PySide6.QtGui import QColor

from animations.scenes.base import (
    ACCENT, BLUE_LIGHT, DIM, EDGE, GREEN, PANEL, PAPER, SEAT_COLORS, TEXT, T, TourScene, fmt_ms,
)
from animations.timeline import Lambda


class GameScene(TourScene):
    """The game's table and counters, drawn from ``ctx["game"]`` (``GpuGame.snapshot()``, ``gui/game.py``)."""

    title = "Be the GPU"

    def draw(self, ctx: dict) -> None:
        g = ctx.get("game") or {"mode": "alone", "trips": 0, "tokens": 0, "tokens_per_trip": 0.0,
                                "accounted_ms": 0.0, "people": [], "last": [], "seats": 1, "ms_per_trip": 8.0}
        modes = {"alone": T("Alone: one token per press"),
                 "apprentice": T("With the apprentice: it guesses 5, the book checks them in the same trip"),
                 "shared": T("Sharing the table: everyone seated writes on the same trip")}
        self.text(modes[g["mode"]], 40, 80, "body", ACCENT, True)
        # the table
        self.box(40, 130, 900, 470, PANEL, EDGE)
        last = {e["person"]: e for e in g.get("last", [])}
        people = g.get("people", [])
        shown = list(people)
        for num, ev in last.items():  # people who just finished still show on this trip
            if ev.get("done") and all(p["number"] != num for p in shown):
                shown.append({"number": num, "written": g["sentence_tokens"], "target": g["sentence_tokens"],
                              "has_read": True})
        shown.sort(key=lambda p: p["number"])
        if not shown:
            self.text(T("Press to carry the book: the first trip reads the question."), 70, 160, "body", TEXT, width=840)
        for i, p in enumerate(shown[:4]):
            y = 160 + 104 * i
            color = SEAT_COLORS[(p["number"] - 1) % len(SEAT_COLORS)]
            self.box(70, y, 64, 64, color, None, radius=32)
            self.text(str(p["number"]), 102, y + 16, "body", QColor("#0f1419"), True, align="center")
            target = max(1, p["target"])
            cw = 640.0 / target
            for j in range(target):
                fill = color if j < p["written"] else None
                self.box(160 + j * cw, y + 10, cw - 4, 44, fill, EDGE if fill is None else None, radius=4)
            ev = last.get(p["number"])
            if ev:
                if ev["read"]:
                    msg = T("read the question (+1)")
                elif ev["guesses"]:
                    msg = T("kept {a} of {k} guesses (+{n})").format(a=ev["accepted"], k=ev["guesses"], n=ev["tokens"])
                else:
                    msg = "+{n}".format(n=ev["tokens"])
                if ev["done"]:
                    msg += " · " + T("done")
                self.pop_in(self.text(msg, 160, y + 62, "small", ACCENT), 0.0, 0.3)
        # counters
        x0 = 980.0
        counters = [(T("trips"), f"{g['trips']}"), (T("tokens"), f"{g['tokens']}"),
                    (T("tokens per trip"), f"{g['tokens_per_trip']:.2f}"),
                    (T("accounted time"), f"{g['accounted_ms']:.0f} ms")]
        for i, (name, value) in enumerate(counters):
            y = 130 + 118 * i
            self.box(x0, y, 580, 104, PANEL, EDGE)
            self.text(name, x0 + 20, y + 10, "label", DIM)
            self.text(value, x0 + 20, y + 38, "heading", ACCENT if i == 2 else TEXT, True)
        src = ctx.get("game_source") or {}
        live = g["mode"] == "apprentice" and src.get("live")
        if g["mode"] == "apprentice":
            if live:
                self.badge("measured", 70, 500, T("measured on the bundled draft model"))
                trip = src.get("trip") or {}
                if src.get("waiting"):
                    self.text(T("the engine is running the trip…"), 70, 540, "small", DIM)
                elif trip.get("guesses"):
                    self.text(T("guessed: {g} · kept {a} · verify {ms}").format(
                        g=" ".join(trip["guesses"]), a=trip.get("accepted", 0), ms=fmt_ms(trip.get("verify_ms"))),
                        70, 540, "small", DIM, width=840)
            else:
                self.badge("illustrative", 70, 500, T("random, the source's 3–4 of 5 for code"))
                if src.get("reason"):
                    self.text(T("live draft model unavailable: {reason}").format(reason=src["reason"]),
                              70, 540, "small", DIM, width=840)
        self.text(T("Time is accounted at about {ms:.0f} ms per trip. How many the apprentice guesses right is a "
                    "random illustration in the spirit of “code often keeps 3–4”. A newcomer's first trip reads "
                    "the question.").format(ms=g.get("ms_per_trip", 8.0)) if not live else
                  T("Time is accounted at about {ms:.0f} ms per trip. How many the apprentice guesses right is "
                    "measured: each press is one real verify trip of the bundled draft model over the running "
                    "text. A newcomer's first trip reads the question.").format(ms=g.get("ms_per_trip", 8.0)),
                  40, 612, "small", DIM, width=1100)
        self.badge("measured" if live else "illustrative", 1180, 640)


METAPHORS = [
    ("the request in an envelope", "HTTPS POST, JSON body, stream", 1),
    ("cutting into pieces, numbering", "tokenization (byte-level BPE), token ids", 2),
    ("the dictionary", "embedding matrix (vocabulary × d_model)", 3),
    ("the book, its chapters", "weights, Transformer layers", 4),
    ("warehouse → desk, one trip", "GPU memory → compute cores, one forward pass", 4),
    ("reading the question", "prefill (compute-bound), causal attention", 5),
    ("drawing lots", "sampling: temperature, top-k, top-p", 6),
    ("writing", "decode (memory-bound)", 7),
    ("the cheat sheet", "KV cache", 8),
    ("the size of the cheat sheet", "GQA, MLA, cache bytes", 9),
    ("sending back", "streaming (SSE), TTFT, inter-token latency", 10),
    ("thinking nobody sees", "reasoning tokens", 11),
    ("sharing the table", "batching: static, continuous, PagedAttention, chunked prefill, disaggregation", 12),
    ("the apprentice", "speculative decoding: draft model, verify, acceptance", 13),
    ("splitting the book", "pipeline, tensor and expert parallelism", 14),
    ("the same opening", "prefix caching (APC, RadixAttention), routing", 15),
]


class MetaphorScene(TourScene):
    """The metaphor table: every metaphor, its formal term, and the section that explains it."""

    title = "Metaphors and their formal names"

    def draw(self, ctx: dict) -> None:
        y0 = 80.0
        self.text(T("metaphor"), 60, y0, "small", DIM, True)
        self.text(T("formal term"), 520, y0, "small", DIM, True)
        self.text(T("section"), 1500, y0, "small", DIM, True, align="right")
        row_h = 36.0
        for i, (metaphor, term, section) in enumerate(METAPHORS):
            y = y0 + 34 + i * row_h
            if i % 2 == 0:
                self.box(40, y - 2, 1520, row_h, QColor("#151d26"), None, radius=4, z=0)
            a = self.text(T(metaphor), 60, y + 2, "label", ACCENT, True)
            b = self.text(T(term), 520, y + 2, "label", TEXT)
            c = self.text(f"§{section}", 1500, y + 2, "label", BLUE_LIGHT, True, align="right")
            for item in (a, b, c):
                self.fade_in(item, 0.1 + 0.06 * i)


QUESTIONS = [
    ("Why does the first word take a moment, and then the rest come at a steady pace?",
     "The first trip reads the whole question (prefill); every later trip writes one token (decode). §5, §7"),
    ("Why does the speed depend on memory more than on arithmetic?",
     "Every token needs the whole book carried once: weight bytes ÷ memory bandwidth. §4, §7"),
    ("How can one GPU answer many people quickly?",
     "The cheat sheet, sharing the table, the apprentice and the same opening: each saves trips. §8, §12, §13, §15"),
]
CLOSING_LINE = ("All this, just to write one sentence explaining the KV cache. And what let that sentence be "
                "written was the KV cache itself.")


TRIP_S = 0.18  # seconds per written token on the page: slow enough to read along


class QuestionsScene(TourScene):
    """Three questions the tour has answered, and the source's closing line written live by the model: one
    real decode trip per token with its KV cache (``analysis["closing_line"]``, ``model/analysis.py``), the
    words forced to the source's (teacher forcing); without a measurement, the line cut into tokens."""

    title = "Three questions"

    def draw(self, ctx: dict) -> None:
        self.text(T("Now they can be answered."), 40, 70, "label", DIM)
        for i, (q, a) in enumerate(QUESTIONS):
            y = 106 + 94 * i
            card = self.box(40, y, 1520, 86, PANEL, EDGE)
            self.fade_in(card, 0.2 + 0.4 * i)
            self.fade_in(self.text(f"{i + 1}. " + T(q), 64, y + 10, "body", TEXT, True, width=1470), 0.2 + 0.4 * i)
            self.fade_in(self.text(T(a), 64, y + 50, "small", GREEN, width=1470), 0.4 + 0.4 * i)
        live = ((ctx.get("analysis") or {}).get("closing_line") or {})
        if live.get("tokens"):
            self._write_live(ctx, live, 1.6)
        else:
            self._cut_only(ctx, 1.6)

    def _write_live(self, ctx: dict, live: dict, t0: float) -> None:
        toks = live["tokens"]
        n = len(toks)
        y = 396.0
        # the line, token by token: a token that only completes part of a character shows nothing yet
        x, yy = 40.0, y
        for j, tok in enumerate(toks):
            if not tok.get("text"):
                continue
            item = self.text(tok["text"], x, yy, "number", ACCENT, True)
            w = item.boundingRect().width()
            if x + w > 1560:
                x, yy = 40.0, yy + 46
                item.setPos(x, yy)
            x += w
            self.fade_in(item, t0 + TRIP_S * j, t0 + TRIP_S * j + 0.15)
        y = yy + 50
        if ctx.get("lang") != "zh":
            tr = self.text("“" + T(CLOSING_LINE) + "” " + T("(the source's closing line, in English)"),
                           40, y, "small", DIM, width=1520)
            self.fade_in(tr, t0)
            y += tr.boundingRect().height() + 8
        # the counter: trip j of n, that trip's measured time, the running total
        counter = self.text("", 40, y, "label", TEXT, True)
        cum = []
        acc = 0.0
        for t in toks:
            acc += t["ms"]
            cum.append(acc)
        bs = int(live.get("block_size") or 16)

        def show(p: float) -> None:
            j = min(n - 1, int(p * n))
            t = toks[j]
            counter.setText(T("trip {j} of {n} · this trip {ms} · all trips {total} · cheat sheet: {c} tokens "
                              "in {b} blocks of {bs}").format(j=j + 1, n=n, ms=fmt_ms(t["ms"]),
                                                              total=fmt_ms(cum[j]), c=t["cached"],
                                                              b=t["blocks"], bs=bs))
        self.timeline.add(Lambda(show, rate_func=lambda a: a), t0, t0 + TRIP_S * n)
        show(0.0)
        self.badge("measured", 1560 - 360, y - 2, T("each trip timed here"))
        # one bar per trip, its height the measured time (capped at three times the median)
        y += 34
        ms = sorted(t["ms"] for t in toks)
        cap = max(1e-6, 3 * ms[len(ms) // 2])
        bw = 1520.0 / n
        for j, t in enumerate(toks):
            h = 6 + 48 * min(1.0, t["ms"] / cap)
            bar = self.box(40 + j * bw, y + 54 - h, max(2.0, bw - 3), h, BLUE_LIGHT if not t.get("hit") else GREEN,
                           None, radius=2)
            self.fade_in(bar, t0 + TRIP_S * j, t0 + TRIP_S * j + 0.12)
        # the cheat sheet: one box per KV block, appearing on the trip that first needed it
        y += 62
        self.text(T("KV cache:"), 40, y + 6, "small", DIM)
        first = {}
        for j, t in enumerate(toks):
            first.setdefault(t["blocks"], j)
        for b, j in sorted(first.items()):
            card, _ = self.chip(T("block {b}").format(b=b), 180 + (b - 1) * 150, y, PAPER, style="small", min_w=130)
            self.pop_in(card, t0 + TRIP_S * j)
        self.fade_in(self.text(T("Each token is one real trip of the model, with its KV cache; the words are the "
                                 "source's, the trips are real. Green: a token the model would have picked itself."),
                               40, y + 44, "small", DIM, width=1520),
                     t0 + TRIP_S * n)

    def _cut_only(self, ctx: dict, t0: float) -> None:
        y = 400
        self.fade_in(self.text(T(CLOSING_LINE), 40, y, "number", ACCENT, True, width=1520), t0)
        toks = ctx.get("closing_tokens") or []
        x, yy = 40.0, 540.0
        for j, tok in enumerate(toks[:40]):
            card, w = self.chip(tok["label"], x, yy, PAPER, style="small", min_w=22)
            if x + w > 1560:
                break
            self.pop_in(card, t0 + 0.5 + 0.05 * j)
            x += w + 4
        if toks:
            self.badge("measured", 40, 504, T("cut by this model's tokenizer"))
        self.text(T("When the engine is running, it writes this line here, one real trip per token."),
                  40, 610, "small", DIM, width=1520)
