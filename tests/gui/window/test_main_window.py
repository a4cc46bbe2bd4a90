"""The main window on a fake engine (fast, deterministic) and on the real engine with a tiny random GPT-2."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication, QDialog

from tests.gui.fake_engine import fake_tokens

pytestmark = pytest.mark.filterwarnings("error")

REAL_TARGET = "model.service:engine_main"


def test_run_writes_the_engines_tokens_one_trip_each(qtbot, make_window):
    w = make_window(trip_s=0.03)
    w.main_new_tokens = 6
    w.set_prompt("hello world")
    shown = []
    w.scene.trip_finished.connect(lambda: shown.append(1))
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=20_000):
        pass
    assert w.answer_text == "".join(fake_tokens("hello world", 6))
    assert w.reports_received == 6
    assert len(shown) == 6  # each report shown as one trip
    assert len(w.trip_plot.points()) == 6
    assert "measured" in w.readout.text() and "slower" in w.readout.text()
    assert w.trip_plot.floor_ms == pytest.approx(100_000 / 10e9 * 1000)
    assert not w.is_running()


def test_step_runs_exactly_one_trip(qtbot, make_window):
    w = make_window()
    w.set_prompt("step by step")
    for n in (1, 2, 3):
        w.step_once()
        qtbot.waitUntil(lambda: w.reports_received == n, timeout=5_000)
    qtbot.wait(300)
    assert w.reports_received == 3
    qtbot.waitUntil(lambda: len(w.answer_token_ids) == 3, timeout=5_000)
    assert w.answer_text == "".join(fake_tokens("step by step", 3))


def test_pause_stops_granting(qtbot, make_window):
    w = make_window(trip_s=0.05)
    w.set_prompt("pause me")
    w.run()
    qtbot.waitUntil(lambda: w.reports_received >= 2, timeout=5_000)
    w.pause()
    qtbot.wait(200)
    n = w.reports_received
    qtbot.wait(400)
    assert w.reports_received == n


def test_batch_slider_changes_batch_of_later_reports(qtbot, make_window):
    w = make_window(trip_s=0.02)
    w.main_new_tokens = 60
    w.set_prompt("batch test")
    reports = []
    w.bridge.step.connect(reports.append)
    w.run()
    qtbot.waitUntil(lambda: len(reports) >= 2, timeout=5_000)
    assert all(r["batch"] == 1 for r in reports)
    w.set_batch(4)
    qtbot.waitUntil(lambda: len(reports) >= 6 and reports[-1]["batch"] == 4, timeout=5_000)
    assert w.batch_value.text() == "4"
    # the fake engine writes one token per sequence in a trip: the readout of a batch-4 trip on stage says 4 out
    qtbot.waitUntil(lambda: "4 tokens in, 4 out" in w.readout.text(), timeout=5_000)
    w.set_batch(2)
    n = len(reports)
    qtbot.waitUntil(lambda: len(reports) >= n + 3, timeout=5_000)
    assert reports[-1]["batch"] == 2


def test_real_time_mode_shows_trips_as_they_come(qtbot, make_window):
    w = make_window(trip_s=3.0)  # paced, this would take 3 s a trip
    w.main_new_tokens = 20
    w.set_prompt("fast")
    w.set_real_time(True)
    assert w.scene.real_time
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=5_000):
        pass
    assert w.answer_text == "".join(fake_tokens("fast", 20))
    assert "real speed" in w.readout.text()


def test_reset_clears_text_chips_and_plots(qtbot, make_window):
    w = make_window(trip_s=0.02)
    w.set_prompt("reset me")
    w.run()
    qtbot.waitUntil(lambda: len(w.answer_token_ids) >= 2, timeout=5_000)
    w.reset()
    assert w.answer_text == "" and not w.chips.chips and not w.trip_plot.points()
    assert not w.is_running()
    n = w.reports_received
    qtbot.wait(300)
    assert w.answer_text == ""  # late reports of the old answer are not shown
    assert w.reports_received - n <= 1


def test_keys(qtbot, make_window):
    w = make_window(trip_s=0.02)
    w.set_prompt("keys")
    w.activateWindow()
    w.actions["step"].trigger()
    qtbot.waitUntil(lambda: w.reports_received == 1, timeout=5_000)
    w.actions["run_pause"].trigger()
    assert w.is_running()
    w.actions["run_pause"].trigger()
    assert not w.is_running()
    w.actions["frame_overlay"].trigger()
    assert w.frame_overlay.isVisible()
    w.actions["frame_overlay"].trigger()
    assert not w.frame_overlay.isVisible()
    w.actions["reset"].trigger()
    assert w.answer_text == ""
    shortcuts = {name: a.shortcut().toString() for name, a in w.actions.items()}
    assert shortcuts == {"run_pause": "Space", "step": "S", "reset": "R", "frame_overlay": "F12",
                         "fullscreen": "F"}
    assert "Space" in w.run_button.toolTip() and "(S)" in w.step_button.toolTip()


def test_frame_counter_measures_frames(qtbot, make_window):
    w = make_window(trip_s=0.5)
    w.set_prompt("frames")
    w.frame_overlay.toggle()
    w.run()
    qtbot.wait(600)
    for _ in range(5):
        w.view.viewport().repaint()
    p50, p95, n = w.frame_counter.stats_ms()
    assert n > 0 and 0 < p50 <= p95
    w.frame_overlay.refresh()
    assert "p95" in w.frame_overlay.text()


def test_engine_error_shows_a_calm_status_line(qtbot, make_window):
    w = make_window()
    w.bridge.send({"op": "submit", "request_id": "x", "prompt": "", "max_new_tokens": 3, "temperature": 0.0,
                   "top_k": 0, "top_p": 1.0, "seed": None})
    qtbot.waitUntil(lambda: "empty prompt" in w.status_line.text(), timeout=5_000)
    assert not [tw for tw in QApplication.topLevelWidgets() if isinstance(tw, QDialog) and tw.isVisible()]


def test_dead_engine_is_restarted_and_the_answer_goes_on(qtbot, make_window, tmp_path):
    w = make_window(options={"die_after_steps": 3, "die_once_marker": str(tmp_path / "died")}, trip_s=0.02)
    w.main_new_tokens = 8
    w.set_prompt("survive")
    first_pid = w.bridge.pid
    w.run()
    qtbot.waitUntil(lambda: "stopped" in w.status_line.text(), timeout=5_000)
    with qtbot.waitSignal(w.session_finished, timeout=30_000):
        pass
    assert w.bridge.pid != first_pid
    assert w.answer_text == "".join(fake_tokens("survive", 8))


def test_empty_prompt_is_refused_calmly(qtbot, make_window):
    w = make_window()
    w.set_prompt("   ")
    w.run()
    assert "prompt" in w.status_line.text().lower()
    assert w.reports_received == 0


def test_typed_prompt_is_capped(qtbot, make_window):
    w = make_window()
    w.prompt_box.lineEdit().setText("x" * 5000)
    assert len(w.prompt()) == 2000


def test_language_switch_is_live_and_chinese_has_glyphs(qtbot, make_window):
    import xml.etree.ElementTree as ET

    from animations.fonts import covers, register_fonts
    from gui.i18n import I18N_DIR

    w = make_window()
    w.font_family = register_fonts()
    assert w.run_button.text() == "Run"
    w.set_language("zh")
    assert w.scene.language == "zh"
    texts = [w.run_button.text(), w.pause_button.text(), w.step_button.text(), w.reset_button.text(),
             w.batch_caption.text(), w.speed_caption.text(), w.real_time_box.text(), w.readout.text(),
             w.windowTitle()]
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts), texts
    assert w.lang_button.text() == "English"
    # every Chinese string of the window's contexts renders with the chosen font
    root = ET.parse(I18N_DIR / "one_trip_zh_CN.ts").getroot()
    chinese = "".join(m.findtext("translation") or "" for c in root.iter("context")
                      if c.findtext("name") in ("MainWindow", "TokenChips", "FrameOverlay")
                      for m in c.iter("message"))
    assert len(chinese) > 100
    missing = sorted({ch for ch in chinese if not ch.isspace() and not covers(w.font_family, ch)})
    assert not missing, f"no glyphs in {w.font_family} for {''.join(missing)}"
    w.set_language("en")
    assert w.run_button.text() == "Run"


def test_every_window_string_has_a_chinese_translation(qtbot, make_window):
    import re
    import xml.etree.ElementTree as ET
    from pathlib import Path

    from gui.i18n import I18N_DIR
    root = ET.parse(I18N_DIR / "one_trip_zh_CN.ts").getroot()
    have = {(c.findtext("name"), m.findtext("source")) for c in root.iter("context") for m in c.iter("message")
            if (m.findtext("translation") or "").strip()}
    gui_dir = Path(__file__).resolve().parents[3] / "gui"
    wanted = set()
    # the window's own modules: gui/'s root and the packages that were its root modules before issue 36
    paths = [p for folder in ("", "window", "kiosk", "presenter", "capture", "engine_link", "audit")
             for p in (gui_dir / folder).glob("*.py")]
    for path in paths:
        src = path.read_text(encoding="utf-8")
        for m in re.finditer(r'_tr\(\s*"((?:[^"\\]|\\.)*)"(?:\s*\n?\s*"((?:[^"\\]|\\.)*)")?', src):
            wanted.add(("MainWindow", m.group(1) + (m.group(2) or "")))
        for m in re.finditer(r'_set_status\(\s*"((?:[^"\\]|\\.)*)"', src):
            wanted.add(("MainWindow", m.group(1)))
        for m in re.finditer(r'translate\("(\w+)",\s*"((?:[^"\\]|\\.)*)"', src):
            wanted.add((m.group(1), m.group(2)))
    missing = sorted(s for s in wanted if s not in have)
    assert not missing, missing


def test_real_engine_same_tokens_as_generate(qtbot, make_window, tiny_model_dir, capsys):
    """On the real engine with Greedy switched on, the answer on screen is the greedy output of
    `main.py generate` for the prompt."""
    from model.cli import generate_main

    prompt = "Once upon a time"
    n = 12
    assert generate_main([prompt, "--model", str(tiny_model_dir), "--max-new-tokens", str(n), "--json",
                          "--threads", "1", "--greedy"]) == 0
    expected = json.loads(capsys.readouterr().out)["requests"][0]
    w = make_window(target=REAL_TARGET, options={"model_dir": str(tiny_model_dir)}, trip_s=0.02)
    w.main_new_tokens = n
    w.model_choice.greedy_box.setChecked(True)  # the window samples by default; Greedy is the switch
    assert w.model_choice.sampling(1) == {"temperature": 0.0, "top_p": 1.0, "seed": None}
    w.set_prompt(prompt)
    w.run()
    with qtbot.waitSignal(w.session_finished, timeout=60_000):
        pass
    assert w.answer_token_ids == expected["token_ids"]
    assert w.answer_text == expected["text"]
    assert w.reports_received == len(expected["token_ids"])  # one trip per token, prefill included
    model = w.engine_info["model"]
    assert w.trip_plot.floor_ms == pytest.approx(
        model["weight_bytes"] / w.engine_info["memory_bandwidth_bytes_per_s"] * 1000)
