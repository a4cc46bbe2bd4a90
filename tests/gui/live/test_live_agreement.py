"""The Live page's one rule for its figures: each is of *this trip* (the one on stage: the headline, the desks,
the legend) or an *average of the last N trips* (the lines under the headline), says which, and figures of the
same quantity in the same window agree; parts never add up to more than their whole.

The fake engine (tests/gui/fake_engine.py, ``fake_sharding`` / ``fake_timing``) sends steps whose timings change
from trip to trip, so a figure of another window than the one it claims would show a different number.
"""

from __future__ import annotations

import re

import pytest

from animations.units import ms_figure
from gui.live.meters import RECENT, ShardMeter, SpecMeter
from gui.live.readout import readout_text

pytestmark = pytest.mark.filterwarnings("error")

NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"


def num(pattern: str, text: str) -> float:
    m = re.search(pattern.replace("{}", NUM), text)
    assert m, f"{pattern!r} not in {text!r}"
    return float(m.group(1).replace(",", ""))


def run_until_trips(qtbot, w, trips: int) -> None:
    w.main_new_tokens = 60
    w.set_prompt("one trip one token per trip")
    w.run()
    qtbot.waitUntil(lambda: w.session.trip_count >= trips and w.scene._trip is not None
                    and w.scene._trip.get("phase") == "decode", timeout=20_000)


@pytest.mark.parametrize("mode", ["tp", "pp"])
def test_torn_book_headline_desks_legend_and_average_line_agree(qtbot, make_window, mode):
    w = make_window(options={"fake_sharding": mode}, trip_s=0.03)
    assert w.scene.desks.n == 2
    run_until_trips(qtbot, w, 8)
    # one snapshot, no event processing in between: the trip on stage and every text about it
    trip = w.scene._trip
    from animations.textset import plain as plain_text
    headline, extra = w.readout.text(), plain_text(w.extra_readout.text())  # as a visitor reads it
    desks = [row["times"].text() for row in w.scene.desks.rows]
    note = w.scene._legend.note.text().replace("\n", " ")
    wall = float(trip["wall_ms"])

    # the headline is of this trip, and says so
    assert headline.startswith("This trip:") and f"whole step {ms_figure(wall)} ms" in headline
    # the desks are of the same trip: their parts lie inside the headline's whole
    parts = []
    for text, worker in zip(desks, sorted(trip["workers"], key=lambda x: x["rank"])):
        assert text.startswith("this trip:")
        assert not text.endswith("…"), text  # nothing cut
        c = num(r"work {}", text)
        other = num(r"(?:notes|wait) {}", text)
        assert c == pytest.approx(worker["compute_ms"], abs=0.051), (text, trip["workers"], w.scene.desks.times)
        assert other == pytest.approx(worker["comm_ms" if mode == "tp" else "bubble_ms"], abs=0.051), (text, trip)
        assert c + other <= wall + 0.1
        parts.append((c, other))
    # the legend's note, when there is one, is the desks' average of this trip, not another window's figure
    if note:
        assert note.startswith("This trip, per desk on average")
        other = num(r"(?:notes|waits) {} ms", note)
        assert other == pytest.approx(sum(p[1] for p in parts) / 2, abs=0.1)
    # the line under the headline: the average of the last k trips, with its own whole, and it says so
    k = w.shard_meter.trips
    assert 2 <= k <= RECENT and f"average of the last {k} trips" in extra
    step = num(r"step {} ms", extra)
    compute = num(r"compute {} ms", extra)
    comm = num(r"communication {} ms", extra)
    bubble = num(r"idle \(bubble\) {} ms", extra) if mode == "pp" else 0.0
    assert step == pytest.approx(w.shard_meter.step_ms(), abs=0.006)
    assert compute + comm + bubble <= step + 0.02  # parts never exceed their whole
    # the fake engine's steps alternate: the window's average is not the last trip's figure
    assert step != pytest.approx(wall, abs=0.01)


def test_one_desk_names_the_forward_pass_as_a_part_of_the_headlines_step(qtbot, make_window):
    w = make_window(options={"fake_timing": True}, trip_s=0.03)
    run_until_trips(qtbot, w, 5)
    trip = w.scene._trip
    headline, desk = w.readout.text(), w.scene.desks.rows[0]["times"].text()
    name = w.scene.desks.rows[0]["name"].text()
    wall, forward = float(trip["wall_ms"]), float(trip["forward_ms"])
    assert forward < wall  # the fake's forward pass is a part of the step
    assert f"whole step {ms_figure(wall)} ms" in headline
    assert name.endswith("this trip") and desk.startswith("forward pass") and not desk.endswith("…")
    assert num(r"forward pass {}", desk) == pytest.approx(forward, abs=0.051)
    assert num(r"of {} ms", desk) == pytest.approx(wall, abs=0.051)  # the same whole as the headline's
    assert num(r"forward pass {}", desk) <= num(r"of {} ms", desk)


def test_headline_tokens_per_second_agree_with_its_own_ms():
    for wall, tokens in ((28.4, 5), (3.59, 1), (11.0, 16)):
        text = readout_text({"wall": wall, "tokens": tokens, "batch": 1}, True, False, 1.0)
        ms = num(r"whole step {} ms", text)
        assert num(r"· {} tok/s", text) == pytest.approx(tokens / ms * 1000, rel=0.02, abs=1)


def verify(wall: float, proposed: int, accepted: int) -> dict:
    tokens = accepted + 1
    return {"phase": "verify", "wall_ms": wall, "tokens_out": tokens, "proposed": proposed,
            "accepted": accepted, "bonus": 1 if accepted == proposed else 0}


def test_apprentice_line_is_one_window_and_its_ms_per_token_matches_its_tok_s():
    m = SpecMeter()
    key = ("p", 1, ("tp", 1))
    for i in range(10):
        m.add({"phase": "decode", "wall_ms": 10.0 + i, "tokens_out": 1}, key)
    trips = [verify(20.0 + 3 * (i % 5), 4, i % 5) for i in range(RECENT + 7)]
    for t in trips:
        m.add(t, key)
    window = trips[-RECENT:]  # the first 7 trips have left the window
    assert m.trips == RECENT
    tokens = sum(t["tokens_out"] for t in window)
    assert m.tokens_per_trip == pytest.approx(tokens / RECENT)
    assert m.acceptance == pytest.approx(sum(t["accepted"] for t in window) / sum(t["proposed"] for t in window))
    from animations.textset import NBSP
    from animations.textset import plain as plain_text
    shown = m.text(key, 4)
    assert re.search(rf"\(\d+\.\d\d{NBSP}ms per token\)", shown), shown  # a figure keeps its unit on a wrap
    text = plain_text(shown)  # the figures, read as a visitor reads them
    assert f"average of the last {RECENT} trips" in text
    assert num(r"{} tokens per trip", text) == pytest.approx(tokens / RECENT, abs=0.006)
    ms = num(r"{} ms per token", text)
    assert ms == pytest.approx(sum(t["wall_ms"] for t in window) / tokens, abs=0.006)
    assert num(r"= {} tok/s", text) == pytest.approx(1000 / ms, abs=1)
    plain = num(r"\({} ms per token\)", text)
    assert plain == pytest.approx(sum(10.0 + i for i in range(10)) / 10, abs=0.006)
    assert num(r"{}× the speed", text) == pytest.approx(plain / ms, abs=0.01)


def test_a_speed_up_timed_on_a_busy_computer_is_not_shown_as_a_fact(qapp):
    """Plain trips timed while the computer was quiet, apprentice trips while other programs kept the processor
    busy (wall − CPU ms): the visitor's line shows no speed-up figure and says why; the details line keeps the
    figure and says it is not fair. A quiet window, or a small wait, shows the figure plainly."""
    from animations.textset import plain as plain_text
    m, key = SpecMeter(), ("p", 1, ("tp", 1))
    for _ in range(10):
        m.add({"phase": "decode", "wall_ms": 10.0, "tokens_out": 1, "cpu_ms": 9.9}, key)
    for _ in range(5):
        m.add({**verify(30.0, 4, 3), "cpu_ms": 20.0}, key)  # a third of each trip spent waiting
    assert m.busy(key)
    short, long = plain_text(m.text(key, 4, short=True)), plain_text(m.text(key, 4))
    assert "speed-up: not fair now, the computer is busy" in short and "× the speed" not in short
    assert "× the speed of plain decoding of this prompt" in long and "not a fair figure: the computer was busy" in long
    quiet = SpecMeter()
    for _ in range(10):
        quiet.add({"phase": "decode", "wall_ms": 10.0, "tokens_out": 1, "cpu_ms": 9.9}, key)
    for _ in range(5):
        quiet.add({**verify(30.0, 4, 3), "cpu_ms": 28.5}, key)  # 5 % waiting: under BUSY_SHARE
    assert not quiet.busy(key)
    assert "busy" not in plain_text(quiet.text(key, 4, short=True)) + plain_text(quiet.text(key, 4))
    assert num(r"{}× the speed", plain_text(quiet.text(key, 4, short=True))) == pytest.approx(10.0 / 7.5, abs=0.01)


def test_shard_meter_parts_stay_inside_the_step_over_a_changing_window():
    m = ShardMeter()
    for i in range(RECENT + 5):
        wall = 5.0 + 9.0 * (i % 4)
        m.add({"wall_ms": wall, "workers": [{"compute_ms": wall * 0.3, "comm_ms": wall * 0.6, "bubble_ms": 0.0},
                                            {"compute_ms": wall * 0.5, "comm_ms": wall * 0.1, "bubble_ms": 0.3}]})
    assert m.trips == RECENT
    assert m.compute_ms() + m.comm_ms() + m.bubble_ms() <= m.step_ms()
    from animations.textset import NBSP
    from animations.textset import plain as plain_text
    shown = m.text("pp", 2)
    assert f"0.15{NBSP}ms" in shown  # a figure keeps its unit on a wrap ("0.15" | "ms" was broken)
    text = plain_text(shown)  # as a visitor reads it
    assert f"average of the last {RECENT} trips" in text
    assert (num(r"compute {} ms", text) + num(r"communication {} ms", text) + num(r"bubble\) {} ms", text)
            <= num(r"step {} ms", text) + 0.02)


def _per_trip(text: str) -> str:
    """The "N tokens in, M out" of a headline or a readout line."""
    m = re.search(r"(\d+ tokens? in, \d+ out)", text)
    assert m, text
    return m.group(1)


def test_readout_counts_the_trip_on_stage_when_the_stage_is_behind(qtbot, make_window):
    """Issue 24 ("one count, one word"): in real time the engine runs ahead of the stage (it queues trips, or
    a screenshot stops its clock half-way through one); the readout said the newest report's count ("5 tokens
    in, 2 out") under a headline of the trip still on stage ("5 tokens in, 1 out"). Both are of the trip on
    stage: the same tokens in and out, the same step ms."""
    w = make_window(trip_s=0.05)
    w.main_new_tokens = 60
    w.set_prompt("one trip one token per trip")
    w.set_real_time(True)
    w.clock.stop()  # the stage stays on the first trip it started: the engine's later reports queue behind it
    assert w.run_trips(5)
    qtbot.waitUntil(lambda: w.reports_received >= 5, timeout=20_000)
    qtbot.wait(100)
    trip = w.scene._trip
    assert trip is not None and trip is not w.last_report  # the stage is behind the engine
    headline, readout = w.scene._caption_fn(), w.readout.text()
    assert _per_trip(readout) == _per_trip(headline), (headline, readout)
    assert f"whole step {ms_figure(float(trip['wall_ms']))} ms" in readout
    # as a screenshot shows the page: the last report shown at human pace, half-way (the stage may still be
    # on an older trip: whichever it shows, the readout is of that one)
    w.set_real_time(False)
    w.scene.show_trip(w.last_report)
    for _ in range(30):
        w.scene.advance(w.scene.trip_duration_s * 0.55 / 30)
    trip = w.scene._trip
    headline, readout = w.scene._caption_fn(), w.readout.text()
    assert _per_trip(readout) == _per_trip(headline), (headline, readout)
    assert f"whole step {ms_figure(float(trip['wall_ms']))} ms" in readout
