"""The layout audit finds each kind of fault it promises to find, and passes a clean scene."""

from __future__ import annotations

import pytest


@pytest.fixture
def scene(qapp):
    from animations.scenes.base import TourScene

    class Blank(TourScene):
        def draw(self, ctx):
            pass

    s = Blank()
    s.build({})
    return s


def test_a_clean_scene_passes(scene):
    from animations.scenes import audit
    scene.text("one", 40, 100, "body")
    scene.text("two", 40, 200, "body")
    assert audit.problems(scene, 1.0, 10.0) == []


def test_overlap_clip_empty_role_size_and_struck_text_are_found(scene):
    from PySide6.QtWidgets import QGraphicsSimpleTextItem

    from animations.scenes import audit
    scene.text("over", 40, 100, "body")
    scene.text("lapping", 60, 105, "body")
    scene.text("clipped at the edge", 1590, 300, "body")
    scene.text("", 40, 400, "body")
    bare = QGraphicsSimpleTextItem("no role")
    bare.setPos(40, 500)
    scene.addItem(bare)
    scene.text("struck", 400, 600, "body")
    scene.line(380, 612, 520, 612)
    card = scene.box(900, 100, 40, 20)
    inside = scene.text("wider than its card", 0, 0, "body")
    inside.setParentItem(card)
    bad = audit.problems(scene, 1.0, 12.0)
    assert any(p.startswith("overlap") and "over" in p and "lapping" in p for p in bad)
    assert any(p.startswith("clipped") and "clipped at the edge" in p for p in bad)
    assert any(p.startswith("clipped") and "wider than its card" in p for p in bad)
    assert any(p.startswith("empty text") for p in bad)
    assert any(p.startswith("no role") for p in bad)
    assert any("strikes through" in p and "struck" in p for p in bad)
    # the smallest style is under the minimum once the scene is shown at half size
    assert any(p.startswith("font") for p in audit.problems(scene, 0.3, 12.0))


def test_rotated_text_keeps_its_size(scene):
    from animations.scenes import audit
    from animations.scenes.look import px
    item = scene.text("axis", 40, 300, "small")
    item.setRotation(-90)
    (box,) = [b for b in audit.texts(scene) if b.text == "axis"]
    assert box.px == pytest.approx(round(px("small")), abs=0.01)  # whole pixels, as look.font sets them


def test_type_scale_floor_holds_at_the_view_fraction():
    """At the view fraction the tour guarantees, the small style is the type scale's floor (height / 48)."""
    from animations.scenes.look import SCENE_H, VIEW_FRACTION, px
    from animations.typescale import MIN_FRACTION
    window_h = 720
    scale = window_h * VIEW_FRACTION / SCENE_H  # window px per scene unit when the view is that fraction
    assert px("small") * scale == pytest.approx(window_h * MIN_FRACTION) == pytest.approx(15.0)


@pytest.mark.parametrize("height", [720, 800, 1080, 2160])
@pytest.mark.parametrize("presenter", [False, True])
def test_the_type_scale_is_a_room_scale(height, presenter):
    """Floor height/48, body >= height/40, title >= 1.6 body, title > heading > body >= label >= small."""
    from animations.typescale import TypeScale
    t = TypeScale(height, presenter)
    assert t.minimum == pytest.approx(height / 48)
    assert t.px("small") >= t.minimum - 1e-9
    assert t.px("body") >= height / 40 - 1e-9
    assert t.px("title") >= 1.6 * t.px("body")
    assert t.px("title") > t.px("heading") > t.px("body") >= t.px("label") >= t.px("small")
    if presenter:  # one step larger than the plain scale, every style alike
        plain = TypeScale(height)
        assert t.px("body") > plain.px("body") and t.px("title") > plain.px("title")


def test_roles_stand_on_the_rungs():
    from animations.typescale import tier_of
    assert tier_of("title") == "title" and tier_of("caption") == "body" and tier_of("button") == "label"
    assert tier_of("token id") is None and tier_of(None) is None
