"""The stage, driven by hand: advance() moves its time, no clock involved."""

import pytest
from PySide6.QtCore import QRectF

from animations.stage import CART_SCALE, MAX_SEATS, StageScene, format_bytes

LAYER_BYTES = [3_150_000, 3_150_000, 1_575_000, 6_300_000]


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
    assert format_bytes(512) == "512 B"
    assert format_bytes(49_152) == "49.2 kB"
    assert format_bytes(1_000_000) == "1.0 MB"
    assert format_bytes(16_060_000_000) == "16.1 GB"


def test_chapter_widths_are_to_scale_by_bytes(stage):
    widths = [c.width for c in stage.chapters]
    assert len(widths) == len(LAYER_BYTES)
    for w, b in zip(widths, LAYER_BYTES):
        assert w / widths[-1] == pytest.approx(b / LAYER_BYTES[-1])
    labels = [c._label for c in stage.chapters]
    assert labels[0].endswith("3.1 MB") and labels[2].endswith("1.6 MB")


def test_idle_stage_shows_the_book_on_the_shelf(qapp):
    scene = StageScene()  # not configured: a placeholder book rests in the warehouse
    assert not scene.busy()
    scene.configure([1_000_000] * 12, 1024, 2000, "gpt2")
    assert [c.scale() for c in scene.chapters] == [1.0] * 12
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
    assert [c.lit for c in scene.chapters] == [False, False]  # nothing lit after the trip


def test_empty_or_bad_layer_ms_gives_equal_shares(stage):
    for layer_ms in ([], [1.0, 2.0], [0, 0, 0, 0], [float("nan"), 1, 1, 1]):
        lit = lit_time(stage, layer_ms, dt=1 / 1000)
        if layer_ms and layer_ms[0] != layer_ms[0]:  # NaN counts as 0
            assert lit[0] == 0.0
            continue
        assert max(lit) == pytest.approx(min(lit), rel=0.05)


def test_chapters_go_to_the_desk_and_come_back(stage):
    home = [(c.pos().x(), c.pos().y()) for c in stage.chapters]
    stage.show_trip(trip())
    run(stage, 0.5)  # mid-trip: computing at the desk
    assert all(c.scale() == pytest.approx(CART_SCALE) for c in stage.chapters)
    assert all(c.pos().x() > 690 for c in stage.chapters)  # inside the desk
    assert stage.lit_chapter() is not None
    run(stage, 0.6)
    assert [(c.pos().x(), c.pos().y()) for c in stage.chapters] == home
    assert all(c.scale() == 1.0 for c in stage.chapters)


def test_prefill_and_decode_captions_differ(stage):
    stage.show_trip(trip(phase="prefill", tokens_in=37, blocks_in_use=3))
    prefill = stage.caption_text()
    assert "37" in prefill
    run(stage, 0.5)
    assert stage._sheet.opacity() == 1.0  # the question sheet is on the desk
    run(stage, 0.6)
    stage.show_trip(trip())
    decode = stage.caption_text()
    run(stage, 0.5)
    assert stage._sheet.opacity() == 0.0
    assert prefill != decode
    run(stage, 0.6)
    stage.show_trip(trip(batch=4, request_ids=["a", "b", "c", "d"]))
    assert stage.caption_text() not in (prefill, decode)
    stage.reset()
    stage.show_trip(trip(phase="verify", tokens_in=5))
    assert stage.caption_text() not in (prefill, decode)


def test_blocks_in_use_fill_cheat_sheet_cells(stage):
    assert stage.filled_cells() == 0
    stage.show_trip(trip(blocks_in_use=7))
    run(stage, 1.01)
    assert stage.filled_cells() == 7
    stage.show_trip(trip(blocks_in_use=5))  # requests finished: pages freed
    run(stage, 1.01)
    assert stage.filled_cells() == 5


def test_large_caches_draw_only_the_first_rows(qapp):
    scene = StageScene()
    scene.configure([1000] * 4, 100, 5000, "big")
    assert scene._grid.drawn < 5000
    assert "4900" in scene._cheat_more.text()
    scene.show_trip(trip(blocks_in_use=4000))
    run(scene, 1.01)
    assert scene.filled_cells() == scene._grid.drawn
    assert "4000" in scene._cheat_count.text()


def test_batch_of_16_gets_16_colored_seats_without_new_items(stage):
    ids = [f"q{i}" for i in range(MAX_SEATS)]
    tokens = [{"request_id": r, "label": f"t{i}", "text": f"t{i}"} for i, r in enumerate(ids)]
    stage.show_trip(trip(batch=16, request_ids=ids, tokens=tokens, tokens_in=16))
    items_before = len(stage.items())
    run(stage, 1.01)
    assert len(stage.items()) == items_before  # nothing created per frame
    assert stage.slip_texts() == [f"t{i}" for i in range(16)]
    colors = {slip._color.name() for slip in stage._front[:16]}
    assert len(colors) == 16
    # the next trip reuses the same slip items
    stage.show_trip(trip(batch=16, request_ids=ids, tokens=tokens, tokens_in=16))
    run(stage, 1.01)
    assert len(stage.items()) == items_before


def test_verify_trip_groups_several_tokens_per_request(stage):
    tokens = [{"request_id": "r1", "label": w, "text": w} for w in ("a", "b", "c")]
    stage.show_trip(trip(phase="verify", tokens=tokens, tokens_in=4))
    run(stage, 1.01)
    assert stage.slip_texts() == ["abc"]


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


def test_scene_rect_is_fixed(stage):
    assert stage.sceneRect() == QRectF(0, 0, 1600, 600)
    stage.show_trip(trip(batch=16, request_ids=[f"x{i}" for i in range(16)]))
    run(stage, 0.8)
    assert stage.sceneRect() == QRectF(0, 0, 1600, 600)
