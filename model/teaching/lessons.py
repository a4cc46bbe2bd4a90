"""Measured comparisons that a page uses as proof, and the verdict that says whether they teach the lesson.

A lesson compares two sides (say static against continuous batching) and claims one is faster. On a small,
shared CPU one cold run of each side is noise, so every comparison here is taken the same way:

* a warm-up pass of each side that is thrown away (first calls allocate, fill caches, pick kernels);
* ``repeats`` rounds, interleaved, A then B, then B then A (ABBA...), so a slow spell of the machine hits
  both sides alike instead of all of one side;
* the median of each side with its spread (min–max) and the number of runs: "61 ms, 58–66 over 5 runs".

The verdict (``verdict``) is a pure function of those summaries: the lesson *holds* when the side the page
calls better has the lower median. A page that shows a figure shows the verdict beside it, and when the lesson
does not hold it says so in the same size as the figure, with the measured reason (``why_not``).

Also here: when an apprentice pays (``pays``) and which one the Live page runs (``best_apprentice``), and
``trip_split``, one measured trip as reading the weights, other work and the floor, with the lesson key that
every screen speaking of it uses (``trip_lesson``). No Qt, no GUI, no torch: the window's
process reads these rules too.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable


def summary(values: list[float]) -> dict:
    """``{"median", "min", "max", "n", "values"}`` of ``values`` (floats, the caller's unit, ms here).

    Raises ValueError for an empty list: a figure with no run behind it must not be shown.
    """
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("summary of no runs")
    return {"median": float(statistics.median(vals)), "min": min(vals), "max": max(vals), "n": len(vals),
            "values": vals}


def interleaved(run_a: Callable[[], float], run_b: Callable[[], float], repeats: int = 5,
                warmup: int = 1) -> tuple[list[float], list[float]]:
    """Run each side ``warmup`` times (discarded), then ``repeats`` times each, interleaved ABBA...

    ``run_a`` / ``run_b`` take no argument and return one measured figure (ms). Returns the two lists of kept
    figures, each ``repeats`` long. Raises ValueError when ``repeats`` < 1.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(max(0, warmup)):
        run_a()
        run_b()
    a, b = [], []
    for i in range(repeats):
        if i % 2 == 0:
            a.append(run_a())
            b.append(run_b())
        else:
            b.append(run_b())
            a.append(run_a())
    return a, b


def verdict(better: dict, worse: dict) -> dict:
    """Whether the measured figures teach the lesson "``better`` takes less time than ``worse``".

    ``better`` and ``worse`` are ``summary`` dicts (ms). Returns ``{"holds": bool, "ratio": worse ÷ better
    medians (> 1 when the lesson holds), "separated": bool}``; ``separated`` is True when the runs do not
    overlap at all (the slowest run of ``better`` is faster than the fastest of ``worse``), the strongest
    form of agreement. A tie of medians does not hold: the page must not claim what it did not measure.
    """
    b, w = float(better["median"]), float(worse["median"])
    return {"holds": b < w, "ratio": (w / b) if b > 0 else float("inf"),
            "separated": float(better["max"]) < float(worse["min"])}


def why_not(kind: str, data: dict) -> str | None:
    """The measured reason a lesson did not hold, as a key the page translates, or None when it holds.

    ``kind`` is the analysis kind ("kv_cache", "batching", "speculative", "prefix"); ``data`` its result
    with a ``verdict`` entry (``verdict``). Keys:

    * "batching_trip_cost": continuous batching took fewer trips but its trips cost more each (mixed trips
      carry prompt chunks; on a CPU a trip's time grows with the tokens it carries);
    * "batching_no_trips_saved": the workload gave continuous batching no seat to refill;
    * "speculative_acceptance": the apprentice's guesses were kept too rarely to pay for its own passes;
    * "speculative_overhead": enough guesses were kept, but the apprentice's passes cost more than the trips
      they saved;
    * "noise": the difference is inside the runs' spread (the machine was busy): some runs of the better side
      were faster, some slower.
    """
    v = data.get("verdict") or {}
    if v.get("holds", True):
        return None
    if kind == "batching":
        if data["continuous"]["trips"] >= data["static"]["trips"]:
            return "batching_no_trips_saved"
        # fewer trips yet more time means dearer trips; every run slower (no overlap) says it is systematic
        slower_every_run = verdict(data["static"]["ms"], data["continuous"]["ms"])["separated"]
        return "batching_trip_cost" if slower_every_run else "noise"
    if kind == "speculative":
        rate = data.get("acceptance")
        return "speculative_acceptance" if rate is not None and rate < 0.5 else "speculative_overhead"
    return "noise"


# When an apprentice pays enough to be the Live page's default: a page that shows 12 trips measures its own
# speed-up with a spread of about ±15 % on a shared 2-core machine (issue 29 saw 1.01x, 0.78x and 0.61x for one
# setting), so a check whose median is only a few per cent above 1 would be shown losing about half the time.
PAYS_MIN_SPEEDUP = 1.1

# The apprentice for free writing, where there is a choice: the draft model. The n-gram apprentice copies the
# request's own text, so on free writing its guesses are kept mostly where the answer loops (issue 35: greedy
# "def fibonacci" measured it fast on a loop); it has its own presets, prompts whose answer repeats the prompt
# (``model.catalog.LookupPreset``), and is the free-writing apprentice only where no draft model is loaded.
FREE_WRITING_APPRENTICES = ("model", "ngram")


def pays(v: dict | None) -> bool:
    """Whether one measured apprentice pays clearly. ``v``: ``model.teaching.lesson_runs.speculative_times``' dict
    (``acceptance``, ``speedup`` = plain ÷ apprentice medians, ``round_speedups``: plain ÷ apprentice per round,
    ``verdict``).

    It must keep guesses (a speed-up with no guess kept is noise), reach a median speed-up of at least
    ``PAYS_MIN_SPEEDUP``, and be faster than the plain run beside it in every round but one in five (on a
    shared machine a slow spell hits both runs of a round alike, so the pair is the fair comparison; one
    round in five may be caught by a spell that starts between its two runs). Without rounds: every run with
    it faster than every run without (``verdict``'s ``separated``).
    """
    if not v or not v.get("available", True) or not v.get("acceptance") or not v.get("speedup"):
        return False
    if float(v["speedup"]) < PAYS_MIN_SPEEDUP:
        return False
    rounds = v.get("round_speedups")
    if rounds:
        slower = sum(1 for r in rounds if r <= 1.0)
        return slower <= len(rounds) // 5
    return bool((v.get("verdict") or {}).get("separated"))


def clearly_faster(a: dict, b: dict) -> bool:
    """Apprentice ``a`` beats ``b`` by more than the measured spread: every run with ``a`` faster than every run
    with ``b`` (``verdict``'s ``separated`` on their ``with`` summaries, taken in the same rounds)."""
    return bool(verdict(a["with"], b["with"])["separated"])


def free_writing_apprentice(verdicts: dict) -> str | None:
    """The apprentice free writing may use, from per-apprentice verdicts (``{"ngram": ..., "model": ...}``): the
    first in ``FREE_WRITING_APPRENTICES`` that was measured (the draft model when one is loaded), else None."""
    return next((a for a in FREE_WRITING_APPRENTICES
                 if verdicts.get(a) and verdicts[a].get("available", True)), None)


def best_apprentice(verdicts: dict) -> str | None:
    """The apprentice the Live page runs by default for free writing, from per-apprentice verdicts (each as
    ``pays`` reads it): ``free_writing_apprentice`` when it ``pays``, else None. The n-gram apprentice is never
    chosen over a loaded draft model, however it measured (its own presets run it: ``model.catalog``)."""
    a = free_writing_apprentice(verdicts)
    return a if a is not None and pays(verdicts[a]) else None


def least_bad_apprentice(verdicts: dict) -> str | None:
    """When none pays: the apprentice the page still shows working, ``free_writing_apprentice`` when it kept some
    of its guesses (so the visitor sees guesses inked, and the page says why it is slower); else None."""
    a = free_writing_apprentice(verdicts)
    return a if a is not None and verdicts[a].get("acceptance") else None


# A part of the trip at least this share of it "mostly" makes the trip; between the two, the page says both.
MOSTLY = 2 / 3
LESSON_KEYS = ("reading", "paperwork", "both", "communication", "unmeasured")


def trip_lesson(reading_share: float | None, comm_share: float = 0.0) -> str:
    """Which part of a measured trip dominates, as the key of the sentence every screen says about it.

    ``reading_share``: measured weight reading ÷ whole step (None: not measured); ``comm_share``: measured
    communication between desks ÷ whole step (0 for a book on one desk). Keys: "communication" when the
    torn book's communication is the largest part; "reading" when reading is at least ``MOSTLY`` of the trip;
    "paperwork" when the other work per step is; "both" in between; "unmeasured" without a reading figure.
    """
    comm = max(0.0, float(comm_share or 0.0))
    if reading_share is None:
        return "communication" if comm >= 0.5 else "unmeasured"
    reading = max(0.0, float(reading_share))
    other = max(0.0, 1.0 - reading - comm)
    if comm > 0 and comm >= reading and comm >= other:
        return "communication"
    if reading >= MOSTLY:
        return "reading"
    if other >= MOSTLY:
        return "paperwork"
    return "both"


def _check_split(whole_ms, weight_read_ms, comm_ms, wait_ms, draft_ms) -> None:
    """``trip_split``'s inputs: a positive step, parts of at least 0 ms. Raises ValueError naming the bad one."""
    if not (isinstance(whole_ms, (int, float)) and whole_ms > 0):
        raise ValueError(f"trip_split needs a positive step, got {whole_ms!r} ms")
    if weight_read_ms is not None and not weight_read_ms >= 0:
        raise ValueError(f"trip_split needs a reading time of at least 0, got {weight_read_ms!r} ms")
    if not comm_ms >= 0 or not wait_ms >= 0 or not draft_ms >= 0:
        raise ValueError(f"trip_split needs communication, waiting and guessing times of at least 0, got "
                         f"{comm_ms!r} ms, {wait_ms!r} ms, {draft_ms!r} ms")


def trip_split(whole_ms: float, weight_read_ms: float | None, weight_bytes: float = 0, bandwidth: float = 0.0,
               comm_ms: float = 0.0, wait_ms: float = 0.0, draft_ms: float = 0.0) -> dict:
    """One measured trip in three figures, and the lesson they teach (``trip_lesson``).

    whole_ms: the measured step (ms, > 0: forward pass, sampling, bookkeeping). weight_read_ms: the engine's
    measured time of the weight reads (every weight GEMV/GEMM, the LM head and the embedding gather; the step
    report's ``weight_read_ms``), or None where the engine did not measure it. comm_ms: measured time passing
    pages between desks (a torn book; 0 otherwise). wait_ms: measured time the step's thread was not running
    (wall time − the thread's CPU time: the machine was busy with other processes), which is no part of the
    trip's own work, so the shares are of the busy step (whole − wait). draft_ms: measured time of the apprentice's
    guesses in the step (the step report's ``draft_ms``: the draft model's passes, or prompt lookup), the
    apprentice's work and not the target's pass: given apart, and the shares are of the rest (whole − wait − draft).
    weight_bytes and bandwidth (bytes/s, the memory's measured read speed, ``model.hardware.decode_floors``): for
    the floor, a formula.

        reading_ms   = weight_read_ms                            (measured, capped at the step)
        comm_ms      = comm_ms                                   (measured, capped at what is left)
        wait_ms      = wait_ms                                   (measured, capped at what is left)
        draft_ms     = draft_ms                                  (measured, capped at what is left)
        paperwork_ms = whole_ms − reading − comm − wait − draft  (measured: the rest of the step)
        shares       = part ÷ (whole_ms − wait_ms − draft_ms)
        floor_ms     = weight_bytes ÷ bandwidth × 1000           (formula: the roofline's memory term, Williams,
                       Waterman & Patterson 2009, "Roofline"; None without bytes or bandwidth)
        read_speed   = weight_bytes ÷ reading_ms                 (bytes/s the engine actually read at)
        times_floor  = reading_ms ÷ floor_ms                     (how much slower than the memory could)

    Returns {"whole_ms", "reading_ms", "paperwork_ms", "comm_ms", "wait_ms", "draft_ms", "floor_ms", "reading_share",
    "comm_share", "read_speed_bytes_per_s", "times_floor", "interrupted", "lesson"} (a figure that cannot be had is
    None; without a reading figure reading_ms and the shares are None and the rest is all paperwork; a reading longer
    than the step's
    CPU time, whole − wait, was interrupted by other programs: "interrupted" True, reading_ms None, paperwork_ms
    the step's own work (whole − comm − wait), lesson "unmeasured", no claim). Raises ValueError for a
    step that is not positive or a negative reading or communication time.
    """
    _check_split(whole_ms, weight_read_ms, comm_ms, wait_ms, draft_ms)
    whole = float(whole_ms)
    # a reading clock that ran longer than the step's whole CPU time was stopped by the machine's other programs
    # mid-read (the reading is timed in wall time): its share is not the trip's own, so no lesson is drawn
    interrupted = weight_read_ms is not None and wait_ms > 0 and float(weight_read_ms) > whole - float(wait_ms)
    # an interrupted reading's wall time holds part of the wait: it is not given as the reading (no figure at all
    # rather than a wrong one); the step's own work is then all "paperwork", reading and the rest together
    reading = None if weight_read_ms is None or interrupted else min(whole, float(weight_read_ms))
    comm = min(float(comm_ms), whole - (reading or 0.0))
    wait = min(float(wait_ms), whole - (reading or 0.0) - comm)
    draft = min(float(draft_ms), whole - (reading or 0.0) - comm - wait)
    paperwork = whole - (reading or 0.0) - comm - wait - draft
    busy = max(whole - wait - draft, 1e-9)
    floor = float(weight_bytes) / float(bandwidth) * 1e3 if weight_bytes and bandwidth and bandwidth > 0 else None
    speed = float(weight_bytes) / (reading / 1e3) if reading and weight_bytes else None
    reading_share = None if reading is None else reading / busy
    return {"whole_ms": whole, "reading_ms": reading, "paperwork_ms": paperwork, "comm_ms": comm, "wait_ms": wait,
            "draft_ms": draft, "floor_ms": floor, "reading_share": reading_share, "comm_share": comm / busy,
            "read_speed_bytes_per_s": speed, "times_floor": reading / floor if reading and floor else None,
            "interrupted": interrupted,
            "lesson": "unmeasured" if interrupted else trip_lesson(reading_share, comm / busy)}


def steps_with_cpu(engine, cpu: bool = True, max_steps: int = 10_000) -> tuple[list, list[float] | None]:
    """Run ``engine`` (a ``model.engine.Engine``) to the end: its step reports, and with ``cpu`` the stepping
    thread's CPU ms of each (``time.thread_time_ns``; pass ``cpu=False`` when torch runs more than one thread,
    whose CPU is not this thread's). A step's wall ms minus its CPU ms is the time it waited for a CPU."""
    import time
    reports, cpu_ms = [], []
    for _ in range(max_steps):
        if not engine.has_work():
            break
        c0 = time.thread_time_ns()
        report = engine.step()
        if report is not None:
            reports.append(report)
            cpu_ms.append((time.thread_time_ns() - c0) / 1e6)
    return reports, (cpu_ms if cpu else None)


def _read_ms(report) -> float | None:
    """The step's measured weight-reading time (``StepReport.weight_read_ms``), None where the engine has none."""
    v = getattr(report, "weight_read_ms", None)
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


CLEAN_WAIT = 0.1  # a trip that waited for the processor less than this share of its step is a clean one


def median_trip(splits: list[dict]) -> dict:
    """The median trip of ``splits`` (``trip_split`` dicts, one per trip): among the clean ones (waited for the
    processor under ``CLEAN_WAIT`` of the step: the machine's other programs did not interrupt them, so their
    measured reading is the trip's own) if there are any, else among all, the one whose reading share is the
    median (the lower middle of an even count; by whole step when no reading was measured). Every figure shown
    is then of one real trip, and they add up. Raises ValueError for an empty list."""
    if not splits:
        raise ValueError("median_trip of no trips")
    clean = [sp for sp in splits if sp.get("wait_ms", 0.0) < CLEAN_WAIT * sp["whole_ms"]]
    pool = clean or splits
    key = (lambda sp: sp["reading_share"]) if all(sp["reading_share"] is not None for sp in pool) else \
        (lambda sp: sp["whole_ms"])
    return sorted(pool, key=key)[(len(pool) - 1) // 2]


def measured_split(reports: list, weight_bytes: int, bandwidth: float | None,
                   cpu_ms: list[float] | None = None) -> dict | None:
    """``trip_split`` of the median trip of ``reports`` (decode steps; ``median_trip``): its whole step
    (``wall_ms``), measured weight reading (``weight_read_ms``; None when a step lacks it), with ``cpu_ms`` (the
    stepping thread's CPU ms of each report) the waiting, wall − CPU; the floor from ``bandwidth`` (bytes/s).
    None without steps. Adds "forward_ms" (that trip's), "trips" (how many it is the median of)."""
    if not reports:
        return None
    measured = all(_read_ms(r) is not None for r in reports)
    splits = []
    for i, r in enumerate(reports):
        wait = max(0.0, float(r.wall_ms) - cpu_ms[i]) if cpu_ms else 0.0
        sp = trip_split(float(r.wall_ms), _read_ms(r) if measured else None, weight_bytes, bandwidth or 0.0,
                        wait_ms=wait)
        splits.append({**sp, "forward_ms": float(r.forward_ms)})
    return {**median_trip(splits), "trips": len(reports)}


def fmt_summary(s: dict, unit: str = "ms") -> str:
    """ "61 ms, 58–66 over 5 runs" (English, for logs and the bench report; the pages translate their own)."""
    return f"{s['median']:.0f} {unit}, {s['min']:.0f}–{s['max']:.0f} over {s['n']} runs"
