"""The Live page follows the engine's start-up apprentice verdict (model/service.py's "apprentice" event): the
apprentice it switches on, greedy while it helps (and said so), the visitor's two-way choice, the why-not line.
On the fake engine with a hand-made event: these assert state, never a timing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.filterwarnings("error")


def _v(speedup: float, acceptance: float | None, holds: bool, separated: bool, why: str | None = None) -> dict:
    """One ``speculative_times``-shaped verdict."""
    return {"available": True, "speedup": speedup, "acceptance": acceptance, "runs": 3,
            "with": {"n": 3}, "verdict": {"holds": holds, "separated": separated, "ratio": speedup}, "why_not": why}


def _event(chosen: str, pays_when: str | None) -> dict:
    """Sampled (T 0.8): neither pays, the draft for keeping too few guesses; greedy: ``chosen`` pays."""
    other = "model" if chosen == "ngram" else "ngram"
    sampled = {"sampling": {"temperature": 0.8, "top_k": 0, "top_p": 0.95}, "best": None,
               "verdicts": {"model": _v(0.55, 0.34, False, True, "speculative_acceptance"),
                            "ngram": _v(0.98, 0.10, False, False, "noise")}}
    greedy = {"sampling": {"temperature": 0.0, "top_k": 0, "top_p": 1.0}, "best": chosen,
              "verdicts": {chosen: _v(1.6, 0.8, True, True), other: _v(0.9, 0.6, False, True, "speculative_overhead")}}
    return {"type": "apprentice", "checks": [sampled, greedy] if pays_when else [sampled], "chosen": chosen,
            "pays_when": pays_when}


@pytest.fixture
def window(apprentice_window):
    return apprentice_window


@pytest.mark.parametrize("chosen", ["ngram", "model"])
def test_the_choice_follows_the_event(window, chosen):
    window.bridge.apprentice.emit(_event(chosen, "greedy"))
    assert window.apprentice_choice.kind() == chosen
    assert window.apprentice_choice.buttons[chosen].isChecked()
    assert window.apprentice_pays_when() == "greedy"


def test_the_apprentice_keeps_the_visitors_sampling_and_says_where_it_pays(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    assert not window.model_choice.greedy
    window.set_draft_k(4)
    assert not window.model_choice.greedy  # it pays only greedy, yet the answer keeps temperature 0.8
    line = window.extra_readout.text()
    assert "Greedy while the apprentice helps" not in line
    # which temperature it needs and why, in words, with both measured shares kept (10% sampled, 80% greedy)
    assert "It pays only at temperature 0 (greedy): at temperature 0.8 it keeps 10% of its guesses, greedy 80%" in line
    assert "The answer keeps temperature 0.8." in line
    window.set_draft_k(0)
    assert "It pays only" not in window.extra_readout.text()


def test_a_visitor_greedy_stays_when_the_apprentice_goes(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    window.model_choice.greedy_box.setChecked(True)  # the visitor's own choice
    window.set_draft_k(4)
    window.set_draft_k(0)
    assert window.model_choice.greedy


def test_the_apprentice_follows_the_setting_it_pays_under(window):
    # sampled: the draft pays; greedy: the n-gram one does. The page shows the one that pays at its setting.
    event = _event("ngram", "greedy")
    event["checks"][0]["verdicts"]["model"] = _v(1.3, 0.7, True, True)
    event["checks"][0]["best"] = "model"
    event["chosen"] = "model"
    window.bridge.apprentice.emit(event)
    assert window.apprentice_choice.kind() == "model"
    window.model_choice.greedy_box.setChecked(True)
    assert window.apprentice_choice.kind() == "ngram"
    assert window.sent[-1] == {"op": "set_draft_kind", "kind": "ngram"}
    window.model_choice.greedy_box.setChecked(False)
    assert window.apprentice_choice.kind() == "model"
    window.apprentice_choice.buttons["ngram"].click()  # the visitor's own pick stands from now on
    window.model_choice.greedy_box.setChecked(True)
    window.model_choice.greedy_box.setChecked(False)
    assert window.apprentice_choice.kind() == "ngram"


def test_an_apprentice_that_pays_sampled_keeps_the_sampling(window):
    event = _event("model", "sampling")
    event["checks"][0]["verdicts"]["model"] = _v(1.3, 0.7, True, True)
    window.bridge.apprentice.emit(event)
    window.set_draft_k(4)
    assert not window.model_choice.greedy
    assert "Greedy while" not in window.extra_readout.text()


def test_the_switch_changes_the_apprentice_kind(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    window.apprentice_choice.buttons["model"].click()
    assert window.apprentice_choice.kind() == "model"
    assert {"op": "set_draft_kind", "kind": "model"} in window.sent
    window.apprentice_choice.buttons["ngram"].click()
    assert window.sent[-1] == {"op": "set_draft_kind", "kind": "ngram"}


def test_the_event_itself_sends_no_switch(window):
    # the engine already set its chosen apprentice: the page only follows, it does not echo a command back
    window.bridge.apprentice.emit(_event("model", "greedy"))
    assert not [c for c in window.sent if c.get("op") == "set_draft_kind"]


def test_why_not_line_shows_where_a_verdict_disagrees(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    model_line = window.apprentice_choice.verdict_text("model")
    ngram_line = window.apprentice_choice.verdict_text("ngram")
    # both verdicts, with their figures and runs, under both samplings
    assert "sampling 0.55×, 34% kept, 3 runs" in model_line and "greedy 0.90×, 60% kept, 3 runs" in model_line
    assert "sampling 0.98×, 10% kept, 3 runs" in ngram_line and "greedy 1.60×, 80% kept, 3 runs" in ngram_line
    # the why-not line: the measured reason where each first does not pay (both fail sampled here)
    assert "does not pay here, sampling: its guesses are kept too rarely" in model_line
    assert "does not pay here, sampling: the runs with and without it overlap" in ngram_line


def test_why_not_line_is_absent_where_the_apprentice_pays(window):
    event = _event("model", "sampling")
    event["checks"][0]["verdicts"]["model"] = _v(1.3, 0.7, True, True)
    window.bridge.apprentice.emit(event)
    assert "does not pay" not in window.apprentice_choice.verdict_text("model")
    assert "does not pay" in window.apprentice_choice.verdict_text("ngram")


def test_an_apprentice_that_made_no_guess_says_so(window):
    event = _event("model", "greedy")
    event["checks"][0]["verdicts"]["ngram"] = _v(1.0, None, False, False, "speculative_overhead")
    window.bridge.apprentice.emit(event)
    line = window.apprentice_choice.verdict_text("ngram")
    assert "nothing in the text to copy" in line and "cost more" not in line


def test_before_the_event_the_verdicts_say_they_are_being_measured(window):
    assert "measuring" in window.apprentice_choice.verdict_text("model")
    assert window.apprentice_pays_when() is None


def test_model_lessons_loads_no_torch_for_the_gui():
    out = subprocess.run([sys.executable, "-c", "import model.teaching.lessons, sys; print('torch' in sys.modules)"],
                         capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"


def _slower_trips(window, verify_ms: float = 30.0) -> None:
    """Plain trips of 10 ms a token, then verify trips that write 2 tokens in ``verify_ms``: slower when > 20."""
    for _ in range(6):
        window.live_readout.measure_extras({"phase": "decode", "wall_ms": 10.0, "tokens_out": 1})
    for _ in range(4):
        window.live_readout.measure_extras({"phase": "verify", "wall_ms": verify_ms, "tokens_out": 2, "proposed": 4,
                                "accepted": 1, "bonus": 0})


def test_a_slower_page_says_the_start_up_checks_measured_reason_once(window):
    event = _event("ngram", "greedy")
    window.bridge.apprentice.emit(event)
    window.apprentice_choice.buttons["model"].click()  # the draft model, which does not pay greedy (overhead)
    window.set_draft_k(0)
    window.model_choice.greedy_box.setChecked(True)
    window.set_draft_k(4)
    _slower_trips(window)
    why = window.live_page.readout_panel.why_label.text()
    assert why == "Slower here: its guesses are kept, but its own passes cost more than the trips saved."
    assert "tiny model on two CPU cores" not in why  # the old canned line is gone
    shown = [window.extra_readout.text(), why]
    assert sum(t.count("Slower here") for t in shown) == 1  # exactly one reason on screen
    # the figure and its reason at one size
    assert window.live_page.readout_panel.why_label.font().pixelSize() == window.extra_readout.font().pixelSize()


def test_the_details_view_says_the_reason_once_under_the_verdicts(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    window.apprentice_choice.buttons["model"].click()  # the draft model, sampled: it keeps too few guesses
    window.set_draft_k(4)
    assert not window.model_choice.greedy
    _slower_trips(window)
    reason = "its guesses are kept too rarely to pay for its own passes"
    assert window.live_page.readout_panel.why_label.text() == f"Slower here: {reason}."
    window.set_details(True)  # the draft model's verdict line says it: the readout's line gives way
    assert reason in window.apprentice_choice.verdict_text("model")
    assert not window.live_page.readout_panel.why_label.text()
    window.set_details(False)
    assert reason in window.live_page.readout_panel.why_label.text()


def test_a_slower_page_where_the_check_found_it_paying_quotes_the_check(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    window.model_choice.greedy_box.setChecked(True)  # the visitor's greedy: where the n-gram one paid 1.60x
    window.set_draft_k(4)
    _slower_trips(window)
    why = window.live_page.readout_panel.why_label.text()
    # the page's few trips against the check's runs, said without contradicting itself ("Slower here: … 1.60×")
    assert why == "Slower here: only on these few trips; the start-up check measured it 1.60× as fast over 3 runs."
    # the same trips timed while other programs kept the processor busy: no "slower" claim, the meter says why
    meter, key = window.spec_meter, window.session.spec_key()
    for _ in range(5):
        meter.add({"phase": "verify", "wall_ms": 40.0, "tokens_out": 2, "proposed": 4, "accepted": 1,
                   "cpu_ms": 20.0}, key)
    window.live_readout.update_extras()
    assert meter.busy(key) and window.live_page.readout_panel.why_label.text() == ""


def test_no_why_line_when_the_page_measures_faster(window):
    window.bridge.apprentice.emit(_event("ngram", "greedy"))
    window.set_draft_k(4)
    _slower_trips(window, verify_ms=12.0)  # 6 ms a token against 10: faster
    assert not window.live_page.readout_panel.why_label.text()


def test_slower_reason_before_the_check_uses_the_pages_own_share_kept():
    from gui.live.apprentice_choice import slower_reason
    assert "kept too rarely" in slower_reason(None, "model", False, 0.2)
    assert "cost more than the trips saved" in slower_reason(None, "model", False, 0.8)
    assert "nothing in the text to copy" in slower_reason(None, "ngram", False, None)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_apprentice_that_costs_too_much_says_what_a_trip_costs_from_the_check(qapp, lang):
    """The start-up check's trip costs (``trip_costs``: a guess and the check, in plain trips) are what the why
    line says, in both languages; an apprentice whose guesses cost nothing names the check alone."""
    from gui import i18n
    from gui.live.apprentice_choice import slower_reason, verdict_text

    i18n.set_language(lang)
    try:
        v = _v(0.85, 0.8, False, True, "speculative_overhead")
        v["trip_costs"] = {"plain_trip_ms": 0.9, "guess": 0.43, "check": 1.82, "tokens_per_trip": 3.9}
        event = {"type": "apprentice", "chosen": "model", "pays_when": None,
                 "checks": [{"sampling": {"temperature": 0.8, "top_k": 0, "top_p": 0.95}, "best": None,
                             "verdicts": {"model": v}}]}
        why = slower_reason(event, "model", False, 0.8)
        assert "0.43" in why and "1.8" in why
        assert ("plain trip" in why) if lang == "en" else ("核对" in why and "趟" in why)
        assert "0.43" in verdict_text(event["checks"], "model")
        v["trip_costs"] = {**v["trip_costs"], "guess": 0.01}  # prompt lookup: a guess is a table look-up
        why = slower_reason(event, "model", False, 0.8)
        assert "0.01" not in why and "1.8" in why
        v.pop("trip_costs")  # a check without the trips' timers: the reason in words alone
        assert "1.8" not in slower_reason(event, "model", False, 0.8)
    finally:
        i18n.set_language("en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stage_names_the_apprentice_that_guesses(qapp, lang):
    from animations.stage.apprentice import apprentice_title
    from gui import i18n
    i18n.set_language(lang)
    try:
        ngram, model = apprentice_title({"draft_kind": "ngram"}), apprentice_title({"draft_kind": "model"})
        assert ngram != model
        if lang == "en":
            assert "n-gram" in ngram and "draft model" in model and "draft" not in ngram
        else:
            assert ngram == "小徒弟（照抄前文）" and model == "小徒弟（草稿模型）"
    finally:
        i18n.set_language("en")
