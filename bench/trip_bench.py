"""What one trip is made of, measured: the weight-reading share, what timing it costs, per-layer timing's cost.

``python main.py bench --only trip`` (the ``trip`` section of docs/benchmarks.md).

- **Timer cost.** Interleaved runs of ``python main.py generate --json --threads 1`` (greedy, the bundled code
  model, 48 new tokens): the command as it is, against the same command with the weight-read timer replaced by
  one that does nothing (``model.runner.read_timer`` patched in the child: the same code, no clock reads). Per
  run the median decode ``forward_ms`` and ``wall_ms``; over the runs their median and min–max.
- **Per-layer timing's cost.** The same, ``--layer-timing`` against without.
- **The split, two ways.** The engine's own ``weight_read_ms / forward_ms`` against ``torch.profiler`` on the same
  decode steps: the self CPU time of the weight ops (``aten::addmm``, ``aten::mm``, ``aten::embedding`` and
  the index_select it runs, oneDNN's ``_linear_pointwise``, int8 ``_weight_int8pack_mm``) ÷ the CPU time of the
  forward's ``record_function`` span. The profiler adds its own cost to every op, so its share is a check of
  the timers', not the truth.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROMPT = "def read_lines(path):"

# the child: run `generate` as the CLI does, optionally with the weight-read timer replaced by a no-op
_CHILD = """
import sys
if sys.argv[1] == "off":
    import model.runner, model.timing
    model.runner.read_timer = lambda device: model.timing.NULL_TIMER
from model.cli import generate_main
sys.exit(generate_main(sys.argv[2:]))
"""


def summarise(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def _run(model_dir: Path, timers: bool, extra: list[str], tokens: int) -> dict:
    """One child process; the medians of its decode steps' forward_ms, wall_ms and weight_read_ms."""
    argv = [sys.executable, "-c", _CHILD, "on" if timers else "off", PROMPT, "--json", "--threads", "1",
            "--greedy", "--max-new-tokens", str(tokens), "--model", str(model_dir), *extra]
    out = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=300, check=True).stdout
    steps = [s for s in json.loads(out)["steps"] if s["phase"] == "decode"]
    return {k: statistics.median(s[k] for s in steps) for k in ("forward_ms", "wall_ms", "weight_read_ms")}


def ab_runs(model_dir: Path, variants: dict[str, tuple[bool, list[str]]], runs: int = 10,
            tokens: int = 48) -> dict:
    """Interleaved child runs of each variant (name -> (read timers on, extra CLI args)); per variant the summary
    over runs of each run's median decode forward_ms / wall_ms / weight_read_ms."""
    per: dict[str, list[dict]] = {name: [] for name in variants}
    for i in range(runs):
        names = list(variants) if i % 2 == 0 else list(reversed(variants))  # alternate who goes first
        for name in names:
            timers, extra = variants[name]
            per[name].append(_run(model_dir, timers, extra, tokens))
    return {name: {k: summarise([r[k] for r in rs]) for k in rs[0]} for name, rs in per.items()}


def timer_cost(model_dir: Path, runs: int = 10, tokens: int = 48) -> dict:
    """The weight-read timers against none (section docstring). Returns {variant: {metric: summary}, "overhead":
    median forward_ms with ÷ without - 1, "overhead_wall": the same for the whole step}."""
    r = ab_runs(model_dir, {"timers": (True, []), "no timers": (False, [])}, runs, tokens)
    r["overhead"] = r["timers"]["forward_ms"]["median"] / r["no timers"]["forward_ms"]["median"] - 1
    r["overhead_wall"] = r["timers"]["wall_ms"]["median"] / r["no timers"]["wall_ms"]["median"] - 1
    return r


def layer_timing_cost(model_dir: Path, runs: int = 10, tokens: int = 48) -> dict:
    """``--layer-timing`` against without (both with the weight-read timers, as shipped)."""
    r = ab_runs(model_dir, {"plain": (True, []), "layer timing": (True, ["--layer-timing"])}, runs, tokens)
    r["overhead"] = r["layer timing"]["forward_ms"]["median"] / r["plain"]["forward_ms"]["median"] - 1
    r["overhead_wall"] = r["layer timing"]["wall_ms"]["median"] / r["plain"]["wall_ms"]["median"] - 1
    return r


def alternating(model_dir: Path, what: str, tokens: int = 200, repeats: int = 5, weights: str = "fp16") -> dict:
    """In one process, one engine, one long greedy batch-1 run per repeat, the book in ``weights`` precision (fp16,
    the engine's default; ``model.quantize.set_precision``): the decode steps alternate between
    with and without ``what`` ("timers": the weight-read timers; "layer timing": ``Engine.layer_timing``), so a
    busy moment of the machine lands on both alike. Returns per variant the summary over repeats of each
    repeat's median decode forward_ms; "overhead": per repeat the median over neighbouring (with, without) step
    pairs of with ÷ without - 1; "overhead_p10": per repeat the 10th percentiles' ratio - 1 (the quiet moments)."""
    import model.runner as runner_module
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.quantize import set_precision
    from model.sampling import SamplingParams
    from model.timing import NULL_TIMER, read_timer

    model, tokenizer = load_pretrained(model_dir)
    set_precision(model, weights)
    on, off, ratios, low_ratio = [], [], [], []
    for _ in range(repeats):
        engine = Engine(model, tokenizer, max_batch=1)
        engine.add_request(PROMPT, max_new_tokens=tokens, sampling=SamplingParams(temperature=0.0))
        engine.step()  # prefill
        times = {True: [], False: []}
        flag = False
        try:
            while engine.has_work():
                flag = not flag
                if what == "timers":
                    runner_module.read_timer = read_timer if flag else (lambda device: NULL_TIMER)
                else:
                    engine.layer_timing = flag
                times[flag].append(engine.step().forward_ms)
        finally:
            runner_module.read_timer = read_timer
        on.append(statistics.median(times[True]))
        off.append(statistics.median(times[False]))
        # each step against the step beside it: a slow spell of the machine spans both of a pair
        ratios.append(statistics.median(a / b for a, b in zip(times[True], times[False])) - 1)
        low_ratio.append(_quantile(times[True], 0.1) / _quantile(times[False], 0.1) - 1)
    return {"with": summarise(on), "without": summarise(off), "overhead": summarise(ratios),
            "overhead_p10": summarise(low_ratio), "steps": tokens - 1, "weights": weights}


def _quantile(values: list[float], q: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


WEIGHT_OPS = ("aten::addmm", "aten::mm", "aten::embedding", "aten::index_select", "mkldnn::_linear_pointwise",
              "aten::_weight_int8pack_mm")


def profile_split(model_dir: Path, tokens: int = 48, repeats: int = 3) -> list[dict]:
    """Per repeat: the timers' median share (weight_read_ms ÷ forward_ms) over a greedy batch-1 run's decode
    steps, and the profiler's share over the same kind of run (a second engine, the same prompt)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.sampling import SamplingParams

    model, tokenizer = load_pretrained(model_dir)
    greedy = SamplingParams(temperature=0.0)
    rows = []
    for _ in range(repeats):
        engine = Engine(model, tokenizer, max_batch=1)
        engine.add_request(PROMPT, max_new_tokens=tokens, sampling=greedy)
        steps = [r for r in engine.run() if r.phase == "decode"]
        timers = statistics.median(r.weight_read_ms / r.forward_ms for r in steps)
        engine = Engine(model, tokenizer, max_batch=1)
        engine.add_request(PROMPT, max_new_tokens=tokens, sampling=greedy)
        engine.step()  # the prefill, outside the profile
        forward = engine.forward_parts

        def spanned(*a, **k):
            with record_function("one_trip_forward"):
                return forward(*a, **k)
        engine.forward_parts = spanned
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            while engine.has_work():
                engine.step()
        events = prof.key_averages()
        span = next(e for e in events if e.key == "one_trip_forward").cpu_time_total
        weight = sum(e.self_cpu_time_total for e in events if e.key in WEIGHT_OPS)
        rows.append({"timers_share": timers, "profiler_share": weight / span,
                     "profiler_ops": {e.key: e.self_cpu_time_total / span for e in events if e.key in WEIGHT_OPS},
                     "forward_ms": statistics.median(r.forward_ms for r in steps),
                     "weight_read_ms": statistics.median(r.weight_read_ms for r in steps)})
    return rows


def timer_pair_ns(pairs: int = 200_000) -> float:
    """The cost of one begin()/end() pair of ``ReadTimer`` in ns (best of 5 loops), for the overhead per pass."""
    import time

    from model.timing import ReadTimer
    t = ReadTimer()
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(pairs):
            t.begin()
            t.end()
        best = min(best, (time.perf_counter_ns() - t0) / pairs)
    return best


def trip_section(model_dir: Path, quick: bool = False) -> dict:
    runs = 4 if quick else 10
    return {"timer_cost": timer_cost(model_dir, runs=runs),
            "layer_timing_cost": layer_timing_cost(model_dir, runs=runs),
            "timer_alternating": alternating(model_dir, "timers", repeats=2 if quick else 5),
            "layer_timing_alternating": alternating(model_dir, "layer timing", repeats=2 if quick else 5),
            "profile": profile_split(model_dir, repeats=1 if quick else 3), "timer_pair_ns": timer_pair_ns()}


def _fmt(s: dict, digits: int = 3) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def render_trip(r: dict) -> list[str]:
    """Markdown lines of the trip section."""
    lines = ["## One trip, measured: weight reading and the rest", "",
             "Each decode step's `weight_read_ms` is the summed wall time of its weight GEMVs/GEMMs (Q/K/V, attention "
             "projection, MLP fc and proj, the LM head) and embedding gathers, each between two clock reads "
             "(`model/timing.py`); the rest of `forward_ms` is attention over the KV cache, norms, activations and "
             "Python. `python main.py generate --json --threads 1 --greedy --max-new-tokens 48` on the bundled code "
             "model, runs interleaved, per run the median decode step; below the median and min–max over runs.", ""]
    for key, title in (("timer_cost", "What the weight-read timers cost"),
                       ("layer_timing_cost", "What `--layer-timing` costs")):
        x = r[key]
        names = [n for n in x if n not in ("overhead", "overhead_wall")]
        lines += [f"### {title}", "", "| variant | runs | forward ms | whole step ms | weight_read ms |",
                  "|---|---|---|---|---|"]
        for n in names:
            lines.append(f"| {n} | {x[n]['forward_ms']['n']} | {_fmt(x[n]['forward_ms'])} | {_fmt(x[n]['wall_ms'])} | "
                         f"{_fmt(x[n]['weight_read_ms']) if x[n]['weight_read_ms']['median'] else '—'} |")
        lines += ["", f"Median forward {x['overhead']:+.1%}, whole step {x['overhead_wall']:+.1%} "
                      f"({names[1]} against {names[0]})." if key == "layer_timing_cost" else
                  f"Median forward {x['overhead']:+.1%}, whole step {x['overhead_wall']:+.1%} (timers against none). "
                  f"One begin/end pair costs {r['timer_pair_ns']:.0f} ns here; a decode pass of the bundled model "
                  f"makes 18 (one per weight, the LM head, the embeddings): "
                  f"{18 * r['timer_pair_ns'] / 1e3:.1f} µs per pass.", ""]
    lines += ["### The same, step by step in one process", "",
              "One engine, a greedy batch-1 run of 200 tokens per repeat, its decode steps alternating with and "
              "without the thing measured (so a busy moment of this shared machine lands on both alike); per repeat "
              "the median decode forward ms of each half; below the median and min–max over repeats. The overhead "
              "per repeat is the median over neighbouring step pairs of with ÷ without, and the ratio of the two "
              "halves' 10th percentiles (the machine's quiet moments).", "",
              "| measured | repeats | forward ms with | forward ms without | overhead: median of step pairs | "
              "overhead: 10th percentiles |", "|---|---|---|---|---|---|"]
    for key, name in (("timer_alternating", "weight-read timers"), ("layer_timing_alternating", "per-layer timing")):
        if key in r:
            x = r[key]
            lines.append(f"| {name} | {x['with']['n']} | {_fmt(x['with'])} | {_fmt(x['without'])} | "
                         f"{x['overhead']['median']:+.1%} "
                         f"({x['overhead']['min']:+.1%} to {x['overhead']['max']:+.1%}) | "
                         + (f"{x['overhead_p10']['median']:+.1%} ({x['overhead_p10']['min']:+.1%} to "
                            f"{x['overhead_p10']['max']:+.1%}) |" if "overhead_p10" in x else "— |"))
    lines += ["", "### The split: the engine's timers against torch.profiler", "",
              "| repeat | forward ms | weight_read ms | timers' share | profiler's share | profiler, by op |",
              "|---|---|---|---|---|---|"]
    for i, p in enumerate(r["profile"], 1):
        ops = ", ".join(f"{k.split('::')[-1]} {v:.0%}"
                        for k, v in sorted(p["profiler_ops"].items(), key=lambda kv: -kv[1]))
        lines.append(f"| {i} | {p['forward_ms']:.3f} | {p['weight_read_ms']:.3f} | {p['timers_share']:.0%} | "
                     f"{p['profiler_share']:.0%} | {ops} |")
    lines += ["", "The profiler's share is the weight ops' self CPU time ÷ the CPU time of the whole forward under "
              "the profiler (which adds its own cost to every op, most to the many small ones of the rest).", ""]
    return lines
