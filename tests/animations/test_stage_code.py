"""``animations.stage.code.stage_at``: which reported stage the stage shows at a moment of the trip (no clock)."""

from __future__ import annotations

from animations.stage.code import COMPUTE, POST, PRE, stage_at

STAGES = ["schedule", "pack", "embedding", "attention:0", "kv_write:0", "mlp:0", "attention:1", "kv_write:1",
          "mlp:1", "lm_head", "sample"]


def test_the_stages_before_the_layers_share_the_carts_way_out():
    assert stage_at(STAGES, 0.0, [0.5, 1.0]) == "schedule"
    assert stage_at(STAGES, PRE[1] * 0.5, [0.5, 1.0]) == "pack"
    assert stage_at(STAGES, PRE[1] - 1e-6, [0.5, 1.0]) == "embedding"


def test_each_layer_is_shown_while_its_chapter_is_read_by_its_measured_share():
    ends = [0.25, 1.0]  # layer 0 took a quarter of the compute window (layer_ms), layer 1 the rest
    width = COMPUTE[1] - COMPUTE[0]
    at = lambda f: COMPUTE[0] + f * width  # noqa: E731
    assert stage_at(STAGES, at(0.01), ends) == "attention:0"
    assert stage_at(STAGES, at(0.24), ends) == "mlp:0"
    assert stage_at(STAGES, at(0.26), ends) == "attention:1"
    assert stage_at(STAGES, at(0.6), ends) == "kv_write:1"
    assert stage_at(STAGES, at(0.99), ends) == "mlp:1"


def test_the_head_and_the_draw_come_after_the_book_and_the_last_holds():
    assert stage_at(STAGES, POST[0] + 1e-6, [0.5, 1.0]) == "lm_head"
    assert stage_at(STAGES, 0.999, [0.5, 1.0]) == "sample"


def test_every_reported_stage_is_reached_in_order_and_none_invented():
    seen = []
    for i in range(1001):
        s = stage_at(STAGES, i / 1000, [0.4, 1.0])
        if not seen or seen[-1] != s:
            seen.append(s)
    assert seen == STAGES


def test_a_trip_without_stages_shows_none_and_a_pipeline_trip_holds_its_shard():
    assert stage_at([], 0.5, [1.0]) is None
    assert stage_at(["schedule", "pack", "shard", "sample"], 0.5, [1.0]) == "shard"
