"""``python main.py bench [--quick] [--out docs/benchmarks.md]``: measure the engine and the window, write a report.

The report is Markdown with medians and min–max of every figure, the machine it ran on, and PNG plots beside
it (when matplotlib is installed: ``pip install -e '.[bench]'``). ``--quick`` runs a reduced set in about two
minutes; the test suite runs it on a tiny model and checks the report's structure, never its speed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def machine_info() -> dict:
    import torch

    from model.hardware import cpu_name
    return {"cpu": cpu_name(), "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
            "load_average": _load()}


def _load() -> list[float] | None:
    """1-, 5- and 15-minute load averages (runnable processes; None where the OS does not say)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


SECTIONS = ("transformers", "floor", "layout", "threads", "batch", "speculative", "sharding", "prefix", "window",
            # lessons runs only when asked for (--lessons or --only lessons)
            "storm", "record", "mixed", "trip", "int8", "lessons")


def say_error(message: str) -> None:
    """``one-trip bench: error: message`` (the program's name as typed) on one line of stderr."""
    from model.argtypes import command_name
    print(f"{command_name('bench')}: error: {message}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    from model.argtypes import OneLineParser, command_name, threads_arg
    p = OneLineParser(prog=command_name("bench"), description="Benchmarks of the engine and the window.")
    p.add_argument("--quick", action="store_true", help="a reduced run (about 2 minutes)")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="the report (default: docs/benchmarks.md, or docs/benchmarks-quick.md with --quick)")
    p.add_argument("--model", default=None, metavar="DIR", help="target model (default: bundled)")
    p.add_argument("--draft-model", default=None, metavar="DIR", help="draft model (default: bundled)")
    p.add_argument("--threads", type=threads_arg(), default=None, metavar="N", help="torch threads, 1-256")
    p.add_argument("--only", default=None, metavar="NAMES",
                   help="comma-separated subset: " + ",".join(SECTIONS))
    p.add_argument("--skip-window", action="store_true", help="do not start the window")
    p.add_argument("--lessons", action="store_true",
                   help="run every page's comparison --runs times and count the runs that agree with the lesson "
                        "(same as --only lessons --update)")
    p.add_argument("--runs", type=int, default=10, metavar="N", help="runs per lesson with --lessons (default 10)")
    p.add_argument("--update", action="store_true",
                   help="keep the other sections of an existing report (its .json beside it) and re-measure "
                        "only --only")
    return p


def _has_transformers() -> bool:
    import importlib.util
    return importlib.util.find_spec("transformers") is not None


def _fmt(s: dict, digits: int = 2) -> str:
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"


def _check_args(args: argparse.Namespace) -> bool:
    """Settle the defaults (--lessons, --out, --only's order) and refuse bad input, saying why on stderr, before
    minutes of measuring; a refused run never writes an empty report over a real one. False when refused."""
    if args.lessons:
        args.only, args.update = "lessons", True
    if args.runs < 1:
        print(f"error: --runs must be at least 1, got {args.runs}", file=sys.stderr)
        return False
    if args.out is None:
        args.out = str(REPO / "docs" / ("benchmarks-quick.md" if args.quick else "benchmarks.md"))
    if args.only is not None:
        names = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = sorted(names - set(SECTIONS))
        if unknown or not names:
            say_error(f"--only takes names from {','.join(SECTIONS)}; got {args.only!r}")
            return False
        args.only = ",".join(sorted(names))
    return _out_writable(args.out)


def _out_writable(out: str) -> bool:
    """Whether the report can be written at ``out`` (its folder made, writable, and ``out`` not a folder);
    says why not on stderr."""
    try:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        say_error(f"--out {out}: cannot create its folder ({e.strerror or e})")
        return False
    if Path(out).is_dir():
        say_error(f"--out {out} is a folder; give a file name such as benchmarks.md")
        return False
    try:  # the report and its .json go there after minutes of measuring: try the folder now (root passes os.access)
        with tempfile.NamedTemporaryFile(dir=Path(out).parent, prefix=".bench-", suffix=".probe"):
            pass
    except OSError as e:
        say_error(f"--out {out}: its folder is not writable ({e.strerror or e})")
        return False
    return True


def _measure_against_transformers(target: Path, q: bool, results: dict) -> None:
    """The engine against transformers' generate() (the bundled model; a GPT-2-small-sized random one too)."""
    from bench import engine_bench as eb
    if not _has_transformers():
        results["transformers_missing"] = ("transformers is not installed: pip install -e '.[bench]' "
                                           "to compare against its generate()")
        return
    results["transformers"] = eb.engine_vs_transformers(target, new_tokens=32 if q else 128, repeats=1 if q else 3)
    if not q:
        big = eb.random_model_dir(768, 12, 12, 50257, target / "tokenizer.json")
        results["transformers"] += eb.engine_vs_transformers(big, new_tokens=128, repeats=3)


def _measure_floor(target: Path, q: bool, results: dict) -> None:
    """Decode steps against the bandwidth floors (bigger random models too), and the GEMV read speeds."""
    from bench import engine_bench as eb
    tok_json = target / "tokenizer.json"
    dirs = [target]
    if not q:
        dirs += [eb.random_model_dir(512, 8, 8, 4096, tok_json), eb.random_model_dir(768, 12, 12, 50257, tok_json)]
    results["floor"] = eb.floor_gap(dirs, steps=16 if q else 32, repeats=1 if q else 3)
    results["gemv"] = (eb.gemv_read_speed(64 * 2**20, repeats=2) if q else eb.gemv_read_speed(repeats=5))


def _measure_speculative(target: Path, draft: Path, q: bool, results: dict) -> None:
    """The apprentices (draft model, n-gram) at each k; the n-gram one alone when there is no draft model."""
    from bench import engine_bench as eb
    has_draft = (draft / "config.json").is_file()
    if not has_draft:
        results["speculative_missing"] = f"no draft model at {draft} (the n-gram apprentice is measured alone)"
    results["speculative"] = eb.speculative_sweep(
        target, draft if has_draft else None, ks=(0, 2, 4) if q else range(0, 9),
        new_tokens=16 if q else 64, repeats=1 if q else 3)


def _measure_engine(target: Path, draft: Path, q: bool, want, results: dict) -> None:
    """The engine's sections (``want(name)``: whether to measure it) into ``results``; ``q``: the quick sizes."""
    from bench import engine_bench as eb
    if want("transformers"):
        _measure_against_transformers(target, q, results)
    if want("floor"):
        _measure_floor(target, q, results)
    if want("layout"):
        results["layout"] = eb.layout_ab(target, steps=16 if q else 64, repeats=2 if q else 7)
    if want("threads"):
        results["threads"] = eb.threads_ab(target, batches=(1,) if q else (1, 8), new_tokens=16 if q else 64,
                                           repeats=1 if q else 3, rounds=1 if q else 2)
    if want("batch"):
        results["batch"] = eb.batch_sweep(target, batches=(1, 4, 16) if q else (1, 2, 4, 8, 16, 32, 64),
                                          new_tokens=8 if q else 32, repeats=1 if q else 2)
    if want("speculative"):
        _measure_speculative(target, draft, q, results)
    if want("sharding"):
        results["sharding"] = eb.sharding_sweep(target, degrees=(1, 2) if q else (1, 2, 4), steps=4 if q else 16)
    if want("prefix"):
        results["prefix"] = eb.prefix_ttft(target, prefix_tokens=64 if q else 256, repeats=2 if q else 5)


def _measure_more(args: argparse.Namespace, target: Path, draft: Path, want, results: dict) -> None:
    """The sections beyond the engine's own: mixed traffic, trips, int8, lessons, and the window's (unless
    ``--skip-window``)."""
    q = args.quick
    if want("mixed"):
        from bench.mixed_bench import mixed_section
        results["mixed"] = mixed_section(target, quick=q)
    if want("trip"):
        from bench.trip_bench import trip_section
        results["trip"] = trip_section(target, quick=q)
    if want("int8"):
        from bench.int8_bench import int8_section
        results["int8"] = int8_section(target, quick=q)
    if want("lessons"):
        from bench import lessons_bench
        results["lessons"] = lessons_bench.lessons(target, draft, runs=args.runs)
    if args.skip_window:
        return
    if want("window"):
        from bench import window_bench
        results["window"] = window_bench.measure(target, quick=q)
    if want("storm"):
        from bench import window_bench
        results["storm"] = window_bench.measure_storm(target, quick=q)
    if want("record"):
        from bench import record_bench
        results["record"] = record_bench.measure(repeats=1 if q else 3)


def _merged_with_previous(results: dict, json_path: Path) -> dict:
    """``--update``: the previous report's results with this run's sections put in, each marked with when,
    under what load and on which machine it was re-measured."""
    previous = json.loads(json_path.read_text(encoding="utf-8"))
    updated = [k for k in results if k not in ("machine", "quick", "started", "seconds", "load_average_end")]
    load = {"start": results["machine"].get("load_average"), "end": results.get("load_average_end")}
    return {**previous, **{k: results[k] for k in updated},
            "updated": {**previous.get("updated", {}), **{k: results["started"] for k in updated}},
            "updated_load": {**previous.get("updated_load", {}), **{k: load for k in updated}},
            "updated_machine": {**previous.get("updated_machine", {}),
                                **{k: results["machine"] for k in updated}}}


def bench_main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if not _check_args(args):
        return 2
    from model.cli import BUNDLED_DRAFT, BUNDLED_MODEL, setup_torch
    from model.errors import ModelLoadError
    setup_torch(args.threads, "cpu")

    target = Path(args.model) if args.model else BUNDLED_MODEL
    draft = Path(args.draft_model) if args.draft_model else BUNDLED_DRAFT
    only = set(args.only.split(",")) if args.only else None

    def want(name: str) -> bool:
        return (only is None and name != "lessons") or (only is not None and name in only)

    results: dict = {"machine": machine_info(), "quick": args.quick, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    t_start = time.perf_counter()
    try:
        _measure_engine(target, draft, args.quick, want, results)
        _measure_more(args, target, draft, want, results)
    except ModelLoadError as e:
        say_error(f"{e}")
        return 2
    results["seconds"] = time.perf_counter() - t_start
    results["load_average_end"] = _load()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.update and out.with_suffix(".json").is_file():
        results = _merged_with_previous(results, out.with_suffix(".json"))
    out.with_suffix(".json").write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")
    plots = _plots(results, out.parent)
    out.write_text(render_markdown(results, plots), encoding="utf-8")
    print(f"wrote {out} ({time.perf_counter() - t_start:.0f} s)")
    return 0


def _plots(results: dict, folder: Path) -> dict[str, str]:
    """PNG plots beside the report. Without matplotlib, the plots already there are kept for the sections they
    show (an ``--update`` of other sections leaves them as measured); none are drawn (the tables say it all)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {key: name for key, name in (("batch", "bench_batch.png"), ("speculative", "bench_speculative.png"))
                if results.get(key) and (folder / name).is_file()}
    plots = {}
    if results.get("batch"):
        rows = results["batch"]
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot([r["batch"] for r in rows], [r["tok_s"]["median"] for r in rows], "o-")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch (requests sharing one trip)")
        ax.set_ylabel("tokens/s")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(folder / "bench_batch.png", dpi=100)
        plt.close(fig)
        plots["batch"] = "bench_batch.png"
    if results.get("speculative"):
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for kind in ("code", "prose"):
            for apprentice, style in (("model", "o-"), ("ngram", "s--")):
                rows = [r for r in results["speculative"] if r["kind"] == kind
                        and r.get("apprentice", "model") in (apprentice, "none")]
                if len(rows) > 1:
                    ax.plot([r["k"] for r in rows], [r["tok_s"]["median"] for r in rows], style,
                            label=f"{kind}, {apprentice}")
        ax.set_xlabel("draft guesses k")
        ax.set_ylabel("tokens/s")
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(folder / "bench_speculative.png", dpi=100)
        plt.close(fig)
        plots["speculative"] = "bench_speculative.png"
    return plots


def _header(r: dict) -> list[str]:
    """The title, the machine and the load average it ran under."""
    m = r["machine"]
    lines = ["# Benchmarks", "",
             f"Measured {r['started']} on {m['cpu']}, {m['cores']} cores, torch {m['torch']} with "
             f"{m['torch_threads']} intra-op threads, Python {m['python']}. "
             f"{'Quick run (reduced sizes). ' if r['quick'] else ''}Every figure is a median with min–max over the "
             "repeats; contenders alternate within each repeat. Took {:.0f} s.".format(r["seconds"]), ""]
    if m.get("load_average"):
        lines += [f"Load average (1, 5, 15 min) at the start: {', '.join(map(str, m['load_average']))}"
                  + (f"; at the end: {', '.join(map(str, r['load_average_end']))}" if r.get("load_average_end") else "")
                  + f" (on {m['cores']} cores: above {m['cores']} means processes waited for a core, and every "
                  "figure here is slower and noisier than on an idle machine).", ""]
    return lines


def _updated_notes(r: dict) -> list[str]:
    """For an ``--update``d report: which sections were re-measured when, on which other machine, under what load."""
    m = r["machine"]
    lines = ["Re-measured later: " + ", ".join(f"{k} ({when})" for k, when in r["updated"].items()) + ".", ""]
    machines = {}
    for k, um in r.get("updated_machine", {}).items():
        desc = f"{um['cpu']}, {um['cores']} cores, {um['torch_threads']} intra-op threads"
        if desc != f"{m['cpu']}, {m['cores']} cores, {m['torch_threads']} intra-op threads":
            machines.setdefault(desc, []).append(k)
    for desc, keys in machines.items():
        lines += [f"Re-measured on another machine ({desc}): {', '.join(keys)}; compare those sections with "
                  "each other, not with the others.", ""]
    loads = {}
    for k, load in r.get("updated_load", {}).items():
        if load.get("start"):
            loads.setdefault((tuple(load["start"]), tuple(load.get("end") or ())), []).append(k)
    for (start, end), keys in loads.items():
        lines += [f"Load average (1, 5, 15 min) while re-measuring {', '.join(keys)}: "
                  f"{', '.join(map(str, start))} at the start"
                  + (f", {', '.join(map(str, end))} at the end" if end else "")
                  + f" (on {m['cores']} cores: above {m['cores']} processes waited for a core, and those figures "
                  "are slower and noisier than on an idle machine).", ""]
    return lines


def _missing_notes(r: dict) -> list[str]:
    """A heading and a line for each section that could not be measured (transformers or the draft missing)."""
    lines = []
    for key, title in (("transformers_missing", "Engine against transformers `generate()`"),
                       ("speculative_missing", "The apprentice (speculative decoding)")):
        if key in r:
            lines += [f"## {title}", "", f"Not measured: {r[key]}.", ""]
    return lines


def _transformers_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Our engine against transformers `generate()`, tokens/s."""
    lines = ["## Engine against transformers `generate()`", "",
              "Greedy, same weights, same prompt; tokens/s.", "",
              "| model | parameters | batch | engine tok/s | transformers tok/s | ratio |", "|---|---|---|---|---|---|"]
    lines += [f"| {x['model']} | {x['parameters']:,} | {x['batch']} | {_fmt(x['engine_tok_s'], 1)} | "
              f"{_fmt(x['transformers_tok_s'], 1)} | {x['ratio']:.2f}× |" for x in r["transformers"]]
    lines.append("")
    return lines


def _floor_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Decode step against the cache and DRAM floors (weight bytes ÷ read speed)."""
    lines = ["## Against the floor", "",
              "Two floors, each weight bytes ÷ a measured read bandwidth (the better of 1 thread and all cores): "
              "**cache**, read from a buffer the size of the weights (it stays in the last-level cache), and "
              "**DRAM**, read from a buffer 4 × the last-level cache. The cache floor applies to weights that "
              "fit the last-level cache, the DRAM floor to larger ones; step ÷ floor is against the one that "
              "applies (and the DRAM one beside it). The window draws the applicable floor (engine ready event, "
              "field `floor`).", "",
              "| model | parameters | weights MB | cache GB/s | DRAM GB/s | cache floor ms | DRAM floor ms | applies "
              "| decode step ms | step ÷ floor | step ÷ DRAM floor |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for x in r["floor"]:
        if "cache_floor_ms" not in x:  # a report from before both floors were measured
            lines.append(f"| {x['model']} | {x['parameters']:,} | {x['weight_bytes'] / 1e6:.1f} | — | "
                         f"{x['bandwidth_gb_s']:.1f} | — | {x['floor_ms']:.3f} | — | {_fmt(x['step_ms'], 3)} | "
                         f"{x['ratio']:.1f}× | — |")
            continue
        lines.append(f"| {x['model']} | {x['parameters']:,} | {x['weight_bytes'] / 1e6:.1f} | {x['cache_gb_s']:.1f} | "
                     f"{x['dram_gb_s']:.1f} | {x['cache_floor_ms']:.3f} | {x['dram_floor_ms']:.3f} | {x['applies']} | "
                     f"{_fmt(x['step_ms'], 3)} | {x['ratio']:.1f}× | {x['ratio_dram']:.1f}× |")
    llc = next((x.get("l3_bytes") for x in r["floor"] if x.get("l3_bytes")), None)
    lines += ["", (f"Last-level cache: {llc / 2**20:.0f} MiB. " if llc else "") +
              "A small model's step is dominated by fixed per-step work (Python, kernel launches, sampling) and "
              "by GEMVs that do not reach the cache's read speed, not by reading its few MB of weights; the "
              "gap closes as the model grows.", ""]
    return lines


def _gemv_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Read speed of GEMVs against a plain read, GB/s."""
    lines = ["### Why a large model's step stays above its DRAM floor", "",
              "Read speed of weights larger than the cache: a plain read against a chain of 1-row GEMVs over "
              "768 × 3072 fp32 matrices, as the engine stores them ([in, out], `x @ W`) and as `F.linear` reads "
              "them ([out, in]); best of the passes, GB/s. The decode step cannot read faster than its GEMVs.", "",
              "| threads | weights MB | plain read GB/s | GEMV [in, out] GB/s | F.linear [out, in] GB/s |",
              "|---|---|---|---|---|"]
    for x in r["gemv"]:
        lines.append(f"| {x['threads']} | {x['weights_mb']:.0f} | {x['read_gb_s']:.1f} | "
                     f"{x['gemv_in_out_gb_s']:.1f} | {x['linear_out_in_gb_s']:.1f} |")
    lines.append("")
    return lines


def _layout_section(r: dict, plots: dict[str, str]) -> list[str]:
    """The decode path (layout, flat forward) against the plain modules, ms."""
    lines = ["## Decode path (weight layout, flat forward, GEMM library)", "",
              "Decode forward ms of the engine's prepared model (`GPT2.prepare_for_decode`, what the engine "
              "uses: every Linear stored [in, out], a contiguous [C, V] LM-head copy, the flat cached forward "
              "`FlatForward` (model/flat_forward.py) without module calls, MKL's GEMV at 1 row and oneDNN-packed "
              "weights from 2 rows) against the plain modules with [out, in] weights; same weights, alternating.", "",
              "| batch | plain ms | decode path ms | speed-up |", "|---|---|---|---|"]
    lines += [f"| {x['batch']} | {_fmt(x['plain_ms'], 3)} | {_fmt(x['decode_layout_ms'], 3)} | {x['speedup']:.2f}× |"
              for x in r["layout"]]
    lines.append("")
    return lines


def _threads_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Tokens/s and step ms per thread count, with and without window load."""
    lines = ["## Threads", "",
              "The engine in its own process (as the window starts it) at each thread count, alternating; "
              "\"window load\" runs beside it a process busy for half of every 60 Hz frame, a stand-in for the "
              "animating window.", "",
              "| window load | batch | threads | tokens/s | decode step ms |", "|---|---|---|---|---|"]
    lines += [f"| {'yes' if x['window_load'] else 'no'} | {x['batch']} | {x['threads']} | {_fmt(x['tok_s'], 1)} | "
              f"{_fmt(x['step_ms'])} |" for x in r["threads"]]
    lines.append("")
    return lines


def _batch_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Step ms and tokens/s per batch size, and its plot."""
    lines = ["## Sharing a table (batch size)", "", "| batch | decode step ms | tokens/s |", "|---|---|---|"]
    lines += [f"| {x['batch']} | {_fmt(x['step_ms'])} | {_fmt(x['tok_s'], 1)} |" for x in r["batch"]]
    lines += [""] + ([f"![tokens/s by batch]({plots['batch']})", ""] if "batch" in plots else [])
    return lines


def _speculative_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Tokens/s, acceptance and tokens per trip per apprentice and k."""
    lines = ["## The apprentice (speculative decoding)", "",
              "Batch 1, greedy. Apprentice *model*: the bundled draft model; *ngram*: prompt lookup (guesses "
              "copied from the request's own earlier tokens, `--draft ngram`); *none*: plain decoding. "
              "Speed-up is tokens/s over the plain median for the same prompts.", "",
              "| prompts | apprentice | k | tokens/s | speed-up | acceptance | tokens per trip |",
              "|---|---|---|---|---|---|---|"]
    for x in r["speculative"]:
        acc = "—" if x["acceptance"] is None else f"{x['acceptance']:.2f}"
        tpt = "—" if x["tokens_per_trip"] is None else f"{x['tokens_per_trip']:.2f}"
        sp = f"{x['speedup']:.2f}×" if "speedup" in x else "—"
        lines.append(f"| {x['kind']} | {x.get('apprentice', 'model' if x['k'] else 'none')} | {x['k']} | "
                     f"{_fmt(x['tok_s'], 1)} | {sp} | {acc} | {tpt} |")
    lines += [""] + ([f"![tokens/s by draft guesses]({plots['speculative']})", ""] if "speculative" in plots else [])
    return lines


def _sharding_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Tensor and pipeline parallel step times, split into compute, communication and bubble."""
    lines = ["## Tearing the book (tensor / pipeline parallel)", ""]
    if r["sharding"] and "error" in r["sharding"][0]:
        lines += [r["sharding"][0]["error"], ""]
    else:
        lines += ["| mode | workers | step ms | compute ms | communication ms | bubble ms |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {x['mode']} | {x['n']} | {_fmt(x['step_ms'])} | {x['compute_ms']:.2f} | {x['comm_ms']:.2f} | "
                  f"{x['bubble_ms']:.2f} |" for x in r["sharding"]]
        lines.append("")
    return lines


def _prefix_section(r: dict, plots: dict[str, str]) -> list[str]:
    """Time to first token with and without the prefix cache."""
    lines = ["## Same opening (prefix cache)", "", "| prefix cache | shared prefix tokens | hit tokens | TTFT ms |",
              "|---|---|---|---|"]
    lines += [f"| {'on' if x['prefix_cache'] else 'off'} | {x['prefix_tokens']} | {x['prefix_hit_tokens']} | "
              f"{_fmt(x['ttft_ms'])} |" for x in r["prefix"]]
    lines.append("")
    return lines


def _mixed_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench.mixed_bench import render_mixed
    load = (r.get("updated_load", {}).get("mixed") or {}).get("start") or r.get("machine", {}).get("load_average")
    return render_mixed(r["mixed"], _fmt, load)


def _trip_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench.trip_bench import render_trip
    return render_trip(r["trip"])


def _int8_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench.int8_bench import render_int8
    return render_int8(r["int8"])


def _lessons_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench import lessons_bench
    return lessons_bench.markdown(r["lessons"])


def _window_section(r: dict, plots: dict[str, str]) -> list[str]:
    """The window's figures (bench.window_bench.measure)."""
    w = r["window"]
    lines = ["## The window", ""]
    if "error" in w:
        lines += [w["error"], ""]
    else:
        lines += ["| figure | value |", "|---|---|"]
        lines += [f"| {k} | {v:.1f} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in w.items()]
        lines.append("")
    return lines


def _storm_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench.window_bench import storm_markdown
    return storm_markdown(r["storm"])


def _record_section(r: dict, plots: dict[str, str]) -> list[str]:
    from bench.record_bench import markdown
    return markdown(r["record"])


# The report's sections in order: the key of the results each renders, and its renderer (results, plots).
_SECTION_RENDERERS = (
    ("transformers", _transformers_section), ("floor", _floor_section), ("gemv", _gemv_section),
    ("layout", _layout_section), ("threads", _threads_section), ("batch", _batch_section),
    ("speculative", _speculative_section), ("sharding", _sharding_section), ("prefix", _prefix_section),
    ("mixed", _mixed_section), ("trip", _trip_section), ("int8", _int8_section), ("lessons", _lessons_section),
    ("window", _window_section), ("storm", _storm_section), ("record", _record_section),
)


def render_markdown(r: dict, plots: dict[str, str]) -> str:
    """The report in Markdown from the results (``r``, the .json beside it) and the plots' file names."""
    lines = _header(r) + (_updated_notes(r) if r.get("updated") else []) + _missing_notes(r)
    for key, section in _SECTION_RENDERERS:
        if key in r:
            lines += section(r, plots)
    return "\n".join(lines) + "\n"
