"""``main.py bench --quick`` on a tiny model writes a report of the right structure (never checks speed)."""

from __future__ import annotations

import json

import pytest

from bench.run import bench_main, render_markdown


@pytest.mark.timeout(240)
def test_quick_bench_writes_every_requested_section(tiny_model_dir, tmp_path):
    out = tmp_path / "bench.md"
    code = bench_main(["--quick", "--model", str(tiny_model_dir), "--draft-model", str(tiny_model_dir),
                       "--out", str(out), "--threads", "1", "--skip-window",
                       "--only", "transformers,floor,layout,threads,batch,speculative,prefix"])
    assert code == 0
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert data["machine"]["torch_threads"] == 1
    assert {r["batch"] for r in data["transformers"]} == {1, 8}
    assert all(r["engine_tok_s"]["median"] > 0 and r["transformers_tok_s"]["median"] > 0 for r in data["transformers"])
    assert [r["batch"] for r in data["batch"]] == [1, 4, 16]
    assert {(r["kind"], r["apprentice"], r["k"]) for r in data["speculative"]} == (
        {(k, "none", 0) for k in ("code", "prose")} | {(k, a, n) for k in ("code", "prose")
                                                        for a in ("model", "ngram") for n in (2, 4)})
    # the tiny model drafting for itself agrees with itself: every guess is accepted
    assert all(r["acceptance"] == 1.0 for r in data["speculative"] if r["apprentice"] == "model")
    assert all(r["acceptance"] is None for r in data["speculative"] if r["k"] == 0)
    assert all(r["speedup"] == 1.0 for r in data["speculative"] if r["k"] == 0)
    assert {r["applies"] for r in data["floor"]} <= {"cache", "dram"}
    assert {r["batch"] for r in data["layout"]} == {1, 8} and all(r["speedup"] > 0 for r in data["layout"])
    assert {(r["threads"], r["window_load"]) for r in data["threads"]} == {(t, w) for t in (1, 2)
                                                                            for w in (False, True)}
    on, off = (next(r for r in data["prefix"] if r["prefix_cache"] is c) for c in (True, False))
    assert on["prefix_hit_tokens"] > 0 and off["prefix_hit_tokens"] == 0
    floor = data["floor"][0]
    assert floor["ratio"] == pytest.approx(floor["step_ms"]["median"] / floor["floor_ms"])
    assert floor["floor_ms"] == floor[f"{floor['applies']}_floor_ms"]
    assert floor["ratio_dram"] == pytest.approx(floor["step_ms"]["median"] / floor["dram_floor_ms"])
    assert data["gemv"][0]["threads"] == 1
    assert all(r[k] > 0 for r in data["gemv"] for k in ("read_gb_s", "gemv_in_out_gb_s", "linear_out_in_gb_s"))
    text = out.read_text(encoding="utf-8")
    assert f"| 1 | {data['gemv'][0]['weights_mb']:.0f} |" in text  # the GEMV read speeds are in the report
    for heading in ("## Engine against transformers", "## Against the floor",
                    "## Decode path (weight layout, flat forward, GEMM library)", "## Threads",
                    "## Sharing a table", "## The apprentice", "## Same opening"):
        assert heading in text
    assert "## The window" not in text  # skipped sections are not invented
    # one table row per measured configuration
    assert text.count("| code |") == 5 and text.count("| prose |") == 5


def test_markdown_reports_a_missing_sharding_module_instead_of_numbers():
    report = {"machine": {"cpu": "x", "cores": 2, "torch_threads": 1, "torch": "t", "python": "3"},
              "quick": True, "started": "now", "seconds": 1.0,
              "sharding": [{"error": "model.parallel unavailable: boom"}]}
    text = render_markdown(report, {})
    assert "model.parallel unavailable: boom" in text
    assert "| tp |" not in text


def test_markdown_names_the_other_machine_of_re_measured_sections():
    """A report updated on another CPU said every section ran on the first one's."""
    first = {"cpu": "Xeon", "cores": 2, "torch_threads": 1, "torch": "t", "python": "3"}
    report = {"machine": first, "quick": False, "started": "then", "seconds": 1.0,
              "updated": {"floor": "now", "batch": "now", "prefix": "then"},
              "updated_machine": {"floor": {**first, "cpu": "EPYC"}, "batch": {**first, "cpu": "EPYC"},
                                  "prefix": first}}
    text = render_markdown(report, {})
    line = next(x for x in text.splitlines() if x.startswith("Re-measured on another machine"))
    assert "EPYC" in line and "floor, batch" in line and "prefix" not in line


@pytest.mark.timeout(240)
def test_update_remeasures_one_section_and_keeps_the_others(tiny_model_dir, tmp_path):
    out = tmp_path / "bench.md"
    common = ["--quick", "--model", str(tiny_model_dir), "--out", str(out), "--threads", "1", "--skip-window"]
    assert bench_main(common + ["--only", "batch"]) == 0
    first = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert bench_main(common + ["--only", "prefix", "--update"]) == 0
    merged = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert merged["batch"] == first["batch"]  # kept, not re-measured
    assert "prefix" in merged and set(merged["updated"]) == {"prefix"}
    text = out.read_text(encoding="utf-8")
    assert "## Sharing a table" in text and "## Same opening" in text and "Re-measured later: prefix" in text


@pytest.mark.parametrize("extra, needle", [
    (["--only", "nope"], "--only"),                      # used to write an empty report (over a real one) with exit 0
    (["--only", ","], "--only"),
    (["--out", "{tmp}/file/report.md"], "cannot create its folder"),  # was a FileNotFoundError traceback
    (["--out", "{tmp}"], "is a folder"),
])
def test_bad_arguments_exit_2_and_write_nothing(tmp_path, capsys, extra, needle):
    (tmp_path / "file").write_text("x")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert bench_main([a.replace("{tmp}", str(tmp_path)) for a in extra]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("threads", ["0", "-1", "x"])
def test_bad_threads_is_a_usage_error(capsys, threads):
    with pytest.raises(SystemExit) as info:  # was a RuntimeError traceback from torch.set_num_threads
        bench_main(["--threads", threads, "--only", "floor"])
    assert info.value.code == 2 and "--threads" in capsys.readouterr().err


def test_quick_bench_mixed_section(tiny_model_dir, tmp_path):
    """The "mixed" section measures every row it reports (trips of each kind really ran), its ratios are the
    medians they claim, and the report renders one table row per path."""
    out = tmp_path / "bench.md"
    assert bench_main(["--quick", "--model", str(tiny_model_dir), "--out", str(out), "--threads", "1",
                       "--skip-window", "--only", "mixed"]) == 0
    m = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))["mixed"]
    assert [r["decodes"] for r in m["trips"]] == [1, 7]
    for r in m["trips"]:
        assert all(r[k]["n"] > 0 and r[k]["median"] > 0 for k in ("chunk_ms", "decodes_ms", "ragged_ms", "padded_ms"))
        assert r["ragged_ratio"] == pytest.approx(r["ragged_ms"]["median"] / max(r["chunk_ms"]["median"],
                                                                                r["decodes_ms"]["median"]))
    assert m["workload"]["ratio"] == pytest.approx(m["workload"]["continuous_tok_s"]["median"]
                                                   / m["workload"]["static_tok_s"]["median"])
    assert {"ragged_b16_over_b1", "padded_b16_over_b1"} <= set(m["ratios"])
    text = out.read_text(encoding="utf-8")
    assert "## Reading beside writing (ragged passes)" in text
    assert text.count("| padded |") == 1 and text.count("| ragged |") == 1


@pytest.mark.timeout(400)
def test_lessons_counts_agreeing_runs_and_keeps_the_other_sections(tiny_model_dir, tmp_path):
    out = tmp_path / "bench.md"
    common = ["--model", str(tiny_model_dir), "--draft-model", str(tiny_model_dir), "--out", str(out),
              "--threads", "1", "--skip-window"]
    assert bench_main(common + ["--quick", "--only", "prefix"]) == 0
    assert bench_main(common + ["--lessons", "--runs", "2"]) == 0
    data = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    assert "prefix" in data and set(data["updated"]) == {"lessons"}  # --lessons re-measures only itself
    rows = data["lessons"]
    assert [r["page"] for r in rows] == ["08", "12", "13", "13", "Live", "Live", "15"]
    for r in rows:
        assert r["runs"] == 2 and 0 <= r["agreed"] <= 2 and sum(r["why_not"].values()) == 2 - r["agreed"]
        assert r["better_ms"]["n"] == r["worse_ms"]["n"] == 2
    text = out.read_text(encoding="utf-8")
    assert "## Lessons" in text and text.count(" of 2 |") == 7 and "## Same opening" in text


def test_lessons_runs_must_be_positive(capsys):
    assert bench_main(["--lessons", "--runs", "0"]) == 2
    assert "--runs" in capsys.readouterr().err
