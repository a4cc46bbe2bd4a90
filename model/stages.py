"""The named stages of one trip, each bound to the function object that carries it out.

A step of the engine goes through a few of these, in order (``StepReport.stages``, e.g. ``["schedule", "pack",
"embedding", "attention:0", "kv_write:0", "mlp:0", ..., "lm_head", "sample"]``: a per-layer stage carries its
layer after a colon). The code view (gui/code_view) shows the source of the stage the trip on screen is in.

Every stage is bound to a *function* ("module:Qualname", ``Stage.function`` returns the object), never to a file
name or a line number: its file and line range are read at run time from the installed package, so they follow
a refactor that moves lines (a moved function fails ``tests/model/test_stages.py`` until its ``where`` is
re-pointed). ``anchor`` (and ``through``) name the stage's own lines inside the
function by a piece of their text; ``source_of`` finds them, and falls back to the ``def`` line when a refactor
removed the text (``tests/model/test_stages.py`` checks every anchor is found).

No Qt here (the import-linter contract in pyproject.toml): names, functions and line numbers only; the GUI
translates the titles (context ``"CodeView"``).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stage:
    """One named stage: ``title`` (English, the field's words), ``where`` ("module:Qualname" of the function that
    does it; ``function()`` imports the module and returns the function object), and the text of its first
    (``anchor``) and last (``through``) lines inside that function (None: the whole function)."""

    name: str
    title: str
    where: str
    anchor: str | None = None
    through: str | None = None

    @property
    def module(self) -> str:
        return self.where.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.where.partition(":")[2]

    def function(self) -> Callable:
        """The function object (imports its module: torch, for most of them). Raises ImportError or
        AttributeError when a refactor moved it (the test of every stage says so first)."""
        obj = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            obj = getattr(obj, part)
        return inspect.unwrap(obj)


_STAGE_LIST = [
    Stage('tokenize', 'Tokenize: text to token ids', 'model.tokenizer:Tokenizer.encode',
          'hf = self._hf', 'return list(hf.encode('),
    Stage('prefix_lookup', 'Prefix cache: find blocks already computed', 'model.kv_cache:BlockManager.match_prefix',
          'hits.append(block_id)', 'parent = h'),
    Stage('schedule', "Schedule: pick this step's work", 'model.scheduler:Scheduler.schedule',
          'hits = self._admit()', 'return Schedule(items, hits, preempted)'),
    Stage('pack', 'Pack the batch: positions, mask, block table', 'model.runner:ModelRunner.pack',
          'uniform = cache is not None', 'return input_ids, batch, logit_index, context, pick, batch.rows'),
    Stage('draft', 'Draft model: guess k tokens', 'model.speculative:Speculator._draft',
          'for j in range(max(ks)):', 'g.q[b].append(q)'),
    Stage('lookup_draft', 'Prompt lookup: guess from the text so far', 'model.ngram:NgramIndex.propose'),
    Stage('shard', 'Sharded forward: send the batch to every worker', 'model.parallel.runner:ShardedRunner.forward',
          'payload = {', 'msgs = self._collect('),
    Stage('embedding', 'Embedding: token and position rows', 'model.gpt2:GPT2.embed',
          'x = self.wte(input_ids) + self.wpe(positions)'),
    Stage('attention', 'Attention: softmax(QKᵀ/√d)·V', 'model.gpt2:CausalSelfAttention.forward',
          'qkv = self.c_attn(x)', 'return self.c_proj(y)'),
    Stage('kv_write', 'Write the KV cache', 'model.kv_cache:PagedKVCache.write'),
    Stage('mlp', 'MLP (feed-forward)', 'model.gpt2:Block.forward', 'return x + self.mlp(self.ln_2(x))'),
    Stage('embedding_fused', 'Embedding: token and position rows (fused pass)', 'model.flat_forward:FlatForward.embed',
          'rt.begin()', 'rt.end()'),
    Stage('attention_fused', 'Attention (fused pass)', 'model.flat_forward:FlatAttention.forward',
          'qkv = self.c_attn(x, rt)', 'return self.c_proj(y, rt)'),
    Stage('mlp_fused', 'MLP (fused pass)', 'model.flat_forward:FlatBlock.forward',
          'return x + self.mlp(self.ln_2(x), rt)'),
    Stage('lm_head_fused', 'LM head (fused pass)', 'model.flat_forward:FlatForward.logits',
          'if rows is not None:', 'rt.end()'),
    Stage('all_reduce', "All-reduce: add every worker's share", 'model.parallel.shard:_TPAttention.forward',
          'y = weight_product(self.c_proj, y)', 'all_reduce(y)'),
    Stage('lm_head', 'LM head: one score per token', 'model.gpt2:GPT2.logits',
          'if x.dim() == 2:', 'rt.end()'),
    Stage('sample', 'Sample the next token', 'model.engine:Engine._sample',
          'last = logits[:, -1].float()', 'token, top5 = dist.draw(seq.generator), dist.top(5)'),
    Stage('verify', "Verify the draft's guesses (greedy)", 'model.speculative:accept_greedy',
          'target = target_logits.argmax'),
    Stage('verify_sampled', "Verify the draft's guesses (sampled)", 'model.speculative:accept_sampled'),
]
STAGES: dict[str, Stage] = {s.name: s for s in _STAGE_LIST}
# reported once per layer, as "name:layer"
PER_LAYER = ("attention", "kv_write", "mlp", "all_reduce", "attention_fused", "mlp_fused")


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


def module_file(module: str) -> Path:
    """The installed source file of ``module``, found without importing it (``importlib.util.find_spec``: the
    GUI process never imports torch). Raises OSError when the package has no source for it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise OSError(f"no source file for {module}")
    return Path(spec.origin).resolve()


def _def_lines(tree: ast.Module, qualname: str) -> tuple[int, int]:
    """1-based (first, last) lines of the def named by ``qualname`` (decorators included, as inspect has it)."""
    body, node = tree.body, None
    for part in qualname.split("."):
        node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == part), None)
        if node is None:
            raise LookupError(f"{qualname} is not defined there")
        body = node.body
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return first, node.end_lineno


def source_of(name: str) -> StageSource:
    """The source location of stage ``name`` (``"attention"`` or ``"attention:3"``), read from the installed
    package now: its module's file (``module_file``) parsed with ``ast`` for the function's lines, so no module
    is imported (``tests/model/test_stages.py`` checks the lines equal ``inspect``'s for the function object).
    Raises KeyError for an unknown stage, OSError when the source cannot be read, LookupError when a refactor
    moved the function."""
    stage = STAGES[parse(name)[0]]
    path = module_file(stage.module)
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    first, last = _def_lines(ast.parse(text), stage.qualname)
    a = _find(lines, first, last, stage.anchor, first)
    if a is None:
        lo, hi = first, last
    else:
        b = _find(lines, first, last, stage.through, a)
        lo, hi = a, (b if b is not None else a)
    root = module_file("model").parent.parent
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    return StageSource(stage.name, stage.qualname, str(path), rel, first, last, (lo, hi), lines)


def anchors_found(name: str) -> bool:
    """True when the stage's anchor (and ``through``) text is inside its function today."""
    src = source_of(name)
    stage = STAGES[src.stage]
    body = "\n".join(src.lines[src.first_line - 1:src.last_line])
    return all(t is None or t in body for t in (stage.anchor, stage.through))


def forward_stages(n_layer: int, kv_cache: bool, sharded: str = "", fused: bool = False) -> list[str]:
    """The stages of one forward pass, in the order the code runs them.

    Local model (``sharded`` ""): embedding, then per layer attention (with the KV write inside it when there is a
    cache: ``attend`` in model/attention.py calls ``PagedKVCache.write`` after computing Q, K, V) and the MLP, then
    the LM head (``GPT2.embed``, the blocks and ``GPT2.logits``, through model/decoder.py); ``fused``: the same
    arithmetic in ``FlatForward`` (model/flat_forward.py, ``GPT2.takes_fused_path``), whose ``decode_one`` (the
    draft model's lone guesses) goes through the same stages.
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
