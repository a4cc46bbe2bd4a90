"""Which of a trip's reported stages the stage on screen is showing, as a pure function of trip progress.

The engine reports the stages a step went through, in order (``StepReport.stages``: "schedule", "pack",
"embedding", "attention:0", "kv_write:0", "mlp:0", ..., "lm_head", "sample"). The stage's timeline
(``animations.stage.trip``) shows a trip in phases: the carts load and roll out (``PRE``), each chapter is read for its
measured share of the compute window (``COMPUTE``, ends from ``layer_ms``), the tokens appear and the carts roll
back (``POST``). ``stage_at`` maps a moment of that timeline to the stage entry the code view highlights:

- the entries before the first per-layer one (schedule, prefix lookup, pack, draft, embedding) share ``PRE``;
- layer i's entries ("…:i") share the part of ``COMPUTE`` in which chapter i is lit, in their order;
- the entries after the last per-layer one (LM head, sample or verify) share ``POST``, the last one held to the end;
- without per-layer entries (a pipeline-parallel pass) the last entry is the one after the book, the others
  share ``PRE`` and the last of them holds while the chapters are read.

No Qt, no torch: names and numbers only (the code view in gui/code_view reads the source).
"""

from __future__ import annotations

PRE = (0.00, 0.28)  # load and roll out (trip.LOAD, ROLL_OUT)
COMPUTE = (0.28, 0.76)  # the chapters are read (trip.COMPUTE)
POST = (0.76, 0.90)  # the tokens are written, the carts roll back (trip.SEATS_AT .. ROLL_BACK)


def layer_of(entry: str) -> int | None:
    """"attention:3" -> 3; "sample" -> None (also for a malformed layer)."""
    _, sep, layer = str(entry).partition(":")
    if not sep:
        return None
    try:
        return int(layer)
    except ValueError:
        return None


def _share(entries: list[str], lo: float, hi: float, p: float) -> str:
    k = int((p - lo) / max(1e-9, hi - lo) * len(entries))
    return entries[max(0, min(len(entries) - 1, k))]


def stage_at(stages: list[str], p: float, ends: list[float]) -> str | None:
    """The stage entry shown at progress ``p`` (0 … 1 of the trip) for a trip that reported ``stages``.

    ends: cumulative ends (0 … 1) of each layer's share of the compute window (``TripTimeline._layer_shares``).
    Returns None when the trip reported no stages (an engine that does not say).
    """
    stages = [str(s) for s in stages or []]
    if not stages:
        return None
    layered = [i for i, s in enumerate(stages) if layer_of(s) is not None]
    if layered:
        pre, post = stages[:layered[0]], stages[layered[-1] + 1:]
    else:  # no per-layer stages (a pipeline-parallel pass): the last one (sample, verify) follows the book
        pre, post = (stages[:-1], stages[-1:]) if len(stages) > 1 else (stages, [])
    if p < COMPUTE[0]:
        return _share(pre, *PRE, p) if pre else stages[0]
    if not layered and p < COMPUTE[1]:
        return pre[-1]  # the workers read the book: the step that sent it to them holds
    if p < COMPUTE[1]:
        f = (p - COMPUTE[0]) / (COMPUTE[1] - COMPUTE[0])
        lit = next((i for i, e in enumerate(ends) if f < e), len(ends) - 1)
        start = ends[lit - 1] if lit > 0 else 0.0
        mine = [s for s in stages if layer_of(s) == lit]
        if not mine:  # a book of more chapters than the report's layers: the nearest layer reported
            last = max(layer_of(s) for s in stages if layer_of(s) is not None)
            mine = [s for s in stages if layer_of(s) == min(lit, last)]
        return _share(mine, start, max(start + 1e-9, ends[lit]), f)
    if not post:
        return stages[-1]
    return _share(post, POST[0], POST[1], min(p, POST[1] - 1e-9))
