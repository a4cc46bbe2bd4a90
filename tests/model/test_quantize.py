"""int8 weights (model/quantize.py): close to fp32, really thinner, the same through every path of the engine, and
said in the JSON and the engine service."""

from __future__ import annotations

import copy
import json

import pytest
import torch
import torch.nn.functional as F

import assets
from model.checkpoint import load_pretrained
from model.engine import Engine
from model.quantize import Int8Embedding, Int8Linear, quantize_int8, quantize_rows
from model.sampling import SamplingParams
from tests.model.conftest import prompt_ids, run_to_end

GREEDY = SamplingParams(temperature=0.0)
BUNDLED = assets.root() / "models" / "target"


def test_quantize_rows_is_within_half_a_step():
    w = torch.randn(64, 48) * torch.logspace(-3, 1, 64)[:, None]  # rows of very different scales
    w[3] = 0.0
    q, s = quantize_rows(w)
    assert q.dtype == torch.int8 and s.dtype == torch.float32 and s.shape == (64,)
    assert q.abs().max() <= 127
    err = (q.float() * s[:, None] - w).abs()
    assert torch.all(err <= s[:, None] / 2 + 1e-7)  # round to nearest: at most half a step per weight
    assert torch.equal(q[3], torch.zeros_like(q[3]))


def _dequantized(model_int8, fp32_model):
    """A float32 copy of ``fp32_model`` whose weights are the int8 model's q · s exactly."""
    ref = copy.deepcopy(fp32_model)
    with torch.no_grad():
        for name, mod in model_int8.named_modules():
            if isinstance(mod, (Int8Linear, Int8Embedding)):
                ref.get_submodule(name).weight.copy_(mod.weight.float() * mod.scale[:, None])
    return ref


def test_int8_kernel_matches_its_own_weights_in_float(tiny):
    """Against a float32 model holding exactly the dequantized weights, only the kernel's rounding of the
    activations differs: each row to 63 levels a side of zero (model/weight_mm.py ``fbgemm_int8_mm``), an error of
    at most 1/126 of the row's largest value per element, a few roundings per layer on 2 layers of this random
    model: within 5 % of the logits' spread (3.8 % measured), the bound checked. (On the bundled books the same
    rounding moves held-out bits per byte by at most 0.0023: test_weight_mm, docs/benchmarks.md.)"""
    model, tok = tiny
    q = quantize_int8(copy.deepcopy(model))
    ref = _dequantized(q, model)
    ids = torch.tensor([prompt_ids(40, 3, tok.vocab_size)])
    with torch.no_grad():
        a, b = q(ids), ref(ids)
    assert (a - b).abs().max() <= 0.05 * (b.max() - b.min())


def test_int8_logits_close_to_fp32_on_the_bundled_model():
    """The bundled code model on its own kind of text: the next-token distributions of int8 and fp32 differ by a
    mean KL below 0.01 nats (int8 per-row absmax keeps each weight within half a step, ~0.4 % of the row's
    largest; measured here ~0.002), and the most likely token agrees at 90 % of positions or more (the rest are
    near ties)."""
    model, tok = load_pretrained(BUNDLED)
    q = quantize_int8(copy.deepcopy(model))
    text = ("import os\n\n\ndef read_lines(path):\n    with open(path) as f:\n"
            "        return [line.rstrip() for line in f]\n")
    ids = torch.tensor([tok.encode(text * 3)])
    with torch.no_grad():
        a, b = model(ids).float(), q(ids).float()
    kl = F.kl_div(F.log_softmax(b, -1), F.log_softmax(a, -1), log_target=True, reduction="none").sum(-1).mean()
    assert kl < 0.01
    assert (a.argmax(-1) == b.argmax(-1)).float().mean() >= 0.9


def _expected_bytes(cfg, int8: bool) -> int:
    """Bytes written out from the config alone: matrices, their row scales, biases and norms."""
    C, V, P, L, F = cfg.n_embd, cfg.vocab_size, cfg.n_positions, cfg.n_layer, cfg.inner_dim
    mats = [(3 * C, C), (C, C), (F, C), (C, F)]  # (rows, cols) per block
    matrix_values = L * sum(r * c for r, c in mats) + V * C + P * C
    rows = L * sum(r for r, _ in mats) + V + P
    floats = L * (3 * C + C + F + C + 4 * C) + 2 * C  # biases, ln_1, ln_2, then ln_f
    return (matrix_values + 4 * rows if int8 else 4 * matrix_values) + 4 * floats


def test_weight_bytes_are_the_bytes_held(tiny):
    model, _ = tiny
    q = quantize_int8(copy.deepcopy(model))
    assert model.weight_bytes() == _expected_bytes(model.config, False)
    assert q.weight_bytes() == _expected_bytes(model.config, True)
    assert q.weight_bytes() <= 0.4 * model.weight_bytes()
    assert sum(q.layer_weight_bytes()) < q.weight_bytes()
    assert q.num_parameters() == model.num_parameters()  # an int8 weight is still one parameter


def test_bundled_model_is_at_most_four_tenths():
    model, _ = load_pretrained(BUNDLED)
    fp32 = model.weight_bytes()
    assert quantize_int8(model).weight_bytes() <= 0.4 * fp32


@pytest.mark.parametrize("ragged", [True, False], ids=["ragged", "padded"])
def test_every_engine_path_gives_the_modules_logits(tiny, ragged):
    """int8 through the engine (the flat path at 1 row and at 2+ rows, ragged or padded passes, prefill beside
    decodes) equals the int8 modules' own pass (the same kernel on the same rows) within 1e-4, and the weight
    reads are bracketed as in fp32."""
    model, tok = tiny
    q = quantize_int8(copy.deepcopy(model))
    prompts = [prompt_ids(n, 20 + n, tok.vocab_size) for n in (5, 11, 3)]

    def run(hooked):
        engine = Engine(q, tok, max_batch=3, ragged=ragged)
        engine.record_logits = True
        handle = q.wpe.register_forward_hook(lambda *a: None) if hooked else None  # a hook: the modules' path
        try:
            rids = [engine.add_request(p, max_new_tokens=6, sampling=GREEDY) for p in prompts[:2]]
            engine.step()
            rids.append(engine.add_request(prompts[2], max_new_tokens=6, sampling=GREEDY))
            reports = run_to_end(engine)
        finally:
            if handle is not None:
                handle.remove()
        return [engine.logits[r] for r in rids], [engine.finished[r].token_ids for r in rids], reports

    flat_logits, flat_ids, reports = run(False)
    ref_logits, ref_ids, _ = run(True)
    assert flat_ids == ref_ids
    for a, b in zip(flat_logits, ref_logits):
        assert torch.allclose(torch.stack(a), torch.stack(b), atol=1e-4, rtol=0)
    assert all(0 < r.weight_read_ms <= r.forward_ms and r.weight_bytes == q.weight_bytes() for r in reports)


def test_generate_json_carries_the_weights_kind(tiny_model_dir, capsys):
    from model.cli import generate_main
    argv = ["def f(x):", "--max-new-tokens", "4", "--model", str(tiny_model_dir), "--threads", "1", "--json"]
    runs = {}
    for kind in ("fp32", "fp16", "int8"):
        assert generate_main(argv + ["--weights", kind]) == 0
        runs[kind] = json.loads(capsys.readouterr().out)
        assert runs[kind]["model"]["weights"] == kind
        assert runs[kind]["model"]["weights_choice"] == {"asked": kind, "precision": kind, "source": "asked",
                                                         "fell_back": False}
    fp32, fp16, int8 = runs["fp32"], runs["fp16"], runs["int8"]
    assert [m["model"]["bytes_per_weight"] for m in (fp32, fp16, int8)] == [4, 2, 1]
    assert 0.5 * fp32["model"]["weight_bytes"] < fp16["model"]["weight_bytes"] <= 0.6 * fp32["model"]["weight_bytes"]
    assert int8["model"]["weight_bytes"] <= 0.4 * fp32["model"]["weight_bytes"]
    assert all(s["weight_bytes"] == fp16["model"]["weight_bytes"] for s in fp16["steps"])
    assert all(s["weight_bytes"] == int8["model"]["weight_bytes"] for s in int8["steps"])
    assert generate_main(argv + ["--weights", "int8", "--tp", "2"]) == 2  # workers hold fp32 shards: refused
    assert "--weights int8 runs on one process" in capsys.readouterr().err


def test_engine_service_starts_with_int8(tiny_model_dir, tmp_path):
    from model.errors import RequestError
    from model.service import EngineService
    events = []
    svc = EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "weights": "int8",
                         "draft_model_dir": str(tmp_path / "none")}, events.append)
    ready = svc.ready_event()
    assert ready["model"]["weights"] == "int8"
    assert ready["model"]["weight_bytes"] == svc.engine.model.weight_bytes() < svc.engine.model.num_parameters() * 2
    with pytest.raises(RequestError):
        svc.set_sharding("tp", 2)
    with pytest.raises(ValueError):
        EngineService({"model_dir": str(tiny_model_dir), "threads": 1, "weights": "int4"}, events.append)


def test_engine_service_chooses_the_default_or_the_asked_precision(tiny_model_dir, tmp_path):
    """No ``weights`` option: the machine's default (measured once, then read back); an asked one wins. ready's
    model says which, with its bytes and how it was chosen."""
    from model.service import EngineService
    events = []
    base = {"model_dir": str(tiny_model_dir), "threads": 1, "draft_model_dir": str(tmp_path / "none")}
    default = EngineService(base, events.append).ready_event()["model"]
    assert default["weights"] in ("fp32", "fp16") and default["weights_choice"]["asked"] is None
    assert default["weights_choice"]["source"] in ("measured", "cached")
    again = EngineService(base, events.append).ready_event()["model"]
    assert again["weights_choice"]["source"] == "cached" and again["weights"] == default["weights"]
    fp16 = EngineService({**base, "weights": "fp16"}, events.append)
    ready = fp16.ready_event()["model"]
    assert ready["weights"] == "fp16" and ready["weights_choice"]["source"] == "asked"
    assert ready["bytes_per_weight"] == 2 and ready["weight_bytes"] == fp16.engine.model.weight_bytes()
