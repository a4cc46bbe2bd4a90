"""The Live page's trip in three figures (issue 34 items 2 and 5, issue 38 item 6): reading the weights as the
engine measured it (``weight_read_ms``), the rest of the step, and the floor (a formula); the sentence follows
the measured share, a torn book names its communication and no apprentice, and ``screenshot --layout-json``'s
"trip" object is the engine's report."""

from __future__ import annotations

import pytest

from gui import i18n
from gui.live import paperwork
from gui.live.paperwork import trip_figures


def split_text(f: dict, device: str) -> str:
    """The line as a reader sees it: the no-break joins between figures and units read as spaces."""
    text = paperwork.split_text(f, device)
    return text.replace("\u00a0", " ").replace("\u2060", "")

INFO = {"model": {"weight_bytes": 17_400_000}, "memory_bandwidth_bytes_per_s": 40e9, "device": "cpu"}


def _report(wall: float, read: float | None, forward: float | None = None, workers=None) -> dict:
    r = {"step": 7, "phase": "decode", "batch": 1, "wall_ms": wall, "forward_ms": forward or wall * 0.8}
    if read is not None:
        r["weight_read_ms"] = read
    if workers:
        r["workers"] = workers
    return r


@pytest.fixture
def en(qapp):
    i18n.set_language("en")
    yield
    i18n.set_language("en")


def test_mostly_reading_when_the_measured_reading_is_most_of_the_trip(en):
    f = trip_figures(_report(4.8, 3.6), INFO)
    assert f["lesson"] == "reading" and f["reading_ms"] == 3.6 and f["paperwork_ms"] == pytest.approx(1.2)
    text = split_text(f, "cpu")
    assert "mostly reading the weights" in text
    assert "reading the weights 3.6 ms, measured" in text and "other work 1.2 ms, measured" in text
    assert "floor 0.43 ms, formula" in text
    assert "4.8 GB/s" in text  # 17.4 MB in 3.6 ms, the speed the engine actually read at
    assert "8× slower than the memory could" in text  # 3.6 ms ÷ 0.435 ms
    assert "apprentice" not in text


def test_mostly_other_work_when_the_measured_reading_is_small(en):
    # the same bytes and read speed (the same floor), a small measured reading: the other sentence
    f = trip_figures(_report(4.8, 1.0), INFO)
    assert f["lesson"] == "paperwork"
    text = split_text(f, "cpu")
    assert "mostly other work per step" in text and "mostly reading" not in text
    assert "reading the weights 1.0 ms, measured" in text


def test_about_half_says_the_share(en):
    f = trip_figures(_report(4.8, 2.4), INFO)
    assert f["lesson"] == "both"
    text = split_text(f, "cpu")
    assert "reading the weights is 50% of the trip" in text and "mostly" not in text


def test_no_reading_figure_makes_no_claim(en):
    f = trip_figures(_report(4.8, None), INFO)
    assert f["lesson"] == "unmeasured"
    text = split_text(f, "cpu")
    assert "mostly" not in text and "whole step 4.8 ms" in text and "not timed separately" in text


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_torn_book_names_communication_and_no_apprentice(qapp, lang):
    i18n.set_language(lang)
    try:
        workers = [{"rank": 0, "compute_ms": 8.0, "comm_ms": 27.0}, {"rank": 1, "compute_ms": 9.0, "comm_ms": 27.84}]
        f = trip_figures(_report(48.5, 6.0, workers=workers), INFO)
        assert f["comm_ms"] == pytest.approx(27.42) and f["desks"] == 2
        assert f["paperwork_ms"] == pytest.approx(48.5 - 6.0 - 27.42)  # communication is not paperwork
        assert f["lesson"] == "communication"
        text = split_text(f, "cpu")
        assert "27" in text
        if lang == "en":
            assert "communication 27 ms, measured" in text and "passing the pages between desks" in text
            assert "apprentice" not in text and "paperwork" not in text
        else:
            assert "通信" in text and "徒弟" not in text
    finally:
        i18n.set_language("en")


def test_layout_json_trip_object_is_the_engine_report(qtbot, make_window):
    """The screenshot's "trip" object is the report the split row shows, as the engine sent it."""
    from gui.capture.screenshot import trip_facts
    w = make_window(options={"fake_timing": True, "fake_read_share": 0.75}, trip_s=0.02)
    sent = {}
    w.bridge.step.connect(lambda r: sent.__setitem__(r["step"], r))
    assert w.run_trips(6)
    qtbot.waitUntil(lambda: w.live_page.split_row.trip is not None and len(sent) >= 3, timeout=30_000)
    trip = trip_facts(w)
    report = sent[trip["step"]]  # the median trip: every figure is that one report's, as the engine sent it
    assert trip["step"] in trip["steps"] and trip["on_stage"] == trip["steps"][-1] and 1 <= trip["trips"] <= 8
    assert all(sent[n]["phase"] == trip["phase"] and sent[n]["batch"] == trip["batch"] for n in trip["steps"])
    assert trip["whole_ms"] == report["wall_ms"] and trip["forward_ms"] == report["forward_ms"]
    assert trip["weight_read_ms"] == report["weight_read_ms"]
    share = report["weight_read_ms"] / report["wall_ms"]  # the fake engine reports no cpu_ms: no wait
    assert trip["reading_share"] == pytest.approx(share)
    shares = sorted(sent[n]["weight_read_ms"] / sent[n]["wall_ms"] for n in trip["steps"])
    assert share == pytest.approx(shares[(len(shares) - 1) // 2])  # the median of the window's shares
    assert trip["lesson"] == ("reading" if share >= 2 / 3 else "paperwork" if share <= 1 / 3 else "both")
    label = w.live_page.split_row.label.text().replace("\u00a0", " ")
    assert {"reading": "mostly reading", "paperwork": "mostly other work", "both": "% of the trip"}[trip["lesson"]] \
        in label


def test_one_interrupted_trip_does_not_flip_the_lesson(en):
    """Seven trips reading 75 % of the step, then one the scheduler interrupted outside the reading (30 ms):
    the median of the last trips still says reading."""
    recent = [{**_report(4.8, 3.6), "step": n} for n in range(1, 8)]
    spike = {**_report(30.0, 3.6), "step": 8}
    f = trip_figures(spike, INFO, recent)
    assert f["trips"] == 8 and f["lesson"] == "reading" and f["whole_ms"] == 4.8
    assert split_text(f, "cpu").startswith("the median of the last 8 trips: ")
    # alone, the same trip would say the opposite: the window is what keeps it
    assert trip_figures(spike, INFO)["lesson"] == "paperwork"
    # a prefill trip is not mixed with decode trips
    prefill = {**_report(9.0, 2.0), "step": 9, "phase": "prefill"}
    assert trip_figures(prefill, INFO, recent)["trips"] == 1


def test_waiting_for_the_processor_is_named_and_not_counted_as_work(en):
    # the engine's thread ran 2.6 ms of a 19 ms step: 16.4 ms waiting for a processor other programs kept busy
    r = {**_report(19.0, 1.2), "cpu_ms": 2.6}
    f = trip_figures(r, INFO)
    assert f["wait_ms"] == pytest.approx(16.4) and f["lesson"] == "both"  # 1.2 of 2.6 ms of work
    text = split_text(f, "cpu")
    assert "waiting for a busy processor 16 ms, measured" in text and "46% of the trip's work" in text
    # a small wait is not named: it stays in the other work, so the figures add up to the step
    small = trip_figures({**_report(4.8, 2.4), "cpu_ms": 4.6}, INFO)
    line = split_text(small, "cpu")
    assert "waiting" not in line and "other work 2.4 ms" in line


def test_a_reading_interrupted_by_a_busy_processor_gives_no_reading_figure(en):
    """Seen on a busy machine: the reading's clock ran 76 ms of a 120 ms step whose thread had 75 ms of CPU, so
    45 ms of waiting fell inside the reading. The line said "reading the weights 76 ms · other work 0.00 ms";
    now it gives the step's own work and the wait whole, says why they are not split, and draws no lesson."""
    f = trip_figures({**_report(120.0, 76.0), "cpu_ms": 75.0}, INFO)
    assert f["interrupted"] is True and f["lesson"] == "unmeasured" and f["reading_ms"] is None
    text = split_text(f, "cpu")
    assert "the trip's own work 75 ms, measured; a busy processor interrupted the reading" in text
    assert "waiting for a busy processor 45 ms, measured" in text
    assert "reading the weights" not in text and "other work" not in text and "mostly" not in text


def test_the_apprentices_guessing_is_its_own_part_not_the_masters_other_work(en):
    """A verify trip of the Live page's apprentice, seen on screen: 23 ms in all, 6.6 ms of it the master's weight
    reading and 14 ms the draft model's guesses (the report's draft_ms). The line said "other work 18 ms" and
    "the trip is mostly other work per step (attention, sampling, Python)": the guessing is now its own figure,
    and the lesson is of the master's pass alone (6.6 of 9 ms: reading most of it)."""
    f = trip_figures({**_report(23.0, 6.6), "phase": "verify", "draft_ms": 14.0}, INFO)
    assert f["draft_ms"] == pytest.approx(14.0) and f["paperwork_ms"] == pytest.approx(2.4)
    assert f["reading_share"] == pytest.approx(6.6 / 9.0) and f["lesson"] == "reading"
    text = split_text(f, "cpu")
    assert "the apprentice's guesses 14 ms, measured" in text and "other work 2.4 ms, measured" in text
    assert "mostly other work" not in text
    # a plain trip has no guesses: nothing is said of them
    assert "apprentice" not in split_text(trip_figures(_report(4.8, 3.6), INFO), "cpu")


def test_service_reports_the_steps_cpu_time(tiny_model_dir, tmp_path, monkeypatch):
    from model.service import EngineService
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path / "cache"))
    events: list[dict] = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "max_batch": 1, "layer_timing": False,
                         "draft_model_dir": str(tmp_path / "none")}, events.append)
    svc.handle({"op": "submit", "request_id": "a", "prompt": "hi", "max_new_tokens": 3, "temperature": 0.0})
    svc.handle({"op": "free_run", "on": True})
    while svc.wants_step():
        svc.step()
    steps = [e["report"] for e in events if e["type"] == "step"]
    assert steps and all(0 < s["cpu_ms"] <= s["wall_ms"] for s in steps)


def test_details_offer_int8_weights_and_restart_the_engine(qtbot, make_window):
    w = make_window()
    w.set_details(True)
    box = w.model_choice.int8_box
    assert box.isVisible() and box.text() == "int8"
    pid = w.bridge.pid
    with qtbot.waitSignal(w.bridge.ready, timeout=60_000):
        box.setChecked(True)
    assert w.bridge.options["weights"] == "int8" and w.bridge.pid != pid  # a fresh engine with int8 weights
    w.set_details(False)
    assert not box.isVisible()


def test_figures_keep_their_units_on_a_wrapped_line(en):
    raw = paperwork.split_text(trip_figures(_report(4.8, 3.6), INFO), "cpu")
    assert "17.4\u00a0MB" in raw and "3.6\u00a0ms" in raw and "17.4 MB" not in raw


def _floor_info(weight_bytes: int, l3: int | None, applies: str) -> dict:
    return {**INFO, "model": {"weight_bytes": weight_bytes},
            "floor": {"l3_bytes": l3, "applies": applies, "weight_bytes": weight_bytes}}


def test_a_book_that_fits_the_cache_is_said_to_live_there(en):
    """The pocket book: its bytes beside this CPU's last-level cache, as the engine's floor reports them."""
    f = trip_figures(_report(4.8, 3.6), _floor_info(17_400_000, 32 * 2**20, "cache"))
    text = split_text(f, "cpu")
    assert "17.4 MB of weights, inside this CPU's 33.6 MB cache" in text
    assert "read from RAM" not in text


def test_a_book_larger_than_the_cache_is_read_from_ram(en):
    f = trip_figures(_report(14.0, 12.0), _floor_info(110_000_000, 32 * 2**20, "dram"))
    text = split_text(f, "cpu")
    assert "110 MB of weights, more than this CPU's 33.6 MB cache: read from RAM" in text
    assert "inside this" not in text


@pytest.mark.parametrize("info", [
    {**INFO, "model": {"weight_bytes": 17_400_000}},  # an engine that did not say (no floor)
    {**INFO, "model": {"weight_bytes": 17_400_000}, "floor": {"l3_bytes": None, "applies": "dram"}},  # no size
])
def test_without_a_cache_size_the_line_names_only_the_device(en, info):
    text = split_text(trip_figures(_report(4.8, 3.6), info), "cpu")
    assert "17.4 MB of weights on a CPU" in text and "cache" not in text


def test_the_chinese_line_says_where_the_book_lives(qapp):
    i18n.set_language("zh")
    try:
        text = split_text(trip_figures(_report(14.0, 12.0), _floor_info(110_000_000, 32 * 2**20, "dram")), "cpu")
        assert "比这台 CPU 的 33.6 MB 缓存大：从内存读" in text
    finally:
        i18n.set_language("en")
