"""After the fifteen sections: the game “be the GPU”, the metaphor table, the three questions and the closing line."""

from __future__ import annotations

from PySide6.QtGui import QColor

from animations.scenes import trip_words
from animations.scenes.base import TourScene
from animations.scenes.look import (
    ACCENT,
    BLUE_LIGHT,
    DIM,
    EDGE,
    GREEN,
    ORANGE,
    PANEL,
    PAPER,
    SCENE_H,
    SEAT_COLORS,
    TEXT,
    T,
)
from animations.timeline import Lambda
from animations.units import fmt_ms

GAME_SENTENCE = "Every trip carries the book once and writes one more word ."  # 12 words; zh: one per character


def game_words(ctx: dict, n: int) -> list[str]:
    """The ``n`` words each player's sentence is made of, in the tour's language (Chinese: one per character)."""
    text = T(GAME_SENTENCE)
    words = [c for c in text if not c.isspace()] if ctx.get("lang") == "zh" else text.split()
    return [words[i % len(words)] for i in range(n)] if words else ["…"] * n


def shown_word(label: str) -> str:
    """A token label as the board writes it: the space mark dropped (the blocks already stand apart)."""
    return label.replace("␣", "").strip() or label


def _board_people(g: dict, last: dict, target_n: int) -> list[dict]:
    """The people on the board in seat order: those writing, and those who just finished on the last trip
    (``last``: that trip's events by person), their sentences whole."""
    people = list(g.get("people", []))
    finished = {f["person"]: f for f in g.get("finished", [])}  # kept by games that know their words
    for num, ev in last.items():  # people who just finished still show on this trip
        if ev.get("done") and all(p["number"] != num for p in people):
            f = finished.get(num, {})
            n = int(f.get("target") or len(f.get("words") or []) or target_n)
            people.append({"number": num, "written": n, "target": n, "has_read": True,
                           "words": list(f.get("words") or [])})
    people.sort(key=lambda p: p["number"])
    return people


def _row_words(p: dict, words: list[str]) -> list[str]:
    """A person's sentence as the board writes it: their own words where known, else the game's sentence."""
    own = p.get("words") or []
    return [shown_word(own[j]) if j < len(own) else words[j % len(words)] for j in range(p["target"])]


def _trip_message(ev: dict) -> str:
    """What a person's last trip did: read the question, kept some guesses, or wrote tokens (and done)."""
    if ev["read"]:
        msg = T("read the question (+1)")
    elif ev["guesses"]:
        msg = T("kept {a} of {k} guesses (+{n})").format(a=ev["accepted"], k=ev["guesses"], n=ev["tokens"])
    else:
        msg = "+{n}".format(n=ev["tokens"])
    if ev["done"]:
        msg += " · " + T("done")
    return msg


WAYS_SCALE = 1.5  # the three-ways chart's squares, relative to the board's


class GameScene(TourScene):
    """The game's board, drawn from ``ctx["game"]`` (``GpuGame.snapshot()``, ``gui/tour/game.py``): the three modes,
    each person's sentence word by word (a newcomer's first trip reads the question), the trips so far as
    columns of the tokens each wrote, the sentences finished, the counters, and how to press."""

    title = "Be the GPU"

    def __init__(self, parent=None):
        super().__init__(parent)
        self._history: list[int | None] = []  # tokens written on each trip of the game shown

    def _track(self, g: dict) -> None:
        trips = int(g.get("trips", 0))
        if trips < len(self._history):
            self._history = []
        if trips == len(self._history) + 1:
            self._history.append(sum(e.get("tokens", 0) for e in g.get("last", [])))
        while len(self._history) < trips:
            self._history.insert(0, None)  # trips made while the board was not shown

    def draw(self, ctx: dict) -> None:
        g = ctx.get("game") or {"mode": "alone", "trips": 0, "tokens": 0, "tokens_per_trip": 0.0,
                                "accounted_ms": 0.0, "people": [], "last": [], "seats": 1, "ms_per_trip": 8.0}
        self._track(g)
        bw = 1000.0  # the board's width
        # the modes and the press are the page's buttons under the stage: the board only names the rule
        rules = {"alone": T("Alone: one token per press"),
                 "apprentice": T("With the apprentice: it guesses 5, the book checks them in the same trip"),
                 "shared": T("Sharing the table: everyone seated writes on the same trip")}
        _, y = self.para(rules[g["mode"]], 40, self.top, bw, "heading", ACCENT,
                         True, role="heading")  # the board's heading: the rule of the mode being played
        # the table: one row per person, the sentence word by word
        board_top = y + 8
        last = {e["person"]: e for e in g.get("last", [])}
        target_n = int(g.get("sentence_tokens", 12))
        people = _board_people(g, last, target_n)
        words = game_words(ctx, target_n)
        ws = self._board_style(people, words, board_top, bw)
        y = board_top + 12
        if not people:
            _, y = self.para(T("Press to carry the book: the first trip reads the question."), 60, y, bw - 40, "body",
                             TEXT, role="caption")
        for p in people[:4]:
            y = self._person_row(p, last.get(p["number"]), words, ws, y, bw)
        y = self._finished_sentences(ctx, g, words, y, bw)
        unit = 9.0  # one token = one square
        y = self._trip_columns(board_top, y, bw, unit)
        board = [it for it in self.items() if it.scene() is self]
        # the three ways, for one sentence of the same length (when the table leaves room for them)
        y += 10
        ways_h = self.lh("heading", True) + 3 * (max(WAYS_SCALE * unit * 3.6, self.lh("small")) + 6) + \
            self.lh("small", True) + 8
        if y + ways_h + self.lh("label") + 30 > SCENE_H - 4:
            ways_h = 0.0
        g_ways: list = []
        if ways_h:
            y, g_ways = self.collect(lambda: self._three_ways(y, target_n, bw, unit))
        # how to press
        press = (T("the “Press: one trip” button below, or → / PageDown / Space") if ctx.get("keyboard", True)
                 else T("the “Press: one trip” button below"))  # a kiosk has no keyboard
        (press_item, y), g_press = self.collect(lambda: self.para(press, 40, y + 10, bw, "label", ACCENT,
                                                                  role="caption"))
        note = self._counters(ctx, g, bw, press_item.sceneBoundingRect().bottom())
        if note.sceneBoundingRect().left() < bw:  # the note went under the board: it moves with the press line
            g_press.append(note)
        # the board, the three ways and the press line share the height left under them (no empty band)
        self.spread([board, g_ways, g_press], bottom=SCENE_H - 4, most=40)

    def _board_style(self, people: list[dict], words: list[str], board_top: float, bw: float) -> str:
        """The largest text style in which every sentence fits one row of the board (and the rows its height)."""
        for ws in ("label", "small"):
            pad_w = 2 * 7 + 4  # the block's padding (tag pad=7) and the gap
            lead = 60 + self.lh(ws) + 8 + 10 + self.measure(T("question"), ws).width() + 16 + 10
            widest = max([sum(self.measure(w, ws, True).width() + pad_w for w in _row_words(p, words))
                          for p in people[:4]] + [0.0])
            rows_h = len(people[:4]) * (self.lh(ws) + 8 + 4 + self.lh("small") + 10)
            if lead + widest <= 40 + bw - 10 and board_top + 12 + rows_h + self.lh("label", True) + 40 <= SCENE_H - 4:
                break
        return ws

    def _person_row(self, p: dict, ev: dict | None, words: list[str], ws: str, y: float, bw: float) -> float:
        """One person's row at ``y``: the seat number, the question, the sentence word by word (the words of the
        last trip popping in), and what the last trip did. Returns the y below."""
        word_h = self.lh(ws) + 8
        color = SEAT_COLORS[(p["number"] - 1) % len(SEAT_COLORS)]
        seat = self.box(60, y, word_h, word_h, color, None, radius=word_h / 2)
        num = self.text(str(p["number"]), word_h / 2, 0, "small", QColor("#0f1419"), True, align="center",
                        role="seat")
        num.setPos(num.pos().x(), (word_h - num.boundingRect().height()) / 2)
        num.setParentItem(seat)
        x = 60 + word_h + 10
        # the question: read on the newcomer's first trip (prefill)
        q = self.tag(T("question"), x, y, ws, ORANGE if p["has_read"] else PANEL, ORANGE,
                     QColor("#0f1419") if p["has_read"] else DIM, role="token", pad=8)
        y = self._sentence(p, ev["tokens"] if ev else 0, color, words, ws, q.sceneBoundingRect().right() + 10, y,
                           bw)
        y += word_h + 4
        if ev:
            m = self.text(_trip_message(ev), 60 + word_h + 10, y, "small", ACCENT, role="label")
            self.pop_in(m, 0.0, 0.3)
            y = m.sceneBoundingRect().bottom()
        return y + 10

    def _sentence(self, p: dict, fresh: int, color: QColor, words: list[str], ws: str, x_start: float, y: float,
                  bw: float) -> float:
        """A person's sentence from ``x_start``: a block per word, written ones in the seat's ``color``, the
        ``fresh`` ones of the last trip outlined and popping in; a long sentence wraps. Returns its last row's y."""
        word_h = self.lh(ws) + 8
        x = x_start
        for j in range(p["target"]):
            written = j < p["written"]
            new = written and j >= p["written"] - fresh
            fill = color if written else None
            own = p.get("words") or []
            word = shown_word(own[j]) if j < len(own) else words[j % len(words)]
            card = self.tag(word if written else "·", x, y, ws, fill, ACCENT if new else EDGE,
                            QColor("#0f1419") if written else DIM, bold=new, role="token", pad=7, radius=5)
            if card.sceneBoundingRect().right() > 40 + bw - 10 and x > x_start:  # a long sentence wraps
                x, y = x_start, y + word_h + 4
                card.setPos(x, y)
            if new:
                self.pop_in(card, 0.05 * (j - p["written"] + fresh), 0.3 + 0.05 * (j - p["written"] + fresh))
            x = card.sceneBoundingRect().right() + 4
        return y

    def _finished_sentences(self, ctx: dict, g: dict, words: list[str], y: float, bw: float) -> float:
        """How many sentences are finished, with the last one's words, kept under the rows. Returns the y below."""
        done = int(g.get("sentences_done", 0))
        if done:
            kept = (g.get("finished") or [{}])[-1].get("words") or []
            sent = ("".join(w.replace("␣", " ") for w in kept).strip() if kept else
                    (" " if ctx.get("lang") != "zh" else "").join(words))
            finished = T("1 sentence finished: “{s}”") if done == 1 else T("{n} sentences finished: “{s}”")
            _, y = self.para(finished.format(n=done, s=sent), 60, y + 2, bw - 40, "small",
                             GREEN, role="caption")
        return y

    def _trip_columns(self, board_top: float, y: float, bw: float, unit: float) -> float:
        """The trips so far: one column per trip, as tall as the tokens it wrote, ``unit`` px a token (when there
        is room for it and the press line below); then the board's panel behind it all. Returns the y below."""
        hist = self._history[-40:]
        most = max([h or 0 for h in hist] + [1])
        press_h = self.lh("label", True) + 24
        if y + 6 + self.lh("small") + 4 + unit * most + 10 + 8 + press_h > SCENE_H - 4:
            hist, most = [], 0
        y += 6
        if not hist:
            self.box(40, board_top, bw, y - board_top, PANEL, EDGE, z=0)
            return y
        head = self.text(T("your trips so far: one column per trip, one square per token"), 60, y, "small", DIM,
                         role="axis")
        cy = head.sceneBoundingRect().bottom() + 4
        cw = min(22.0, (bw - 60) / 40)
        for i, h in enumerate(hist):
            for k in range(h or 0):
                self.box(60 + i * cw, cy + unit * (most - 1 - k), cw - 3, unit - 2,
                         ACCENT if h > 1 else BLUE_LIGHT, None, radius=1)
            if not h:
                self.box(60 + i * cw, cy + unit * (most - 1), cw - 3, unit - 2, EDGE, None, radius=1)
        y = cy + unit * most + 10
        self.box(40, board_top, bw, y - board_top, PANEL, EDGE, z=0)
        return y

    def _three_ways(self, y: float, target_n: int, bw: float, unit: float) -> float:
        """Alone, with the apprentice, sharing the table: the trips one sentence each takes, as columns of
        tokens (the game's rules, with 4 tokens a trip). Returns the y below."""
        _, y = self.para(T("The three ways, for one {n}-word sentence each:").format(n=target_n), 40, y, bw,
                         "heading", TEXT, True, role="heading")
        unit *= WAYS_SCALE  # the chart is the page's lesson: drawn larger than the board's squares
        step = 16 * WAYS_SCALE
        k = max(1, target_n - 1)
        ways = [(T("Alone"), [1] * target_n, T("{t} trips for {n} words")),
                (T("With the apprentice"), [1] + [min(4, k - 4 * i) for i in range(-(-k // 4))],
                 T("{t} trips for {n} words")),
                (T("Sharing the table"), [4] * target_n, T("{t} trips for {n} words"))]
        name_w = max(self.measure(n, "small").width() for n, _, _ in ways) + 14
        for name, cols, what in ways:
            self.text(name, 40, y + 2, "small", DIM, role="axis")
            for i, c in enumerate(cols):
                for q in range(c):
                    self.box(40 + name_w + i * step, y + 2 + unit * (3 - q) * 0.9, step - 3, unit * 0.9 - 2,
                             ACCENT if c > 1 else BLUE_LIGHT, None, radius=1)
            self.text(what.format(t=len(cols), n=sum(cols)), 40 + name_w + len(cols) * step + 12, y + 2, "label",
                      TEXT, role="readout")
            y += max(unit * 3.6, self.lh("small")) + 6
        pill = self.badge("illustrative", 40 + bw, y - 4, T("the rules of the game, 4 tokens a trip"), align="right")
        return pill.sceneBoundingRect().bottom() - 2

    def _counters(self, ctx: dict, g: dict, bw: float, board_end: float):
        """The counters, the pills and the note in the column right of the board; the note goes under the
        board (whose end is ``board_end``) when the column has no room left for it. Returns the note."""
        top = self.top
        x0, cwid = bw + 80, 1560 - bw - 80
        counters = [(T("trips"), f"{g['trips']}"), (T("tokens"), f"{g['tokens']}"),
                    (T("tokens per trip"), f"{g['tokens_per_trip']:.2f}"),
                    (T("accounted time"), f"{g['accounted_ms']:.0f} ms")]
        y = self._counter_cards(counters, x0, top, cwid)
        src = ctx.get("game_source") or {}
        live = g["mode"] == "apprentice" and src.get("live")
        if g["mode"] == "apprentice":
            y = self._apprentice_source(src, bool(live), x0, y, cwid)
        note = (T("Time is accounted at about {ms:.0f} ms per trip. How many the apprentice guesses right is a "
                  "random illustration in the spirit of “code often keeps 3–4”. A newcomer's first trip reads "
                  "the question.") if not live else
                T("Time is accounted at about {ms:.0f} ms per trip. Each press is one real verify trip of the "
                  "bundled draft model. A newcomer's first trip reads the question.")).format(
                      ms=g.get("ms_per_trip", 8.0))
        pill_h = 0.0 if g["mode"] == "apprentice" else self.lh("small", True) + 12  # its pill under it
        item, end = self.para(note, x0, y + 8, cwid, "small", DIM, role="caption")
        if end + pill_h > SCENE_H - 8:
            self.removeItem(item)
            item, end = self.para(note, 40, board_end + 12, bw, "small", DIM, role="caption")
            if end > SCENE_H - 8:  # no room under the board either: back in the column, where it ends lowest
                self.removeItem(item)
                item, end = self.para(note, x0, y + 8, cwid, "small", DIM, role="caption")
            else:
                end = y
        if g["mode"] != "apprentice":  # the apprentice's own pill already says which it is
            self.badge("illustrative", x0, end + 6)
        return item


    def _counter_cards(self, counters: list[tuple[str, str]], x0: float, y: float, cwid: float) -> float:
        """Two rows of two counters (name over value) in cards ``cwid`` wide in all from ``x0``; the third
        (tokens per trip) in the accent colour. Returns the y below."""
        half = (cwid - 8) / 2
        for r in range(2):  # two rows of two counters
            bottoms = []
            for c in range(2):
                i = 2 * r + c
                name, value = counters[i]
                cx = x0 + c * (half + 8)
                _, ny = self.para(name, cx + 12, y + 6, half - 24, "label", DIM, role="card")
                v_item = self.text(value, cx + 12, ny, "number", ACCENT if i == 2 else TEXT, True, role="readout")
                bottoms.append(v_item.sceneBoundingRect().bottom() + 6)
            for c in range(2):
                self.box(x0 + c * (half + 8), y, half, max(bottoms) - y, PANEL, EDGE, z=0)
            y = max(bottoms) + 8
        return y

    def _apprentice_source(self, src: dict, live: bool, x0: float, y: float, cwid: float) -> float:
        """Where the apprentice's guesses come from (``ctx["game_source"]``): the bundled draft model, measured,
        with its last trip's guesses; or random, with why the live one is unavailable. Returns the y below."""
        if live:
            y = self.badge("measured", x0, y + 4, T("measured on the bundled draft model"), max_w=cwid
                           ).sceneBoundingRect().bottom()
            trip = src.get("trip") or {}
            if src.get("waiting"):
                _, y = self.para(T("the engine is running the trip…"), x0, y + 4, cwid, "small", DIM,
                                 role="caption")
            elif trip.get("guesses"):
                _, y = self.para(T("guessed: {g} · kept {a} · verify {ms}").format(
                    g=" ".join(trip["guesses"]), a=trip.get("accepted", 0), ms=fmt_ms(trip.get("verify_ms"))),
                    x0, y + 4, cwid, "small", DIM, role="caption")
        else:
            y = self.badge("illustrative", x0, y + 4, T("random, the source's 3–4 of 5 for code"), max_w=cwid
                           ).sceneBoundingRect().bottom()
            if src.get("reason"):
                _, y = self.para(T("live draft model unavailable: {reason}").format(reason=src["reason"]),
                                 x0, y + 4, cwid, "small", DIM, role="caption")
        return y


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
    ("tearing the book", "pipeline, tensor and expert parallelism", 14),
    ("the same opening", "prefix caching (APC, RadixAttention), routing", 15),
]


class MetaphorScene(TourScene):
    """The metaphor table: every metaphor, its formal term, and the section that explains it; columns sized from
    the measured text, rows grow when a term wraps."""

    title = "Metaphors and their formal names"

    def draw(self, ctx: dict) -> None:
        top = self.top
        # the column heads: a row of their own over the table, each over its column in the column's colour
        heads = [(T("metaphor"), ACCENT), (T("formal term"), TEXT), (T("section"), BLUE_LIGHT)]
        head_h = self.lh("heading", True) + 6
        top += head_h
        room = SCENE_H - 4 - top
        for style in ("label", "small"):  # the table is the page's running text: the body rung, under the heads
            m_w = max(self.measure(T(m), style, True).width() for m, _, _ in METAPHORS) + 30
            m_w = max(m_w, self.measure(heads[0][0], "heading", True).width() + 24)
            s_w = self.measure("§15", style, True).width() + 20
            t_w = 1520 - 40 - m_w - s_w
            rows_h = [max(self.measure(T(m), style, True).height(), self._height(T(term), style, t_w))
                      for m, term, _ in METAPHORS]
            if sum(rows_h) <= room:
                break
        for (name, color), (x, align) in zip(heads, ((60, "left"), (60 + m_w, "left"), (1540, "right"))):
            self.text(name, x, top - head_h, "heading", color, True, align=align, role="heading")
        pad = max(0.0, min(12.0, (room - sum(rows_h)) / len(rows_h)))  # what is left is shared out as padding
        y = top
        for i, ((metaphor, term, section), rh) in enumerate(zip(METAPHORS, rows_h)):
            if i % 2 == 0:
                self.box(40, y, 1520, rh + pad, QColor("#151d26"), None, radius=4, z=0)
            ty = y + pad / 2
            a = self.text(T(metaphor), 60, ty, style, ACCENT, True, role="body")
            b = self.text(T(term), 60 + m_w, ty, style, TEXT, width=t_w, role="body")
            c = self.text(f"§{section}", 1540, ty, style, BLUE_LIGHT, True, align="right", role="body")
            for item in (a, b, c):
                self.fade_in(item, 0.1 + 0.06 * i)
            y += rh + pad

    def _height(self, s: str, style: str, width: float) -> float:
        probe = self.text(s, 0, 0, style, TEXT, width=width)
        h = probe.boundingRect().height()
        self.removeItem(probe)
        return h


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
    real decode trip per token with its KV cache (``analysis["closing_line"]``, ``model/teaching/analysis.py``), the
    words forced to the source's (teacher forcing); without a measurement, the line cut into tokens. The
    line grows in one text item, so every character sits on one baseline; in English the translation leads and
    the source's own (Chinese) words are what the model writes."""

    title = "Three questions"

    def draw(self, ctx: dict) -> None:
        y = self.top - 6  # the narration under the stage says "Three questions, and now they can be answered."
        groups = []
        split = ((ctx.get("analysis") or {}).get("decode") or {}).get("split")
        for i, (q, a) in enumerate(QUESTIONS):
            qi, qy = self.para(f"{i + 1}. " + T(q), 64, y + 6, 1470, "body", TEXT, True, role="card")
            ai, ay = self.para(T(a), 64, qy + 2, 1470, "label", GREEN, role="card")
            group = [qi, ai]
            if i == 1 and trip_words.measured(split):  # the answer on memory, beside what §7 measured here
                mi, ay = self.para(trip_words.page18_line(split), 64, ay + 2, 1470, "label", TEXT, role="card")
                group.append(mi)
            card = self.box(40, y, 1520, ay + 6 - y, PANEL, EDGE, z=0)
            group.insert(0, card)
            for item in group:
                self.fade_in(item, 0.2 + 0.4 * i)
            groups.append(group)
            y = ay + 12
        live = ((ctx.get("analysis") or {}).get("closing_line") or {})
        if live.get("tokens"):
            groups.append(self.collect(lambda: self._write_live(ctx, live, 1.6, y))[1])
        else:
            groups.append(self.collect(lambda: self._cut_only(ctx, 1.6, y))[1])
        self.spread(groups, bottom=SCENE_H - 4, most=48)  # the cards and the line share the height left

    def _write_live(self, ctx: dict, live: dict, t0: float, y: float) -> None:
        toks = live["tokens"]
        n = len(toks)
        if ctx.get("lang") != "zh":
            _, y = self.para("“" + T(CLOSING_LINE) + "”", 40, y, 1520, "heading", ACCENT, True, role="quote")
            y += 4  # below: the source's own words, written by the model (the caption at the bottom says so)
        # the line, growing token by token in one item (a token that only completes part of a character adds
        # nothing yet)
        texts = []
        acc = ""
        for tok in toks:
            acc += tok.get("text") or ""
            texts.append(acc)
        line = None
        if ctx.get("lang") == "zh":  # an English page stays English: the trips below are the Chinese line's
            line = self.text(texts[-1], 40, y, "heading", ACCENT, True, width=1520, role="quote")
            y = line.sceneBoundingRect().bottom() + 6
        # the counter: trip j of n, that trip's measured time, the running total
        cum, total = [], 0.0
        for t in toks:
            total += t["ms"]
            cum.append(total)
        bs = int(live.get("block_size") or 16)

        def counter_text(j: int) -> str:
            t = toks[j]
            return T("trip {j} of {n} · this trip {ms} · all trips {total} · cheat sheet: {c} tokens in {b} blocks "
                     "of {bs}").format(j=j + 1, n=n, ms=fmt_ms(t["ms"]), total=fmt_ms(cum[j]), c=t["cached"],
                                       b=t["blocks"], bs=bs)

        counter = self.text(counter_text(n - 1), 40, y, "label", TEXT, True, width=1520, role="readout")

        def show(p: float) -> None:
            j = min(n - 1, int(p * n))
            if line is not None:
                line.setPlainText(texts[j])
            counter.setPlainText(counter_text(j))
        self.timeline.add(Lambda(show, rate_func=lambda a: a), t0, t0 + TRIP_S * n)
        y = counter.sceneBoundingRect().bottom() + 6
        self._trip_bars(toks, t0, y)
        y += 56
        self._kv_blocks(toks, t0, y)
        pill = self.badge("measured", 1560, y + 2, T("each trip timed here"), align="right")
        y = max(pill.sceneBoundingRect().bottom(), y + self.lh("label") + 12) + 8
        self.fade_in(self.para_fit(T("Each token is one real trip of the model, with its KV cache; the words are the "
                                     "source's. Green: the model's own pick."), 40, y, 1520, SCENE_H - 8,
                                   color=DIM)[0], t0 + TRIP_S * n)

    def _trip_bars(self, toks: list[dict], t0: float, y: float) -> None:
        """One bar per trip in a band 48 px tall from ``y``, its height the measured time (capped at three times
        the median), green where the model's own pick was the source's; each fades in on its trip."""
        n = len(toks)
        ms = sorted(t["ms"] for t in toks)
        cap = max(1e-6, 3 * ms[len(ms) // 2])
        bw = 1520.0 / n
        for j, t in enumerate(toks):
            h = 8 + 40 * min(1.0, t["ms"] / cap)
            bar = self.box(40 + j * bw, y + 48 - h, max(2.0, bw - 3), h, BLUE_LIGHT if not t.get("hit") else GREEN,
                           None, radius=2)
            self.fade_in(bar, t0 + TRIP_S * j, t0 + TRIP_S * j + 0.12)

    def _kv_blocks(self, toks: list[dict], t0: float, y: float) -> None:
        """The cheat sheet: one box per KV block, appearing on the trip that first needed it."""
        kv = self.text(T("KV cache:"), 40, y + 4, "small", DIM, role="legend")
        first = {}
        for j, t in enumerate(toks):
            first.setdefault(t["blocks"], j)
        x = kv.sceneBoundingRect().right() + 12
        for b, j in sorted(first.items()):
            card, w = self.chip(T("block {b}").format(b=b), x, y, PAPER, style="label", min_w=90)
            self.pop_in(card, t0 + TRIP_S * j)
            x += w + 8

    def _cut_only(self, ctx: dict, t0: float, y: float) -> None:
        item, y = self.para(T(CLOSING_LINE), 40, y, 1520, "heading", ACCENT, True, role="quote")
        self.fade_in(item, t0)
        toks = ctx.get("closing_tokens") or []
        if toks:
            pill = self.badge("measured", 40, y + 6, T("cut by this model's tokenizer"))
            y = pill.sceneBoundingRect().bottom() + 6
        x = 40.0
        for j, tok in enumerate(toks[:40]):
            card, w = self.chip(tok["label"], x, y, PAPER, style="small", min_w=22)
            if x + w > 1560:
                self.removeItem(card)
                break
            self.pop_in(card, t0 + 0.5 + 0.05 * j)
            x += w + 4
            yb = card.sceneBoundingRect().bottom()
        if toks:
            y = yb
        self.text(T("When the engine is running, it writes this line here, one real trip per token."),
                  40, y + 8, "small", DIM, width=1520, role="caption")
