"""What keeps the Live stage moving every frame: work after the paint (gui.live.frame_jobs), the next pass
granted while a trip is on the stage, seat cards redrawn a few per frame, and one font family whose English
punctuation is proportional."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWidget

pytestmark = pytest.mark.filterwarnings("error")


def test_after_paint_runs_jobs_in_order_after_a_paint_and_a_key_keeps_the_latest(qtbot):
    from gui.live.frame_jobs import AfterPaint
    w = QWidget()
    qtbot.addWidget(w)
    w.resize(100, 100)
    jobs = AfterPaint(w, budget_ms=1000.0, fallback_ms=10_000)
    ran = []
    jobs.defer(lambda: ran.append("a"))
    jobs.defer(lambda: ran.append("old redraw"), key="redraw")
    jobs.defer(lambda: ran.append("b"))
    jobs.defer(lambda: ran.append("new redraw"), key="redraw")
    assert ran == [] and jobs.pending() == 3  # nothing runs before the widget paints
    w.show()
    w.update()
    qtbot.waitUntil(lambda: jobs.pending() == 0, timeout=2000)
    assert ran == ["a", "b", "new redraw"]


def test_after_paint_falls_back_to_a_timer_when_nothing_paints_and_flush_runs_all_now(qtbot):
    from gui.live.frame_jobs import AfterPaint
    w = QWidget()  # never shown: it never paints
    qtbot.addWidget(w)
    jobs = AfterPaint(w, fallback_ms=20)
    ran = []
    jobs.defer(lambda: ran.append(1))
    qtbot.waitUntil(lambda: ran == [1], timeout=2000)
    jobs.defer(lambda: ran.append(2))
    jobs.defer(lambda: ran.append(3))
    jobs.flush()
    assert ran == [1, 2, 3] and jobs.pending() == 0


def test_the_live_pages_plots_redraw_through_its_after_paint_queue(qtbot, make_window, monkeypatch):
    """The page builds its plots with its own after-paint queue (no one sets it on them later): each trip's
    points are drawn by a job of ``LivePage.frame_jobs``, after the stage's paint, never in the middle of a frame."""
    from gui.live.frame_jobs import AfterPaint
    queued: list[str | None] = []
    defer = AfterPaint.defer
    monkeypatch.setattr(AfterPaint, "defer", lambda self, job, key=None: (queued.append(key), defer(self, job, key)))
    w = make_window()
    w.set_details(True)  # the plots are on the engineer's view
    w.set_prompt("plots after the paint")
    w.run_trips(2)
    page = w.live_page

    def drawn(plot) -> bool:
        return any((d := item.getData()[1]) is not None and len(d) for item in plot.listDataItems())
    qtbot.waitUntil(lambda: drawn(page.trip_plot) and drawn(page.rate_plot), timeout=10_000)
    assert {f"plot {id(page.trip_plot)}", f"plot {id(page.rate_plot)}"} <= set(queued)


def test_the_next_pass_is_granted_while_a_trip_is_on_the_stage(qtbot, make_window):
    w = make_window(trip_s=3.0)
    w.main_new_tokens = 8
    w.set_prompt("one trip ahead")
    w.run()
    qtbot.waitUntil(lambda: w.reports_received >= 1 and w.scene.busy(), timeout=10_000)
    # the first trip takes 3 s on the stage; the engine's second pass is back long before it ends
    qtbot.waitUntil(lambda: w.reports_received >= 2, timeout=2000)
    assert w.scene.busy()
    qtbot.wait(300)
    assert w.reports_received == 2  # one ahead, never more


def test_sixteen_changed_seat_cards_are_redrawn_a_few_at_a_time_and_reading_finishes_them(qapp):
    from animations.stage.scene import StageScene
    stage = StageScene()
    stage.configure([3_150_000] * 4, 49_152, 64, "test-gpt2")
    stage.seat_redraw_budget = 4
    seats = [{"request_id": f"r{i}", "prompt": f"prompt {i}", "answer": f"answer {i}", "state": "writing"}
             for i in range(16)]
    stage.show_requests(seats)  # draws 4
    calls = 1
    done = False
    while not done:
        done = stage.draw_pending_seats()
        calls += 1
    assert calls == 4  # 16 changed cards, 4 per call
    stage.show_requests([dict(s, answer=s["answer"] + " more") for s in seats])
    assert not stage.draw_pending_seats()  # 8 of 16 drawn so far
    shown = stage.seat_texts()  # reading the table finishes it first
    # sixteen one-line cards at the room's type size: each shows its answer's newest words ("…0 more" at least)
    answers = [answer for _, _, answer in shown]
    assert len(answers) == 16
    for i, answer in enumerate(answers):
        newest = answer.lstrip("…")  # the end of this seat's own answer, the update included
        assert newest.endswith(" more") and f"answer {i} more".endswith(newest) and len(newest) >= 6, answer


def test_english_punctuation_is_proportional_in_the_one_family(app_font):
    from PySide6.QtGui import QFont, QFontMetricsF

    from animations.fonts import FAMILY
    from animations.typescale import set_text_features
    zh = QFont(FAMILY)
    zh.setPixelSize(100)
    en = set_text_features(QFont(zh), "en")
    for ch in "“”‘’":
        assert QFontMetricsF(en).horizontalAdvance(ch) < 0.6 * QFontMetricsF(zh).horizontalAdvance(ch), ch
    assert QFontMetricsF(en).horizontalAdvance("x") == QFontMetricsF(zh).horizontalAdvance("x")
    back = set_text_features(QFont(en), "zh")
    assert QFontMetricsF(back).horizontalAdvance("“") == QFontMetricsF(zh).horizontalAdvance("“")


def test_the_tour_uses_the_cjk_family_first_in_both_languages(app_font):
    from animations.scenes.look import CJK_FAMILY, families_for
    assert families_for(CJK_FAMILY, "en")[0] == CJK_FAMILY
    assert families_for(CJK_FAMILY, "zh")[0] == CJK_FAMILY
