"""The stage registry (model/stages.py) and the stages each step reports, against what the code really ran.

Locations are checked against the source files read here on their own (``importlib.util.find_spec(...).origin``,
``open``), not through ``inspect``; the order of stages is checked against a line tracer (``sys.settrace``) that
records which stage's lines executed, in which layer (the functions' own ``layer`` / ``i`` argument). Lines that run
inside the draft model's passes (called from the draft loop of ``Speculator._draft`` or from ``Speculator.prefill``) are
recorded apart: they must be the stages of a forward pass too.
"""

from __future__ import annotations

import copy
import importlib.util
import inspect
import sys

import pytest

from model import stages
from model.sampling import SamplingParams
from tests.model.conftest import prompt_ids


def _file_of(fn) -> str:
    return importlib.util.find_spec(fn.__module__).origin


@pytest.mark.parametrize("name", sorted(stages.STAGES))
def test_every_stage_points_at_its_own_lines_in_the_installed_source(name):
    src = stages.source_of(name)
    fn = stages.STAGES[name].function()
    path = _file_of(fn)
    with open(path, encoding="utf-8") as f:
        on_disk = f.read().splitlines()
    assert src.path.endswith(path.replace("\\", "/").split("/")[-1]) and src.lines == on_disk
    header = on_disk[src.first_line - 1]
    assert f"def {fn.__name__}(" in header, header  # the range starts at the function's own def
    lo, hi = src.highlight
    assert src.first_line <= lo <= hi <= src.last_line
    assert stages.anchors_found(name), f"{name}: its anchor text is no longer in {fn.__qualname__}"
    stage = stages.STAGES[name]
    if stage.anchor:
        assert stage.anchor in on_disk[lo - 1]
    if stage.through:
        assert stage.through in on_disk[hi - 1]
    assert src.rel_path.startswith("model/") and src.rel_path.endswith(".py")
    body, start = inspect.getsourcelines(fn)  # the function object's own lines agree with the ast lookup
    assert (src.first_line, src.last_line) == (start, start + len(body) - 1)
    assert src.path == str(__import__("pathlib").Path(inspect.getsourcefile(fn)).resolve())


def test_parse_names_and_layers():
    assert stages.parse("attention:3") == ("attention", 3)
    assert stages.parse("sample") == ("sample", None)
    with pytest.raises(KeyError):
        stages.parse("teleport")


class _Tracer:
    """Records (stage, layer) the first time a line inside a stage's highlighted range runs, in order: in ``seen``,
    or in ``draft_seen`` when it runs inside one of the draft model's passes. The draft's prefill beside the
    target's (``Speculator.prefill``) is what a prefill step reports as "draft": its first stage line counts as that."""

    def __init__(self, names):
        from model import speculative

        self.ranges = {}
        for name in names:
            src = stages.source_of(name)
            code = stages.STAGES[name].function().__code__
            self.ranges.setdefault(code, []).append((name, *src.highlight))
        self.seen: list[str] = []
        self.draft_seen: list[str] = []
        self._last = {id(self.seen): None, id(self.draft_seen): None}
        self._draft_loop = (speculative.Speculator._draft.__code__, *stages.source_of("draft").highlight)
        self._draft_prefill = speculative.Speculator.prefill.__code__

    def _draft_caller(self, frame) -> str | None:
        """"prefill" or "loop" when ``frame`` was called (at any depth) from the draft's prefill or from the draft
        loop of a verify step; else None."""
        code, lo, hi = self._draft_loop
        f = frame.f_back
        while f is not None:
            if f.f_code is self._draft_prefill:
                return "prefill"
            if f.f_code is code and lo <= f.f_lineno <= hi:
                return "loop"
            f = f.f_back
        return None

    def __call__(self, frame, event, arg):
        if frame.f_code not in self.ranges:
            return None
        caller = self._draft_caller(frame)
        out = self.seen if caller is None else self.draft_seen

        def local(frame, event, arg):
            if event == "line":
                if caller == "prefill":
                    self._record(self.seen, "draft")
                self._line(frame, out)
            return local
        return local

    def _line(self, frame, out: list[str]) -> None:
        for name, lo, hi in self.ranges[frame.f_code]:
            if lo <= frame.f_lineno <= hi:
                layer = frame.f_locals.get("layer", frame.f_locals.get("i"))
                self._record(out, f"{name}:{layer}" if name in stages.PER_LAYER else name)

    def _record(self, out: list[str], key: str) -> None:
        if key != self._last[id(out)]:
            self._last[id(out)] = key
            if key not in out:
                out.append(key)


def _traced_step(engine, names, draft: list[str] | None = None):
    """engine.step() under the tracer: (its report, the stages seen). draft: if a list, the stages seen inside the
    draft model's passes are put in it (else there must be none)."""
    tracer = _Tracer(names)
    sys.settrace(tracer)
    try:
        report = engine.step()
    finally:
        sys.settrace(None)
    if draft is None:
        assert tracer.draft_seen == []
    else:
        draft.extend(tracer.draft_seen)
    return report, tracer.seen


LOCAL = ["schedule", "prefix_lookup", "pack", "embedding", "attention", "kv_write", "mlp", "lm_head", "sample",
         "embedding_fused", "attention_fused", "mlp_fused", "lm_head_fused", "lookup_draft", "verify"]


def _unique(seq):
    out = []
    for s in seq:
        if s not in out:
            out.append(s)
    return out


@pytest.mark.parametrize("layer_timing", [True, False], ids=["layers-timed", "untimed"])
def test_reported_stages_are_the_lines_that_ran(make_engine, tiny, layer_timing):
    model, tokenizer = tiny
    engine = make_engine(layer_timing=layer_timing)
    model.prepare_for_decode()
    shared = prompt_ids(40, 1, tokenizer.vocab_size)
    engine.add_request(shared + [5, 6], max_new_tokens=3, sampling=SamplingParams(temperature=0.0))
    seen_any_prefix = False
    for _ in range(6):  # the first request's prefill and decodes, then one sharing its prefix
        if not engine.has_work():
            engine.add_request(shared + [7, 8, 9], max_new_tokens=2, sampling=SamplingParams(temperature=0.0))
        report, seen = _traced_step(engine, LOCAL)
        assert report.stages == _unique(report.stages)
        assert report.stages == seen, (report.phase, report.stages, seen)
        seen_any_prefix |= "prefix_lookup" in report.stages
        n = model.config.n_layer
        assert sum(s.startswith("mlp") for s in report.stages) == n
    assert seen_any_prefix  # the second request found the first one's blocks


def test_prompt_lookup_steps_report_the_lookup_and_the_verify(make_engine, tiny):
    _, tokenizer = tiny
    engine = make_engine()
    engine.set_draft_kind("ngram")
    engine.set_draft_k(3)
    engine.add_request([3, 4, 5, 6] * 8, max_new_tokens=8, sampling=SamplingParams(temperature=0.0))
    phases = set()
    for _ in range(5):
        if not engine.has_work():
            break
        report, seen = _traced_step(engine, LOCAL)
        phases.add(report.phase)
        assert report.stages == seen, (report.phase, report.stages, seen)
    assert "prefill" in phases and len(phases) > 1


@pytest.mark.parametrize("n_requests", [1, 2], ids=["lone", "batched"])
@pytest.mark.parametrize("temperature", [0.0, 1.0], ids=["greedy", "sampled"])
def test_draft_model_passes_and_verify_are_the_lines_that_ran(make_engine, tiny, n_requests, temperature):
    """Speculative decoding with a draft model: each step's reported stages are the lines that ran (the draft loop,
    the target's pass, verify or verify_sampled), and every draft pass (the draft's prefill, packed guesses, a lone
    sequence's ``decode_one``) runs the stages of a fused forward of the draft, layer by layer."""
    model, tokenizer = tiny
    model.prepare_for_decode()
    engine = make_engine()
    engine.set_draft(copy.deepcopy(model), tokenizer)
    engine.set_draft_k(3)
    for r in range(n_requests):
        engine.add_request(prompt_ids(12 + r, 3 + r, tokenizer.vocab_size), max_new_tokens=9,
                           sampling=SamplingParams(temperature=temperature, seed=r))
    passes = stages.forward_stages(engine.draft.config.n_layer, True, fused=True)
    phases = set()
    for _ in range(8):
        if not engine.has_work():
            break
        draft: list[str] = []
        report, seen = _traced_step(engine, LOCAL + ["draft", "verify_sampled"], draft)
        phases.add(report.phase)
        assert report.stages == seen, (report.phase, report.stages, seen)
        if "draft" in report.stages:
            assert [s for s in draft if s != "pack"] == passes, (report.phase, draft)
        else:
            assert draft == []
    assert {"prefill", "verify"} <= phases


def test_generate_json_lists_each_steps_stages(tiny_model_dir):
    import json
    import subprocess

    out = subprocess.run([sys.executable, "main.py", "generate", "--model", str(tiny_model_dir), "--json",
                          "--max-new-tokens", "2", "--greedy", "hello"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    steps = json.loads(out.stdout)["steps"]
    assert steps and all(s["stages"][0] == "schedule" for s in steps)
    assert steps[0]["phase"] == "prefill" and steps[0]["stages"][-1] == "sample"
    assert "wall_ms" in steps[0] and "phase" in steps[0]  # the old fields stay
