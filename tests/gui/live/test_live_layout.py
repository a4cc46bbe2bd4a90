"""The Live page's layout audit (gui.audit.layout_audit) over its states, in both languages, at 1280×720 and 1920×1080:
no text over text, nothing clipped, no empty text, no font under height / 60, and in Chinese no English UI word.

The stage's own texts (animations/stage/scene.py, helper "stage") are audited in ``test_stage_texts_*``; the rest of
the page (readout, controls, words, plots, status line) in the other tests.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRectF
from PySide6.QtWidgets import QApplication

from gui.audit.layout_audit import audit_problems, collect_layout, english_ui_words, untranslated_items
from gui.audit.layout_faults import faults

REAL_TARGET = "model.service:engine_main"
SIZES = [(1280, 720), (1920, 1080)]
CONTENT_ROLES = {"answer", "big-answer", "prompt", "chip", "qlabel"}  # the model's words and the visitor's prompt


def _split(window, layout: dict) -> tuple[dict, dict]:
    """(the page without the stage's texts, the stage's texts only)."""
    top_left = window.view.mapTo(window, QPoint(0, 0))
    view = QRectF(top_left.x(), top_left.y(), window.view.width(), window.view.height())
    inside, outside = [], []
    if not window.view.isVisible():  # the details view: no stage, every text is the page's
        return layout, dict(layout, items=[])
    for it in layout["items"]:
        x, y, w, h = it["rect"]
        (inside if view.contains(QRectF(x, y, w, h).center()) else outside).append(it)
    return dict(layout, items=outside), dict(layout, items=inside)


def _settle(qtbot, window, size) -> None:
    window.resize(*size)
    for _ in range(3):
        QApplication.processEvents()
    for plot in (window.trip_plot, window.rate_plot):
        plot.redraw()
    QApplication.processEvents()


def _run(qtbot, w, trips: int) -> None:
    # a language switch picks that language's model (MainWindow.choose_model): the engine restarts on it
    qtbot.waitUntil(lambda: w.engine_info is not None, timeout=60_000)
    start = w.reports_received
    assert w.run_trips(trips)
    qtbot.waitUntil(lambda: w.reports_received - start >= trips or w.is_session_done(), timeout=30_000)
    w.set_real_time(True)  # write every waiting trip now
    w.set_real_time(False)


def _check(window, size, lang, allow: set[str] = frozenset()) -> list[str]:
    page, _stage = _split(window, collect_layout(window, lang))
    assert page["size"] == list(size)
    # the audit sees the page (a collector that finds nothing passes nothing): the visitor's view has the top
    # bar, the readout, the split line, the big answer and seven big buttons; the details view far more
    assert len(page["items"]) > (30 if window.details_button.isChecked() else 12)
    problems = audit_problems(page)
    if lang == "zh":
        problems += untranslated_items(page, english_ui_words(), CONTENT_ROLES, allow)
    return problems


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("batch", [1, 4, 16])
def test_live_page_reads_at_both_sizes(qtbot, app_font, make_window, lang, batch):
    # in the app's own font (gui.app.setup_app): without it the result depended on whether an earlier test
    # had installed it (the stage fell to 1020 px of 1280 with seat buttons only after test_fonts)
    w = make_window(batch=batch)
    w.set_language(lang)
    w.set_prompt("Once upon a time")
    w.set_batch(batch)
    _run(qtbot, w, 6)
    for size in SIZES:  # growing only: a window's minimum follows its fonts, which follow its height
        for details in (False, True):
            w.set_details(details)
            _settle(qtbot, w, size)
            assert (w.width(), w.height()) == size  # the window takes the size asked for
            drawn = w.view.mapFromScene(w.scene.sceneRect()).boundingRect()
            if not details:  # the visitor's view: the stage across the window
                assert drawn.width() >= 0.9 * w.width(), f"the stage is drawn {drawn.width()} px wide of {w.width()}"
            problems = _check(w, size, lang)
            assert not problems, f"{lang} {size} batch {batch} details {details}:\n" + "\n".join(problems)


def test_live_page_before_the_model_is_loaded_says_so(qtbot):
    from gui.engine_link.bridge import EngineBridge
    from gui.window.main_window import MainWindow
    w = MainWindow(EngineBridge({}))
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    QApplication.processEvents()
    assert "loading" in w.readout.text().lower() and "0" not in w.readout.text()
    assert not audit_problems(_split(w, collect_layout(w, "en"))[0])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_live_extras_read_at_1280x720(qtbot, make_window, tiny_model_dir, lang):
    """Apprentice 4, then the book torn 2 ways by pages (TP), then by chapters (PP), on the real engine."""
    w = make_window(target=REAL_TARGET, trip_s=0.02,
                    options={"model_dir": str(tiny_model_dir), "draft_model_dir": str(tiny_model_dir)})
    w.set_language(lang)
    w.main_new_tokens = 100
    w.set_prompt("Once upon a time")
    _run(qtbot, w, 4)
    w.set_draft_k(4)
    _run(qtbot, w, 4)
    for state, mode, n in (("apprentice 4", None, 1), ("tp 2", "tp", 2), ("pp 2", "pp", 2)):
        if mode is not None:
            w.set_draft_k(0)
            w.set_sharding(mode, n)
            qtbot.waitUntil(lambda: not w.tear.is_pending(), timeout=60_000)
            assert w.sharding() == (mode, n)
            _run(qtbot, w, 3)
        for details in (False, True):
            w.set_details(details)
            _settle(qtbot, w, (1280, 720))
            assert (w.width(), w.height()) == (1280, 720)
            if not details:  # the extras' lines take a row under the stage: it gets shorter, never narrower
                assert not w.extra_readout.isHidden()
                layout = collect_layout(w, lang)
                assert layout["stage"][2] >= 0.9 * w.width(), (
                    f"{lang} {state}: the stage is {layout['stage']}; under it: {w.extra_readout.text()!r} / "
                    f"{w.live_page.readout_panel.why_label.text()!r}")
                assert not [f for f in faults(layout) if f.kind == "stage"]
            problems = _check(w, (1280, 720), lang, allow={"tiny"})  # the test model's folder: tiny_gpt2…
            assert not problems, f"{lang} {state} details {details}:\n" + "\n".join(problems)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_stage_texts_read_at_1280x720(qtbot, make_window, lang):
    w = make_window(batch=4)
    w.set_language(lang)
    w.set_prompt("Once upon a time")
    w.set_batch(4)
    _run(qtbot, w, 4)
    _settle(qtbot, w, (1280, 720))
    _page, stage = _split(w, collect_layout(w, lang))
    assert stage["items"]
    assert not audit_problems(stage)
