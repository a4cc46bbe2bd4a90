"""Page 12 shows what its figures say: the measured medians with their spread and the number of runs, and when
continuous batching measured slower than static, the measured reason in the same size as the figures, never a
large figure contradicting the lesson without a word. Fed with hand-made measurements: no timing is asserted."""

from __future__ import annotations

import pytest

from model.teaching.lessons import verdict, why_not
from tests.gui.tour_host import make_tour


def _mode(ms: float, trips: int, spread: float = 4.0) -> dict:
    passes = [{"ms": ms / trips, "phase": "decode", "rows": [[r, 1, "decode"] for r in "ABCD"]}] * trips
    return {"passes": passes, "trips": trips, "total_ms": ms,
            "ms": {"median": ms, "min": ms - spread, "max": ms + spread, "n": 5}}


def _batching(c_ms: float, s_ms: float, c_trips: int = 37, s_trips: int = 57) -> dict:
    b = {"requests": [{"id": r, "prompt_tokens": 4, "new_tokens": 4} for r in "ABCDEF"], "max_batch": 4,
         "step_tokens": 32, "runs": 5, "block_tables": {"A": [0, 1]}, "block_size": 16,
         "static": _mode(s_ms, s_trips), "continuous": _mode(c_ms, c_trips)}
    b["verdict"] = verdict(b["continuous"]["ms"], b["static"]["ms"])
    b["why_not"] = why_not("batching", b)
    return b


def _texts(scene) -> dict[str, object]:
    from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem
    return {(i.text() if isinstance(i, QGraphicsSimpleTextItem) else i.toPlainText()): i for i in scene.items()
            if isinstance(i, (QGraphicsSimpleTextItem, QGraphicsTextItem))}


def _page12(qtbot, model_dir, fonts, data, lang="en"):
    w = make_tour(qtbot, model_dir, lang, fonts, {"batching": data})
    w.goto(11)  # §12
    w.finish_animation()
    return _texts(w.current_scene)


def test_page_12_shows_the_runs_and_no_excuse_when_continuous_wins(qtbot, tiny_model_dir, fonts):
    texts = _page12(qtbot, tiny_model_dir, fonts, _batching(180.0, 290.0))
    joined = " ".join(texts)
    assert "37 trips · 180 ms" in joined and "57 trips · 290 ms" in joined
    assert "median of 5 runs, 286 ms–294 ms" in joined and "median of 5 runs, 176 ms–184 ms" in joined
    assert "Measured here" not in joined


@pytest.mark.parametrize("c_ms, s_ms, words", [
    (300.0, 270.0, "took fewer trips (37 against 57) but more time (300 ms against 270 ms)"),
    (300.0, 296.0, "the two times overlap (continuous 300 ms, static 296 ms)"),
])
def test_page_12_says_why_not_as_large_as_its_figures(qtbot, tiny_model_dir, fonts, c_ms, s_ms, words):
    texts = _page12(qtbot, tiny_model_dir, fonts, _batching(c_ms, s_ms))
    reason = next(item for t, item in texts.items() if words in t)
    figure = next(item for t, item in texts.items() if t.startswith("37 trips"))
    assert reason.font().pixelSize() == figure.font().pixelSize() > 0


def test_page_12_why_not_is_translated(qtbot, tiny_model_dir, fonts):
    texts = _page12(qtbot, tiny_model_dir, fonts, _batching(300.0, 270.0), lang="zh")
    assert any("本机实测：连续批趟数更少（37 对 57）" in t for t in texts)
