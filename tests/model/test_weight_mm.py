"""The weight multiply (model/weight_mm.py): every kernel is here and right on this pinned torch, a missing one falls
back to fp32 with one logged line, FBGEMM's deprecation warning stays off the terminal, the default precision is
measured once per machine and again on request, and fp16 weights stay close to fp32 (logits, bits per byte)."""

from __future__ import annotations

import copy
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model import weight_mm
from model.checkpoint import load_pretrained
from model.quantize import Fp16Embedding, Fp16Linear, set_precision, to_fp16
from model.weight_mm import PRECISIONS, WeightMatrix, choose_precision, kernel_available, resolve_precision

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "assets" / "models" / "target"
HELDOUT_CODE = Path.home() / ".cache" / "one-trip" / "corpus" / "heldout" / "code.bin"
# the product of each kernel against float32 on the very values it holds (weight_mm.WeightMatrix.dense): fp32 and
# fp16 accumulate in float32 (rounding only); int8's kernel rounds each row of activations to 63 levels a side of
# zero (FBGEMM) or to bfloat16, 8 significant bits (torch's int8 kernel, where FBGEMM is missing)
KERNEL_RTOL = {"fp32": 1e-5, "fp16": 1e-4, "int8": 2e-2}


def _case(out_f=48, in_f=64, rows=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(out_f, in_f, generator=g) * 0.1, torch.randn(out_f, generator=g) * 0.1,
            torch.randn(rows, in_f, generator=g))


def test_the_pinned_torch_has_every_kernel_op():
    """Loud when a torch upgrade removes one: the ops model/weight_mm.py calls (bench/weights_bench.py also times
    FBGEMM's dynamic int8, ``torch.ops.quantized.linear_dynamic``)."""
    for op in ("fbgemm_pack_gemm_matrix_fp16", "fbgemm_linear_fp16_weight_fp32_activation", "_weight_int8pack_mm"):
        assert callable(getattr(torch, op, None)), f"torch {torch.__version__} lost torch.{op}"
    assert callable(torch.ops.quantized.linear_dynamic) and callable(torch.ops.quantized.linear_prepack)
    assert callable(torch.ops.quantized.linear_with_input_q_dq_qweight_dq_output_fp32)  # int8 (fbgemm_int8_mm)
    assert callable(getattr(torch, "_make_per_channel_quantized_tensor", None))
    assert all(kernel_available(p) for p in PRECISIONS)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("rows", [1, 5])
def test_each_kernel_gives_the_product_of_its_own_values(precision, rows):
    w, b, x = _case(rows=rows)
    m = WeightMatrix(w, b, precision)
    y, fused = m.mm(x)
    want = x @ m.dense().t() + b
    assert y.dtype == torch.float32 and y.shape == (rows, 48) and not fused
    assert torch.allclose(y, want, rtol=KERNEL_RTOL[precision], atol=KERNEL_RTOL[precision] * want.abs().max())
    # and the values held are the precision's: fp16 rounds each weight to 11 significant bits, int8 to half a step
    err = (m.dense() - w).abs().max()
    assert err <= {"fp32": 0.0, "fp16": w.abs().max() * 2 ** -11, "int8": w.abs().max() / 254 + 1e-7}[precision]
    assert m.nbytes == 48 * 64 * {"fp32": 4, "fp16": 2, "int8": 1}[precision] + (4 * 48 if precision == "int8" else 0)


@pytest.mark.parametrize("precision", PRECISIONS)
def test_each_row_is_multiplied_on_its_own(precision):
    """batched = alone at the kernel: row r of a 5-row product equals that row multiplied alone."""
    w, b, x = _case(rows=5, seed=1)
    m = WeightMatrix(w, b, precision)
    together = m.mm(x)[0]
    alone = torch.cat([m.mm(x[r:r + 1])[0] for r in range(5)])
    assert torch.allclose(together, alone, rtol=1e-5, atol=1e-5)
    if precision == "int8":  # each row quantized with its own scale: not just close, the same bits
        assert torch.equal(together, alone)


def test_int8_runs_fbgemm_with_a_scale_per_row_here():
    """On this machine int8 weights run FBGEMM's int8 GEMM (``weight_mm.int8_kernel``), and a row's result is
    the same whether the rows beside it are small or a thousand times larger (a scale for the whole call, as
    FBGEMM's own dynamic quantization takes, would round the small row to nothing)."""
    assert weight_mm.int8_kernel() == "fbgemm"
    w, b, x = _case(rows=2, seed=3)
    m = WeightMatrix(w, b, "int8")
    loud = torch.cat([x[:1], 1000 * x[1:]])
    assert torch.equal(m.mm(loud)[0][:1], m.mm(x[:1])[0])
    want = x[:1] @ m.dense().t() + b
    assert torch.allclose(m.mm(x[:1])[0], want, rtol=KERNEL_RTOL["int8"], atol=KERNEL_RTOL["int8"] * want.abs().max())


def test_without_fbgemm_int8_runs_torchs_int8_kernel_with_one_logged_line(monkeypatch, caplog):
    def gone(*_):
        raise RuntimeError("no FBGEMM here")
    monkeypatch.setattr(weight_mm, "fbgemm_int8_pack", gone)
    monkeypatch.setattr(weight_mm, "_INT8_KERNEL", [])
    with caplog.at_level(logging.WARNING, logger="one_trip.weight_mm"):
        assert weight_mm.int8_kernel() == "int8pack" and weight_mm.int8_kernel() == "int8pack"
    lines = [r for r in caplog.records if r.name == "one_trip.weight_mm"]
    assert len(lines) == 1 and "_weight_int8pack_mm" in lines[0].getMessage()
    w, b, x = _case(rows=3)
    m = WeightMatrix(w, b, "int8")
    assert m.int8_kernel == "int8pack"
    want = x @ m.dense().t() + b
    assert torch.allclose(m.mm(x)[0], want, rtol=KERNEL_RTOL["int8"], atol=KERNEL_RTOL["int8"] * want.abs().max())


def test_fp32_fuses_the_gelu_only_where_its_packed_kernel_runs():
    w, b, x = _case(rows=4)
    m = WeightMatrix(w, b, "fp32")
    y, fused = m.mm(x, "tanh")
    if fused:  # oneDNN's packed GEMM with the GELU in it
        assert torch.allclose(y, F.gelu(x @ w.t() + b, approximate="tanh"), atol=1e-5)
    else:
        assert torch.allclose(y, x @ w.t() + b, atol=1e-5)
    y1, fused1 = m.mm(x[:1], "tanh")  # one row: MKL's GEMV, no fusion
    assert not fused1 and torch.allclose(y1, x[:1] @ w.t() + b, atol=1e-5)


def test_a_missing_kernel_falls_back_to_fp32_with_one_logged_line(monkeypatch, caplog):
    def gone(*_):
        raise RuntimeError("no FBGEMM here")
    monkeypatch.setattr(torch, "fbgemm_pack_gemm_matrix_fp16", gone)
    with caplog.at_level(logging.WARNING, logger="one_trip.weight_mm"):
        choice = choose_precision("fp16", 64, 10**6)
    assert choice["precision"] == "fp32" and choice["fell_back"] and choice["asked"] == "fp16"
    lines = [r for r in caplog.records if r.name == "one_trip.weight_mm"]
    assert len(lines) == 1 and "fp16" in lines[0].getMessage() and "fp32" in lines[0].getMessage()
    assert resolve_precision("int8") == "int8"  # the others are untouched


def test_the_deprecation_warning_never_reaches_the_terminal():
    """torch 2.13 warns that FBGEMM's fp16 entry points are deprecated (once per process, at the first call), and
    that quantized tensors (int8's packing) are: a fresh process that packs and multiplies both, with every
    warning shown, prints nothing."""
    code = ("import torch; from model.weight_mm import WeightMatrix; "
            "m = WeightMatrix(torch.randn(8, 16), torch.zeros(8), 'fp16'); m.mm(torch.randn(3, 16)); "
            "m = WeightMatrix(torch.randn(8, 16), None, 'fp16'); print(m.mm(torch.randn(1, 16))[0].shape); "
            "m = WeightMatrix(torch.randn(8, 16), None, 'int8'); "
            "print(m.int8_kernel, m.mm(torch.randn(2, 16))[0].shape)")
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["torch.Size([1, 8])", "fbgemm torch.Size([2, 8])"]
    assert "deprecated" not in done.stderr and "Warning" not in done.stderr, done.stderr


def test_the_default_is_measured_once_per_machine_and_again_on_request(monkeypatch, tmp_path):
    monkeypatch.setenv("ONE_TRIP_CACHE_DIR", str(tmp_path))
    timings = [{"fp32": 100.0, "fp16": 40.0}, {"fp32": 100.0, "fp16": 95.0}]
    calls = []

    def fake(n_embd, matrices, *a, **k):
        calls.append((n_embd, matrices))
        return timings[len(calls) - 1]
    monkeypatch.setattr(weight_mm, "time_products", fake)
    first = choose_precision(None, 64, 10**6)
    assert first["precision"] == "fp16" and first["source"] == "measured" and first["us"] == timings[0]
    again = choose_precision(None, 64, 10**6)
    assert again["precision"] == "fp16" and again["source"] == "cached" and len(calls) == 1
    redo = choose_precision(None, 64, 10**6, remeasure=True)  # --remeasure-floor: fp16 is no longer 10 % faster
    assert redo["precision"] == "fp32" and redo["source"] == "measured" and len(calls) == 2
    assert choose_precision(None, 64, 10**6)["precision"] == "fp32"  # the new figure is the one kept
    assert choose_precision("int8", 64, 10**6) == {"asked": "int8", "precision": "int8", "source": "asked",
                                                   "fell_back": False}
    assert len(calls) == 2  # an asked precision measures nothing
    with pytest.raises(ValueError, match="weights must be one of"):
        choose_precision("int4", 64, 10**6)


def test_an_fp16_model_holds_fp16_matrices_and_copies(tiny):
    model, _ = tiny
    h = to_fp16(copy.deepcopy(model))
    assert h.weights == "fp16" and isinstance(h.wte, Fp16Embedding) and isinstance(h.h[0].mlp.c_fc, Fp16Linear)
    matrices = sum(p.numel() for n, p in h.named_parameters() if p.dtype == torch.float16)
    floats = sum(p.numel() for n, p in h.named_parameters() if p.dtype == torch.float32)
    assert matrices > 0 and floats > 0  # biases and layer norms stay float32
    assert h.weight_bytes() == 2 * matrices + 4 * floats and h.num_parameters() == model.num_parameters()
    ids = torch.tensor([[5, 9, 3, 7]])
    with torch.no_grad():
        ref = h(ids)
        twin = copy.deepcopy(h)  # FBGEMM's packed copies cannot be copied: a copy packs its own
        assert torch.equal(twin(ids), ref)
    with pytest.raises(ValueError, match="cannot become"):
        set_precision(h, "int8")


def test_fp16_logits_close_to_fp32_on_the_bundled_model():
    """The bundled code model on its own kind of text: fp16 weights (11 significant bits, fp32 activations) move
    the next-token distribution by a mean KL below 1e-5 nats (measured ~2e-7), every logit by under 0.05 (of a
    range of ~30; measured ~0.01), and the most likely token agrees everywhere."""
    model, tok = load_pretrained(BUNDLED)
    h = to_fp16(copy.deepcopy(model))
    text = ("import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n"
            "        return [line.rstrip() for line in f]\n")
    ids = torch.tensor([tok.encode(text * 3)])
    with torch.no_grad():
        a, b = model(ids).float(), h(ids).float()
    kl = F.kl_div(F.log_softmax(b, -1), F.log_softmax(a, -1), log_target=True, reduction="none").sum(-1).mean()
    assert kl < 1e-5
    assert (a - b).abs().max() < 0.05
    assert torch.equal(a.argmax(-1), b.argmax(-1))


@pytest.mark.skipif(not HELDOUT_CODE.is_file(), reason="the held-out corpus is built by model.training.corpus")
def test_bits_per_byte_on_a_heldout_slice_stay_within_the_bounds():
    """A slice (4 windows) of the held-out code: fp16 within 0.005 bits per byte of fp32, int8 within 0.02 (the
    bounds of issue 44; the whole held-out set is measured by bench/weights_bench.py, docs/benchmarks.md)."""
    from model.training.model_card import bits_per_byte
    model, tok = load_pretrained(BUNDLED)
    window = model.config.n_positions
    ids = np.fromfile(HELDOUT_CODE, dtype=np.uint16)[:4 * window + 1]
    assert int(ids.max()) < model.config.vocab_size
    with torch.inference_mode():
        bpb = {p: bits_per_byte(set_precision(copy.deepcopy(model), p), ids, tok, window)["bpb"] for p in PRECISIONS}
    assert 0.5 < bpb["fp32"] < 8  # a trained model on its own kind of text
    assert abs(bpb["fp16"] - bpb["fp32"]) <= 0.005
    assert abs(bpb["int8"] - bpb["fp32"]) <= 0.02
