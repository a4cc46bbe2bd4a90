"""The stage registry (model/stages.py) and the stages each step reports, against what the code really ran.

Locations are checked against the source files read here on their own (``importlib.util.find_spec(...).origin``,
``open``), not through ``inspect``; the order of stages is checked against a line tracer (``sys.settrace``) that
records which stage's lines executed, in which layer (the functions' own ``layer`` / ``i`` argument).
"""

from __future__ import annotations

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
    """Records (stage, layer) the first time a line inside a stage's highlighted range runs, in order."""

    def __init__(self, names):
        self.ranges = {}
        for name in names:
            src = stages.source_of(name)
            code = stages.STAGES[name].function().__code__
            self.ranges.setdefault(code, []).append((name, *src.highlight))
        self.seen: list[str] = []
        self._last = None

    def __call__(self, frame, event, arg):
        if frame.f_code in self.ranges:
            return self._local
        return None

    def _local(self, frame, event, arg):
        if event == "line":
            for name, lo, hi in self.ranges[frame.f_code]:
                if lo <= frame.f_lineno <= hi:
                    layer = frame.f_locals.get("layer", frame.f_locals.get("i"))
                    key = f"{name}:{layer}" if name in stages.PER_LAYER else name
                    if key != self._last:
                        self._last = key
                        if key not in self.seen:
                            self.seen.append(key)
        return self._local


def _traced_step(engine, names):
    tracer = _Tracer(names)
    sys.settrace(tracer)
    try:
        report = engine.step()
    finally:
        sys.settrace(None)
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
