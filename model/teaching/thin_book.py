"""A thinner book, measured (issue 34, item 4; tour page 14): the same model with fp32 and with int8 weights
(``model.quantize.quantize_int8``), its decode trips timed side by side on this machine.

``thin_book(engine, prompt)`` copies the engine's model, makes the copy int8, and decodes the same prompt with each
(as the Live page samples), ``repeats`` rounds interleaved ABBA (``model.teaching.lessons.interleaved``) after a
warm-up; each round's figure is the median whole step (``wall_ms``) of its decode trips. Returns plain data:

    {"fp32": {"weight_bytes", "trip_ms": summary, "tokens_per_s": 1000 ÷ median trip ms},
     "int8": {... the same ...}, "bytes_ratio": int8 ÷ fp32 bytes, "speedup": fp32 ÷ int8 median trip,
     "steps": decode trips per run, "runs": rounds}

and "in_use": {"weights": the engine's own precision ("fp32" | "fp16" | "int8", model/weight_mm.py), "weight_bytes"}
(an engine that runs fp16 or int8 is compared through an fp32 book of the same values), or {"available": False,
"error": why} where int8 cannot run (not on the CPU, no kernel). Bytes are what each
model holds (``GPT2.weight_bytes``: int8 values + row scales + the float32 rest); times in ms.
"""

from __future__ import annotations

import copy
import statistics

from model.engine import Engine
from model.sampling import SamplingParams
from model.teaching.lessons import interleaved, summary

LIVE_SAMPLING = SamplingParams(temperature=0.8, top_p=0.95, seed=0)  # as the Live page samples


def _decode_ms(engine: Engine, ids: list[int], steps: int) -> float:
    """Median whole step (ms) of the decode trips of one answer of ``steps`` tokens."""
    e = Engine(engine.model, engine.tokenizer, max_batch=1)
    e.add_request(ids, max_new_tokens=steps + 1, sampling=LIVE_SAMPLING)
    ms = [r.wall_ms for r in e.run(max_steps=10_000) if r.phase == "decode"]
    return float(statistics.median(ms))


def thin_book(engine: Engine, prompt: str, steps: int = 16, repeats: int = 3) -> dict:
    """fp32 against int8 weights on ``engine``'s model (module doc). Raises nothing: a failure is data."""
    in_use = getattr(engine.model, "weights", "fp32")  # the precision the Live engine runs, and its bytes
    in_use_bytes = engine.model.weight_bytes()
    try:
        from model.quantize import quantize_int8, to_fp32
        if in_use != "fp32":  # the engine runs fp16 or int8 (model/weight_mm.py): an fp32 book of the same values
            engine = Engine(to_fp32(engine.model).to(engine.device), engine.tokenizer, max_batch=1)
        thin = quantize_int8(copy.deepcopy(engine.model))
    except Exception as exc:  # noqa: BLE001 - no int8 here (device, kernel): the page says so
        return {"available": False, "error": f"{type(exc).__name__}: {exc}"}
    thin_engine = Engine(thin, engine.tokenizer, max_batch=1)
    ids = engine.tokenizer.encode(prompt)[: engine.config.n_positions // 4] or [engine.tokenizer.eos_token_id or 0]
    a, b = interleaved(lambda: _decode_ms(engine, ids, steps), lambda: _decode_ms(thin_engine, ids, steps),
                       repeats=repeats)
    fat, lean = summary(a), summary(b)
    out = {}
    for name, model, s in (("fp32", engine.model, fat), ("int8", thin, lean)):
        out[name] = {"weight_bytes": model.weight_bytes(), "trip_ms": s, "tokens_per_s": 1000.0 / s["median"]}
    out.update({"available": True, "bytes_ratio": out["int8"]["weight_bytes"] / out["fp32"]["weight_bytes"],
                "speedup": fat["median"] / lean["median"], "steps": steps, "runs": repeats,
                "in_use": {"weights": in_use, "weight_bytes": in_use_bytes}})
    return out
