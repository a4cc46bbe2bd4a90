"""One trip on the stage as a timeline: load a copy, roll to the desks, read each chapter for its measured
share, pass notes (TP) or wait (PP), grow the cheat sheet, write a token per seat, roll back.

``TripTimeline`` is mixed into ``StageScene`` (animations/stage/scene.py): it reads the scene's parts
(``_warehouse``, ``_desks``, ``_cheat``, ``_seats``, ``_apprentice``, ``_legend``) and builds a ``Timeline``
of plain functions of progress, so the picture at any moment is a pure function of trip time.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable

from animations.easing import linear
from animations.stage.apprentice import guess_rows, judge
from animations.stage.code import stage_at
from animations.stage.seats import SeatText
from animations.stage.style import MAX_SEATS, PAD, line_height, tr, trip_tokens
from animations.timeline import Fade, Lambda, Timeline

# Phases of a trip, as fractions of its duration.
LOAD = (0.00, 0.16)
ROLL_OUT = (0.16, 0.28)
COMPUTE = (0.28, 0.76)
SEATS_AT = (0.74, 0.76)
ROLL_BACK = (0.78, 0.90)
UNLOAD = (0.90, 1.00)
APPRENTICE_IN = (0.00, 0.06)
GUESS_WRITE = (0.03, 0.24)
VERDICTS = (0.46, 0.76)
BONUS_IN = (0.70, 0.80)


class TripTimeline:
    """The trip half of ``StageScene``: from a step report (dict) to a ``Timeline``."""

    def _layer_shares(self, trip: dict) -> list[float]:
        """Cumulative ends (0 … 1) of each layer's share of the compute window, from ``layer_ms``.

        The engine times layers on a sample of trips (timing every layer slows every trip, issue 34): a trip
        without ``layer_ms`` uses the last sampled trip's times (same number of layers), else equal shares."""
        n = len(self._warehouse.bars)
        raw = trip.get("layer_ms") or []
        ms = []
        if len(raw) == n:
            for v in raw:
                try:
                    f = float(v)
                except (TypeError, ValueError):
                    f = 0.0
                ms.append(f if math.isfinite(f) and f > 0 else 0.0)
        if ms and sum(ms) > 0:
            self._sampled_layer_ms = ms
        else:
            last = getattr(self, "_sampled_layer_ms", None)
            ms = list(last) if last and len(last) == n else [1.0] * n
        total, acc, ends = sum(ms), 0.0, []
        for v in ms:
            acc += v
            ends.append(acc / total)
        ends[-1] = 1.0
        return ends

    def _caption_for(self, trip: dict) -> Callable[[], str]:
        """The headline of this trip: what it shows, then its tokens (``trip_tokens``: in and out)."""
        phase = trip.get("phase", "decode")
        tokens_in = int(trip.get("tokens_in", 0) or 0)
        try:
            tokens_out = int(trip.get("tokens_out", len(trip.get("tokens") or [])) or 0)
        except (TypeError, ValueError):
            tokens_out = 0
        batch = int(trip.get("batch", 0) or len(trip.get("request_ids") or []) or 1)
        what = self._caption_what(phase, batch)
        return lambda: tr("{what} · one trip: {tokens}").format(what=what(), tokens=trip_tokens(tokens_in,
                                                                                               tokens_out))

    def _caption_what(self, phase: str, batch: int) -> Callable[[], str]:
        if phase == "prefill":
            return lambda: tr("Reading the question")
        if phase == "mixed":
            return lambda: tr("Reading and writing together")
        if phase == "verify":
            return lambda: tr("Checking the apprentice's guesses")
        if batch > 1:
            return lambda: tr("Sharing a table: {n} requests").format(n=batch)
        if self._shard_n > 1:
            n = self._shard_n
            if self._shard_mode == "tp":
                return lambda: tr("Torn book: {n} desks, a strip of each chapter").format(n=n)
            return lambda: tr("Torn book: {n} desks, their own chapters").format(n=n)
        return lambda: tr("Writing")

    def _seats_after(self, trip: dict) -> tuple[list[SeatText], list[SeatText]]:
        """Seats before and after this trip's tokens, derived from the reports (when the window sends none).
        A request joins at the lowest free seat; one missing from a trip is "done" for a trip, then leaves."""
        before = {k: s for k, s in self._seat_of.items() if s.state != "done"}
        ids = [str(r) for r in trip.get("request_ids") or []]
        texts: dict[str, str] = {}
        for tok in trip.get("tokens") or []:
            rid = str(tok.get("request_id", ""))
            text = tok.get("text") if tok.get("text") is not None else tok.get("label", "")
            texts[rid] = texts.get(rid, "") + str(text)
        phase = trip.get("phase", "decode")
        after: dict[str, SeatText] = {}
        used = {s.seat for s in before.values()}  # a request that finished keeps its seat for one trip
        for rid in ids:
            old = before.get(rid)
            if old is None:
                seat = next(i for i in range(len(used) + 1) if i not in used)
                used.add(seat)
                old = SeatText(seat, rid, "", "", "reading")
            state = "writing" if rid in texts else ("reading" if phase in ("prefill", "mixed") else old.state)
            after[rid] = SeatText(old.seat, rid, old.prompt, old.answer + texts.get(rid, ""), state)
        for rid, old in before.items():
            if rid not in after and ids:
                after[rid] = SeatText(old.seat, rid, old.prompt, old.answer, "done")
        entering = dict(before)
        for rid, s in after.items():
            if rid not in entering:
                entering[rid] = SeatText(s.seat, rid, s.prompt, "", "reading")
        self._seat_of = {k: v for k, v in after.items() if v.seat < MAX_SEATS}
        return (sorted(entering.values(), key=lambda s: s.seat)[:MAX_SEATS],
                sorted(self._seat_of.values(), key=lambda s: s.seat))

    def _build_timeline(self, trip: dict, d: float, blocks_before: int) -> Timeline:
        """The trip's timeline, ``d`` seconds long: the book carried to the desks and back, the chapters read, the
        code followed, the cheat sheet's pages, the table's seats and the apprentice's guesses."""
        tl = Timeline()
        self._set_caption(self._caption_for(trip))
        desks, n_desks = self._desks, self._desks.n

        def at(window: tuple[float, float]) -> tuple[float, float]:
            return window[0] * d, window[1] * d

        tl.add(Lambda(self._load_book(n_desks), linear), *at(LOAD))
        tl.add(Lambda(self._roll_carts(0.0, 1.0, n_desks)), *at(ROLL_OUT))
        ends = self._layer_shares(trip)
        sync_share = self._set_desk_times(trip)
        tl.add(Lambda(self._read_chapters(ends, sync_share), linear), *at(COMPUTE))
        tl.add(Lambda(self._follow_code(trip, ends), linear), 0.0, d)
        tl.add(Lambda(self._fill_cheat_sheet(trip, blocks_before), linear), *at(COMPUTE))
        self._add_table(tl, trip, at)
        tl.add(Lambda(self._roll_carts(1.0, 0.0, n_desks)), *at(ROLL_BACK))
        tl.add(Lambda(lambda p: [desks.set_loaded(i, 1.0 - p) for i in range(n_desks)], linear), *at(UNLOAD))
        return tl

    def _load_book(self, n_desks: int) -> Callable[[float], None]:
        """The book copied from the warehouse to the ``n_desks`` desks, ``p`` of the way (the row being copied
        lit)."""
        wh, desks = self._warehouse, self._desks

        def load(p: float) -> None:
            rows = ([-1] if wh.dictionary_bytes else []) + list(range(len(wh.bars)))
            k = int(p * len(rows)) if 0 < p < 1 else None
            wh.set_copying(rows[k] if k is not None else None)
            for i in range(n_desks):
                desks.set_loaded(i, p)
        return load

    def _roll_carts(self, a: float, b: float, n_desks: int) -> Callable[[float], None]:
        """Every desk's cart rolled from ``a`` to ``b`` of its way as the animation goes from 0 to 1."""
        desks = self._desks
        return lambda p: [desks.set_cart_progress(i, a + (b - a) * p) for i in range(n_desks)]

    def _set_desk_times(self, trip: dict) -> float:
        """Each desk's measured times (the workers', or the whole forward on one desk); returns the share of a
        chapter spent passing the note between torn desks (from the workers' communication, else 0.25)."""
        desks, n_desks = self._desks, self._desks.n
        workers = sorted(trip.get("workers") or [], key=lambda w: int(w.get("rank", 0)))
        wall = trip.get("wall_ms")
        if workers and n_desks > 1:
            desks.set_times(workers, wall)
            self._update_note()
        elif n_desks == 1 and trip.get("forward_ms") is not None:
            desks.set_times([{"compute_ms": trip.get("forward_ms")}], wall)
        comm = sum(float(w.get("comm_ms") or 0) for w in workers)
        work = sum(float(w.get("compute_ms") or 0) for w in workers)
        return min(0.6, max(0.15, comm / (comm + work))) if comm + work > 0 else 0.25

    def _read_chapters(self, ends: list[float], sync_share: float) -> Callable[[float], None]:
        """The chapter being read at each moment (``ends``: where each chapter's share of the trip ends); a torn
        book's desks read first, then pass the note in the chapter's last ``sync_share``."""
        desks, n_desks = self._desks, self._desks.n

        def light(p: float) -> None:
            lit = None if p <= 0.0 or p >= 1.0 else min(bisect_right(ends, p), len(ends) - 1)
            if lit != self._lit:
                self._lit = lit
                desks.set_lit(lit)
            f = 0.0
            if lit is not None:
                start = ends[lit - 1] if lit > 0 else 0.0
                f = (p - start) / max(1e-9, ends[lit] - start)
            if lit is not None and desks.mode == "tp" and n_desks > 1:
                desks.set_reading(lit, f / (1 - sync_share))  # read first, then pass the note
                desks.set_sync(lit, (f - (1 - sync_share)) / sync_share)  # the note, in the chapter's last part
            else:
                desks.set_reading(lit, f)
                desks.set_sync(None, 0.0)
        return light

    def _fill_cheat_sheet(self, trip: dict, blocks_before: int) -> Callable[[float], None]:
        """The cheat sheet's pages in use going from ``blocks_before`` to the trip's, the shared ones marked:
        pages of an opening another seat already wrote (prefix-cache hits) stay shared while blocks stay in use."""
        old = blocks_before
        new = max(0, int(trip.get("blocks_in_use", old) or 0))
        hits = int(trip.get("prefix_hit_tokens") or 0)
        before_shared = self._shared_before
        shared = min(new, math.ceil(hits / self._cheat.block_tokens) if hits else before_shared)
        self._shared_pages = shared
        if shared:
            self._legend.set_marks(self._shard_mode, self._shard_n, True)
        return lambda p: self._cheat.set_in_use(round(old + (new - old) * p), min(old, new),
                                                shared if p > 0 else min(before_shared, old))

    def _add_table(self, tl: Timeline, trip: dict, at) -> None:
        """The table: seats (derived from the report unless the window sends them) and the apprentice."""
        if self._gui_seats is None and self._trip_seats is not None:
            before, after = self._trip_seats

            def seats(p: float) -> None:
                want = after if p > 0 else before
                if self._seats_drawn is not want:  # redraw only when the table changes
                    self._draw_seats(want)
                    self._seats_drawn = want
            tl.add(Lambda(seats, linear), *at(SEATS_AT))
        rid, rows = guess_rows(trip)
        self._apprentice.hide()
        if rows:
            self._count_guesses(trip, rid, rows)
            self._add_guesses(tl, trip, rid, rows, at)
        else:
            self._guess_top = None
            self._legend.allow_table(True)
            if self._spec_note is not None:  # the note is of the trip on stage: none without guesses
                self._spec_note = None
                self._update_note()
            self._seats.set_area(self._table_area())

    def _follow_code(self, trip: dict, ends: list[float]) -> Callable[[float], None]:
        """The engine's stage at each moment of this trip (``animations.stage.code.stage_at``), sent as
        ``code_stage`` when it changes: the code view highlights the lines the stage on screen has reached."""
        stages = list(trip.get("stages") or [])

        def follow(p: float) -> None:
            entry = stage_at(stages, p, ends)
            if entry is not None and entry != self.code_stage_now:
                self.code_stage_now = entry
                self.code_stage.emit(entry)
        return follow

    def _add_guesses(self, tl: Timeline, trip: dict, rid: str, rows, at) -> None:
        ap = self._apprentice
        self._guess_top = None
        self._legend.allow_table(True)
        note_top = self._legend.table_top()
        top = ap.layout(trip, rows, self._color_for(rid), self._spec_note_text(), bottom=note_top)
        table = self.regions.table
        if note_top is not None and top < table.top() + PAD + 2 * line_height(ap.font):
            self._legend.allow_table(False)  # no room for both at the table: the note keeps to the legend
            top = ap.layout(trip, rows, self._color_for(rid), self._spec_note_text())
        self._guess_top = top
        self._seats.set_area(self._table_area())
        for item in (ap.figure, ap.title, ap.count, ap.verdict):
            tl.add(Fade(item, 0.0, 1.0), *at(APPRENTICE_IN))
        tl.add(Lambda(ap.figure.set_writing, linear), *at(GUESS_WRITE))
        writes, verdicts = [], []
        for g, (state, text, fix) in zip(ap.guesses, rows):
            if state == "bonus":
                tl.add(Fade(g, 0.0, 1.0), *at(BONUS_IN))
                continue
            writes.append(Fade(g, 0.0, 1.0, linear))
            verdicts.append(Lambda(judge(g, state, text, fix), linear))
        tl.add_lagged(writes, *at(GUESS_WRITE), lag_ratio=0.6)
        if verdicts:
            tl.add_lagged(verdicts, *at(VERDICTS), lag_ratio=0.5)

    def _count_guesses(self, trip: dict, rid: str, rows) -> None:
        """The measured tokens of this verify trip at the guessing seat; when fewer than the lesson's k + 1, the
        legend says why, of this trip (like the headline and the desks), never of an average the window's lines
        do not show (once per trip, not per frame; ``_build_timeline`` may run again on a relayout). The
        apprentice's own words say it, in place of their general "a wrong guess throws away the rest"."""
        if self._spec_seen is trip:
            return
        self._spec_seen = trip
        k = sum(1 for state, _, _ in rows if state != "bonus")
        written = sum(1 for t in trip.get("tokens") or [] if str(t.get("request_id", "")) == rid)
        shared = int(trip.get("batch", 0) or len(trip.get("request_ids") or []) or 1) > 1
        self._spec_note = (written, k + 1, shared) if written < k + 1 else None
        self._update_note()

    def _spec_note_text(self) -> str:
        if not self._spec_note:
            return ""
        written, best, shared = self._spec_note
        # other seats wrote too when the table is shared: the headline counts all of them, this counts one
        where = tr("This trip, at the guessing seat") if shared else tr("This trip")
        count = tr("1 token") if written == 1 else tr("{x} tokens").format(x=written)
        return tr("{where}: {count}, not {best}: a wrong guess throws away the rest").format(
            where=where, count=count, best=best)
