"""The tour: every page renders offscreen in both languages, live and illustrative; every string is translated
and every character of the translations has a glyph in the bundled fonts; navigation and live updates work."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.gui.tour_host import make_tour, tour_analysis

ROOT = Path(__file__).resolve().parents[3]
TS = ROOT / "assets" / "i18n" / "one_trip_zh_CN.ts"
FONTS = ROOT / "assets" / "fonts"
PROMPT = "The quick brown fox 每按一下"


def tour_translations() -> dict[str, str]:
    root = ET.parse(TS).getroot()
    for ctx in root.iter("context"):
        if ctx.findtext("name") == "Tour":
            return {m.findtext("source"): m.findtext("translation") or "" for m in ctx.iter("message")}
    return {}


@pytest.fixture(scope="module")
def measured(tiny_model_dir):
    """The engine's answer to an ``analyze`` of kind "tour", produced by model.teaching.analysis on the tiny model."""
    return tour_analysis(tiny_model_dir, PROMPT)






@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("live", [False, True])
def test_every_page_renders(qtbot, tiny_model_dir, measured, fonts, lang, live):
    from animations.scenes import look
    look.RECORD = set()
    try:
        w = make_tour(qtbot, tiny_model_dir, lang, fonts, measured if live else None)
        assert w.section_count == 18
        for i in range(w.section_count):
            w.goto(i)
            assert w.current_index == i
            scene = w.current_scene
            scene.seek(0.3)
            w.finish_animation()
            assert len(scene.items()) > 5
            assert w.caption.text()
            if w.pages_key() == "sampling":
                w._draw()
            if w.pages_key() == "game":
                for mode in ("alone", "apprentice", "shared"):
                    w.start_game(mode)
                    w._game_press()
        assert not w.grab().isNull()
        recorded = set(look.RECORD)
    finally:
        look.RECORD = None
        from gui import i18n
        i18n.set_language("en")
    table = tour_translations()
    missing = sorted(s for s in recorded if not table.get(s))
    assert not missing, f"strings without a Chinese translation: {missing[:5]}"


def test_translations_are_chinese_and_keep_placeholders():
    table = tour_translations()
    assert len(table) > 200
    for source, zh in table.items():
        assert set(re.findall(r"\{[^}]*\}", source)) == set(re.findall(r"\{[^}]*\}", zh)), source
    assert table["All this, just to write one sentence explaining the KV cache. And what let that sentence be "
                 "written was the KV cache itself."] == ("折腾一大圈，只为写出一句解释 KV 缓存的话。"
                                                        "而让这句话写得出来的，正是 KV 缓存本身。")


def test_every_translated_character_has_a_glyph(qapp):
    """Checked against the bundled font files themselves (QRawFont: no system fallback)."""
    from PySide6.QtGui import QRawFont

    raws = [QRawFont(str(p), 24) for p in sorted(FONTS.glob("*.[ot]tf"))]
    assert raws and all(r.isValid() for r in raws)
    from model.tokenizer import LABEL_MARKS
    text = "".join(tour_translations().values()) + "".join(tour_translations()) + "".join(LABEL_MARKS)
    missing = sorted({c for c in text if not c.isspace() and not any(r.supportsCharacter(ord(c)) for r in raws)})
    assert not missing, f"no glyph for {' '.join(f'U+{ord(c):04X}' for c in missing[:20])}"


def test_registered_fonts_cover_chinese(fonts):
    from PySide6.QtGui import QFont, QFontMetrics

    from animations.scenes.look import CJK_FAMILY, families_for
    assert fonts == CJK_FAMILY
    fam = families_for(fonts, "zh")
    m = QFontMetrics(QFont(fam[0]))
    assert all(m.inFontUcs4(ord(c)) for c in "一趟一个字小抄拼桌抢跑折腾")


def test_navigation_and_language(qtbot, tiny_model_dir, fonts):
    from animations.scenes.look import T
    w = make_tour(qtbot, tiny_model_dir, "en", fonts)
    w.show()
    seen = []
    w.section_changed.connect(seen.append)
    w.prev()
    assert w.current_index == 0 and seen == []
    w.next()
    w.next()
    assert w.current_index == 2 and seen == [1, 2]
    w.goto(99)
    assert w.current_index == 17
    w.goto(4)
    assert w.title_label.text() == "05 · Reading the question (prefill)"
    english = w.caption.text()
    w.set_language("zh")
    assert w.caption.text() != english and "预填充" in w.caption.text()
    assert w.title_label.text().startswith("05 · ") and "预填充" in w.title_label.text()
    assert T("Next ▶") == "下一段 ▶"
    w.set_language("en")
    assert w.caption.text() == english
    w.close()
    assert not w.clock.is_running()


def test_live_answer_replaces_illustrations(qtbot, tiny_model_dir, measured, fonts):
    from PySide6.QtCore import QObject, Signal

    class Bridge(QObject):
        analysis = Signal(dict)
        ready = Signal(dict)
        info = None

        def __init__(self):
            super().__init__()
            self.sent = []

        def analyze(self, analysis_id, kind, prompt, **params):
            self.sent.append((analysis_id, kind, prompt))
            return True

    bridge = Bridge()
    from gui.tour.data import TourData
    from gui.tour.tour import TourWidget
    w = TourWidget(bridge=bridge, data=TourData(tiny_model_dir), font_family=fonts)
    qtbot.addWidget(w)
    bridge.ready.emit({"kv_bytes_per_block": 4096, "block_size": 16})
    assert bridge.sent and bridge.sent[-1][1] == "tour"
    w.goto(7)  # the KV cache
    bridge.analysis.emit({"type": "analysis", "analysis_id": "other", "data": measured})
    assert w.data.analysis is None  # not ours
    bridge.analysis.emit({"type": "analysis", "analysis_id": bridge.sent[-1][0], "data": measured})
    assert w.data.analysis == measured
    w.set_prompt("Another question entirely")
    assert w.data.analysis is None and bridge.sent[-1][2] == "Another question entirely"


def test_render_section_png(tmp_path, qapp):
    from PySide6.QtGui import QImage

    from gui.capture.tour_shot import render_section_png
    out = tmp_path / "s9.png"
    assert render_section_png(9, "zh", str(out), size=(1280, 720), live=False) == 0
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1280, 720)
    assert render_section_png(0, "zh", str(out), live=False) == 2


def test_closing_line_is_written_trip_by_trip(qtbot, tiny_model_dir, measured, fonts):
    """Page 18: the line appears token by token with each trip's measured time and the KV blocks in use."""
    from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, measured)
    w.goto(17)
    live = measured["closing_line"]
    assert live["trips"] > 4 and all(t["ms"] > 0 for t in live["tokens"])
    scene = w.current_scene

    def counter() -> str:
        texts = [i.text() if isinstance(i, QGraphicsSimpleTextItem) else i.toPlainText() for i in scene.items()
                 if isinstance(i, (QGraphicsSimpleTextItem, QGraphicsTextItem))]
        return next(t for t in texts if t.startswith("trip "))

    from animations.scenes.closing import TRIP_S
    scene.seek(1.6 + TRIP_S * 2.5)
    assert counter().startswith(f"trip 3 of {live['trips']}")
    w.finish_animation()
    last = live["tokens"][-1]
    assert counter().startswith(f"trip {live['trips']} of") and f"{last['blocks']} blocks" in counter()


def test_game_switch_live_draft(qtbot, tiny_model_dir, fonts):
    """The apprentice's switch: disabled with its reason without a draft; live, each guessing press waits for one
    real verify trip's accepted count from the engine."""
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QPushButton

    class Bridge(QObject):
        analysis = Signal(dict)
        ready = Signal(dict)

        def __init__(self, info):
            super().__init__()
            self.info, self.sent = info, []

        def analyze(self, analysis_id, kind, prompt, **params):
            self.sent.append((analysis_id, kind, prompt, params))
            return True

    from gui.tour.data import TourData
    from gui.tour.tour import TourWidget

    def buttons(w):
        return {b.text(): b for b in w.controls.findChildren(QPushButton) if b.isVisible() or True}

    no_draft = TourWidget(bridge=Bridge({"draft": None, "draft_error": "missing"}), data=TourData(tiny_model_dir),
                          font_family=fonts)
    qtbot.addWidget(no_draft)
    no_draft.goto(15)
    no_draft.start_game("apprentice")
    live = buttons(no_draft)["Guesses: live draft"]
    assert not live.isEnabled() and "missing" in live.toolTip()
    no_draft._game_set_live(True)
    assert not no_draft.game_live and no_draft.game.accept_source is None

    bridge = Bridge({"draft": {"parameters": 1}})
    w = TourWidget(bridge=bridge, data=TourData(tiny_model_dir), font_family=fonts)
    qtbot.addWidget(w)
    w.goto(15)
    w.start_game("apprentice")
    assert buttons(w)["Guesses: live draft"].isEnabled()
    w._game_set_live(True)
    w._game_press()  # the reading trip asks nothing
    assert w.game.trips == 1 and not [s for s in bridge.sent if s[1] == "speculative_trip"]
    w._game_press()
    aid, kind, prompt, params = bridge.sent[-1]
    assert kind == "speculative_trip" and params == {"k": 5} and w.game.trips == 1  # waiting for the trip
    w._game_press()  # ignored while waiting
    bridge.analysis.emit({"type": "analysis", "analysis_id": aid, "data": {
        "available": True, "proposed": 5, "accepted": 2, "guesses": ["a", "b", "c", "d", "e"], "written": [],
        "text": " more", "verify_ms": 1.5}})
    assert w.game.trips == 2 and w.game.last[0]["accepted"] == 2 and w.game.last[0]["tokens"] == 3
    assert w._game_text.endswith(" more")
    w._game_press()
    bridge.analysis.emit({"type": "analysis", "analysis_id": bridge.sent[-1][0], "data": {"available": False}})
    assert not w.game_live and w.game.trips == 0  # no draft after all: back to the illustration


def test_parallel_page_shows_the_live_workers_of_the_tearing_slider(qtbot, tiny_model_dir, fonts):
    from PySide6.QtCore import QObject, Signal
    from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem

    class Bridge(QObject):
        analysis = Signal(dict)
        ready = Signal(dict)
        sharding = Signal(dict)
        step = Signal(dict)
        info = None

        def analyze(self, *args, **params):
            return False

    from gui.tour.data import TourData
    from gui.tour.tour import TourWidget

    bridge = Bridge()
    w = TourWidget(bridge=bridge, data=TourData(tiny_model_dir), font_family=fonts)
    qtbot.addWidget(w)
    w.goto(13)  # §14
    assert w.live_workers() is None  # the book is whole: the page invites the visitor to tear it

    def texts():
        return " ".join(i.text() if isinstance(i, QGraphicsSimpleTextItem) else i.toPlainText()
                        for i in w.current_scene.items()
                        if isinstance(i, (QGraphicsSimpleTextItem, QGraphicsTextItem)))

    assert "“tearing the book” on the Live page" in texts()
    bridge.sharding.emit({"mode": "pp", "n": 2})
    for compute, comm in ((2.0, 5.0), (4.0, 7.0), (3.0, 6.0)):
        bridge.step.emit({"workers": [{"rank": r, "compute_ms": compute + r, "comm_ms": comm, "bubble_ms": 1.0}
                                      for r in range(2)]})
    bridge.step.emit({"workers": []})  # a trip on one desk does not count
    live = w.live_workers()
    assert live["n"] == 2 and live["trips"] == 3
    assert live["compute_ms"] == 3.5  # median of 2, 3, 3, 4, 4, 5
    assert live["comm_ms"] == 6.0 and live["bubble_ms"] == 1.0
    w._rebuild(replay=False)
    assert "pipeline parallel over 2 worker processes" in texts()
    bridge.sharding.emit({"mode": "tp", "n": 1})  # back to one desk (or a worker died)
    assert w.live_workers() is None
    w.close()
