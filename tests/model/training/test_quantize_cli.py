"""``python -m model.training.quantize``: how the bundled draft is made from its fp32 training output."""

from __future__ import annotations

import csv
import json
import shutil

import torch

from model.checkpoint import load_pretrained, stored_weights
from model.quantize import quantize_int8
from model.training import quantize as quantize_cli


def test_an_fp32_folder_becomes_its_int8_model_with_its_own_stage_of_training(tiny_model_dir, tmp_path):
    src = shutil.copytree(tiny_model_dir, tmp_path / "src")
    (src / "training.json").write_text(json.dumps({"config": "draft-skip", "steps": 3}), encoding="utf-8")
    with (src / "loss.csv").open("w", newline="") as f:  # an earlier model's rows ("-N") and this stage's
        csv.writer(f).writerows([["step", "tokens", "lr", "loss", "elapsed_s"], ["-1", "8", "0.1", "4.0", "1"],
                                 ["1", "16", "0.1", "3.0", "2"], ["2", "24", "0.1", "2.5", "3"]])
    out = tmp_path / "out"
    assert quantize_cli.main([str(src), str(out)]) == 0
    assert stored_weights(out) == "int8"
    back, _ = load_pretrained(out)
    want = quantize_int8(load_pretrained(src)[0])
    ids = torch.tensor([[1, 2, 3]])
    with torch.no_grad():
        assert torch.equal(back(ids), want(ids))
    summary = json.loads((out / "training.json").read_text(encoding="utf-8"))
    assert summary["steps"] == 3 and summary["quantized"]["weights"] == "int8"
    assert summary["quantized"]["command"] == f"python -m model.training.quantize {src} {out}"
    assert summary["quantized"]["weight_bytes"] == back.weight_bytes()
    steps = [r["step"] for r in csv.DictReader((out / "loss.csv").open())]
    assert steps == ["1", "2"]  # the earlier model's curve stays in its own folder


def test_fp16_on_disk_is_half_the_bytes_and_loads_back_to_the_same_float16_values(tiny_model_dir, tmp_path):
    """--fp16: the big books' format. Every weight comes back as its float16 rounding, in float32."""
    out = tmp_path / "half"
    assert quantize_cli.main([str(tiny_model_dir), str(out), "--fp16"]) == 0
    src, _ = load_pretrained(tiny_model_dir)
    back, _ = load_pretrained(out)
    assert stored_weights(out) == "fp32"  # any float dtype loads through the plain path
    size = (out / "model.safetensors").stat().st_size
    assert size < 0.55 * (tiny_model_dir / "model.safetensors").stat().st_size
    for name, t in src.state_dict().items():
        got = back.state_dict()[name]
        assert got.dtype == torch.float32
        assert torch.equal(got, t.half().float()), name
