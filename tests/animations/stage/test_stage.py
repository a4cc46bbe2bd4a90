"""The stage, driven by hand: advance() moves its time, no clock involved."""

import pytest
from PySide6.QtCore import QRectF

from animations.stage.scene import MAX_SEATS, SeatText, StageScene
from animations.units import fmt_bytes

LAYER_BYTES = [3_150_000, 3_150_000, 1_575_000, 6_300_000]
# each desk's layers [start, stop) as the engine reports them for a book torn by chapters
# (model.parallel.plan.split_layers)
PP2 = [(0, 2), (2, 4)]
PP4_OF_12 = [(0, 3), (3, 6), (6, 9), (9, 12)]


def trip(**over):
    base = {
        "phase": "decode", "batch": 1, "request_ids": ["r1"], "layer_ms": [], "wall_ms": 4.0,
        "blocks_in_use": 3, "tokens": [{"request_id": "r1", "label": "␣the", "text": " the"}], "tokens_in": 1,
    }
    base.update(over)
    return base


@pytest.fixture
def stage(qapp):
    scene = StageScene()
    scene.configure(LAYER_BYTES, 49_152, 64, "test-gpt2")
    yield scene
    scene.reset()


def run(stage, seconds, dt=1 / 60):
    t = 0.0
    while t < seconds - 1e-12:
        step = min(dt, seconds - t)
        stage.advance(step)
        t += step


def test_format_bytes():
    assert fmt_bytes(512) == "512 B"
    assert fmt_bytes(49_152) == "49.2 kB"
    assert fmt_bytes(1_000_000) == "1.0 MB"
    assert fmt_bytes(16_060_000_000) == "16.1 GB"


def test_chapter_widths_are_to_scale_by_bytes(stage):
    widths = [c.rect().width() for c in stage.chapters]
    assert len(widths) == len(LAYER_BYTES)
    for w, b in zip(widths, LAYER_BYTES):
        assert w / widths[-1] == pytest.approx(b / LAYER_BYTES[-1])
    labels = [t.text() for t in stage.warehouse.labels]
    assert labels[0].endswith("3.1 MB") and labels[2].endswith("1.6 MB")


def test_before_a_model_the_stage_says_loading_and_draws_no_zero_figures(qapp):
    scene = StageScene()
    assert not scene.configured and not scene.busy()
    texts = [t.text() for t in scene.text_items()]
    assert any("loading the model" in t for t in texts)
    assert not any(("0 B" in t) or ("0 of 0" in t) for t in texts)
    scene.configure([1_000_000] * 12, 1024, 2000, "gpt2")
    texts = [t.text() for t in scene.text_items()]
    assert not any("loading the model" in t for t in texts)
    assert scene.lit_chapter() is None and scene.filled_cells() == 0
    assert scene.caption_text()


def test_trip_finished_once_per_trip_when_advanced_past_its_duration(stage, qtbot):
    finished = []
    stage.trip_finished.connect(lambda: finished.append(True))
    stage.show_trip(trip())
    assert stage.busy()
    run(stage, 0.99)
    assert finished == []
    run(stage, 0.02)
    assert finished == [True]
    assert not stage.busy()
    run(stage, 3.0)  # more time does not finish it again
    assert finished == [True]


def test_pending_trips_play_one_after_another(stage):
    finished = []
    stage.trip_finished.connect(lambda: finished.append(stage.trip_time_s()))
    for i in range(3):
        stage.show_trip(trip(blocks_in_use=3 + i))
    assert len(stage.pending) == 2
    run(stage, 3.2)
    assert len(finished) == 3
    assert not stage.busy()
    assert stage.filled_cells() == 5


def test_real_time_trips_last_their_wall_time_and_queue_is_capped(stage):
    stage.real_time = True
    finished = []
    stage.trip_finished.connect(lambda: finished.append(True))
    stage.show_trip(trip(wall_ms=50.0))
    assert stage.current_duration_s() == pytest.approx(0.050)
    for _ in range(20):
        stage.show_trip(trip(wall_ms=0.5))
    assert len(stage.pending) == stage.max_pending_real_time
    assert stage.dropped_trips == 20 - stage.max_pending_real_time
    run(stage, 0.05)
    assert finished == [True]
    # a sub-frame trip still lasts one frame, and each shows on its own frame
    assert stage.current_duration_s() == pytest.approx(1 / 60)
    stage.advance(1 / 60)
    assert len(finished) == 2


def lit_time(stage, layer_ms, dt):
    stage.show_trip(trip(layer_ms=layer_ms))
    time_lit = [0.0] * len(stage.chapters)
    while stage.busy():
        stage.advance(dt)
        lit = stage.lit_chapter()
        if lit is not None:
            time_lit[lit] += dt
    return time_lit


def test_chapters_light_for_shares_proportional_to_layer_ms(qapp):
    scene = StageScene()
    scene.configure([1000, 1000], 100, 16, "two-layer")
    lit = lit_time(scene, [1.0, 3.0], dt=1 / 1000)
    assert lit[1] / lit[0] == pytest.approx(3.0, rel=0.02)
    assert scene.lit_chapter() is None  # nothing lit after the trip


def test_empty_or_bad_layer_ms_gives_equal_shares(stage):
    for layer_ms in ([], [1.0, 2.0], [0, 0, 0, 0], [float("nan"), 1, 1, 1]):
        lit = lit_time(stage, layer_ms, dt=1 / 1000)
        if layer_ms and layer_ms[0] != layer_ms[0]:  # NaN counts as 0
            assert lit[0] == 0.0
            continue
        assert max(lit) == pytest.approx(min(lit), rel=0.05)


def test_the_whole_book_stays_in_the_warehouse_at_every_moment_of_a_trip(qapp):
    scene = StageScene()
    scene.configure(LAYER_BYTES, 49_152, 64, "test-gpt2", dictionary_bytes=4_700_000)
    home = [(b.rect(), b.pos()) for b in scene.chapters] + [(scene.warehouse.dictionary_bar.rect(), None)]
    scene.show_trip(trip())
    seen_cart_moving = False
    for k in range(61):
        bars = scene.chapters + [scene.warehouse.dictionary_bar]
        assert all(b.isVisible() and b.opacity() == 1.0 for b in bars), f"a chapter left the warehouse at {k}/60"
        assert [b.rect() for b in scene.chapters] == [r for r, _ in home[:-1]]
        xs = {scene.desks.rows[0]["cart"].x()}
        seen_cart_moving |= xs != {scene.desks.rest_x}
        scene.advance(1 / 60)
    assert seen_cart_moving  # a copy travelled


def test_warehouse_cart_and_readout_add_up_to_the_same_total(qapp):
    scene = StageScene()
    scene.configure(LAYER_BYTES, 49_152, 64, "test-gpt2", dictionary_bytes=4_700_000)
    total = sum(LAYER_BYTES) + 4_700_000  # what the engine reports as weight_bytes read per trip
    assert scene.warehouse.total_bytes == total
    assert fmt_bytes(total) in scene.warehouse.total.text()
    assert scene.desks.share_bytes(0) == total
    assert fmt_bytes(total) in scene.desks.rows[0]["cart_label"].text()
    for mode in ("tp", "pp"):
        scene.set_sharding(mode, 2, PP2 if mode == "pp" else None)
        assert sum(scene.desks.share_bytes(d) for d in range(2)) == pytest.approx(total, abs=1)


@pytest.mark.parametrize("mode", ["tp", "pp"])
def test_a_torn_book_gets_one_desk_and_one_cart_per_worker(stage, mode):
    stage.set_sharding(mode, 2, PP2 if mode == "pp" else None)
    assert stage.desks.n == 2 and len(stage.desks.rows) == 2
    carts = {id(r["cart"]) for r in stage.desks.rows}
    assert len(carts) == 2
    names = [r["name"].text() for r in stage.desks.rows]
    assert names[0] != names[1] and all(names)
    if mode == "pp":  # each desk gets its own run of whole chapters
        assert [sorted(i for i in r["bars"] if i >= 0) for r in stage.desks.rows] == [[0, 1], [2, 3]]
    else:  # each desk gets a strip of every chapter
        assert all(sorted(i for i in r["bars"] if i >= 0) == [0, 1, 2, 3] for r in stage.desks.rows)
    stage.set_sharding("tp", 1)
    assert stage.desks.n == 1


def test_pipeline_desks_take_the_layers_the_engine_reported(stage):
    """The stage draws the split it is given (the engine's), not one of its own; without one it refuses."""
    stage.set_sharding("pp", 2, [(0, 3), (3, 4)])
    assert [sorted(i for i in r["bars"] if i >= 0) for r in stage.desks.rows] == [[0, 1, 2], [3]]
    with pytest.raises(ValueError, match="layers"):
        stage.set_sharding("pp", 2)
    stage.set_sharding("pp", 1)
    assert stage.desks.n == 1


def test_pipeline_desk_without_the_chapter_says_it_is_waiting(stage):
    stage.set_sharding("pp", 2, PP2)
    stage.show_trip(trip(layer_ms=[1, 1, 1, 1], workers=[{"rank": 0, "compute_ms": 1.0, "bubble_ms": 2.0},
                                                        {"rank": 1, "compute_ms": 1.0, "bubble_ms": 2.0}]))
    while stage.lit_chapter() != 3:
        stage.advance(1 / 240)
    assert "4" in stage.desks.rows[1]["state"].text()
    assert stage.desks.rows[0]["state"].text() != stage.desks.rows[1]["state"].text()
    assert "2.0" in stage.desks.rows[0]["times"].text()  # the measured bubble
    # the measurement goes against "more desks, faster": the legend says why in one line
    assert stage._legend.note.isVisible() and "2.0" in stage._legend.note.text()


def test_tensor_parallel_desks_pass_a_note_after_each_chapter(stage):
    stage.set_sharding("tp", 2)
    stage.show_trip(trip(layer_ms=[1, 1, 1, 1], workers=[{"rank": 0, "compute_ms": 1.0, "comm_ms": 1.0},
                                                        {"rank": 1, "compute_ms": 1.0, "comm_ms": 1.0}]))
    shown = 0
    while stage.busy():
        stage.advance(1 / 600)
        shown += stage.desks.note.opacity() > 0
    assert shown > 0


def test_cheat_sheet_cells_in_use_equal_blocks_in_use_and_name_their_bytes(stage):
    assert stage.filled_cells() == 0
    stage.show_trip(trip(blocks_in_use=7))
    run(stage, 1.01)
    assert stage.filled_cells() == 7
    assert fmt_bytes(7 * 49_152) in stage.cheat_sheet.count.text()
    # the grid is scaled to the run: 7 pages are a visible share of it, not 7 of 64
    assert stage.cheat_sheet.grid.capacity < 64 and stage.cheat_sheet.grid.capacity >= 7
    stage.show_trip(trip(blocks_in_use=2))  # requests finished: pages freed, the grid shrinks back
    run(stage, 1.01)
    assert stage.filled_cells() == 2
    stage.show_trip(trip(blocks_in_use=2))
    run(stage, 0.01)
    assert stage.cheat_sheet.capacity == stage.cheat_sheet.capacity_for(2)


def test_prefix_hits_are_drawn_as_shared_pages(stage):
    stage.show_trip(trip(blocks_in_use=6, prefix_hit_tokens=32))
    run(stage, 0.9)
    assert stage.cheat_sheet.grid.shared == 2  # 32 tokens / 16 per page
    assert any("share" in w.text() for w in stage._legend.texts())
    run(stage, 0.2)
    stage.show_trip(trip(blocks_in_use=7))  # the seats that share the opening write on: still shared
    run(stage, 1.01)
    assert stage.cheat_sheet.grid.shared == 2
    stage.show_trip(trip(blocks_in_use=1))  # requests finished: at most the pages still in use
    run(stage, 1.01)
    assert stage.cheat_sheet.grid.shared == 1


def four_seats():
    return [SeatText(i, f"r{i}", f"prompt number {i}", f"answer of {i}", state)
            for i, state in enumerate(["writing", "reading", "done", "waiting"])]


def test_at_batch_4_each_of_4_seats_shows_its_own_request(stage):
    stage.show_requests(four_seats())
    shown = stage.seat_texts()
    assert [rid for rid, _, _ in shown] == ["r0", "r1", "r2", "r3"]
    for i, (_, prompt, answer) in enumerate(shown):
        assert f"prompt number {i}" in prompt and answer == f"answer of {i}"
    run(stage, 0.6)  # the new seats have faded in
    seat_items = [t for t in stage.text_items() if t.data(0x0E17) == "seat"]
    states = {t.text() for t in seat_items}
    assert {"writing", "reading the question", "done", "waiting for a seat"} <= states


def test_a_table_of_fewer_than_4_shows_its_free_seats(stage):
    for n, free in ((1, 3), (2, 2), (3, 1), (4, 0), (6, 0)):
        stage.show_requests([SeatText(i, f"r{i}", "q", "a", "writing") for i in range(n)])
        stage.draw_pending_seats()
        assert stage._seats.free_places() == free, n
        places = [f["place"].sceneBoundingRect() for f in stage._seats.free if f["place"].isVisible()]
        cards = [c["card"].sceneBoundingRect() for c in stage._seats.cards if c["card"].isVisible()]
        assert len(cards) == n
        # the free places follow the seats taken, inside the table, never over a card
        assert all(not p.intersects(c.adjusted(1, 1, -1, -1)) for p in places for c in cards)
        assert all(stage._seats.panel.sceneBoundingRect().contains(p) for p in places)
    stage.show_requests([])
    stage.draw_pending_seats()
    assert stage._seats.free_places() == 0  # an empty table says "empty", it draws no places


def test_16_seats_are_legible_never_one_character(stage):
    seats = [SeatText(i, i, f"question {i}", "a long answer that keeps on growing " * 3, "writing")
             for i in range(MAX_SEATS)]
    stage.show_requests(seats)
    shown = stage.seat_texts()
    assert len(shown) == 16
    assert all(len(answer) >= 8 for _, _, answer in shown)
    assert all(answer.rstrip().endswith("growing") for _, _, answer in shown)  # the most recent tokens


def test_without_the_window_seats_come_from_the_reports_and_join_and_leave(stage):
    def step(ids, texts):
        stage.show_trip(trip(request_ids=ids, batch=len(ids),
                             tokens=[{"request_id": r, "text": t, "label": t} for r, t in zip(ids, texts)]))
        run(stage, 1.01)
    step(["a", "b"], ["x", "y"])
    step(["a", "b"], ["1", "2"])
    assert [(rid, ans) for rid, _, ans in stage.seat_texts()] == [("a", "x1"), ("b", "y2")]
    step(["b", "c"], ["3", "z"])  # a finished, c joined
    states = {s.request_id: s.state for s in stage._seat_of.values()}
    assert states["a"] == "done" and states["c"] == "writing"
    assert stage._seat_of["c"].seat == 2  # a's seat is still taken while it says "done"
    step(["b", "c"], ["4", "w"])
    assert "a" not in [rid for rid, _, _ in stage.seat_texts()]  # a left the table


def test_verify_trip_shows_the_apprentice_and_why_guesses_were_dropped(stage):
    tokens = [{"request_id": "r1", "label": "a", "accepted_from_draft": True}, {"request_id": "r1", "label": "X"}]
    stage.show_trip(trip(phase="verify", tokens=tokens, tokens_in=4, proposed=3, accepted=1, draft_ms=2.0,
                         guesses=[{"request_id": "r1", "labels": ["a", "b", "c"]}]))
    run(stage, 0.8)
    assert stage.apprentice_visible()
    assert [s for s, _, _ in stage.guess_states()][:2] == ["ink", "wrong"]
    words = " ".join(t.text() for t in stage._apprentice.texts())
    assert "1" in words and "3" in words and "wrong" in words


def test_reset_and_reconfigure_drop_trips_quietly(stage):
    finished = []
    stage.trip_finished.connect(lambda: finished.append(True))
    stage.show_trip(trip())
    stage.show_trip(trip())
    stage.reset()
    assert not stage.busy()
    stage.show_trip(trip())
    stage.configure([1] * 6, 10, 10, "other")
    run(stage, 2)
    assert finished == [] and len(stage.chapters) == 6


def test_a_slot_may_queue_the_next_trip_from_trip_finished(stage):
    count = []

    def again():
        count.append(True)
        if len(count) < 3:
            stage.show_trip(trip())

    stage.trip_finished.connect(again)
    stage.show_trip(trip())
    run(stage, 3.1)
    assert len(count) == 3


def test_scene_rect_is_fixed_and_every_text_has_a_role(stage):
    rect = QRectF(0, 0, 1600, 700)
    assert stage.sceneRect() == rect
    stage.show_requests(four_seats())
    stage.show_trip(trip(batch=16, request_ids=[f"x{i}" for i in range(16)]))
    run(stage, 0.5)
    assert stage.sceneRect() == rect
    items = stage.text_items()
    assert items and all(t.data(0x0E17) for t in items)
    for t in items:
        assert rect.contains(t.sceneBoundingRect()), (t.text(), t.sceneBoundingRect())


def test_view_size_sets_fonts_so_no_text_is_under_a_sixtieth_of_the_window(stage):
    for window_w, window_h in ((1280, 720), (1920, 1080)):
        view_w, view_h = 0.8 * window_w, 0.6 * window_h
        stage.set_view(view_w, view_h, window_h)
        fit = min(view_w / 1600, view_h / 700)
        for t in stage.text_items():
            assert t.font().pixelSize() * t.scale() * fit >= window_h / 60 - 0.01, t.text()


def test_no_two_texts_overlap(stage):
    stage.set_sharding("tp", 2)
    stage.show_requests(four_seats())
    stage.show_trip(trip(workers=[{"rank": 0, "compute_ms": 1.0, "comm_ms": 3.0},
                                  {"rank": 1, "compute_ms": 1.0, "comm_ms": 3.0}]))
    for k in range(6):
        run(stage, 0.15)
        items = stage.text_items()
        rects = [(t.text(), t.sceneBoundingRect().adjusted(1, 1, -1, -1)) for t in items]
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[i + 1:]:
                assert not ra.intersects(rb), f"{a!r} overlaps {b!r} at step {k}"


def test_the_window_may_send_seats_as_plain_dicts(stage):
    stage.show_requests([{"request_id": "m", "prompt": "hello there", "answer": "hi", "done": False},
                         {"request_id": "n", "prompt": "bye", "answer": "", "done": False},
                         {"request_id": "o", "prompt": "x", "answer": "all done", "done": True}])
    assert [(rid, ans) for rid, _, ans in stage.seat_texts()] == [("m", "hi"), ("n", ""), ("o", "all done")]
    states = [s.state for s in stage._gui_seats]
    assert states == ["writing", "reading", "done"]


@pytest.mark.parametrize("mode,n", [("pp", 4), ("tp", 4)])
def test_no_two_texts_overlap_with_12_chapters_and_4_desks(qapp, mode, n):
    scene = StageScene()
    scene.configure([7_087_872] * 12, 36_864, 2000, "GPT-2 124M", 412_700_000)
    scene.set_sharding(mode, n, PP4_OF_12 if mode == "pp" else None)
    scene.show_requests([SeatText(i, i, "a prompt of several words", "an answer " * 5, "writing") for i in range(16)])
    scene.show_trip(trip(layer_ms=[1] * 12, workers=[{"rank": r, "compute_ms": 3.0, "comm_ms": 5.0, "bubble_ms": 9.0}
                                                     for r in range(n)]))
    for k in range(5):
        run(scene, 0.2)
        rects = [(t.text(), t.sceneBoundingRect().adjusted(1, 1, -1, -1)) for t in scene.text_items()]
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[i + 1:]:
                assert not ra.intersects(rb), f"{a!r} overlaps {b!r} at step {k}"


def test_fewer_tokens_per_verify_trip_than_the_lesson_says_why(stage):
    tokens = [{"request_id": "r1", "label": "a", "accepted_from_draft": True}, {"request_id": "r1", "label": "X"}]
    v = trip(phase="verify", tokens=tokens, tokens_in=5, proposed=4, accepted=1, draft_ms=2.0,
             guesses=[{"request_id": "r1", "labels": ["a", "b", "c", "d"]}])
    stage.show_trip(v)
    run(stage, 1.01)
    note = stage._apprentice.verdict.text().replace("\n", " ")  # beside the apprentice's slips, in its words
    assert "This trip: 2 tokens, not 5" in note  # measured 2 tokens this trip, not k + 1 = 5, and why
    assert "throws away" in note
    assert "tokens, not" not in stage._legend.note.text()  # said once
    stage.show_trip(trip())  # the note is of the trip on stage: a plain trip has none
    run(stage, 0.1)
    assert not any("tokens, not" in t.text() for t in stage.text_items())


@pytest.mark.parametrize("view", [(400, 200, 1080), (1024, 448, 720), (1536, 672, 1080)])
def test_no_overlap_at_any_font_size_even_with_the_apprentice_and_16_seats(qapp, view):
    scene = StageScene()
    scene.configure([7_087_872] * 12, 36_864, 2000, "GPT-2 124M", 412_700_000)
    scene.set_sharding("pp", 4, PP4_OF_12)
    scene.set_view(*view)
    scene.show_requests([SeatText(i, i, "a prompt", "an answer " * 5, "writing") for i in range(16)])
    tokens = [{"request_id": "r1", "label": "a", "accepted_from_draft": True}, {"request_id": "r1", "label": "X"}]
    scene.show_trip(trip(phase="verify", tokens=tokens, proposed=3, accepted=1, layer_ms=[1] * 12,
                         guesses=[{"request_id": "r1", "labels": ["a", "b", "c"]}],
                         workers=[{"rank": r, "compute_ms": 1.0, "bubble_ms": 2.0} for r in range(4)]))
    for k in range(5):
        run(scene, 0.2)
        rects = [(t.text(), t.sceneBoundingRect().adjusted(1, 1, -1, -1)) for t in scene.text_items()]
        for i, (a, ra) in enumerate(rects):
            for b, rb in rects[i + 1:]:
                assert not ra.intersects(rb), f"{a!r} overlaps {b!r} at step {k}"
    assert all(len(answer) > 1 or not answer for _, _, answer in scene.seat_texts())


def test_a_notice_before_any_model_replaces_loading(qapp):
    scene = StageScene()
    scene.show_notice(lambda: "No model could be loaded")
    texts = [t.text() for t in scene.text_items()]
    assert "No model could be loaded" in texts and not any("loading the model" in t for t in texts)


def test_a_request_that_joins_fades_in_and_one_that_leaves_is_gone(stage):
    stage.show_requests(four_seats()[:1])
    run(stage, 1.0)
    first = stage._seats.cards[0]["card"]
    assert first.opacity() == 1.0
    stage.show_requests(four_seats()[:2])  # r1 joins (continuous batching)
    joined = stage._seats.cards[1]["card"]
    assert joined.opacity() < 0.1 and first.opacity() == 1.0
    run(stage, 1.0)
    assert joined.opacity() > 0.5  # "reading": full colour once seated
    stage.show_requests(four_seats()[1:2])  # r0 left
    assert [rid for rid, _, _ in stage.seat_texts()] == ["r1"]


def test_a_seated_card_stays_drawn_when_the_stage_is_built_again(stage):
    """A seat card that has faded in stays in full colour when the stage is rebuilt (a resize, the book torn, a
    language switch): the rebuild used to start every card's fade-in again, and with the clock stopped (a
    screenshot, the audit) the table's header said "seats taken: 1" over an empty table."""
    stage.show_requests(four_seats()[:1])
    run(stage, 1.0)
    assert stage._seats.cards[0]["card"].opacity() == 1.0
    for rebuild in (lambda: stage.set_view(1216, 560, 720, True), lambda: stage.set_sharding("tp", 2),
                    lambda: stage.set_scene_height(560), lambda: stage.set_language("zh")):
        rebuild()  # no stage time passes
        card = stage._seats.cards[0]["card"]
        assert card.isVisible() and card.opacity() == 1.0
    stage.set_language("en")


@pytest.mark.parametrize("dictionary_bytes", [10_000, 40_000, 50_000, 60_000, 70_000, 1_000_000])
def test_a_chapter_label_is_on_its_bar_or_beside_it_never_across_its_edge(qapp, dictionary_bytes):
    """A label half on a bar and half off reads as two things (the layout audit's "border" fault): each shown
    label lies wholly inside its bar or wholly right of it, and shows at least the chapter's name."""
    scene = StageScene()
    scene.configure([100_000, 40_000, 40_000], 1024, 64, "test-gpt2", dictionary_bytes=dictionary_bytes)
    w = scene.warehouse
    pairs = [(w.dictionary_bar, w.dictionary_label, "Dictionary")]
    pairs += [(bar, label, f"Ch. {i + 1}") for i, (bar, label) in enumerate(zip(w.bars, w.labels))]
    for bar, label, name in pairs:
        if not label.isVisible():
            continue
        b, t = bar.sceneBoundingRect(), label.sceneBoundingRect()
        inside = t.left() >= b.left() - 0.5 and t.right() <= b.right() + 0.5
        beside = t.left() >= b.right()
        assert inside or beside, (label.text(), b, t)
        assert label.text().startswith(name[:3]), label.text()
