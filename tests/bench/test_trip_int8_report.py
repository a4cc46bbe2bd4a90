"""The bench's trip and int8 sections render what was measured (bench/trip_bench.py, bench/int8_bench.py)."""

from __future__ import annotations

from bench.int8_bench import render_int8
from bench.trip_bench import render_trip


def _s(median, lo=None, hi=None, n=5):
    return {"median": median, "min": lo if lo is not None else median, "max": hi if hi is not None else median, "n": n}


def test_trip_section_names_the_costs_and_both_shares():
    ab = {"forward_ms": _s(1.5), "wall_ms": _s(2.0), "weight_read_ms": _s(1.0)}
    off = {"forward_ms": _s(1.4), "wall_ms": _s(1.9), "weight_read_ms": _s(0.0)}
    r = {"timer_cost": {"timers": ab, "no timers": off, "overhead": 0.0714, "overhead_wall": 0.05},
         "layer_timing_cost": {"plain": off, "layer timing": ab, "overhead": 0.0123, "overhead_wall": 0.01},
         "timer_alternating": {"with": _s(1.5), "without": _s(1.49), "overhead": _s(0.021, -0.1, 0.2),
                               "overhead_p10": _s(-0.009, -0.07, 0.09)},
         "layer_timing_alternating": {"with": _s(1.5), "without": _s(1.5), "overhead": _s(-0.005),
                                      "overhead_p10": _s(0.012)},
         "profile": [{"timers_share": 0.71, "profiler_share": 0.55, "forward_ms": 1.6, "weight_read_ms": 1.1,
                      "profiler_ops": {"aten::addmm": 0.45, "aten::mm": 0.1}}],
         "timer_pair_ns": 300.0}
    md = "\n".join(render_trip(r))
    assert "+7.1%" in md and "+1.2%" in md  # the CLI A/B overheads
    assert "+2.1% (-10.0% to +20.0%)" in md and "-0.9% (-7.0% to +9.0%)" in md  # the alternating pairs, p10
    assert "| 71% | 55% | addmm 45%, mm 10% |" in md
    assert "5.4 µs per pass" in md  # 18 pairs × 300 ns


def test_int8_section_gives_bytes_speedups_and_bits_per_byte():
    run = {"forward_ms": _s(1.0), "weight_read_ms": _s(0.5), "wall_ms": _s(1.2), "tokens_per_s": _s(833.0),
           "tokens_per_s_p10": _s(1000.0)}
    r = {"kernels": {"fp32 addmm (engine, fp32)": _s(4000.0), "_weight_int8pack_mm, bf16": _s(1100.0)},
         "engine": {"fp32": {**run, "weight_bytes": 17_356_800}, "int8": {**run, "weight_bytes": 4_435_968},
                    "bytes_ratio": 0.2556, "speedup": _s(2.41, 1.06, 5.86, 6), "speedup_p10": _s(1.73, 1.5, 2.3, 6)},
         "bpb": {"fp32": {"bpb": 1.2066, "nats_per_token": 2.9033, "tokens": 117530, "bytes": 407994},
                 "int8": {"bpb": 1.2067, "nats_per_token": 2.9035, "tokens": 117530, "bytes": 407994},
                 "delta_bpb": 0.0001, "relative": 0.0001 / 1.2066}}
    md = "\n".join(render_int8(r))
    assert "| int8 | 4,435,968 |" in md and "0.256× the fp32 bytes" in md
    assert "2.41 (1.06–5.86)× (6 rounds)" in md and "1.73 (1.50–2.30)×" in md
    assert "| int8 | 1.2067 |" in md and "+0.0001 (+0.01%)" in md
    assert "| _weight_int8pack_mm, bf16 | 1100 (1100–1100) |" in md
    r["bpb"] = {"missing": "no stdlib"}
    assert "Bits per byte: not measured (no stdlib)." in "\n".join(render_int8(r))
