"""Smoke runs of the bench modules that run in-process, on the tiny model with tiny settings (a few tokens, one
round): a broken benchmark fails here, not on the day someone runs it. Shapes and signs only (keys, counts,
ms > 0, fractions in [0, 1]), and a few facts known without the bench (the tiny model drafting for itself keeps
every greedy guess; fp32 bytes are 4 per parameter); never a speed.

Not here, each run as a fresh app or CLI process per measurement (seconds to minutes each): ``trip_bench``'s
``timer_cost``/``layer_timing_cost`` (``main.py generate`` children), ``record_bench``, ``window_bench``, ``soak``,
``live_apprentice_runs``, ``live_vs_headless``, ``trip_agreement``. ``run``, ``engine_bench``, ``mixed_bench`` and
``lookup_bench`` run in test_bench_report.py and test_lookup_bench.py.
"""

from __future__ import annotations

import pytest

from model.checkpoint import load_pretrained

ROUNDS = 1


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread, as the benches run (``--threads 1``): the machine is shared, and the tiny model gains
    nothing from more (two threads beside a busy process made these runs ten times slower)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    return load_pretrained(tiny_model_dir)


def _summary_ok(s: dict, n: int, positive: bool = True) -> bool:
    low = s["min"] > 0 if positive else s["min"] >= 0
    return s["n"] == n and low and s["min"] <= s["median"] <= s["max"]


# ---- bench/int8_bench.py ---------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")  # torch's notice on the ao contender
def test_int8_kernels_time_each_of_the_four_chains(tiny):
    from bench.int8_bench import kernels
    k = kernels(tiny[0], rounds=ROUNDS, calls=1)
    assert len(k) == 4 and any("int8pack" in name for name in k) and any("fp32" in name for name in k)
    assert all(_summary_ok(s, ROUNDS) for s in k.values()), k


def test_int8_engine_ab_and_bits_per_byte(tiny_model_dir, tiny):
    from bench.int8_bench import bits_per_byte_ab, engine_ab, render_int8
    e = engine_ab(tiny_model_dir, rounds=ROUNDS, tokens=4)
    for side in ("fp32", "int8"):
        for key in ("forward_ms", "wall_ms", "tokens_per_s", "weight_read_ms"):
            assert _summary_ok(e[side][key], ROUNDS), (side, key, e[side][key])
        assert e[side]["weight_read_ms"]["median"] < e[side]["forward_ms"]["median"]  # a part of the forward
    assert e["fp32"]["weight_bytes"] == 4 * sum(p.numel() for p in tiny[0].parameters())
    assert 0 < e["int8"]["weight_bytes"] < e["fp32"]["weight_bytes"]
    assert e["bytes_ratio"] == pytest.approx(e["int8"]["weight_bytes"] / e["fp32"]["weight_bytes"])
    assert _summary_ok(e["speedup"], ROUNDS) and _summary_ok(e["speedup_p10"], ROUNDS)
    b = bits_per_byte_ab(tiny_model_dir, max_tokens=300)
    assert "missing" not in b, b  # the held-out files are this Python's own standard library
    assert b["fp32"]["tokens"] == b["int8"]["tokens"] > 0 and b["fp32"]["bytes"] == b["int8"]["bytes"] > 0
    assert b["fp32"]["bpb"] > 0 and b["int8"]["bpb"] > 0
    assert b["delta_bpb"] == pytest.approx(b["int8"]["bpb"] - b["fp32"]["bpb"])
    md = "\n".join(render_int8({"kernels": {}, "engine": e, "bpb": b}))
    assert f"| int8 | {e['int8']['weight_bytes']:,} |" in md


# ---- bench/trip_bench.py (the in-process parts) -----------------------------------------------------------------

@pytest.mark.parametrize("what", ["timers", "layer timing"])
def test_trip_alternating_measures_both_halves(tiny_model_dir, what):
    from bench.trip_bench import alternating
    tokens = 7
    a = alternating(tiny_model_dir, what, tokens=tokens, repeats=ROUNDS)
    assert _summary_ok(a["with"], ROUNDS) and _summary_ok(a["without"], ROUNDS)
    assert a["overhead"]["n"] == a["overhead_p10"]["n"] == ROUNDS
    assert all(x > -1 for x in (a["overhead"]["median"], a["overhead_p10"]["median"]))  # a ratio of two ms - 1
    assert a["steps"] == tokens - 1


def test_trip_profile_split_gives_shares_in_0_1(tiny_model_dir):
    from bench.trip_bench import WEIGHT_OPS, profile_split, timer_pair_ns
    rows = profile_split(tiny_model_dir, tokens=5, repeats=ROUNDS)
    assert len(rows) == ROUNDS
    for r in rows:
        assert 0 < r["timers_share"] <= 1 and 0 < r["profiler_share"] <= 1, r
        assert 0 < r["weight_read_ms"] < r["forward_ms"]
        assert r["profiler_ops"] and set(r["profiler_ops"]) <= set(WEIGHT_OPS)
        assert sum(r["profiler_ops"].values()) == pytest.approx(r["profiler_share"])
    assert timer_pair_ns(pairs=1000) > 0


# ---- bench/draft_bench.py ----------------------------------------------------------------------------------------

def test_draft_bench_on_a_model_that_drafts_for_itself(tiny):
    from bench.draft_bench import acceptance, heldout_code_prompts, pass_costs, speed
    model, tok = tiny
    prompts = heldout_code_prompts(tok, 2, 16)
    assert len(prompts) == 2 and all(len(p) == 16 for p in prompts)
    rows = acceptance(model, tok, model, prompts, 4, [1, 2], None)
    assert [r["k"] for r in rows] == [1, 2]
    for r in rows:  # greedy, the draft the target itself: every guess is the target's own token
        assert r["proposed"] > 0 and r["acceptance"] == 1.0
        assert 1 < r["tokens_per_trip"] <= r["k"] + 1
    k = 2
    s = speed(model, tok, model, prompts, 4, k, None, ROUNDS)
    assert s["k"] == k and len(s["round_speedups"]) == ROUNDS
    assert _summary_ok(s["plain_tokens_per_s"], ROUNDS) and _summary_ok(s["draft_tokens_per_s"], ROUNDS)
    assert s["speedup"] == pytest.approx(s["draft_tokens_per_s"]["median"] / s["plain_tokens_per_s"]["median"])
    assert s["per_trip"]["plain"]["tokens_per_trip"] == 1.0  # plain decoding: one token a trip
    assert 1 <= s["per_trip"]["draft"]["tokens_per_trip"] <= k + 1
    assert 0 < s["trip_costs"]["guesses_per_trip"] <= k and s["trip_costs"]["guess"] > 0
    assert all(v["ms"] > 0 and v["target_pass_ms"] > 0 for v in s["per_trip"].values())
    repeats = 8
    c = pass_costs(model, tok, model, prompts, repeats=repeats)
    assert set(c) == {"target", "draft"}
    assert all(v["forward_ms"] > 0 and v["n"] == repeats + 1 for v in c.values()), c  # every token after the first


# ---- bench/lessons_bench.py --------------------------------------------------------------------------------------

def test_lessons_bench_one_run_of_every_lesson(tiny_model_dir):
    from bench.lessons_bench import lessons, markdown
    said: list[str] = []
    rows = lessons(tiny_model_dir, tiny_model_dir, runs=1, progress=said.append)
    assert [r["page"] for r in rows] == ["08", "12", "13", "13", "Live", "Live", "15"]
    assert len(said) == len(rows)
    for r in rows:
        assert "unavailable" not in r, r  # the draft was given
        assert r["runs"] == 1 and r["agreed"] in (0, 1) and sum(r["why_not"].values()) == 1 - r["agreed"]
        assert _summary_ok(r["better_ms"], 1) and _summary_ok(r["worse_ms"], 1)
        if "acceptance" in r:
            assert 0 <= r["acceptance"] <= 1
    assert sum("acceptance" in r for r in rows) == 4  # the four apprentice rows
    md = markdown(rows)
    assert sum(line.startswith(("| 08 |", "| 12 |", "| 13 |", "| Live |", "| 15 |")) for line in md) == len(rows)


# ---- bench/code_view_bench.py ------------------------------------------------------------------------------------

def test_code_view_bench_times_every_stage_but_the_first_round(qapp, capsys):
    """Its one run (two panel sizes, 8 rounds of the stages; about 2 s). It once imported a module that had moved
    (gui.fonts) and failed at its first line."""
    import re

    from bench import code_view_bench
    assert code_view_bench.main() == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("p code column")[0] for line in lines] == [str(h) for _, _, h in code_view_bench.PANELS]
    for line in lines:
        m = re.search(r"median ([\d.]+) ms, p90 ([\d.]+) ms, max ([\d.]+) ms \(n=(\d+)\)", line)
        assert m, line
        median, p90, top, n = (float(x) for x in m.groups())
        assert 0 < median <= p90 <= top and n == 7 * len(code_view_bench.STAGES)  # round 1 (parsing) dropped


# ---- every bench module: what it imports from the project exists --------------------------------------------------

def _project_imports(path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of every import of the project's own packages in ``path``, at any depth
    (the benches import inside their functions, where importing the module does not reach)."""
    import ast
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names]
    return [(ln, m, n) for ln, m, n in out if m.split(".")[0] in ("model", "gui", "animations", "bench", "main")]


def test_every_bench_module_imports_only_what_exists():
    """The benches that start processes (minutes each) cannot run here; a moved module or a renamed function in
    what they import fails here instead (code_view_bench imported gui.fonts after it had moved)."""
    import importlib
    from pathlib import Path
    bench_dir = Path(__file__).resolve().parents[2] / "bench"
    paths = sorted(bench_dir.glob("*.py"))
    assert len(paths) > 10
    missing = []
    for path in paths:
        importlib.import_module(f"bench.{path.stem}")
        for line, module, name in _project_imports(path):
            try:
                mod = importlib.import_module(module)
            except ImportError as exc:
                missing.append(f"{path.name}:{line}: {module} ({exc})")
                continue
            if name is not None and not hasattr(mod, name):
                try:
                    importlib.import_module(f"{module}.{name}")
                except ImportError:
                    missing.append(f"{path.name}:{line}: {module}.{name}")
    assert not missing, "\n".join(missing)


# ---- bench/book_bench.py ---------------------------------------------------------------------------------------

def test_book_bench_gives_each_book_its_shares_costs_and_floor(tiny_model_dir, monkeypatch, tmp_path):
    """Two rounds of two books (the tiny model under two names): the figures' shapes and signs, the reading a part
    of the forward, the floor of the book's own bytes."""
    from bench.book_bench import markdown, run
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path / "cache"))
    res = run({"pocket": tiny_model_dir, "big": tiny_model_dir}, rounds=2, n=4, batch=2, weights="fp32",
              drafts={"big": tiny_model_dir}, k=2)
    check, guess = res["big"]["check_cost"], res["big"]["guess_cost"]
    assert check["min"] > 0 and guess["min"] > 0 and len(check["values"]) == 2  # the book guessing for itself
    assert "check_cost" not in res["pocket"]  # no draft given: no apprentice figures
    for name in ("pocket", "big"):
        r = res[name]
        assert _summary_ok({**r["forward_ms"], "n": 2}, 2)
        assert 0 < r["reading_share"]["min"] <= r["reading_share"]["max"] < 1
        assert r["batch_cost"]["min"] > 0
        assert r["floor"]["weight_bytes"] == r["weight_bytes"] == 4 * sum(p.numel() for p in load_pretrained(
            tiny_model_dir)[0].parameters())
    table = markdown({"books": res, "k": 2}, 2)
    assert table.count("\n") == 3 and "| big | fp32 |" in table and "batch 2 ÷ batch 1" in table
    assert "check of 2 guesses" in table and table.splitlines()[2].endswith("| – | – |")


# ---- bench/desk_bench.py ---------------------------------------------------------------------------------------

def test_desk_bench_times_every_row_count_in_every_precision():
    """A tiny stack (2 blocks of 16 wide, 64 words), 2 rounds: each precision's bytes are its own (4, 2 and 1 byte a
    weight, int8 plus a float scale per row), every row count is timed, and the table has a row per precision."""
    from bench.desk_bench import ROWS, markdown, run, stack_shapes
    shapes = stack_shapes(16, 2, 64)
    params = sum(o * i for o, i in shapes)
    assert params == 2 * 12 * 16 * 16 + 64 * 16
    res = run(shapes, rounds=2)
    assert res["params"] == params and res["gflops"] > 0
    assert res["stacks"]["fp32"]["bytes"] == 4 * params and res["stacks"]["fp16"]["bytes"] == 2 * params
    assert res["stacks"]["int8"]["bytes"] == params + 4 * sum(o for o, _ in shapes)
    for s in res["stacks"].values():
        assert all(0 < s[r]["min"] <= s[r]["median"] <= s[r]["max"] for r in ROWS)
    table = markdown(res, 10e9)
    assert [line.split(" | ")[0] for line in table.splitlines()[-3:]] == ["| fp32", "| fp16", "| int8"]
    assert "ridge" in table


def test_int8_kernels_times_each_contender_at_each_row_count(monkeypatch, tmp_path):
    """bench/int8_kernels.py on a two-matrix stack: every contender at 1, 5 and 8 rows, positive ms, int8's bytes
    (1 a weight + a float32 scale a row) half of fp16's plus the scales, the fallback really on torch's kernel."""
    import json

    import bench.desk_bench
    from bench import int8_kernels
    monkeypatch.setattr(bench.desk_bench, "stack_shapes", lambda *a: [(96, 64), (64, 96)])
    assert int8_kernels.main(["--rounds", "1", "--json", str(tmp_path / "k.json")]) == 0
    out = json.loads((tmp_path / "k.json").read_text())
    assert set(out["ms"]) == {f"{p} {r}" for p in ("fp16", "int8 fbgemm", "int8pack") for r in (1, 5, 8)}
    assert all(v > 0 for v in out["ms"].values()) and all(v > 0 for v in out["plain_ms"].values())
    assert out["bytes"]["fp16"] == 2 * 2 * 96 * 64 and out["bytes"]["int8 fbgemm"] == 2 * 96 * 64 + 4 * (96 + 64)
    assert [m.int8_kernel for m in int8_kernels.stacks()["int8pack"]] == ["int8pack", "int8pack"]
    assert len(int8_kernels.lines(out)) == 3
