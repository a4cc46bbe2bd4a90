"""The named stages of one trip, each bound to the function object that carries it out.

A step of the engine goes through a few of these, in order (``StepReport.stages``, e.g. ``["schedule", "pack",
"embedding", "attention:0", "kv_write:0", "mlp:0", ..., "lm_head", "sample"]``: a per-layer stage carries its
layer after a colon). The code view (gui/code_view) shows the source of the stage the trip on screen is in.

Every stage is bound to a *function object*, looked up when asked (``Stage.function``), never to a file name or a
line number: its file and line range come from ``inspect`` at run time, from the installed package, so they
follow a refactor that moves the function. ``anchor`` (and ``through``) name the stage's own lines inside the
function by a piece of their text; ``source_of`` finds them, and falls back to the ``def`` line when a refactor
removed the text (``tests/model/test_stages.py`` checks every anchor is found).

No Qt here (the import-linter contract in pyproject.toml): names, functions and line numbers only; the GUI
translates the titles (context ``"CodeView"``).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


@dataclass(frozen=True)
class Stage:
    """One named stage: ``title`` (English, the field's words), the function that does it (``target()`` returns
    it: an import at call time, so this module imports nothing heavy), and the text of its first (``anchor``) and
    last (``through``) lines inside that function (None: the whole function)."""

    name: str
    title: str
    target: Callable[[], Callable]
    anchor: str | None = None
    through: str | None = None

    def function(self) -> Callable:
        return inspect.unwrap(self.target())


def _mod(name: str):
    return importlib.import_module(name)


def _engine():
    return _mod("model.engine").Engine


def _gpt2():
    return _mod("model.gpt2")


def _parallel():
    return _mod("model.parallel")


def _kv():
    return _mod("model.kv_cache")


_STAGE_LIST = [
    Stage("tokenize", "Tokenize: text to token ids", lambda: _mod("model.tokenizer").Tokenizer.encode,
          "hf = self._hf", "return list(hf.encode("),
    Stage("prefix_lookup", "Prefix cache: find blocks already computed", lambda: _kv().BlockManager.match_prefix,
          "hits.append(block_id)", "parent = h"),
    Stage("schedule", "Schedule: pick this step's work", lambda: _mod("model.scheduler").Scheduler.schedule,
          "hits = self._admit()", "return Schedule(items, hits, preempted)"),
    Stage("pack", "Pack the batch: positions, mask, block table", lambda: _engine()._pack_pass,
          "uniform = cache is not None", "return input_ids, batch, logit_index, context, pick, batch.rows"),
    Stage("draft", "Draft model: guess k tokens", lambda: _engine()._speculative_step,
          "for j in range(max(ks_model)):", "q_rows[b].append(q)"),
    Stage("lookup_draft", "Prompt lookup: guess from the text so far", lambda: _mod("model.ngram").NgramIndex.propose),
    Stage("shard", "Sharded forward: send the batch to every worker", lambda: _parallel().ShardedRunner.forward,
          "payload = {", "msgs = self._collect("),
    Stage("embedding", "Embedding: token and position rows", lambda: _gpt2().GPT2.forward,
          "x = self.wte(input_ids) + self.wpe(positions)"),
    Stage("attention", "Attention: softmax(QKᵀ/√d)·V", lambda: _gpt2().CausalSelfAttention.forward,
          "if isinstance(batch, RaggedBatch)", "return self.c_proj(y)"),
    Stage("kv_write", "Write the KV cache", lambda: _kv().PagedKVCache.write),
    Stage("mlp", "MLP (feed-forward)", lambda: _gpt2().Block.forward, "return x + self.mlp(self.ln_2(x))"),
    Stage("embedding_fused", "Embedding: token and position rows (fused pass)", lambda: _gpt2().GPT2._forward_cached,
          "x = F.embedding(input_ids.reshape(N)"),
    Stage("attention_fused", "Attention (fused pass)", lambda: _gpt2().GPT2._forward_cached,
          "h = F.layer_norm(x, (C,), w1, b1, eps)", "y = y.transpose(1, 2).reshape(N, C)"),
    Stage("mlp_fused", "MLP (fused pass)", lambda: _gpt2().GPT2._mlp_fast),
    Stage("lm_head_fused", "LM head (fused pass)", lambda: _gpt2().GPT2._forward_cached,
          "x = F.layer_norm(x, (C,), self.ln_f.weight", "logits = x @ self._decode_head()"),
    Stage("all_reduce", "All-reduce: add every worker's share", lambda: _parallel()._TPAttention.forward,
          "y = F.linear(y, self.c_proj.weight)", "all_reduce(y)"),
    Stage("lm_head", "LM head: one score per token", lambda: _gpt2().GPT2.forward,
          "x = self.ln_f(x)", "return x @ self.lm_head_weight().t()"),
    Stage("sample", "Sample the next token", lambda: _engine()._plain_step,
          "last = logits[:, -1].float()", "top5 = top_k_probs(probs, 5)"),
    Stage("verify", "Verify the draft's guesses (greedy)", lambda: _mod("model.speculative").accept_greedy,
          "target = target_logits.argmax"),
    Stage("verify_sampled", "Verify the draft's guesses (sampled)",
          lambda: _mod("model.speculative").accept_sampled),
]
STAGES: dict[str, Stage] = {s.name: s for s in _STAGE_LIST}
PER_LAYER = ("attention", "kv_write", "mlp", "all_reduce", "attention_fused", "mlp_fused")  # reported once per layer, as "name:layer"


def parse(entry: str) -> tuple[str, int | None]:
    """``"attention:3"`` -> ("attention", 3); ``"sample"`` -> ("sample", None). Raises KeyError for a name that
    is not in ``STAGES``, ValueError for a layer that is not an int."""
    name, _, layer = str(entry).partition(":")
    if name not in STAGES:
        raise KeyError(f"unknown stage {name!r}")
    return name, (int(layer) if layer else None)


@dataclass(frozen=True)
class StageSource:
    """Where a stage's code is, read from the installed package now.

    path: absolute path of the source file; rel_path: the same from the package root ("model/gpt2.py");
    first_line, last_line: 1-based, inclusive, the function's lines (its decorators included);
    highlight: (first, last) 1-based inclusive, the stage's own lines (the whole function when no anchor);
    lines: every line of the file, without line ends (``lines[n - 1]`` is line n).
    """

    stage: str
    qualname: str
    path: str
    rel_path: str
    first_line: int
    last_line: int
    highlight: tuple[int, int]
    lines: list[str]


def _find(lines: list[str], first: int, last: int, text: str | None, start: int) -> int | None:
    if not text:
        return None
    for n in range(max(first, start), last + 1):
        if text in lines[n - 1]:
            return n
    return None


def source_of(name: str) -> StageSource:
    """The source location of stage ``name`` (``"attention"`` or ``"attention:3"``). Raises KeyError for an
    unknown stage, OSError when the source file cannot be read (a build without .py files)."""
    stage = STAGES[parse(name)[0]]
    fn = stage.function()
    path = Path(inspect.getsourcefile(fn) or "").resolve()
    body, first = inspect.getsourcelines(fn)
    last = first + len(body) - 1
    lines = path.read_text(encoding="utf-8").splitlines()
    a = _find(lines, first, last, stage.anchor, first)
    if a is None:
        lo, hi = first, last
    else:
        b = _find(lines, first, last, stage.through, a)
        lo, hi = a, (b if b is not None else a)
    root = Path(inspect.getsourcefile(__import__("model")) or path).resolve().parent.parent
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return StageSource(stage.name, getattr(fn, "__qualname__", stage.name), str(path), rel, first, last,
                       (lo, hi), lines)


def anchors_found(name: str) -> bool:
    """True when the stage's anchor (and ``through``) text is inside its function today."""
    stage = STAGES[name]
    fn = stage.function()
    body = "".join(inspect.getsourcelines(fn)[0])
    return all(t is None or t in body for t in (stage.anchor, stage.through))


def forward_stages(n_layer: int, kv_cache: bool, sharded: str = "", fused: bool = False) -> list[str]:
    """The stages of one forward pass, in the order the code runs them.

    Local model (``sharded`` ""): embedding, then per layer attention (with the KV write inside it when there is a
    cache: ``CausalSelfAttention.forward`` calls ``PagedKVCache.write`` after computing Q, K, V) and the MLP, then
    the LM head; ``fused``: the same arithmetic in ``GPT2._forward_cached`` (``GPT2.takes_fused_path``).
    ``sharded`` "tp": the engine sends the batch to the workers, whose every layer ends its attention and MLP
    with an all-reduce; "pp": the workers pass activations along (only "shard" is named).
    """
    if sharded:
        return ["shard"] + ([f"all_reduce:{i}" for i in range(n_layer)] if sharded == "tp" else [])
    sfx = "_fused" if fused else ""
    out = ["embedding" + sfx]
    for i in range(n_layer):
        out.append(f"attention{sfx}:{i}")
        if kv_cache:
            out.append(f"kv_write:{i}")
        out.append(f"mlp{sfx}:{i}")
    out.append("lm_head" + sfx)
    return out
