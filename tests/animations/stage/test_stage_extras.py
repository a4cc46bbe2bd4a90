"""The apprentice's guesses (verify trips) and the torn book's desks on the stage, tested by seeking time."""

import pytest

from animations.stage.scene import StageScene


def verify_trip(labels, emitted, accepted, **over):
    rid = "a"
    tokens = [{"request_id": rid, "label": t, "text": t, "accepted_from_draft": i < accepted}
              for i, t in enumerate(emitted)]
    t = {"phase": "verify", "request_ids": [rid], "batch": 1, "tokens_in": len(labels) + 1,
         "tokens_out": len(emitted), "wall_ms": 8.0, "layer_ms": [1.0] * 4, "blocks_in_use": 2,
         "proposed": len(labels), "accepted": accepted, "bonus": int(accepted == len(labels)), "draft_ms": 2.5,
         "verify_ms": 5.0, "guesses": [{"request_id": rid, "labels": labels}], "tokens": tokens, "workers": []}
    t.update(over)
    return t


@pytest.fixture
def stage(qapp):
    s = StageScene()
    s.configure([1000] * 4, 4096, 64, "tiny")
    s.trip_duration_s = 1.0
    return s


def seek(stage, fraction):
    stage._timeline.seek(fraction * stage.current_duration_s())


def test_a_wrong_guess_is_crossed_out_and_replaced(stage):
    stage.show_trip(verify_trip(["A", "B", "C", "D"], ["A", "B", "x"], accepted=2))
    seek(stage, 0.0)
    assert stage.apprentice_visible() is False or stage.guess_states() == []
    seek(stage, 0.3)  # written in pencil, not judged yet
    assert [s for s, _, _ in stage.guess_states()] == ["pencil"] * 4
    assert stage.apprentice_visible()
    seek(stage, 0.99)
    assert stage.guess_states()[:3] == [("ink", "A", ""), ("ink", "B", ""), ("wrong", "C", "x")]
    assert stage.guess_states()[3][0] == "pencil"  # thrown away, greyed
    assert stage.slip_texts() == []  # the column replaces the seat slips


def test_all_right_gives_the_bonus_token(stage):
    stage.show_trip(verify_trip(["A", "B"], ["A", "B", "z"], accepted=2))
    seek(stage, 0.99)
    assert stage.guess_states() == [("ink", "A", ""), ("ink", "B", ""), ("bonus", "z", "")]


def test_guesses_without_labels_fall_back_to_the_emitted_tokens(stage):
    stage.show_trip(verify_trip(["A", "B"], ["A", "y"], accepted=1, guesses=[]))
    seek(stage, 0.99)
    assert stage.guess_states() == [("ink", "A", ""), ("wrong", "?", "y")]


def test_tensor_parallel_desks_all_work_and_sync(stage):
    stage.set_sharding("tp", 2)
    assert all(len([i for i in row["bars"] if i >= 0]) == 4 for row in stage.desks.rows)  # a strip of each
    workers = [{"rank": r, "compute_ms": 1.0, "comm_ms": 0.5, "bubble_ms": 0.0} for r in range(2)]
    stage.show_trip(verify_trip([], ["x"], 0, phase="decode", proposed=0, guesses=[], workers=workers))
    seek(stage, 0.5)
    assert stage.desks.n == 2 and stage.desks.busy(0) and stage.desks.busy(1)
    assert "2 desks" in stage.caption_text()
    flashes = []
    for f in range(280, 760, 5):
        seek(stage, f / 1000)
        flashes.append(stage.desks.note.opacity())
    assert max(flashes) > 0.8 and min(flashes) < 0.2  # the note passes after chapters, not all the time
    stage.set_sharding("tp", 1)
    assert stage.desks.n == 1 and len(stage.desks.rows) == 1


def test_pipeline_desks_idle_outside_their_chapters(stage):
    stage.set_sharding("pp", 2, [(0, 2), (2, 4)])  # as the engine reports the split of 4 chapters
    workers = [{"rank": r, "compute_ms": 1.0, "comm_ms": 0.1, "bubble_ms": 1.0} for r in range(2)]
    stage.show_trip(verify_trip([], ["x"], 0, phase="decode", proposed=0, guesses=[], workers=workers))
    seek(stage, 0.32)  # the first chapter is being read: desk 1 works, desk 2 waits
    assert stage.lit_chapter() == 0
    assert stage.desks.busy(0) and not stage.desks.busy(1)
    seek(stage, 0.72)
    assert stage.lit_chapter() == 3 and stage.desks.busy(1) and not stage.desks.busy(0)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_extras_render_in_both_languages(stage, lang):
    from PySide6.QtGui import QImage, QPainter

    from gui import i18n
    i18n.set_language(lang)
    stage.set_language(lang)
    stage.set_sharding("tp", 2)
    stage.show_trip(verify_trip(["A", "B", "C"], ["A", "q"], accepted=1))
    seek(stage, 0.8)
    image = QImage(800, 300, QImage.Format_ARGB32)
    painter = QPainter(image)
    stage.render(painter)
    painter.end()
    assert not image.isNull()


def test_a_new_model_keeps_the_sharding_over_all_its_chapters(stage):
    """The window redraws the sharding only when it changes (``ExtrasControls``); a new model of another depth
    keeps the desks' sharding over its own chapters, not the old model's."""
    stage.set_sharding("tp", 2)
    stage.configure([1000] * 12, 4096, 64, "deeper")
    assert stage.sharding() == ("tp", 2) and stage.desks.layers == [(0, 12), (0, 12)]
    stage.set_sharding("tp", 1)
    stage.configure([1000] * 2, 4096, 64, "shallow")
    assert stage.desks.layers == [(0, 2)]
    stage.set_sharding("pp", 2, [(0, 1), (1, 2)])  # by chapters: the engine's own split stays
    stage.configure([1000] * 2, 4096, 64, "shallow")
    assert stage.sharding() == ("pp", 2) and stage.desks.layers == [(0, 1), (1, 2)]
