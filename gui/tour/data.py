"""The tour's live data, gathered in the GUI process without torch.

* tokens: the bundled model's tokenizer (``model/tokenizer.py``: Hugging Face ``tokenizers``, no torch);
* embedding rows and per-layer bytes: the weight file read with ``safetensors.numpy`` (no torch);
* big-model figures: ``model/teaching/costs.py`` (pure Python formulas with their sources);
* everything that needs a forward pass: the engine process's ``analyze`` answer (``model/teaching/analysis.py``), stored
  in ``TourData.analysis`` by kind; None until it arrives, and the scenes then show illustrative numbers.

``TourData.context()`` returns the plain dict every scene's ``build`` reads.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import assets

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent.parent
BUNDLED_MODEL = assets.path("models", "target-big")  # importlib.resources, not beside the code
ZH_SAMPLE = "什么是批处理？"  # page 2 cuts this when the question has no Chinese: 什, 批 and ？ split on GPT-2's BPE
# The tour's question when the model is none of the bundled ones (a user's own --model DIR), by language.
DEFAULT_PROMPTS = {"en": "Explain the KV cache in one sentence.", "zh": "用一句话解释 KV 缓存。"}
# What the tour asks each bundled model (model/catalog.py's keys): an opening the model continues with words, so
# that page 6's candidates are words, not whitespace: prose for the code model (after "def f(n):" it can only
# go on with a line break and spaces), a poem's first line for the poems model (the next token is a character).
# Measured on the bundled models (top 8 next tokens): after "This method is called when" the code model offers
# the, a, an, it, called, you, calling, ever; after "床前明月光，" the poems model offers eight characters.
TOUR_PROMPTS = {"code": "This method is called when", "poems": "床前明月光，"}
# Live presets the tour takes as they are (6 of their 8 candidates are words); any other preset of a bundled
# model is replaced by TOUR_PROMPTS. The poems model's presets are all first lines: every one is taken.
TOUR_FRIENDLY = {"code": ("This method is called when", "This module provides", "To open a file, use")}


def default_prompt(model_dir: str | Path | None, lang: str) -> str:
    """The tour's question for the model in ``model_dir`` (None: the bundled code model): ``TOUR_PROMPTS`` of a
    bundled model, else ``DEFAULT_PROMPTS`` of ``lang`` ("en"/"zh"; anything else reads as "en")."""
    from model.catalog import identify  # standard library only: no torch
    bundled = identify(model_dir if model_dir else BUNDLED_MODEL)
    if bundled is not None and bundled.family in TOUR_PROMPTS:
        return TOUR_PROMPTS[bundled.family]
    return DEFAULT_PROMPTS.get(lang, DEFAULT_PROMPTS["en"])


def tour_prompt_for(offered: str, model_dir: str | Path | None, lang: str) -> str:
    """The question the tour asks when the Live page offers ``offered``: a visitor's own text as it is; a Live
    preset of the bundled model in ``model_dir`` that it does not continue with words (``"def fibonacci(n):"``
    goes on with a line break) is replaced by ``default_prompt``; empty text too."""
    from model.catalog import identify
    text = (offered or "").strip()
    bundled = identify(model_dir if model_dir else BUNDLED_MODEL)
    if not text:
        return default_prompt(model_dir, lang)
    if bundled is not None and text in (p.strip() for p in bundled.presets):
        friendly = TOUR_FRIENDLY.get(bundled.family)
        if friendly is not None and text not in friendly:
            return default_prompt(model_dir, lang)
    return text


def shown_labels(value):
    """``value`` (an ``analyze`` answer: dicts, lists, strings, numbers) with every string set for the screen by
    ``animations.token_text.shown_token`` (``<|endoftext|>`` → "⟨end of text⟩"); containers are copied, lists of
    numbers are shared as they are."""
    from animations.token_text import shown_token
    if isinstance(value, str):
        return shown_token(value)
    if isinstance(value, dict):
        return {k: shown_labels(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], (int, float)) or (value and isinstance(value[0], (list, tuple)) and
                                                              value[0] and isinstance(value[0][0], (int, float))):
            return value
        return [shown_labels(v) for v in value]
    return value


def _piece_kind(raw: bytes) -> str | None:
    """"whole" if the token's bytes decode to text with a non-ASCII character, "split" if they are not valid
    UTF-8 on their own (part of a character), None for plain ASCII."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "split"
    return "whole" if any(ord(c) > 127 for c in text) else None


def group_pieces(tokens: list[dict], raw: list[bytes]) -> None:
    """Mark runs of tokens whose bytes only together make whole characters (UTF-8 split over tokens): each token
    of a run gets ``"group"`` (the run's index) and the run's last token ``"group_text"`` (the characters the run
    decodes to). A run that never becomes valid UTF-8 (cut off at the end) gets no ``group_text``."""
    buf, start, gid = b"", None, 0
    for k, (_tok, b) in enumerate(zip(tokens, raw)):
        if start is None:
            try:
                b.decode("utf-8")
                continue
            except UnicodeDecodeError:
                buf, start = b, k
        else:
            buf += b
        try:
            text = buf.decode("utf-8")
        except UnicodeDecodeError:
            continue
        for j in range(start, k + 1):
            tokens[j]["group"] = gid
        tokens[k]["group_text"] = text.strip()
        gid, buf, start = gid + 1, b"", None


class TourData:
    """Live facts about the bundled (or given) model for the tour's scenes.

    Args:
        model_dir: a GPT-2 directory in Hugging Face layout; None for the bundled model.
    Loading never raises: a missing or broken model leaves the fields empty and the scenes illustrative.
    """

    def __init__(self, model_dir: str | Path | None = None):
        self.model_dir = Path(model_dir) if model_dir else BUNDLED_MODEL
        self.tokenizer = None
        self.config: dict = {}
        self._weights: dict | None = None
        self.analysis: dict | None = None  # kind -> data, from the engine
        self.engine_info: dict | None = None  # the engine's "ready" event
        self.error: str | None = None
        try:
            from model.tokenizer import Tokenizer
            self.tokenizer = Tokenizer.from_dir(self.model_dir)
            self.config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        except Exception as exc:  # noqa: BLE001 - the tour still runs, illustrative
            self.error = f"{type(exc).__name__}: {exc}"
            log.warning("tour: model not loaded (%s)", self.error)

    # ---- weights (numpy) --------------------------------------------------------------------------------
    @property
    def weights(self) -> dict:
        """name -> numpy array of the weight file (loaded once; {} if it cannot be read)."""
        if self._weights is None:
            try:
                from safetensors.numpy import load_file
                raw = load_file(str(self.model_dir / "model.safetensors"))
                self._weights = {re.sub(r"^(transformer\.)", "", k): v for k, v in raw.items()}
            except Exception as exc:  # noqa: BLE001
                log.warning("tour: cannot read weights (%s)", exc)
                self._weights = {}
        return self._weights

    def layer_bytes(self) -> list[int]:
        """Bytes of each transformer layer's tensors in the weight file (``h.{i}.*``), in layer order."""
        out: dict[int, int] = {}
        for k, v in self.weights.items():
            m = re.match(r"h\.(\d+)\.", k)
            if m:
                out[int(m.group(1))] = out.get(int(m.group(1)), 0) + int(v.nbytes)
        return [out[i] for i in sorted(out)]

    def embed_bytes(self) -> int:
        """Bytes of the token and position embeddings (``wte``, ``wpe``)."""
        return sum(int(v.nbytes) for k, v in self.weights.items() if k.split(".")[0] in ("wte", "wpe"))

    def total_bytes(self) -> int:
        return sum(int(v.nbytes) for v in self.weights.values())

    # ---- tokens ----------------------------------------------------------------------------------------
    def tokens(self, text: str) -> list[dict]:
        """``[{"id", "label", "piece"}]`` of ``text`` by the live tokenizer ([] without one)."""
        if self.tokenizer is None:
            return []
        ids = self.tokenizer.encode(text)
        from animations.token_text import shown_token
        out = [{"id": i, "label": shown_token(self.tokenizer.label(i)),
                "piece": _piece_kind(self.tokenizer.token_bytes(i))} for i in ids]
        group_pieces(out, [self.tokenizer.token_bytes(i) for i in ids])
        return out

    def embed_rows(self, ids: list[int]):
        """The rows of ``wte`` for ``ids`` (numpy float32, tokens × d_model) or None."""
        wte = self.weights.get("wte.weight")
        if wte is None or not ids:
            return None
        return wte[[i for i in ids if 0 <= i < wte.shape[0]]]

    # ---- the dict for the scenes -----------------------------------------------------------------------
    def context(self, prompt: str, lang: str, **extra) -> dict:
        """Everything a scene reads. ``extra`` adds section state (layer/head, sampling sliders, game)."""
        from model.teaching.costs import PRESETS, preset_from_config, weight_bytes

        toks = self.tokens(prompt)
        cfg = {k: self.config.get(k) for k in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size")}
        cfg["name"] = self.model_dir.name
        live_preset = None
        if self.config:
            try:
                live_preset = preset_from_config(self.config, "this model")
            except ValueError:
                live_preset = None
        ctx = {
            "lang": lang, "prompt": prompt, "tokens": toks,
            "hello_ids": self.tokenizer.encode("Hello world") if self.tokenizer else [],
            "vocab_size": self.tokenizer.vocab_size if self.tokenizer else None,
            "config": cfg, "embed": self.embed_rows([t["id"] for t in toks[:24]]),
            "layer_bytes": self.layer_bytes(), "embed_bytes": self.embed_bytes(), "total_bytes": self.total_bytes(),
            "llama_bytes": weight_bytes(PRESETS["llama-3-8b"].params, "fp16"),
            "analysis": shown_labels(self.analysis), "engine": self.engine_info,
        }
        ctx.update(self._costs(live_preset))
        from animations.scenes.closing import CLOSING_LINE
        from animations.scenes.look import T
        ctx["closing_tokens"] = self.tokens(T(CLOSING_LINE))
        ctx["zh_sample_tokens"] = self.tokens(ZH_SAMPLE)
        ctx.update(extra)
        return ctx

    def _costs(self, live) -> dict:
        """Figures for §9 and §14 from ``model/teaching/costs.py`` (formulas with sources), and the live model's KV
        bytes."""
        from model.teaching.costs import GPUS, PRESETS, kv_cache_bytes, preset_kv_bytes, weight_bytes

        def formula(p, n: int, dtype: str, bpv: float) -> str:
            if p.mla_dim is not None:
                return f"{p.layers} × {p.mla_dim} × {n:,} × {bpv:g} B"
            return f"2 × {p.layers} × {p.kv_heads} × {p.head_dim} × {n:,} × {bpv:g} B"

        names = [("llama-3-8b", "Llama 3 8B"), ("llama-3-8b-mha", "Llama 3 8B without grouping"),
                 ("deepseek-v3", "DeepSeek-V3 (MLA)"), ("gpt2", "GPT-2 small")]
        table = {}
        for n in (2000, 100_000):
            rows = [{"name": label, "formula": formula(PRESETS[key], n, "fp16", 2),
                     "bytes": preset_kv_bytes(PRESETS[key], n, 1, "fp16"), "kind": "formula"} for key, label in names]
            if live is not None:
                rows.append({"name": "this model", "formula": formula(live, n, "fp32", 4),
                             "bytes": kv_cache_bytes(live.layers, live.kv_heads, live.head_dim, n, 1, "fp32"),
                             "kind": "formula"})
            table[n] = rows
        out = {"kv_table": table}
        if live is not None:
            engine_per_token = None
            info = self.engine_info or {}
            if info.get("kv_bytes_per_block") and info.get("block_size"):
                engine_per_token = info["kv_bytes_per_block"] / info["block_size"]
            out["live_kv"] = {"formula_per_token": kv_cache_bytes(live.layers, live.kv_heads, live.head_dim, 1, 1,
                                                                  "fp32"), "engine_per_token": engine_per_token}
        p8, p70 = PRESETS["llama-3-8b"].params, PRESETS["llama-3-70b"].params
        out["weights_table"] = [
            {"name": "Llama 3 8B · FP16", "bytes": weight_bytes(p8, "fp16")},
            {"name": "Llama 3 70B · FP16", "bytes": weight_bytes(p70, "fp16")},
            {"name": "Llama 3 70B · FP8", "bytes": weight_bytes(p70, "fp8")},
            {"name": "Llama 3 70B · 4-bit", "bytes": weight_bytes(p70, "int4")},
        ]
        out["gpu_table"] = [{"name": g.upper(), "nominal": GPUS[g].memory_nominal_gb, "bytes": GPUS[g].memory_bytes}
                            for g in ("h100", "h200", "b200")]
        ds = PRESETS["deepseek-v3"]
        out["deepseek"] = {"params": ds.params, "active": ds.active_params}
        return out
