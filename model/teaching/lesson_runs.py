"""The measured comparisons behind the lesson pages, each taken as ``model/teaching/lessons.py`` describes: a warm-up,
repeats interleaved between the two sides (ABBA...), the median and spread of each side, and the verdict.

Used by ``model/teaching/analysis.py`` (what the pages show) and by ``python main.py bench --lessons`` (the same
comparison N times, to count how often the page agrees with its lesson). Times are ms of forward passes
(``StepReport.forward_ms``) summed over a run, measured with ``time.perf_counter_ns``; trips are counted.
"""

from __future__ import annotations

from model.engine import Engine
from model.sampling import SamplingParams
from model.teaching.lessons import best_apprentice, interleaved, pays, summary, verdict, why_not

LESSON_REPEATS = 5  # interleaved runs of each side behind one page's figure

# Page 12's workload, four seats: (request, prompt tokens, answer tokens; None: two chunks). Prompts and answers
# of clearly different lengths, two long beside two short in each static batch, so a static batch runs most of
# its trips with two seats empty, and C's prompt of two chunks is read beside other people's writing (chunked
# prefill). A trip of 2 to 4 rows costs about the same on this engine (bench: batch 2 2.7 ms, batch 4 2.6 ms),
# while a trip of 1 row takes a faster path (1.5 ms): so no static batch here is ever left with one row, and the
# trips saved are time saved. Trips are counted, not assumed: an answer may end early at end-of-text.
BATCHING_PLAN = (("A", 12, 30), ("B", 4, 2), ("C", None, 28), ("D", 8, 3),
                 ("E", 20, 24), ("F", 3, 2), ("G", 6, 22), ("H", 10, 3))


def _fit(ids: list[int], n: int) -> list[int]:
    out = list(ids) or [0]
    while len(out) < n:
        out += out
    return out[:n]


def _engine(src: Engine, kv_budget_bytes: int, **kw) -> Engine:
    kw.setdefault("max_step_tokens", src.config.n_positions)
    return Engine(src.model, src.tokenizer, kv_budget_bytes=kv_budget_bytes, **kw)


def batching_run(src: Engine, plan: list, mode: str, max_batch: int, step_tokens: int, kv_budget_bytes: int,
                 record: bool = False) -> dict:
    """One run of ``plan`` (``[(request id, prompt ids, answer tokens)]``) under ``mode`` ("static" or
    "continuous") on a fresh engine with ``max_batch`` seats and ``step_tokens`` tokens per trip.

    Returns ``{"ms": summed forward ms, "trips": passes}`` and, with ``record``, ``"passes"``: one entry per
    pass ``{"ms", "phase", "rows": [[request, tokens fed, "prefill"|"decode"]]}``, and for continuous the
    block tables at the fullest moment (``"block_tables"``, ``"block_size"``).
    """
    e = _engine(src, kv_budget_bytes, batching=mode, max_batch=max_batch, max_step_tokens=step_tokens,
                prefix_cache=False)
    for rid, ids, n in plan:
        e.add_request(ids, max_new_tokens=n, request_id=rid)
    passes, tables, total = [], {}, 0.0
    while e.has_work() and len(passes) < 1000:
        before = {s.request_id: (s.num_computed, s.in_prefill) for s in e.sequences()} if record else {}
        r = e.step()
        total += r.forward_ms
        if not record:
            passes.append(None)
            continue
        rows = []
        for rid in r.request_ids:
            seq = next((s for s in e.scheduler.running if s.request_id == rid), None)
            done, was_prefill = before.get(rid, (0, True))
            fed = (seq.num_computed - done) if seq is not None else 1
            rows.append([rid, max(1, fed), "prefill" if was_prefill else "decode"])
        passes.append({"ms": r.forward_ms, "phase": r.phase, "rows": rows})
        now_tables = {s.request_id: list(s.table.blocks) for s in e.scheduler.running}
        if sum(map(len, now_tables.values())) > sum(map(len, tables.values())):
            tables = now_tables  # the fullest moment: the most pages in use
    out = {"ms": total, "trips": len(passes)}
    if record:
        out["passes"] = passes
        if mode == "continuous":
            out["block_tables"], out["block_size"] = tables, e.block_size
    return out


def batching(src: Engine, base_ids: list[int], kv_budget_bytes: int, max_batch: int = 4, step_tokens: int = 32,
             repeats: int = LESSON_REPEATS) -> dict:
    """Static against continuous batching on ``BATCHING_PLAN`` (prompts cut from or repeated out of
    ``base_ids``): one recorded run of each (also the warm-up), then ``repeats`` interleaved timed runs.

    Returns per mode ``{"passes", "trips", "total_ms" (the median), "ms": summary}``, plus ``requests``,
    ``max_batch``, ``step_tokens``, ``runs`` (= repeats), ``block_tables``, ``block_size``, ``verdict``
    (``model.teaching.lessons.verdict``: continuous is the better side) and ``why_not`` (None when it holds).
    """
    plan = [(rid, _fit(base_ids, n if n is not None else 2 * step_tokens), new) for rid, n, new in BATCHING_PLAN]
    args = (plan, max_batch, step_tokens, kv_budget_bytes)
    recorded = {mode: batching_run(src, plan, mode, max_batch, step_tokens, kv_budget_bytes, record=True)
                for mode in ("static", "continuous")}  # the drawing's schedule, and the warm-up
    s_ms, c_ms = interleaved(lambda: batching_run(src, args[0], "static", *args[1:])["ms"],
                             lambda: batching_run(src, args[0], "continuous", *args[1:])["ms"],
                             repeats=repeats, warmup=0)
    out: dict = {"requests": [{"id": r, "prompt_tokens": len(p), "new_tokens": n} for r, p, n in plan],
                 "max_batch": max_batch, "step_tokens": step_tokens, "runs": repeats,
                 "block_tables": recorded["continuous"].get("block_tables", {}),
                 "block_size": recorded["continuous"].get("block_size")}
    for mode, vals in (("static", s_ms), ("continuous", c_ms)):
        s = summary(vals)
        out[mode] = {"passes": recorded[mode]["passes"], "trips": recorded[mode]["trips"], "ms": s,
                     "total_ms": s["median"]}
    out["verdict"] = verdict(out["continuous"]["ms"], out["static"]["ms"])
    out["why_not"] = why_not("batching", out)
    return out


def kv_cache_times(src: Engine, ids: list[int], steps: int, kv_budget_bytes: int,
                   repeats: int = LESSON_REPEATS) -> dict:
    """The same greedy answer (``steps`` + 1 tokens after ``ids``) with and without the KV cache, warm-up and
    ``repeats`` interleaved runs. Returns ``{"with": summary, "without": summary, "runs", "verdict"}`` (ms)."""
    def run(cached: bool) -> float:
        e = _engine(src, kv_budget_bytes, kv_cache=cached, prefix_cache=False)
        e.add_request(ids, max_new_tokens=steps + 1)
        return sum(r.forward_ms for r in e.run(max_steps=10_000))

    w, wo = interleaved(lambda: run(True), lambda: run(False), repeats=repeats)
    out = {"with": summary(w), "without": summary(wo), "runs": repeats}
    out["verdict"] = verdict(out["with"], out["without"])
    return out


def prefix_times(src: Engine, system: list[int], q1: list[int], q2: list[int], kv_budget_bytes: int,
                 repeats: int = LESSON_REPEATS) -> dict:
    """The second request's prefill behind a shared system prompt: warm (blocks reused from the first
    request) against cold (a fresh engine). Warm-up and ``repeats`` interleaved runs.

    Returns ``{"warm": summary, "cold": summary, "hit_tokens", "runs", "verdict"}`` (ms)."""
    hits = [0]

    def warm() -> float:
        e = _engine(src, kv_budget_bytes)
        e.add_request(system + q1, max_new_tokens=2, request_id="first")
        list(e.run(max_steps=10_000))
        e.add_request(system + q2, max_new_tokens=1, request_id="second")
        r = e.step()
        hits[0] = r.prefix_hit_tokens
        return r.forward_ms

    def cold() -> float:
        e = _engine(src, kv_budget_bytes)
        e.add_request(system + q2, max_new_tokens=1)
        return e.step().forward_ms

    w, c = interleaved(warm, cold, repeats=repeats)
    out = {"warm": summary(w), "cold": summary(c), "hit_tokens": hits[0], "runs": repeats}
    out["verdict"] = verdict(out["warm"], out["cold"])
    return out


TRIP_PARTS = ("trips", "trip_ms", "guess_ms", "guesses", "check_ms", "tokens", "checks", "check_tokens")


def _spec_run(src: Engine, ids: list[int], n: int, kv_budget_bytes: int, apprentice: str | None, k: int,
              sampling: SamplingParams | None, parts: dict | None = None) -> tuple[float, int, int]:
    """One answer of ``n`` tokens after ``ids`` on a fresh engine over ``src``'s model: with ``apprentice``
    ("model" | "ngram") guessing ``k`` per trip, or plain decoding (None). Returns (wall ms summed over the
    steps: draft passes, verify pass, sampling; guesses proposed; guesses kept).

    parts: if given, the trips' own timers are added to it (``TRIP_PARTS``, sums over the decode and verify steps,
    the prefill left out): trips, their wall ms, the apprentice's ms (``StepReport.draft_ms``: its passes and
    draws) and guesses, the rest of the verify steps' ms (the verify pass, the target's distributions, the
    verify rule), the tokens written, the verify steps and their tokens (prompt lookup's trips without a guess
    are plain decode steps)."""
    e = _engine(src, kv_budget_bytes, prefix_cache=False)
    if apprentice is not None:
        if apprentice == "model":
            e.set_draft(src.draft, src.tokenizer)
        e.set_draft_kind(apprentice)
        e.set_draft_k(k)
    e.add_request(ids, max_new_tokens=n, sampling=sampling)
    reports = list(e.run(max_steps=10_000))
    if parts is not None:
        for r in reports:
            if r.phase in ("decode", "verify"):
                check = r.phase == "verify"
                for key, value in zip(TRIP_PARTS, (1, r.wall_ms, r.draft_ms, r.proposed,
                                                   r.wall_ms - r.draft_ms if check else 0.0, r.tokens_out,
                                                   int(check), r.tokens_out if check else 0)):
                    parts[key] = parts.get(key, 0) + value
    return sum(r.wall_ms for r in reports), e.spec_proposed, e.spec_accepted


def trip_costs(with_parts: dict | None, plain_parts: dict | None) -> dict | None:
    """Where a trip with the apprentice goes, in plain trips (the measured wall ms of a plain decode trip, with
    its sampling): ``guess`` (one guess: the apprentice's ms ÷ its guesses), ``check`` (a verify step without
    the apprentice's part: the target's pass over k + 1 tokens, their distributions, the verify rule), and
    ``tokens_per_trip``. A trip of k guesses then costs k · guess + check plain trips and writes tokens_per_trip
    tokens (the speed-up is about their ratio): both per verify trip, so prompt lookup's trips without a guess
    (plain decode steps) do not dilute them. From the steps' timers (``_spec_run``'s parts), never from
    bytes and a bandwidth. None without both sides' trips or without a verify trip."""
    if not with_parts or not plain_parts or not with_parts.get("trips") or not plain_parts.get("trips"):
        return None
    plain_trip = plain_parts["trip_ms"] / plain_parts["trips"]
    checks = with_parts.get("checks", 0)
    if plain_trip <= 0 or not checks:
        return None
    return {"plain_trip_ms": plain_trip,
            "guess": (with_parts["guess_ms"] / with_parts["guesses"] / plain_trip) if with_parts["guesses"] else None,
            "check": with_parts["check_ms"] / checks / plain_trip,
            "tokens_per_trip": with_parts["check_tokens"] / checks}


def _spec_result(apprentice: str, k: int, with_ms: list[float], plain_ms: list[float], proposed: int,
                 accepted: int, with_parts: dict | None = None, plain_parts: dict | None = None) -> dict:
    """``speculative_times``' dict from the runs of one apprentice and the plain runs taken beside them (the
    same number, round by round: ``round_speedups`` pairs them); ``trip_costs`` from the runs' parts."""
    out = {"available": True, "apprentice": apprentice, "k": k, "with": summary(with_ms), "plain": summary(plain_ms),
           "acceptance": accepted / proposed if proposed else None, "runs": len(with_ms),
           "round_speedups": [p / w if w > 0 else 0.0 for w, p in zip(with_ms, plain_ms)],
           "trip_costs": trip_costs(with_parts, plain_parts)}
    out["speedup"] = out["plain"]["median"] / out["with"]["median"] if out["with"]["median"] > 0 else None
    out["verdict"] = verdict(out["with"], out["plain"])
    out["why_not"] = why_not("speculative", out)
    out["pays"] = pays(out)
    return out


def speculative_times(src: Engine, ids: list[int], n: int, kv_budget_bytes: int, apprentice: str = "model",
                      k: int = 4, sampling: SamplingParams | None = None, repeats: int = LESSON_REPEATS) -> dict:
    """Writing ``n`` tokens after ``ids`` with the apprentice (``"model"``: the draft model attached to
    ``src``; ``"ngram"``: prompt lookup) guessing ``k`` per trip, against plain decoding, under ``sampling``
    (default greedy). The whole step is timed (draft passes, verify pass, sampling): wall ms summed.

    A warm-up of each side first (the draft's first trip is cold), then ``repeats`` interleaved runs.
    Returns ``{"apprentice", "k", "with": summary, "plain": summary, "acceptance", "speedup" (plain ÷ with
    medians), "round_speedups", "runs", "trip_costs" (``trip_costs``), "verdict", "why_not", "pays"}``;
    ``{"available": False}`` when the
    draft model is asked for and none is loaded.
    """
    if apprentice == "model" and src.draft is None:
        return {"available": False, "apprentice": apprentice}
    acc = [0, 0]
    parts: dict[bool, dict] = {True: {}, False: {}}

    def run(spec: bool) -> float:
        ms, proposed, accepted = _spec_run(src, ids, n, kv_budget_bytes, apprentice if spec else None, k, sampling,
                                           parts[spec])
        acc[0] += proposed
        acc[1] += accepted
        return ms

    w, p = interleaved(lambda: run(True), lambda: run(False), repeats=repeats)
    return _spec_result(apprentice, k, w, p, *acc, parts[True], parts[False])


APPRENTICE_ROUNDS = 6  # rounds of the start-up check: plain, n-gram and draft model once each per round


class ApprenticeCheck:
    """The start-up check of the Live page's apprentice under one sampling, one round at a time.

    Plain decoding and each apprentice in ``kinds`` write the same ``n`` tokens after ``ids`` once per round, in
    an order that turns and reverses from round to round (P N M, M N P, N M P, ...), so a slow spell of the
    machine hits every side alike; the first round is a warm-up (the draft's cold first trip, first
    allocations) and is thrown away. ``step()`` runs one round (a few hundred ms, so the engine process can
    answer commands between rounds); after ``rounds`` kept rounds, ``result()`` is ``combine_verdicts``' dict.
    """

    def __init__(self, src: Engine, sampling: SamplingParams | None, ids: list[int] | None = None, n: int = 24,
                 k: int = 4, kv_budget_bytes: int = 8 * 2**20, rounds: int = APPRENTICE_ROUNDS,
                 kinds: list[str] | None = None, warmup: int = 1):
        if rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {rounds}")
        self.src, self.sampling, self.n, self.k, self.kv_budget_bytes = src, sampling, n, k, kv_budget_bytes
        self.ids = ids or src.tokenizer.encode(APPRENTICE_PROMPT) or [0]
        self.kinds = [a for a in (apprentice_kinds(src) if kinds is None else kinds)
                      if a != "model" or src.draft is not None]
        self.sides: list[str | None] = [None, *self.kinds]  # None: plain decoding
        self.rounds, self.warmup, self.done_rounds = rounds, warmup, -warmup
        self.ms: dict = {s: [] for s in self.sides}
        self.guesses = {a: [0, 0] for a in self.kinds}  # proposed, kept (kept rounds only)
        self.parts: dict = {s: {} for s in self.sides}  # the trips' timers, kept rounds only (_spec_run)

    def order(self, i: int) -> list[str | None]:
        """The sides in round ``i``: turned by ``i`` places, reversed every other round."""
        m = len(self.sides)
        turned = self.sides[i % m:] + self.sides[:i % m]
        return turned[::-1] if i % 2 else turned

    def done(self) -> bool:
        return self.done_rounds >= self.rounds

    def step(self) -> None:
        """One round: each side once."""
        if self.done():
            return
        keep = self.done_rounds >= 0
        for side in self.order(self.done_rounds + self.warmup):
            ms, proposed, accepted = _spec_run(self.src, self.ids, self.n, self.kv_budget_bytes, side, self.k,
                                               self.sampling, self.parts[side] if keep else None)
            if keep:
                self.ms[side].append(ms)
                if side is not None:
                    self.guesses[side][0] += proposed
                    self.guesses[side][1] += accepted
        self.done_rounds += 1

    def result(self) -> dict:
        """``combine_verdicts``' dict of the kept rounds (run ``step`` until ``done`` first)."""
        if not self.done():
            raise RuntimeError("the apprentice check has rounds left")
        verdicts = {a: _spec_result(a, self.k, self.ms[a], self.ms[None], *self.guesses[a], self.parts[a],
                                    self.parts[None]) for a in self.kinds}
        return combine_verdicts(self.sampling, verdicts)


APPRENTICE_PROMPT = "def fibonacci(n):"


def apprentice_kinds(src: Engine) -> list[str]:
    """The apprentices ``src`` can use: the draft model when one is attached, and always the n-gram one."""
    # code: where an apprentice has the most to copy or guess
    return (["model"] if src.draft is not None else []) + ["ngram"]


def apprentice_verdicts(src: Engine, sampling: SamplingParams | None, ids: list[int] | None = None, n: int = 24,
                        k: int = 4, kv_budget_bytes: int = 8 * 2**20, rounds: int = APPRENTICE_ROUNDS,
                        kinds: list[str] | None = None) -> dict:
    """Which apprentice pays on this machine, on this model, under ``sampling`` (None: greedy): the draft
    model (when ``src`` has one) and the n-gram apprentice against plain decoding, all three interleaved round by
    round after a warm-up round (``ApprenticeCheck``, run to the end at once). ``combine_verdicts``' dict."""
    check = ApprenticeCheck(src, sampling, ids=ids, n=n, k=k, kv_budget_bytes=kv_budget_bytes, rounds=rounds,
                            kinds=kinds)
    while not check.done():
        check.step()
    return check.result()


def combine_verdicts(sampling: SamplingParams | None, verdicts: dict) -> dict:
    """``apprentice_verdicts``' answer from per-apprentice verdicts (``speculative_times``' or
    ``ApprenticeCheck``'s dicts): ``{"sampling": {"temperature", "top_k", "top_p"}, "verdicts", "best"}``.

    ``best`` is ``model.teaching.lessons.best_apprentice``: the free-writing apprentice (the draft model when one is
    loaded, else the n-gram one) when it pays, else None.
    """
    s = sampling or SamplingParams()
    return {"sampling": {"temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p},
            "verdicts": verdicts, "best": best_apprentice(verdicts)}
