"""The audit matrix (gui.audit.audit_matrix) over a representative subset of screens: a few tour pages in both languages
and the Live page, at 1280×720. The full matrix is ``python -m gui.audit.audit_matrix`` (report: docs/audit-report.md).
"""

from __future__ import annotations

import pytest

from gui.audit.audit_matrix import LIVE_KINDS, _size, audit_tour, write_report
from gui.audit.layout_audit import collect_layout
from gui.audit.layout_faults import faults


def test_sizes_and_the_report(tmp_path):
    assert _size("3840x2160@2") == (1920, 1080, 2.0) and _size("1280x720") == (1280, 720, 1.0)
    results = [{"screen": "tour page 6 · zh · 1280x720", "items": 12,
                "faults": [{"kind": "raw", "text": "<|endoftext|>", "detail": "shows <|endoftext|>"}]},
               {"screen": "tour page 7 · zh · 1280x720", "items": 20, "faults": []},
               {"screen": "live details · zh", "skipped": "the page has no details view yet"}]
    out = tmp_path / "report.md"
    write_report(results, out, "python -m gui.audit.audit_matrix")
    text = out.read_text(encoding="utf-8")
    assert "1 of 2 screens have faults" in text
    assert "### tour page 6 · zh · 1280x720" in text and "`<\\|endoftext\\|>`" in text
    assert "### tour page 7" not in text and "live details · zh (the page has no details view yet)" in text


TOUR_SAMPLE = [1, 2, 6, 7, 9, 12, 14, 16, 17]  # a page of each scene module and the old offenders (bands, breaks)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_tour_pages_pass_the_audit(qtbot, qapp, lang):
    results: list[dict] = []
    audit_tour(qapp, [lang], [(1280, 720, "1280x720")], TOUR_SAMPLE, "", False, None, results)
    assert len(results) == len(TOUR_SAMPLE) and all(r["items"] > 5 for r in results)
    bad = [f"{r['screen']}: {f['kind']} {f['text'][:40]!r} {f['detail']}" for r in results for f in r["faults"]]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("presenter", [False, True])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_live_page_passes_the_audit(qtbot, app_font, make_window, lang, presenter):
    """Also in presenter mode (``--presenter``: one type step larger), where the stage was 66-84 % wide and the
    chapter labels lay across their bars' edges at 1280x720."""
    w = make_window(batch=4)
    if presenter:
        from gui.presenter.presenter import Presenter
        Presenter(w).install(presenter_mode=True)
        w.presenter.show_live()  # presenter mode opens on the deck's first item: L shows the Live page
        assert w.live_page.presenter_mode and not w.is_tour_visible()
    w.set_language(lang)
    w.set_batch(4)
    qtbot.waitUntil(lambda: w.engine_info is not None, timeout=60_000)
    start = w.reports_received
    assert w.run_trips(4)
    qtbot.waitUntil(lambda: w.reports_received - start >= 4 or w.is_session_done(), timeout=30_000)
    w.resize(1280, 720)
    qtbot.wait(50)
    layout = collect_layout(w, lang)
    assert len(layout["items"]) > 10
    bad = [f.line() for f in faults(layout, LIVE_KINDS)]
    assert not bad, "\n".join(bad)
