"""The Live stage: the book stays in the warehouse, a copy is carted to each desk once per trip, each trip
writes one token for every seat at the table, and the cheat sheet fills as the answers grow.

One real forward pass of the model is one trip. ``StageScene.show_trip(trip)`` turns the engine's measured step
report (a plain dict: phase, request_ids, tokens, layer_ms, blocks_in_use, prefix_hit_tokens, workers, draft
fields) into a ``Timeline``; ``advance(dt_s)`` is the only thing that moves stage time, and every frame the
scene ``seek``s that timeline, so the picture at any moment is a pure function of trip time.

What a trip shows (fractions of its duration):
  0.00–0.16  a copy of the book (dictionary, then chapter by chapter) is loaded onto each desk's cart; the
             warehouse outlines the chapter being copied — the book itself never leaves the warehouse
  0.16–0.28  the carts roll to their desks
  0.28–0.76  each chapter is lit for a share of the window proportional to its measured ``layer_ms``, a light
             band sweeping across it as it is read; torn book: TP desks pass a note after every chapter, PP
             desks wait for the one holding the chapter;
             the cheat sheet grows (or shrinks) to the real ``blocks_in_use``
  0.74       every seat's new token appears in its answer (seats that joined show up, finished ones say done)
  0.78–1.00  the carts roll back and the copies are thrown away

The parts live in their own modules of this package: warehouse, desks, cheat, seats, apprentice, legend, and
what can be read back in queries; style holds the regions, type sizes and text helpers. User-visible strings go
through Qt's translation system (context "StageScene"; Chinese in ``assets/i18n/one_trip_zh_CN.ts``).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QRectF, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsScene

from animations.items import BACKGROUND, REQUEST_COLORS, TEXT, TEXT_DIM, pick_family
from animations.stage.apprentice import Apprentice
from animations.stage.cheat import CheatSheet
from animations.stage.desks import Desks
from animations.stage.legend import Legend
from animations.stage.queries import StageQueries
from animations.stage.seats import Seats, SeatText
from animations.stage.style import (
    CAPTION,
    MAX_SEATS,
    SCENE_RECT,
    StageRegions,
    StageType,
    add_text,
    fit_for_view,
    set_elided,
    tr,
)
from animations.stage.trip import TripTimeline
from animations.stage.warehouse import Warehouse
from animations.timeline import Timeline

_tr = tr


def as_seat(x, index: int) -> SeatText:
    """A ``SeatText`` from a ``SeatText`` or a plain dict (see ``StageScene.show_requests``)."""
    if isinstance(x, SeatText):
        return x
    answer = str(x.get("answer") or "")
    state = str(x.get("state") or ("done" if x.get("done") else "writing" if answer else "reading"))
    return SeatText(int(x.get("seat", index)), x.get("request_id", index), str(x.get("prompt") or ""), answer, state)

FRAME_S = 1.0 / 60.0  # a real-time trip lasts at least one frame


class StageScene(StageQueries, TripTimeline, QGraphicsScene):
    """Warehouse, carts and desks, cheat sheet, table of seats, apprentice and legend; one trip per
    ``show_trip``. Stage time moves only through ``advance(dt_s)``; ``trip_finished`` is emitted once per trip
    shown, when its timeline ends; ``trip_started`` (the trip's dict) when one goes on stage, so that every text
    of "this trip" outside the stage (the window's readout) is of the trip the stage shows, not of a newer report
    still waiting. Trips that arrive while one is animating wait in ``pending`` (at most ``max_pending``; in
    real-time mode only the newest few), oldest first; the oldest are dropped past the cap.
    """

    trip_finished = Signal()
    trip_started = Signal(object)
    code_stage = Signal(str)  # the engine's stage the trip on screen has reached ("attention:2"; animations.stage.code)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.regions = StageRegions()  # the parts' regions: the scene's height (set_scene_height) decides them
        self.setSceneRect(self.regions.scene)
        self.setBackgroundBrush(BACKGROUND)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)  # items move every frame
        self._family = pick_family()
        self._type = StageType()
        self._lang = "en"
        self._trip_duration_s = 1.0
        self._real_time = False
        self.max_pending = 32
        self.max_pending_real_time = 3
        self.dropped_trips = 0
        self._pending: deque[dict] = deque()
        self._timeline: Timeline | None = None
        self._trip: dict | None = None
        self._t = 0.0
        self._duration = 0.0
        self._caption_fn: Callable[[], str] = lambda: tr("The book rests in the warehouse. Every token costs one trip.")
        self._colors: dict[str, QColor] = {}
        self._shard_mode, self._shard_n, self._shard_layers = "tp", 1, []
        self._gui_seats: list[SeatText] | None = None
        self._seat_of: dict[str, SeatText] = {}  # seats derived from the reports (when the window sends none)
        self._measure_note = ""
        self._notice_fn: Callable[[], str] | None = None
        self._shared_pages = self._shared_before = 0  # cheat-sheet pages shared by two seats (prefix hits)
        self._spec_note: tuple[int, int, bool] | None = None  # this trip: (tokens written, k + 1, shared table)
        self._spec_seen: dict | None = None
        self._lit: int | None = None
        self.code_stage_now: str | None = None  # the last ``code_stage`` sent (None: idle, or no stages reported)
        self._guess_top: float | None = None  # the top of the apprentice's column on a verify trip
        self._configured = False
        self._args = ([0] * 4, 0, 0, "", 0, 16)
        # seat cards redrawn per show_requests call at most (None: all at once); the rest by draw_pending_seats
        self.seat_redraw_budget: int | None = None
        self._details = True  # the engineer's figures on the stage (set_details)
        self._seats_done = True
        self._build()

    # --- public properties ---------------------------------------------------------------------------------
    @property
    def trip_duration_s(self) -> float:
        """Seconds one trip takes on screen at human pace (default 1.0)."""
        return self._trip_duration_s

    @trip_duration_s.setter
    def trip_duration_s(self, value: float) -> None:
        if not value > 0:
            raise ValueError(f"trip_duration_s must be > 0, got {value!r}")
        self._trip_duration_s = float(value)

    @property
    def real_time(self) -> bool:
        """When True each trip lasts its measured ``wall_ms`` (at least one frame): trips just flash."""
        return self._real_time

    @real_time.setter
    def real_time(self, value: bool) -> None:
        self._real_time = bool(value)
        self._trim_pending()

    @property
    def pending(self) -> list[dict]:
        """Trips waiting for the one on screen to finish, oldest first (a copy)."""
        return list(self._pending)

    @property
    def configured(self) -> bool:
        """False until ``configure`` (the stage then says "loading the model…")."""
        return self._configured

    @property
    def language(self) -> str:
        return self._lang

    @property
    def font_family(self) -> str:
        return self._family

    # --- configuration -------------------------------------------------------------------------------------
    def configure(self, layer_bytes: list[int], block_bytes: int, num_blocks: int, model_name: str,
                  dictionary_bytes: int = 0, block_tokens: int = 16) -> None:
        """Draw the model: one chapter per layer (to scale by ``layer_bytes``, bytes) and the dictionary
        (``dictionary_bytes``: embeddings / LM head), a KV cache of ``num_blocks`` pages of ``block_bytes`` bytes
        holding ``block_tokens`` tokens each, and ``model_name`` in the warehouse. The desks keep their sharding,
        over this model's chapters (by chapters over several desks: the layers ``set_sharding`` was given).
        Drops any trip on screen or waiting (without ``trip_finished``) and shows the idle stage."""
        layer_bytes = [max(0, int(b)) for b in layer_bytes] or [0]
        self._args = (layer_bytes, max(0, int(block_bytes)), max(0, int(num_blocks)), str(model_name),
                      max(0, int(dictionary_bytes)), max(1, int(block_tokens)))
        if self._shard_mode == "tp" or self._shard_n == 1:  # every desk holds (a strip of) each of its chapters
            self._shard_layers = [(0, len(layer_bytes))] * self._shard_n
        self._pending.clear()
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self._configured = True
        self._shared_pages = self._shared_before = 0
        self._build()

    memory_kind: str | None = None  # "gpu" or "cpu": where the weights live here (the warehouse says which)

    def set_device(self, device: str) -> None:
        """The engine's device ("cpu", "cuda", "cuda:1"): the warehouse then names the memory it is on this
        machine (GPU memory, or RAM when the engine runs on the CPU)."""
        kind = "gpu" if str(device).startswith(("cuda", "mps", "xpu")) else "cpu"
        if kind != self.memory_kind:
            self.memory_kind = kind
            if getattr(self, "_configured", False):
                self._rebuild_keep_trip()

    def set_view(self, view_width_px: float, view_height_px: float, window_height_px: float,
                 presenter: bool = False) -> None:
        """Pick font sizes for a view of that size (px) in a window that tall, so that after ``fitInView`` no
        text is under window_height / 60 px. Keeps the trip on screen."""
        new = StageType(float(window_height_px), fit_for_view(view_width_px, view_height_px, self.regions.height),
                        bool(presenter),
                        self._lang)
        sizes = [round(t.units(style) + 0.49) for t in (new, self._type) for style in ("small", "label", "body",
                                                                                      "heading")]
        if sizes[:4] != sizes[4:]:  # a resize that changes no font size costs nothing
            self._type = new
            self._rebuild_keep_trip()

    def set_scene_height(self, height: float) -> None:
        """Draw the stage ``height`` scene units tall (1600 wide; clamped to ``PRESENTER_SCENE_MIN_HEIGHT`` .. 700): a
        page whose rows under the stage take more height asks for a shorter stage rather than a narrower one
        (``StageRegions``). Keeps the trip on screen; the same height again costs nothing."""
        new = StageRegions(height)
        if new == self.regions:
            return
        self.regions = new
        self.setSceneRect(new.scene)
        self._rebuild_keep_trip()

    def set_font_family(self, family: str) -> None:
        """Use ``family`` for every text on the stage (one with Chinese glyphs; see animations.fonts)."""
        self._family = family
        self._rebuild_keep_trip()

    def set_language(self, lang: str) -> None:
        """Re-apply every string on the stage in ``lang`` ("zh" or "en") from Qt's installed translators."""
        if lang not in ("zh", "en"):
            raise ValueError(f"unknown language {lang!r}; expected 'zh' or 'en'")
        self._lang = lang
        self._type = replace(self._type, lang=lang)  # the same sizes, the language's punctuation
        self._rebuild_keep_trip()

    def set_sharding(self, mode: str, n: int, layers: list[tuple[int, int]] | None = None) -> None:
        """Draw the book torn ``n`` ways, one desk per worker: "tp" gives every desk a strip of every chapter,
        "pp" gives each desk a run of whole chapters: ``layers``, per desk [start, stop), as the engine reported
        them (the sharding event's workers; the split itself is ``model.parallel.plan.split_layers``, in one place);
        their count is the number of desks. n = 1: one desk. Raises ValueError for another mode, or for "pp"
        with n > 1 and no layers."""
        if mode not in ("tp", "pp"):
            raise ValueError(f"sharding mode must be 'tp' or 'pp', got {mode!r}")
        n = max(1, int(n))
        n_layer = len(self._args[0])
        if mode == "pp":
            if layers:
                n = len(layers)
            elif n == 1:
                layers = [(0, n_layer)]
            else:
                raise ValueError(f"pp over {n} desks needs each desk's layers [start, stop) as the engine reported "
                                 "them (the sharding event's workers)")
        else:
            layers = [(0, n_layer)] * n
        self._shard_mode, self._shard_n = mode, n
        self._shard_layers = [(int(a), int(b)) for a, b in layers]
        self._rebuild_keep_trip()

    def show_requests(self, seats: list) -> None:
        """Show exactly these seats at the table (up to MAX_SEATS, by ``seat``) until the next call (``reset``
        goes back to seats derived from the reports). Each entry is a ``SeatText`` or a dict with "request_id",
        "prompt", "answer" and either "state" or "done" (bool); "seat" defaults to the entry's index."""
        self._gui_seats = sorted((as_seat(x, i) for i, x in enumerate(seats)), key=lambda s: s.seat)[:MAX_SEATS]
        self._seats_done = self._draw_seats(self._gui_seats, self.seat_redraw_budget)

    def draw_pending_seats(self) -> bool:
        """Redraw up to ``seat_redraw_budget`` more cards of the last ``show_requests``; True when all are drawn.
        (The window calls it once per frame until True; anything that reads the table finishes it first.)"""
        if not self._seats_done and self._gui_seats is not None:
            self._seats_done = self._draw_seats(self._gui_seats, self.seat_redraw_budget)
        return self._seats_done

    def _finish_seats(self) -> None:
        if not self._seats_done and self._gui_seats is not None:
            self._seats_done = self._draw_seats(self._gui_seats)

    def set_details(self, on: bool) -> None:
        """Show (True) or hide the stage's second-order words: the size of one cheat-sheet page and the words in
        the free places (their outlines stay). Default: shown."""
        if bool(on) != self._details:
            self._details = bool(on)
            self._rebuild_keep_trip()  # the desks lay their lines out again

    def _show_details(self) -> None:
        on = self._details
        if self._cheat.page_shown != on:
            self._cheat.show_page(on)
        for f in self._seats.free:
            f["label"].setVisible(on)

    def set_measure_note(self, text: str) -> None:
        """One line (in the legend) saying why a measured figure goes against the lesson; "" hides it."""
        self._measure_note = str(text or "")
        self._update_note()

    def show_notice(self, text: Callable[[], str]) -> None:
        """Show ``text()`` (re-read on a language switch) as the stage's caption until the next trip (before
        ``configure``: in place of "loading the model…")."""
        self._set_caption(text)
        if not self._configured:
            self._notice_fn = text
            self._place_placeholder()

    # --- building ------------------------------------------------------------------------------------------
    def _rebuild_keep_trip(self) -> None:
        trip, t, duration = self._trip, self._t, self._duration
        blocks, before, seats = self._cheat.in_use, self._blocks_before, self._trip_seats
        shared = self._shared_pages if trip is None else self._shared_before
        self._build()
        self._trip_seats = seats
        self._shared_before = self._shared_pages = shared
        self._cheat.set_in_use(blocks, blocks, min(shared, blocks), rescale=True)
        if trip is not None:
            self._trip, self._duration, self._t, self._blocks_before = trip, duration, t, before
            self._timeline = self._build_timeline(trip, duration, before)
            self._timeline.seek(t)

    def _build(self) -> None:
        layer_bytes, block_bytes, num_blocks, name, dictionary, block_tokens = self._args
        fam, ty = self._family, self._type
        # how long each seated request has sat: a rebuild (resize, torn book, language) is no new arrival, so a
        # card that had faded in stays drawn (with the clock stopped it never faded in again: an empty table
        # under "seats taken: 1")
        ages = dict(self._seats.ages) if getattr(self, "_seats", None) is not None else {}
        self.clear()
        self._caption = add_text(self, ty.font(fam, "headline", bold=True), "headline", TEXT)
        self._placeholder = add_text(self, ty.font(fam, "heading", bold=True), "placeholder", TEXT_DIM)
        self._warehouse = Warehouse(self, fam, ty, layer_bytes, dictionary, name)
        self._desks = Desks(self, fam, ty, self._shard_mode, self._shard_n, layer_bytes, dictionary,
                            self._shard_layers)
        self._cheat = CheatSheet(self, fam, ty, block_bytes, num_blocks, block_tokens)
        self._seats = Seats(self, fam, ty)
        self._seats.ages = ages
        self._legend = Legend(self, fam, ty)
        self._apprentice = Apprentice(self, fam, ty)
        self._warehouse.layout()
        self._desks.layout()
        self._cheat.layout()
        self._guess_top = None
        self._legend.set_marks(self._shard_mode, self._shard_n, self._shared_pages > 0)
        self._update_note()
        self._lit = None
        self._blocks_before = 0
        self._trip_seats = None
        self._seats_drawn = None
        self._seats_done = True
        self._draw_seats(self._gui_seats if self._gui_seats is not None else list(self._seat_of.values()))
        self._show_details()
        if not self._configured:  # only the words "loading the model…": no zero-sized figures
            for item in self.items():
                if item.parentItem() is None:
                    item.setVisible(False)
        self._placeholder.setVisible(not self._configured)
        if not self._configured:
            self._place_placeholder()
        self._caption.setVisible(True)
        self._set_caption(self._caption_fn)

    def _place_placeholder(self) -> None:
        """Before a model: "loading the model…", or the notice the window showed (e.g. why none could load)."""
        text = self._notice_fn() if self._notice_fn is not None else tr("loading the model…")
        scene = self.regions.scene
        set_elided(self._placeholder, text, scene.width() - 80)
        r = self._placeholder.boundingRect()
        self._placeholder.setPos(scene.center().x() - r.width() / 2, scene.center().y() - r.height() / 2)

    def _update_note(self) -> None:
        # the apprentice's note (fewer tokens than guessed) stands in its own words, beside its slips
        note = self._measure_note or self._desks.measure_note()
        self._legend.set_note(note)
        self._seats.set_area(self._table_area())

    def _table_area(self) -> QRectF:
        """The part of the table the seats may use: above the apprentice (verify trips) and above the legend's
        note where the legend had too few lines for it."""
        area = QRectF(self.regions.table)
        for top in (self._legend.table_top(), self._guess_top):
            if top is not None:
                area.setBottom(min(area.bottom(), top))
        return area

    def _set_caption(self, fn: Callable[[], str]) -> None:
        self._caption_fn = fn
        set_elided(self._caption, fn() if self._configured else "", CAPTION.width())
        r = self._caption.boundingRect()
        self._caption.setPos(CAPTION.center().x() - r.width() / 2, CAPTION.center().y() - r.height() / 2)

    def _color_for(self, request_id) -> QColor:
        key = str(request_id)
        color = self._colors.get(key)
        if color is None:
            color = REQUEST_COLORS[len(self._colors) % len(REQUEST_COLORS)]
            self._colors[key] = color
        return color

    def _draw_seats(self, seats: list[SeatText], max_redraws: int | None = None) -> bool:
        if not self._configured:
            return True
        seats = sorted(seats, key=lambda s: s.seat)
        return self._seats.show(seats, [self._color_for(s.request_id) for s in seats], max_redraws)

    # --- trips ---------------------------------------------------------------------------------------------
    def show_trip(self, trip: dict) -> None:
        """Animate one real forward pass (a step report as a dict; see the module docstring for the keys).
        Starts at once when idle; otherwise waits in ``pending``. Before ``configure`` the stage draws a book of
        as many chapters as ``layer_ms`` has, without sizes."""
        if not self._configured:
            n = len(trip.get("layer_ms") or []) or 1
            self.configure([0] * n, 0, max(16, int(trip.get("blocks_in_use", 0) or 0)), "")
        if self._timeline is None and not self._pending:
            self._start(trip)
        else:
            self._pending.append(trip)
            self._trim_pending()

    def _trim_pending(self) -> None:
        cap = self.max_pending_real_time if self._real_time else self.max_pending
        while len(self._pending) > cap:
            self._pending.popleft()
            self.dropped_trips += 1

    def advance(self, dt_s: float) -> None:
        """Move stage time forward by ``dt_s`` seconds (the clock's tick); the only way stage time moves.
        At most one trip ends per call, so even real-time trips shorter than a frame are each seen."""
        if dt_s > 0:
            self._seats.tick(dt_s)
        if self._timeline is None:
            if not self._pending:
                return
            self._start(self._pending.popleft())
        if not dt_s > 0:
            return
        self._t += dt_s
        if self._t < self._duration:
            self._timeline.seek(self._t)
            return
        leftover = self._t - self._duration
        self._timeline.seek(self._duration)
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self.trip_finished.emit()
        if self._timeline is None and self._pending:  # a slot may already have started one
            self._start(self._pending.popleft())
            self._t = min(leftover, self._duration * 0.5)
            self._timeline.seek(self._t)

    def reset(self) -> None:
        """Forget every trip and every seat; return to the idle stage (empty cheat sheet, idle caption)."""
        self._pending.clear()
        self._timeline, self._trip, self._t, self._duration = None, None, 0.0, 0.0
        self._gui_seats = None
        self._seat_of.clear()
        self._spec_note, self._spec_seen = None, None
        self._shared_pages = self._shared_before = 0
        self._colors.clear()
        self._caption_fn = lambda: tr("The book rests in the warehouse. Every token costs one trip.")
        self._seats.ages.clear()  # every seat forgotten: the next to sit fades in
        self._build()

    def _trip_seconds(self, trip: dict) -> float:
        if self._real_time:
            try:
                wall_s = float(trip.get("wall_ms") or 0.0) / 1000.0
            except (TypeError, ValueError):
                wall_s = 0.0
            return max(FRAME_S, wall_s if math.isfinite(wall_s) else 0.0)
        return self._trip_duration_s

    def _start(self, trip: dict) -> None:
        self._trip = trip
        self._duration = self._trip_seconds(trip)
        self._t = 0.0
        self._blocks_before = self._cheat.in_use
        self._shared_before = self._shared_pages
        self._trip_seats = self._seats_after(trip) if self._gui_seats is None else None
        self._timeline = self._build_timeline(trip, self._duration, self._blocks_before)
        self._timeline.seek(0.0)
        self.trip_started.emit(trip)


__all__ = ["StageScene", "SeatText", "SCENE_RECT", "MAX_SEATS", "REQUEST_COLORS"]
