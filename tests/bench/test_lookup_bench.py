"""bench/lookup_bench.py runs end to end and writes the figures the Live page reads (a tiny run: not a timing)."""

from __future__ import annotations

import json

from model import catalog


def test_lookup_bench_writes_what_the_catalog_reads(tmp_path):
    from bench import lookup_bench
    out = tmp_path / "lookup.json"
    assert lookup_bench.main(["--rounds", "2", "--answers", "1", "--tokens", "8", "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["command"].startswith("python -m bench.lookup_bench")
    for p in catalog.CODE.lookup_presets:
        f = catalog.lookup_measured(p.key, out)
        # one distinct answer (seed 1), written in both rounds: answers counts distinct answers, not writings
        assert f["rounds"] == 2 == len(f["round_speedups"]) and f["answers"] == 1 and f["temperature"] == p.temperature
        assert f["loops"] == len(f["looped_seeds"]) <= 1
        assert f["speedup"] > 0 and f["plain_ms"]["median"] > 0
