"""What the tour says about one measured trip: the figures and the sentence for its lesson key.

The split comes from the engine process (``model/teaching/analysis.py``'s ``decode``:
``model.teaching.lessons.trip_split`` of the median decode step): ``whole_ms`` (measured), ``reading_ms`` (measured
weight reading, or None), ``paperwork_ms`` (measured rest of the step), ``floor_ms`` (formula: weight bytes ÷ read
speed), ``reading_share``, ``read_speed_bytes_per_s``, ``times_floor`` and ``lesson`` ("reading", "paperwork", "both",
"unmeasured"). Pages 7, 13 and 18 all read the same split (the tour's ``decode`` measurement), so they never disagree
about which part of the trip dominates; the key is chosen by the figures (``model.teaching.lessons.trip_lesson``), the
same rule the Live page applies to its own trips.
"""

from __future__ import annotations

from animations.scenes.look import T
from animations.units import fmt_bytes, fmt_ms


def measured(split: dict | None) -> bool:
    """True when ``split`` has a measured reading figure (a key the pages can speak of)."""
    return bool(split) and split.get("reading_ms") is not None and split.get("lesson") in ("reading", "paperwork",
                                                                                          "both")


def figures(split: dict) -> str:
    """"median trip 4.8 ms: reading the weights 3.6 ms · other work 1.2 ms (both measured) · floor 0.43 ms
    (formula)"."""
    wait = split.get("wait_ms") or 0.0
    named = wait >= 0.1 * split["whole_ms"]  # a wait is named when at least a tenth of the step, else in other work
    text = T("median trip {w}: reading the weights {r} · other work {p} (both measured)").format(
        w=fmt_ms(split["whole_ms"]), r=fmt_ms(split["reading_ms"]),
        p=fmt_ms(split["paperwork_ms"] + (0 if named else wait)))
    if named:
        text += " · " + T("waiting for a busy processor {t} (measured)").format(t=fmt_ms(wait))
    if split.get("floor_ms"):
        text += " · " + T("floor {f} (formula)").format(f=fmt_ms(split["floor_ms"]))
    return text


def pace(split: dict) -> str:
    """"at 4.8 GB/s, 8× slower than the memory could" (measured read speed; the floor's read speed)."""
    speed = fmt_bytes(split.get("read_speed_bytes_per_s") or 0.0)
    k = split.get("times_floor")
    if not k:
        return T("at {speed}/s").format(speed=speed)
    if k < 1.5:
        return T("at {speed}/s, about as fast as the memory could").format(speed=speed)
    return T("at {speed}/s, {k}× slower than the memory could").format(speed=speed, k=f"{k:.0f}")


def page7_lesson(split: dict) -> str:
    """Page 7's sentence under its bars."""
    key = split["lesson"]
    if key == "reading":
        return T("Here too the trip is mostly reading the weights, {pace}.").format(pace=pace(split))
    if key == "paperwork":
        return T("Here the trip is mostly other work per step (attention, sampling, Python), not reading the "
                 "weights: a book this small is read quickly.")
    return T("Here reading the weights is {pct}% of the trip's work, {pace}; the rest is other work per step.").format(
        pct=f"{100 * split['reading_share']:.0f}", pace=pace(split))


def page13_lesson(split: dict) -> str:
    """Page 13's sentence on what a smaller apprentice saves, by what dominates the book's trip here (§7)."""
    key = split["lesson"]
    if key == "reading":
        return T("A trip here is mostly reading the weights (§7): the apprentice saves the chapters it skips, not "
                 "its dictionary.")
    if key == "paperwork":
        return T("A trip here is mostly other work per step (§7), which the apprentice pays just the same.")
    return T("Reading the weights is {pct}% of a trip's work here (§7); the other work per step the apprentice "
             "pays just the same.").format(pct=f"{100 * split['reading_share']:.0f}")


def dictionary_line(s: dict) -> str:
    """Page 13: the apprentice's dictionary (embedding + LM head) against the book's, in bytes counted from the
    tensors; "" without the figures."""
    d, t, a = s.get("draft_dictionary_bytes"), s.get("dictionary_bytes"), s.get("draft_weight_bytes")
    if not d or not t or not a:
        return ""
    return T("Its dictionary (embedding + LM head, {d}) is {dp}% of the book's and {share}% of its own {a}: every "
             "guess reads it whole.").format(d=fmt_bytes(d), a=fmt_bytes(a), dp=f"{100 * d / t:.0f}",
                                              share=f"{100 * d / a:.0f}")


def page18_line(split: dict) -> str:
    """Page 18, under the answer on memory: what this computer measured (§7)."""
    key = split["lesson"]
    if key == "reading":
        return T("Measured here (§7): reading the weights is {pct}% of the work of a trip of this book too.").format(
            pct=f"{100 * split['reading_share']:.0f}")
    if key == "paperwork":
        return T("Measured here (§7): this book's trip is mostly other work per step; a big model's trip is "
                 "mostly reading.")
    return T("Measured here (§7): reading the weights is {pct}% of the work of a trip of this book; the rest "
             "is other work per step.").format(pct=f"{100 * split['reading_share']:.0f}")
