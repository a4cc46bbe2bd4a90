"""The stages' names on screen, translated (context "CodeView"); the code itself is never translated."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def _tr(text: str) -> str:
    return QCoreApplication.translate("CodeView", text)


def title(name: str) -> str:
    """The on-screen name of stage ``name`` (a key of ``model.stages.STAGES``); the name itself if unknown."""
    titles = {
        "tokenize": _tr("Tokenize: text to token ids"),
        "prefix_lookup": _tr("Prefix cache: find blocks already computed"),
        "schedule": _tr("Schedule: pick this step's work"),
        "pack": _tr("Pack the batch: positions, mask, block table"),
        "draft": _tr("Draft model: guess k tokens"),
        "lookup_draft": _tr("Prompt lookup: guess from the text so far"),
        "shard": _tr("Sharded forward: send the batch to every worker"),
        "embedding": _tr("Embedding: token and position rows"),
        "attention": _tr("Attention: softmax(QKᵀ/√d)·V"),
        "kv_write": _tr("Write the KV cache"),
        "mlp": _tr("MLP (feed-forward)"),
        "embedding_fused": _tr("Embedding (fused pass)"),
        "attention_fused": _tr("Attention (fused pass)"),
        "mlp_fused": _tr("MLP (fused pass)"),
        "lm_head_fused": _tr("LM head (fused pass)"),
        "all_reduce": _tr("All-reduce: add every worker's share"),
        "lm_head": _tr("LM head: one score per token"),
        "sample": _tr("Sample the next token"),
        "verify": _tr("Verify the draft's guesses (greedy)"),
        "verify_sampled": _tr("Verify the draft's guesses (sampled)"),
    }
    return titles.get(name, name)


def heading(entry: str, stage: str, layer: int | None) -> str:
    """The panel's heading: the stage's name, with its layer when it has one ("Layer 2 · Attention ...")."""
    if layer is None:
        return title(stage)
    return _tr("Layer {n} · {stage}").format(n=layer, stage=title(stage))


def where(path: str, first: int, last: int, qualname: str) -> str:
    """The line under the heading: file, lines shown, function (code names stay as they are)."""
    return _tr("{path}, lines {first}–{last} · {function}").format(path=path, first=first, last=last,
                                                                   function=qualname)


def toggle_text() -> str:
    return _tr("Code")

