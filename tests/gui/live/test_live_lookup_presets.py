"""The n-gram apprentice's own presets on the Live page (issue 35, item 3): a prompt whose answer repeats the prompt
runs the n-gram apprentice at its own sampling, with one line saying why; a free-writing preset puts back the
apprentice chosen for free writing. On the fake engine: these assert state, never a timing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QInputDevice
from PySide6.QtTest import QTest

from gui.live.lookup_presets import LOOKUP_ROLE
from model import catalog

pytestmark = pytest.mark.filterwarnings("error")

ROOT = Path(__file__).resolve().parents[3]
PRESET = catalog.CODE.lookup_presets[0]
# What bench/lookup_bench.py measured, read here from the file it writes (not through model.catalog, which the page
# uses): the page must say these figures, never a stand-in's (an earlier stand-in said "0 of 40 answers looped", a
# count of 4 distinct answers ten times each that the project found wrong)
MEASURED = json.loads((ROOT / "assets" / "lookup.json").read_text(encoding="utf-8"))
FIGURES = MEASURED["presets"][PRESET.key]
ROUNDS = FIGURES["round_speedups"]


@pytest.fixture
def window(apprentice_window):
    assert apprentice_window.controls.lookup._measured is catalog.lookup_measured  # the page reads the asset
    return apprentice_window


def _index(box, prompt: str) -> int:
    return next(i for i in range(box.count()) if box.itemData(i) == prompt)


def _plain(text: str) -> str:
    """``text`` with the no-break spaces and word joiners that keep figures whole (``keep_together``) as plain."""
    return text.replace("\xa0", " ").replace("\u2060", "")


def _pick(window, prompt: str) -> None:
    """Pick the item of ``prompt`` in the prompt box, as a click in its list does (``activated``/index change)."""
    window.prompt_box.setCurrentIndex(_index(window.prompt_box, prompt))


def test_the_prompt_box_offers_the_lookup_preset_under_its_label(window):
    box = window.prompt_box
    i = _index(box, PRESET.prompt)
    assert box.itemData(i, LOOKUP_ROLE) == PRESET.key
    assert box.itemText(i) == PRESET.label and "the answer repeats the prompt" in box.itemText(i)
    assert i >= len(catalog.CODE.presets)  # after the free-writing presets: the box opens on free writing
    assert window.session.prompt == catalog.CODE.presets[0]


def test_picking_the_lookup_preset_runs_the_ngram_apprentice_and_says_why(window):
    assert window.apprentice_choice.kind() == "model" and window.session.draft_k == 0
    _pick(window, PRESET.prompt)
    s = window.session
    assert s.prompt == PRESET.prompt
    assert s.draft_kind == "ngram" and window.apprentice_choice.kind() == "ngram"
    assert s.draft_k == PRESET.k and window.apprentice.value() == PRESET.k
    assert {"op": "set_draft_kind", "kind": "ngram"} in window.sent
    assert (s.sampling.temperature, s.sampling.top_p, s.sampling.greedy) == (PRESET.temperature, PRESET.top_p, False)
    assert f"temperature {PRESET.temperature:g}" in _plain(window.model_choice.sampling_label.text())
    line = _plain(window.extra_readout.text())
    assert "This answer copies its prompt, so the apprentice copies too" in line
    assert (f"Measured by bench/lookup_bench.py ({MEASURED['date']}): {FIGURES['speedup']:.2f}× the speed of plain "
            f"decoding ({min(ROUNDS):.2f}–{max(ROUNDS):.2f}× over {len(ROUNDS)} rounds), "
            f"{round(FIGURES['acceptance'] * 100)}% of its guesses kept; {len(FIGURES['looped_seeds'])} of "
            f"{FIGURES['answers']} answers fell into a loop and were stopped.") in line
    assert not window.extra_readout.isHidden()


def test_picking_a_free_preset_puts_back_the_free_writing_apprentice(window):
    window.session.set_draft_k(2)  # the visitor's own setting for free writing
    _pick(window, PRESET.prompt)
    assert window.session.draft_kind == "ngram" and window.session.draft_k == PRESET.k
    _pick(window, catalog.CODE.presets[1])
    s = window.session
    assert s.draft_kind == "model" and window.apprentice_choice.kind() == "model" and s.draft_k == 2
    assert window.sent[-1] == {"op": "set_draft_k", "k": 2}  # the kind first, then its k
    assert window.sent[-2] == {"op": "set_draft_kind", "kind": "model"}
    assert (s.sampling.temperature, s.sampling.top_p) == (catalog.CODE.temperature, catalog.CODE.top_p)
    assert f"temperature {catalog.CODE.temperature:g}" in _plain(window.model_choice.sampling_label.text())
    assert "copies its prompt" not in window.extra_readout.text()


def test_the_start_up_verdict_waits_while_the_lookup_preset_runs(window):
    _pick(window, PRESET.prompt)
    window.bridge.apprentice.emit({"type": "apprentice", "checks": [], "chosen": "model", "pays_when": None})
    assert window.session.draft_kind == "ngram"  # the preset keeps its apprentice
    _pick(window, catalog.CODE.presets[0])
    assert window.session.draft_kind == "model"  # free writing gets the check's choice


def test_the_lookup_prompt_set_from_elsewhere_shows_its_label(window):
    window.set_prompt(PRESET.prompt)  # the kiosk, the screenshot command, a test
    assert window.prompt_box.currentText() == PRESET.label
    assert window.session.prompt == PRESET.prompt and window.session.draft_kind == "ngram"


def test_a_restarted_engine_keeps_the_lookup_presets_apprentice(window):
    _pick(window, PRESET.prompt)
    window.engine._take_offer({**(window.engine_info or {}), "draft_kinds": ["model", "ngram"],
                                     "draft_kind": "model"})
    assert window.session.draft_kind == "ngram" and window.apprentice_choice.kind() == "ngram"


_DEVICE: list = []


def _screen():
    """A touch-screen device (created once per process: Qt keeps every device it is told of)."""
    if not _DEVICE:
        _DEVICE.append(QTest.createTouchDevice(QInputDevice.DeviceType.TouchScreen))
    return _DEVICE[0]


def _tap(target, spot) -> None:
    QTest.touchEvent(target, _screen(), False).press(0, spot, target).commit()
    QTest.touchEvent(target, _screen(), False).release(0, spot, target).commit()


@pytest.mark.qt_log_ignore("This plugin does not support raise", "This plugin does not support grabbing",
                           "This plugin does not support propagateSizeHints")  # a popup, offscreen
def test_the_lookup_preset_is_picked_by_touch(window, qtbot):
    from gui.kiosk import touch
    from gui.kiosk.touch import install_touch
    install_touch(window, force=True)  # touch mode: the app's one place for fingers (gui.kiosk.touch)
    window.set_details(True)  # the prompt box is in the engineer's view
    box = window.prompt_box
    qtbot.waitUntil(box.isVisible, timeout=2000)
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    _tap(window, window.mapFromGlobal(box.mapToGlobal(box.rect().center())))
    view = box.view()
    qtbot.waitUntil(view.isVisible, timeout=2000)
    index = view.model().index(_index(box, PRESET.prompt), 0)
    view.scrollTo(index)
    popup = view.window()  # a window of its own: the touch lands there, and the list takes it as a click
    qtbot.wait(int(touch.TAP_COOLDOWN_S * 1000) + 10)
    _tap(popup, popup.mapFromGlobal(view.viewport().mapToGlobal(view.visualRect(index).center())))
    qtbot.waitUntil(lambda: window.session.prompt == PRESET.prompt, timeout=2000)
    assert not view.isVisible()
    assert window.session.draft_kind == "ngram" and window.session.draft_k == PRESET.k


def test_the_label_and_the_line_are_translated(window):
    from gui import i18n
    window.set_language("zh")
    window.choose_model("code")  # Chinese interface, the code model still writing
    _pick(window, PRESET.prompt)
    box = window.prompt_box
    label = box.itemText(_index(box, PRESET.prompt))
    assert label != PRESET.label and "↻" in label
    assert window.session.draft_kind == "ngram"
    assert "This answer copies" not in window.extra_readout.text() and window.extra_readout.text()
    i18n.set_language("en")


def test_slower_on_the_page_gives_the_benchmarks_figure_not_the_free_writing_check(window):
    _pick(window, PRESET.prompt)
    meter, key = window.spec_meter, window.session.spec_key()
    for _ in range(3):
        meter.add({"phase": "decode", "wall_ms": 2.0, "tokens_out": 1}, key)
    meter.add({"phase": "verify", "wall_ms": 9.0, "tokens_out": 3, "proposed": 4, "accepted": 2}, key)
    assert meter.speedup(key) < 1.0
    window.live_readout.update_extras()
    why = _plain(window.live_page.readout_panel.why_label.text())
    assert (f"Slower here: only on these few trips; bench/lookup_bench.py measured it {FIGURES['speedup']:.2f}× as "
            f"fast over {len(ROUNDS)} rounds.") in why


def test_the_measured_loop_count_is_the_benchmarks_own():
    """The figures the page reads agree with themselves and with docs/benchmarks.md's lookup table: a count of
    distinct answers (``--answers``), each seed that looped named once."""
    looped = FIGURES["looped_seeds"]
    assert FIGURES["loops"] == len(looped) == len(set(looped)) <= FIGURES["answers"]
    assert f"--answers {FIGURES['answers']}" in MEASURED["command"]
    table = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert f"{len(looped)} of {FIGURES['answers']}, stopped" in table
