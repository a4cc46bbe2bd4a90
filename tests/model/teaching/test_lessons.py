"""The verdict logic behind every lesson page (model/teaching/lessons.py): summaries, interleaving, verdicts, the reason
a page gives when its figures disagree, and the reading-versus-paperwork split of a trip. No timing is asserted."""

from __future__ import annotations

import pytest

from model.teaching import lessons


def _s(median, lo, hi, n=5):
    return {"median": median, "min": lo, "max": hi, "n": n}


def test_summary_is_median_and_spread():
    s = lessons.summary([66.0, 58.0, 61.0, 60.0, 63.0])
    assert (s["median"], s["min"], s["max"], s["n"]) == (61.0, 58.0, 66.0, 5)
    assert lessons.fmt_summary(s) == "61 ms, 58–66 over 5 runs"
    with pytest.raises(ValueError):
        lessons.summary([])


def test_interleaved_warms_up_then_alternates_abba():
    calls = []
    counter = iter(range(100))

    def side(name):
        def run():
            calls.append(name)
            return float(next(counter))
        return run

    a, b = lessons.interleaved(side("A"), side("B"), repeats=4, warmup=1)
    assert calls == ["A", "B", "A", "B", "B", "A", "A", "B", "B", "A"]
    assert a == [2.0, 5.0, 6.0, 9.0] and b == [3.0, 4.0, 7.0, 8.0]  # the warm-up's 0 and 1 are thrown away
    with pytest.raises(ValueError):
        lessons.interleaved(side("A"), side("B"), repeats=0)


def test_verdict_holds_only_when_the_better_side_has_the_lower_median():
    v = lessons.verdict(_s(60, 55, 70), _s(100, 90, 110))
    assert v["holds"] and v["separated"] and v["ratio"] == pytest.approx(100 / 60)
    overlap = lessons.verdict(_s(60, 55, 95), _s(100, 90, 110))
    assert overlap["holds"] and not overlap["separated"]
    assert not lessons.verdict(_s(100, 90, 110), _s(60, 55, 70))["holds"]
    assert not lessons.verdict(_s(80, 70, 90), _s(80, 75, 85))["holds"]  # a tie claims nothing


def _batching(c_ms, s_ms, c_trips=37, s_trips=57):
    data = {"continuous": {"ms": _s(c_ms, c_ms - 5, c_ms + 5), "trips": c_trips},
            "static": {"ms": _s(s_ms, s_ms - 5, s_ms + 5), "trips": s_trips}}
    data["verdict"] = lessons.verdict(data["continuous"]["ms"], data["static"]["ms"])
    return data


def test_why_not_is_none_when_the_lesson_holds_and_names_the_measured_reason_when_not():
    assert lessons.why_not("batching", _batching(180, 290)) is None
    # fewer trips, each dearer, slower in every run (300±5 against 270±5): the trips' cost, not noise
    assert lessons.why_not("batching", _batching(300, 270)) == "batching_trip_cost"
    assert lessons.why_not("batching", _batching(300, 290, c_trips=57)) == "batching_no_trips_saved"
    # slower in median, but the runs overlap (300±5 against 296±5): a busy machine, said so
    assert lessons.why_not("batching", _batching(300, 296)) == "noise"
    spec = {"verdict": {"holds": False}, "acceptance": 0.34}
    assert lessons.why_not("speculative", spec) == "speculative_acceptance"
    assert lessons.why_not("speculative", {**spec, "acceptance": 0.8}) == "speculative_overhead"
    assert lessons.why_not("speculative", {"verdict": {"holds": True}, "acceptance": 0.1}) is None


def test_trip_split_reading_is_the_measured_weight_read_time():
    # issue 34: a 4.8 ms step whose weight GEMVs took 3.6 ms, 17.4 MB at 40 GB/s (floor 0.435 ms)
    s = lessons.trip_split(4.8, 3.6, 17_400_000, 40e9)
    assert s["reading_ms"] == 3.6  # measured, not bytes ÷ bandwidth
    assert s["paperwork_ms"] == pytest.approx(1.2)
    assert s["floor_ms"] == pytest.approx(0.435)
    assert s["reading_share"] == pytest.approx(0.75)
    assert s["read_speed_bytes_per_s"] == pytest.approx(17_400_000 / 3.6e-3)
    assert s["times_floor"] == pytest.approx(3.6 / 0.435)
    assert s["lesson"] == "reading"
    # the same bytes and bandwidth, a different measured reading: a different lesson (the floor does not decide)
    assert lessons.trip_split(4.8, 1.0, 17_400_000, 40e9)["lesson"] == "paperwork"
    assert lessons.trip_split(4.8, 2.4, 17_400_000, 40e9)["lesson"] == "both"
    # a reading time longer than the step (two clocks) is capped: never a negative rest
    over = lessons.trip_split(2.0, 2.5)
    assert over["reading_ms"] == 2.0 and over["paperwork_ms"] == 0.0 and over["floor_ms"] is None
    # not measured: no reading figure, no claim
    none = lessons.trip_split(4.8, None, 17_400_000, 40e9)
    assert none["reading_ms"] is None and none["lesson"] == "unmeasured" and none["floor_ms"] == pytest.approx(0.435)
    for bad in ((0.0, 1.0), (-1.0, 1.0), (float("nan"), 1.0), (1.0, -0.1), (1.0, float("nan"))):
        with pytest.raises(ValueError):
            lessons.trip_split(*bad)


def test_torn_trip_names_communication_as_its_own_part():
    # issue 38's torn book: communication 27.4 ms of a 48.5 ms step is its own part, not paperwork
    s = lessons.trip_split(48.5, 6.0, comm_ms=27.42)
    assert s["comm_ms"] == pytest.approx(27.42)
    assert s["paperwork_ms"] == pytest.approx(48.5 - 6.0 - 27.42)
    assert s["lesson"] == "communication"
    assert lessons.trip_split(48.5, None, comm_ms=27.42)["lesson"] == "communication"
    # communication smaller than the reading: the reading leads
    assert lessons.trip_split(10.0, 7.0, comm_ms=1.0)["lesson"] == "reading"


@pytest.mark.parametrize("share,key", [(0.9, "reading"), (2 / 3, "reading"), (0.6, "both"), (0.34, "both"),
                                       (0.3, "paperwork"), (0.0, "paperwork")])
def test_trip_lesson_thresholds(share, key):
    assert lessons.trip_lesson(share) == key


def _spec(speedup: float, acceptance: float = 0.6, spread: float = 1.0) -> dict:
    w, p = 100.0 / speedup, 100.0
    return {"available": True, "speedup": speedup, "acceptance": acceptance, "with": _s(w, w - spread, w + spread),
            "verdict": lessons.verdict(_s(w, w - spread, w + spread), _s(p, 99, 101))}


def test_the_default_apprentice_is_the_free_writing_one_when_it_pays_or_none():
    from model.sampling import SamplingParams
    from model.teaching.lesson_runs import combine_verdicts

    live = SamplingParams(temperature=0.8, top_p=0.95, seed=0)
    both = combine_verdicts(live, {"model": _spec(0.6), "ngram": _spec(1.4)})
    assert both["best"] is None and both["sampling"] == {"temperature": 0.8, "top_k": 0, "top_p": 0.95}
    assert combine_verdicts(live, {"ngram": _spec(1.4)})["best"] == "ngram"  # no draft model loaded
    assert combine_verdicts(None, {"model": _spec(1.6), "ngram": _spec(1.3)})["best"] == "model"
    assert combine_verdicts(live, {"model": _spec(0.9), "ngram": _spec(0.95)})["best"] is None
    # faster in median but the runs overlap, or faster with no guess ever kept: noise, not a choice
    assert combine_verdicts(live, {"model": _spec(1.04, spread=8.0), "ngram": _spec(1.01, acceptance=0.0)}
                            )["best"] is None


def test_service_measures_both_apprentices_and_keeps_the_visitors_choice(tiny_model_dir, tmp_path):
    from model.service import EngineService
    from model.teaching.lesson_runs import APPRENTICE_ROUNDS

    events: list[dict] = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "layer_timing": False,
                         "draft_model_dir": str(tmp_path / "no-draft"), "measure_apprentice": True}, events.append)
    assert svc.apprentice_pending()
    svc.handle({"op": "set_draft_kind", "kind": "ngram"})  # the visitor chose before the check ended
    steps = 0
    while svc.apprentice_pending() and steps < 40:
        svc.apprentice_step()
        steps += 1
    (ev,) = [e for e in events if e["type"] == "apprentice"]
    # one round (plain, then each apprentice) per idle moment, a warm-up round and the kept rounds, for the
    # window's sampling, then greedy
    assert steps == 2 * (APPRENTICE_ROUNDS + 1)
    assert [c["sampling"]["temperature"] for c in ev["checks"]] == [0.8, 0.0]
    assert all(set(c["verdicts"]) == {"ngram"} for c in ev["checks"])  # no draft model here
    for c in ev["checks"]:
        v = c["verdicts"]["ngram"]
        assert v["runs"] == APPRENTICE_ROUNDS == len(v["round_speedups"]) and v["pays"] == lessons.pays(v)
    assert ev["chosen"] == "ngram" == svc.engine.draft_kind
    svc.close()


def _rounds(speedups: list[float], acceptance: float = 0.6, ms: float = 100.0) -> dict:
    """An ``ApprenticeCheck``-shaped verdict: plain runs of ``ms`` beside apprentice runs ``ms / speedup``."""
    w = [ms / x for x in speedups]
    p = [ms] * len(speedups)
    v = {"available": True, "acceptance": acceptance, "with": lessons.summary(w), "plain": lessons.summary(p),
         "round_speedups": list(speedups)}
    v["speedup"] = v["plain"]["median"] / v["with"]["median"]
    v["verdict"] = lessons.verdict(v["with"], v["plain"])
    return v


def test_an_apprentice_pays_when_it_wins_nearly_every_round_by_a_margin_a_page_can_show():
    assert lessons.pays(_rounds([1.3, 1.4, 1.2, 1.35, 1.5, 1.25]))
    # one round in five may lose to a slow spell between its two runs; two in six may not
    assert lessons.pays(_rounds([1.3, 1.4, 0.95, 1.35, 1.5, 1.25]))
    assert not lessons.pays(_rounds([1.3, 0.9, 0.95, 1.35, 1.5, 1.25]))
    # faster in every round, but by less than a page's own noise
    assert not lessons.pays(_rounds([1.04, 1.06, 1.05, 1.03, 1.07, 1.05]))
    assert lessons.PAYS_MIN_SPEEDUP > 1.0
    # faster with no guess kept (or none made) is noise
    assert not lessons.pays(_rounds([1.3] * 6, acceptance=0.0))
    assert not lessons.pays(_rounds([1.3] * 6, acceptance=None))
    assert not lessons.pays(None) and not lessons.pays({"available": False})


def test_free_writing_runs_the_draft_model_never_the_ngram_apprentice_where_a_draft_model_is_loaded():
    # issue 35: the n-gram apprentice has its own presets (prompts whose answer repeats the prompt); on free
    # writing it is not the default, however fast it measured (greedy free writing measured it fast on a loop)
    ngram = _rounds([2.3, 2.4, 2.2, 2.5, 2.3, 2.1])
    paying_model = _rounds([1.30, 1.35, 1.25, 1.40, 1.32, 1.28])
    assert lessons.best_apprentice({"model": paying_model, "ngram": ngram}) == "model"
    assert lessons.best_apprentice({"model": _rounds([0.9] * 6), "ngram": ngram}) is None
    assert lessons.best_apprentice({"model": _rounds([0.7] * 6), "ngram": _rounds([0.85] * 6)}) is None
    # no draft model loaded (a user's own model): the n-gram apprentice is the only one, and may be chosen
    assert lessons.best_apprentice({"model": {"available": False}, "ngram": ngram}) == "ngram"
    assert lessons.best_apprentice({"ngram": ngram}) == "ngram"
    assert lessons.free_writing_apprentice({"model": paying_model, "ngram": ngram}) == "model"


def test_when_none_pays_the_page_shows_the_free_writing_apprentice_if_it_kept_guesses():
    assert lessons.least_bad_apprentice({"ngram": _rounds([0.9] * 6), "model": _rounds([0.8] * 6)}) == "model"
    assert lessons.least_bad_apprentice({"ngram": _rounds([0.95] * 6, acceptance=None),
                                         "model": _rounds([0.7] * 6)}) == "model"
    assert lessons.least_bad_apprentice({"ngram": _rounds([0.95] * 6)}) == "ngram"  # no draft model
    assert lessons.least_bad_apprentice({"ngram": _rounds([0.95] * 6, acceptance=0.0)}) is None
    assert lessons.least_bad_apprentice({"model": _rounds([0.8] * 6, acceptance=0.0),
                                         "ngram": _rounds([0.95] * 6)}) is None


@pytest.mark.parametrize("ngram_kept, chosen", [(0.6, "model"), (None, "model")])
def test_service_chooses_the_free_writing_apprentice_when_none_pays(tiny_model_dir, monkeypatch, ngram_kept, chosen):
    import model.teaching.lesson_runs as lr
    from model.service import EngineService

    class Check:  # a check whose rounds cost nothing and whose verdict says nothing pays
        def __init__(self, src, sampling, **_):
            self.sampling, self.left = sampling, 2

        def done(self):
            return self.left == 0

        def step(self):
            self.left -= 1

        def result(self):
            return lr.combine_verdicts(self.sampling, {"ngram": _rounds([0.9] * 6, acceptance=ngram_kept),
                                                       "model": _rounds([0.8] * 6)})

    monkeypatch.setattr(lr, "ApprenticeCheck", Check)
    events: list[dict] = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "layer_timing": False,
                         "draft_model_dir": str(tiny_model_dir), "measure_apprentice": True}, events.append)
    assert svc.engine.draft is not None and svc.engine.draft_kind == "model"  # the engine's own default
    while svc.apprentice_pending():
        svc.apprentice_step()
    (ev,) = [e for e in events if e["type"] == "apprentice"]
    assert ev["pays_when"] is None and ev["chosen"] == chosen == svc.engine.draft_kind
    svc.close()


def test_waiting_for_a_busy_machine_is_no_part_of_the_lesson():
    # a 19 ms step of which 16.5 ms the engine's thread was not running (other programs had the processor):
    # reading 1.1 ms of the 2.5 ms of work is 44 %, "both"; counted against the whole step it would say paperwork
    s = lessons.trip_split(19.0, 1.1, 17_400_000, 80e9, wait_ms=16.5)
    assert s["wait_ms"] == 16.5 and s["paperwork_ms"] == pytest.approx(1.4)
    assert s["reading_share"] == pytest.approx(1.1 / 2.5) and s["lesson"] == "both"
    assert lessons.trip_split(19.0, 1.1)["lesson"] == "paperwork"
    with pytest.raises(ValueError):
        lessons.trip_split(19.0, 1.1, wait_ms=-1.0)


def test_median_trip_is_one_real_trip():
    trips = [lessons.trip_split(w, r) for w, r in ((10.0, 2.0), (4.0, 2.0), (5.0, 4.0), (30.0, 3.0))]
    m = lessons.median_trip(trips)  # shares 0.2, 0.5, 0.8, 0.1: the lower middle is 0.2
    assert m is trips[0] and m["whole_ms"] == 10.0
    assert lessons.median_trip(trips[:3]) is trips[1]
    with pytest.raises(ValueError):
        lessons.median_trip([])


def test_median_trip_prefers_trips_the_machine_did_not_interrupt():
    # two trips that waited 50 ms for the processor (one of them while reading: its reading clock ran on) and
    # three clean ones: the median is a clean trip's
    busy = [lessons.trip_split(63.0, 31.3, wait_ms=31.7), lessons.trip_split(60.0, 1.4, wait_ms=56.0)]
    clean = [lessons.trip_split(2.9, 1.15), lessons.trip_split(2.8, 1.3), lessons.trip_split(2.7, 1.2)]
    m = lessons.median_trip(busy + clean)
    assert m is clean[2] and m["lesson"] == "both"  # shares 0.40, 0.46, 0.44: the middle one
    assert lessons.median_trip(busy)["whole_ms"] in (63.0, 60.0)  # none clean: the median of all


def test_the_apprentices_guesses_are_apart_from_the_masters_pass():
    s = lessons.trip_split(23.0, 6.6, draft_ms=14.0)
    assert s["draft_ms"] == 14.0 and s["paperwork_ms"] == pytest.approx(2.4)
    assert s["reading_share"] == pytest.approx(6.6 / 9.0) and s["lesson"] == "reading"
    assert lessons.trip_split(23.0, 6.6)["lesson"] == "paperwork"  # the same step with the guessing counted in
    with pytest.raises(ValueError):
        lessons.trip_split(23.0, 6.6, draft_ms=-1.0)


def test_a_reading_interrupted_by_other_programs_draws_no_lesson():
    # the reading clock ran 9.9 ms in a step whose thread had only 5.3 ms of CPU: other programs stopped it mid-read
    s = lessons.trip_split(13.56, 9.9, wait_ms=8.29)
    assert s["lesson"] == "unmeasured" and s["interrupted"] is True
    # its wall time holds part of the wait, so it is no reading figure: the own work and the wait stay whole
    assert s["reading_ms"] is None and s["reading_share"] is None and s["times_floor"] is None
    assert s["wait_ms"] == pytest.approx(8.29) and s["paperwork_ms"] == pytest.approx(13.56 - 8.29)
    assert lessons.trip_split(13.56, 2.0, wait_ms=8.29)["interrupted"] is False
    assert lessons.trip_split(13.56, 2.0, wait_ms=8.29)["lesson"] == "both"  # 2.0 of 5.27 ms of work


def test_the_apprentice_check_says_what_a_trip_costs_from_the_trips_own_timers(tiny_model_dir):
    """``trip_costs`` from the check's runs: a guess of the draft model costs a share of a plain trip (its passes
    and draws, ``StepReport.draft_ms``), a guess of prompt lookup almost nothing; the check (a verify step
    without the guesses) costs about a trip or more; tokens per trip lie between 1 and k + 1. Sums of the steps'
    timers: k · guess + check plain trips is what a trip with the apprentice cost, per trip."""
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.sampling import SamplingParams
    from model.teaching.lesson_runs import ApprenticeCheck

    model, tokenizer = load_pretrained(tiny_model_dir)
    draft, _ = load_pretrained(tiny_model_dir)
    src = Engine(model, tokenizer, max_batch=1)
    src.set_draft(draft, tokenizer)
    check = ApprenticeCheck(src, SamplingParams(temperature=0.8, top_p=0.95, seed=0), n=16, rounds=2)
    while not check.done():
        check.step()
    verdicts = check.result()["verdicts"]
    model_costs, ngram_costs = verdicts["model"]["trip_costs"], verdicts["ngram"]["trip_costs"]
    assert model_costs["plain_trip_ms"] > 0 and 0 < model_costs["guess"]
    assert 1.0 <= model_costs["tokens_per_trip"] <= 5.0 and model_costs["check"] > 0.3
    assert ngram_costs["guess"] is None or ngram_costs["guess"] < model_costs["guess"]
    # the parts add up to the trips they were measured on (ms per trip, in plain trips)
    parts = check.parts["model"]
    per_trip = parts["trip_ms"] / parts["trips"] / model_costs["plain_trip_ms"]
    assert per_trip == pytest.approx(parts["guesses"] / parts["trips"] * model_costs["guess"] + model_costs["check"])


def test_the_check_of_prompt_lookup_is_per_verify_trip_not_diluted_by_its_plain_trips(tiny_model_dir, monkeypatch):
    """Prompt lookup finds no guess on some trips, which then run as plain decode steps. ``trip_costs``' check is
    the cost of a verify step (its wall ms less the apprentice's), in plain trips: the plain fallback trips must not
    count as checks of 0 ms, and tokens per trip are a verify trip's."""
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.sampling import SamplingParams
    from model.teaching.lesson_runs import _spec_run, trip_costs
    from tests.model.conftest import CORPUS

    model, tokenizer = load_pretrained(tiny_model_dir)
    src = Engine(model, tokenizer, max_batch=1)
    reports = []
    step = Engine.step
    monkeypatch.setattr(Engine, "step", lambda self: reports.append(step(self)) or reports[-1])
    ids = tokenizer.encode(CORPUS[0] + CORPUS[1])
    sampling = SamplingParams(temperature=0.8, top_p=0.95, seed=0)
    with_parts, plain_parts = {}, {}
    _spec_run(src, ids, 40, 1 << 20, "ngram", 4, sampling, with_parts)
    verify = [r for r in reports if r.phase == "verify"]
    fallback = [r for r in reports if r.phase == "decode"]
    assert verify and fallback  # both kinds of trip, which this test is about
    _spec_run(src, ids, 40, 1 << 20, None, 4, sampling, plain_parts)
    costs = trip_costs(with_parts, plain_parts)
    check_ms = sum(r.wall_ms - r.draft_ms for r in verify) / len(verify)
    assert costs["check"] == pytest.approx(check_ms / costs["plain_trip_ms"])
    assert costs["tokens_per_trip"] == pytest.approx(sum(r.tokens_out for r in verify) / len(verify))
