"""A shorter stage (``StageRegions``: the Live page asks for one when the extras' lines take a row under it) keeps
every part in its region and every word whole; the legend's note never breaks a figure from its unit."""

import itertools

import pytest
from PySide6.QtGui import QFont

from animations.items import pick_family
from animations.stage.scene import StageScene
from animations.stage.style import (
    CAPTION,
    CHEAT,
    DESKS,
    LEGEND,
    PRESENTER_SCENE_MIN_HEIGHT,
    SCENE_MIN_HEIGHT,
    SCENE_RECT,
    TABLE,
    WAREHOUSE,
    StageRegions,
    wrap_lines,
)
from tests.animations.stage.test_stage_extras import verify_trip


def _parts(r: StageRegions):
    return {"caption": r.caption, "warehouse": r.warehouse, "desks": r.desks, "cheat": r.cheat,
            "legend": r.legend, "table": r.table}


def test_the_full_height_regions_are_the_constants():
    r = StageRegions()
    assert r.scene == SCENE_RECT
    assert _parts(r) == {"caption": CAPTION, "warehouse": WAREHOUSE, "desks": DESKS, "cheat": CHEAT,
                         "legend": LEGEND, "table": TABLE}
    assert StageRegions(2000).height == SCENE_RECT.height() and StageRegions(10).height == PRESENTER_SCENE_MIN_HEIGHT


@pytest.mark.parametrize("height", [PRESENTER_SCENE_MIN_HEIGHT, SCENE_MIN_HEIGHT, 640, 690])
def test_shorter_regions_stay_in_the_scene_and_apart(height):
    r = StageRegions(height)
    assert r.scene.height() == height
    parts = _parts(r)
    for name, rect in parts.items():
        assert r.scene.contains(rect), name
    for (a, ra), (b, rb) in itertools.combinations(parts.items(), 2):
        assert not ra.intersects(rb), (a, b)
    # the caption keeps its height; the rows below share what was taken off
    assert r.caption.height() == CAPTION.height()
    assert r.table.bottom() == pytest.approx(r.cheat.bottom()) == pytest.approx(height - 8)


@pytest.mark.parametrize("height, presenter", [(SCENE_MIN_HEIGHT, False), (PRESENTER_SCENE_MIN_HEIGHT, True)])
def test_a_short_stage_keeps_the_apprentice_words_whole_inside_the_table(qapp, height, presenter):
    s = StageScene()
    s.configure([1000] * 4, 4096, 64, "tiny")
    s.set_scene_height(height)
    assert s.sceneRect() == StageRegions(height).scene
    s.set_view(1216, 1216 * height / 1600, 720, presenter)  # a 1280x720 window's view, the scene's shape
    s.show_requests([{"request_id": i, "prompt": "Once upon a time", "answer": "there was", "state": "writing"}
                     for i in range(4)])
    s.show_trip(verify_trip(["A", "B", "C", "D"], ["A", "x"], accepted=1))
    s._timeline.seek(0.99 * s.current_duration_s())
    table = s.regions.table
    words = s._apprentice.texts()
    assert len(words) == 3
    for it in words:
        assert "…" not in it.text(), it.text()  # "a wrong guess throws away the r…" was cut at 1280x720
        assert table.contains(it.sceneBoundingRect()), it.text()
    for it in s.text_items():
        assert s.sceneRect().contains(it.sceneBoundingRect()), it.text()
    s.set_scene_height(SCENE_RECT.height())
    assert s.sceneRect() == SCENE_RECT


@pytest.mark.parametrize("width", range(300, 480, 10))
def test_a_wrapped_note_keeps_figures_with_their_units_and_words_whole(qapp, width):
    font = QFont(pick_family())
    font.setPixelSize(20)
    text = "这一趟，平均每张桌子：传纸条 23.3 毫秒，干活 5.9 毫秒：在这台 CPU 上拆一本小书，省下的不如花掉的多"
    lines = wrap_lines(font, text, width, 3)
    for a, b in zip(lines, lines[1:]):
        assert not (a[-1].isdigit() and b.startswith("毫秒")), lines  # "干活 5.9" | "毫秒" (the audit's break)
        assert not (a[-1].isascii() and a[-1].isalpha() and b[0].isascii() and b[0].isalpha()), lines  # "C" | "PU"
