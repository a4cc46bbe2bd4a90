"""The stage in a 4:3 window (1024×768): its text is a third wider for the scene than at 16:9, and still nothing
is cut ("…" at the end), no legend entry is dropped, and a reading card at a full table says what it reads."""

from __future__ import annotations

import pytest

from animations.fonts import register_fonts
from animations.stage.scene import SeatText, StageScene
from animations.stage.style import SCENE_MIN_HEIGHT
from tests.animations.stage.test_stage import run, trip

VIEW = (1024.0, 384.0, 768.0)  # the stage view of a 1024x768 window with the extras' lines under it (fit 0.64)


def _stage(mode: str = "tp", n: int = 1) -> StageScene:
    scene = StageScene()
    scene.set_font_family(register_fonts())  # the app's bundled family: its widths are the ones that must fit
    scene.set_language("en")
    scene.set_scene_height(SCENE_MIN_HEIGHT)
    scene.configure([3_200_000] * 4, 131_072, 2048, "One Trip code model", 4_700_000)
    scene.set_sharding(mode, n, [(0, 2), (2, 4)] if mode == "pp" and n == 2 else None)  # the engine's split
    scene.set_view(*VIEW)
    return scene


def _cut(scene: StageScene) -> list[str]:
    """Elided texts of the parts this layout is about (desks, cheat sheet, legend, apprentice)."""
    parts = [*scene._desks.texts(), *scene._cheat.texts(), *scene._legend.texts(), *scene._apprentice.texts()]
    return [t.text() for t in parts if t.isVisible() and t.text().rstrip().endswith("…")]


@pytest.mark.parametrize("mode", ["tp", "pp"])
def test_torn_book_at_four_three_cuts_nothing_and_keeps_every_legend_entry(qapp, mode):
    scene = _stage(mode, 2)
    workers = [{"rank": r, "compute_ms": 3.8, "comm_ms": 16.5, "bubble_ms": 0.7} for r in range(2)]
    scene.show_trip(trip(layer_ms=[1] * 4, workers=workers, blocks_in_use=1))
    run(scene, 0.55)
    assert _cut(scene) == []
    assert len(scene._legend.texts()) - scene._legend.note.isVisible() == len(scene._legend.entries)


def test_apprentice_at_four_three_cuts_nothing_and_keeps_every_legend_entry(qapp):
    scene = _stage()
    tokens = [{"request_id": "r1", "label": "X"}]
    scene.show_trip(trip(phase="verify", tokens=tokens, tokens_in=5, proposed=4, accepted=0, draft_ms=27.7,
                         layer_ms=[1] * 4, blocks_in_use=2,
                         guesses=[{"request_id": "r1", "labels": ["(", "be", "false", ")."]}]))
    run(scene, 0.77)
    assert _cut(scene) == []
    shown = [w.text().replace("\n", " ") for w in scene._legend.texts()]
    assert "a cheat-sheet page in use" in shown
    assert "1 token, not 5" in scene._apprentice.verdict.text().replace("\n", " ")


def test_a_reading_card_at_a_full_table_says_what_it_reads(qapp):
    scene = _stage()
    seats = [SeatText(i, i, "def fibonacci(n):", "an answer", "writing") for i in range(15)]
    seats.append(SeatText(15, 15, "def fibonacci(n):", "", "reading"))
    scene.show_requests(seats)
    last = scene.seat_texts()[-1]
    assert last[0] == "15" and "(n):" in last[1]
