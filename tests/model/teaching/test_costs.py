"""Cost formulas and their command lines reproduce the seed text's figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model.teaching import costs
from model.teaching.costs import (
    GPUS,
    PRESETS,
    kv_cache_bytes,
    mla_cache_bytes,
    preset_from_config,
    preset_from_model_dir,
    preset_kv_bytes,
    roofline,
    weight_bytes,
)
from model.teaching.costs_cli import kv_size_main, roofline_main

REPO = Path(__file__).resolve().parents[3]


# ---- formulas ------------------------------------------------------------------------------------------------
def test_llama3_8b_kv_2000_tokens_fp16():
    """Seed §09: 2 × 32 × 8 × 128 × 2000 × 2 bytes ≈ 250 MB (exactly 262,144,000)."""
    assert kv_cache_bytes(32, 8, 128, 2000, 1, "fp16") == 262_144_000
    assert preset_kv_bytes(PRESETS["llama-3-8b"], 2000) == 262_144_000
    # "10 万块约 12.5 GB"
    assert preset_kv_bytes(PRESETS["llama-3-8b"], 100_000) / 1e9 == pytest.approx(13.1, abs=0.1)
    assert preset_kv_bytes(PRESETS["llama-3-8b"], 100_000) / 2**30 == pytest.approx(12.2, abs=0.1)


def test_without_grouping_about_1_gb():
    """Seed §09: without grouping, 2,000 tokens ≈ 1 GB; GQA makes the cache 4× smaller (seed §05)."""
    mha = preset_kv_bytes(PRESETS["llama-3-8b-mha"], 2000)
    assert mha == 1_048_576_000
    assert mha == 4 * preset_kv_bytes(PRESETS["llama-3-8b"], 2000)


def test_deepseek_v3_mla_per_token():
    """Seed §09: 576 values × 61 layers at FP16 ≈ 70 KB/token; 100,000 tokens ≈ 7 GB."""
    assert mla_cache_bytes(61, 576, 1, 1, "fp16") == 70_272 == 61 * 576 * 2
    assert preset_kv_bytes(PRESETS["deepseek-v3"], 1) == 70_272
    assert preset_kv_bytes(PRESETS["deepseek-v3"], 100_000) / 1e9 == pytest.approx(7.0, abs=0.05)


def test_gpt2_and_dtypes_and_batch():
    assert preset_kv_bytes(PRESETS["gpt2"], 1, dtype="fp16") == 2 * 12 * 12 * 64 * 2 == 36_864
    assert kv_cache_bytes(12, 12, 64, 1024, 4, "fp32") == 2 * 12 * 12 * 64 * 1024 * 4 * 4
    assert kv_cache_bytes(32, 8, 128, 10, 1, "bf16") == kv_cache_bytes(32, 8, 128, 10, 1, "fp16")
    assert kv_cache_bytes(32, 8, 128, 10, 1, "fp8") * 2 == kv_cache_bytes(32, 8, 128, 10, 1, "fp16")
    assert kv_cache_bytes(32, 8, 128, 0) == 0


@pytest.mark.parametrize(
    "kwargs",
    [dict(layers=0), dict(kv_heads=-1), dict(tokens=-5), dict(batch=0), dict(dtype="int4"), dict(dtype="fp12"),
     dict(layers=2.5)],
)
def test_formula_rejects_bad_input(kwargs):
    args = dict(layers=32, kv_heads=8, head_dim=128, tokens=10, batch=1, dtype="fp16") | kwargs
    with pytest.raises(ValueError):
        kv_cache_bytes(**args)


def test_weights_and_decode_floor_8b_a100():
    """Seed §04/§07: 8B at FP16 ≈ 16 GB; ÷ about 2 TB/s ≈ 8 ms on an A100 (5–10 ms in the source)."""
    wb = weight_bytes(PRESETS["llama-3-8b"].params, "fp16")
    assert wb == 16_060_522_496
    assert costs.decode_floor_ms(16e9, 2e12) == pytest.approx(8.0)
    r = roofline(PRESETS["llama-3-8b"], GPUS["a100"], "fp16")
    assert r.weight_bytes == wb and r.fits and r.gpus_needed == 1
    assert r.decode_floor_ms == pytest.approx(8.0, abs=0.2)
    assert 5 <= r.decode_floor_ms <= 10


def test_70b_fits_two_h100_not_one():
    """Seed §14: 70B at FP16 ≈ 140 GB against H100 80 GB, H200 141 GB, B200 180 GB; FP8 / 4-bit make room."""
    p = PRESETS["llama-3-70b"]
    r = roofline(p, GPUS["h100"], "fp16")
    assert r.weight_bytes / 1e9 == pytest.approx(141.1, abs=0.1)
    assert not r.fits and r.gpus_needed == 2
    assert roofline(p, GPUS["b200"], "fp16").fits
    assert roofline(p, GPUS["h100"], "fp8").fits  # 70.6 GB in 80 GB, little room for the cache
    assert roofline(p, GPUS["h100"], "int4").weight_bytes == pytest.approx(35.3e9, rel=1e-3)


def test_deepseek_v3_reads_only_active_experts():
    r = roofline(PRESETS["deepseek-v3"], GPUS["h200"], "fp8")
    assert r.weight_bytes == 671e9 and r.bytes_read_per_token == 37e9
    assert r.decode_floor_ms == pytest.approx(37e9 / 4.8e12 * 1e3)
    assert not r.fits and r.gpus_needed == 5


def test_gpu_table_matches_datasheets_and_seed():
    assert GPUS["a100"].bandwidth == 2.039e12
    assert GPUS["h100"].bandwidth == 3.35e12
    assert GPUS["h200"].bandwidth == 4.8e12
    assert GPUS["b200"].bandwidth == 8e12
    assert [GPUS[g].memory_nominal_gb for g in ("a100", "h100", "h200", "b200")] == [80, 80, 141, 180]


def test_preset_from_config_gpt2_and_llama():
    gpt2 = preset_from_config(
        {"n_layer": 12, "n_head": 12, "n_embd": 768, "vocab_size": 50257, "n_positions": 1024, "n_inner": None},
        "gpt2-from-config",
    )
    ref = PRESETS["gpt2"]
    assert (gpt2.layers, gpt2.kv_heads, gpt2.head_dim, gpt2.params) == (12, 12, 64, ref.params)

    llama8b = {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096,
               "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False}
    p = preset_from_config(llama8b, "l8")
    assert (p.kv_heads, p.head_dim, p.params) == (8, 128, PRESETS["llama-3-8b"].params)
    llama70b = dict(llama8b, num_hidden_layers=80, num_attention_heads=64, hidden_size=8192, intermediate_size=28672)
    assert preset_from_config(llama70b, "l70").params == PRESETS["llama-3-70b"].params

    with pytest.raises(ValueError, match="n_layer"):
        preset_from_config({"n_head": 2}, "bad")
    with pytest.raises(ValueError, match="n_embd"):
        preset_from_config({"n_layer": 2, "n_head": 2, "n_embd": -4, "vocab_size": 9}, "bad")


def test_preset_from_model_dir(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"n_layer": 4, "n_head": 4, "n_embd": 128, "vocab_size": 500,
                                                      "n_positions": 256}))
    p = preset_from_model_dir(tmp_path, "bundled")
    assert p.name == "bundled" and p.kv_values_per_token() == 2 * 4 * 4 * 32
    with pytest.raises(ValueError, match="config.json"):
        preset_from_model_dir(tmp_path / "missing")


# ---- command line, in process ---------------------------------------------------------------------------------
def _json_out(capsys, fn, argv, **kw):
    rc = fn(argv, **kw)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_kv_size_cli_preset(capsys):
    d = _json_out(capsys, kv_size_main, ["--preset", "llama-3-8b", "--tokens", "2000", "--json"])
    assert d["bytes"] == 262_144_000 and d["gb"] == pytest.approx(0.262144) and d["gib"] == pytest.approx(0.2441, 1e-3)
    assert d["bytes_per_token"] == 131_072 and d["dtype"] == "fp16"
    d = _json_out(capsys, kv_size_main, ["--preset", "llama-3-8b-mha", "--tokens", "2,000", "--json"])
    assert d["bytes"] == 1_048_576_000
    d = _json_out(capsys, kv_size_main, ["--preset", "deepseek-v3", "--tokens", "1", "--json"])
    assert d["bytes"] == 70_272 and d["attention"] == "mla"


def test_kv_size_cli_shapes(capsys):
    d = _json_out(capsys, kv_size_main,
                  ["--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--tokens", "2000", "--batch", "3",
                   "--dtype", "fp8", "--json"])
    assert d["bytes"] == 262_144_000 * 3 // 2
    d = _json_out(capsys, kv_size_main, ["--mla-dim", "576", "--layers", "61", "--tokens", "100", "--json"])
    assert d["bytes"] == 7_027_200


def test_kv_size_cli_text(capsys):
    assert kv_size_main(["--preset", "gpt2", "--tokens", "1024"]) == 0
    out = capsys.readouterr().out
    assert "37,748,736 bytes" in out and "GB" in out and "GiB" in out


def test_kv_size_extra_preset(capsys, tmp_path):
    extra = {"bundled": preset_from_config({"n_layer": 2, "n_head": 2, "n_embd": 64, "vocab_size": 300}, "bundled")}
    d = _json_out(capsys, kv_size_main, ["--preset", "bundled", "--tokens", "10", "--dtype", "fp32", "--json"],
                  extra_presets=extra)
    assert d["bytes"] == 2 * 2 * 2 * 32 * 10 * 4


def test_roofline_cli(capsys):
    d = _json_out(capsys, roofline_main, ["--preset", "llama-3-8b", "--gpu", "a100", "--json"])
    assert d["weight_bytes"] == 16_060_522_496 and d["fits"] is True
    assert d["decode_floor_ms"] == pytest.approx(7.877, abs=0.01)
    d = _json_out(capsys, roofline_main, ["--preset", "llama-3-70b", "--gpu", "h100", "--dtype", "fp16", "--json"])
    assert d["fits"] is False and d["gpus_needed"] == 2
    assert roofline_main(["--preset", "llama-3-70b", "--gpu", "b200"]) == 0
    assert "fits" in capsys.readouterr().out


BAD_KV = [
    [],
    ["--tokens", "10"],
    ["--preset", "nope", "--tokens", "10"],
    ["--preset", "gpt2"],
    ["--preset", "gpt2", "--tokens", "ten"],
    ["--preset", "gpt2", "--tokens", "-1"],
    ["--preset", "gpt2", "--tokens", "10", "--batch", "0"],
    ["--preset", "gpt2", "--tokens", "10", "--layers", "3"],
    ["--layers", "3", "--tokens", "10"],
    ["--layers", "3", "--kv-heads", "0", "--head-dim", "4", "--tokens", "10"],
    ["--mla-dim", "576", "--tokens", "10"],
    ["--preset", "gpt2", "--tokens", "10", "--dtype", "int4"],
    ["--preset", "gpt2", "--tokens", "10", "--bogus"],
]
BAD_ROOF = [
    [],
    ["--preset", "gpt2"],
    ["--preset", "gpt2", "--gpu", "v100"],
    ["--preset", "nope", "--gpu", "a100"],
    ["--preset", "gpt2", "--gpu", "a100", "--dtype", "fp64"],
]


@pytest.mark.parametrize("argv", BAD_KV)
def test_kv_size_bad_input_returns_2(capsys, argv):
    assert kv_size_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("one-trip kv-size: error:")
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", BAD_ROOF)
def test_roofline_bad_input_returns_2(capsys, argv):
    assert roofline_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("one-trip roofline: error:")


def test_help_returns_0(capsys):
    assert kv_size_main(["--help"]) == 0
    assert "one-trip kv-size" in capsys.readouterr().out


# ---- command line, in a fresh interpreter ---------------------------------------------------------------------
def _py(code: str, *argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120)


def test_subprocess_cli():
    code = "import sys; from model.teaching.costs_cli import {fn}; sys.exit({fn}(sys.argv[1:]))"
    r = _py(code.format(fn="kv_size_main"), "--preset", "llama-3-8b", "--tokens", "2000", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["bytes"] == 262_144_000
    r = _py(code.format(fn="roofline_main"), "--preset", "llama-3-8b", "--gpu", "a100", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["fits"] is True
    for fn, argv in (("kv_size_main", ["--preset", "gpt2", "--tokens", "x"]),
                     ("roofline_main", ["--preset", "gpt2", "--gpu", "tpu"])):
        r = _py(code.format(fn=fn), *argv)
        assert r.returncode == 2 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1
        assert r.stdout == ""


def test_costs_module_has_no_torch_or_qt():
    r = _py("import sys, model.teaching.costs; bad = [m for m in ('torch', 'PySide6') if m in sys.modules]; "
            "sys.exit(1 if bad else 0)")
    assert r.returncode == 0, r.stderr


def test_sharding_projection_70b_and_deepseek():
    d = costs.sharding_projection()
    assert d["label"] == "projected"
    llama, deepseek = d["models"]
    gpus = {g["gpu"]: g for g in llama["gpus"]}
    assert not gpus["h100"]["fits_one"] and gpus["h100"]["gpus_needed"] == 2  # 141 GB: two 80 GB H100s
    assert gpus["h200"]["fits_one"] and gpus["b200"]["fits_one"]
    assert deepseek["params"] == 671_000_000_000 and deepseek["active_params"] == 37_000_000_000
    assert deepseek["illustration"] and all(g["source"] for g in llama["gpus"])
