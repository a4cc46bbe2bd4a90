"""GPT-2 in one file, in reading order: config, attention, MLP, block, model.

Parameter names mirror the Hugging Face GPT-2 checkpoint keys (``wte``, ``wpe``, ``h.{i}.ln_1``,
``h.{i}.attn.c_attn``, ``h.{i}.attn.c_proj``, ``h.{i}.ln_2``, ``h.{i}.mlp.c_fc``, ``h.{i}.mlp.c_proj``,
``ln_f``) so that loading is a plain key loop (see ``model/checkpoint.py``). The one quirk of those files,
``Conv1D`` weights stored as ``[in, out]``, is handled at load time; here every projection is an ordinary
``nn.Linear`` with weight ``[out, in]``.

Dimensions used in shape comments:
    B  batch (sequences in one forward pass)      T  new tokens per sequence in this pass
    L  keys visible to a query (context length)   C  n_embd
    nh n_head                                     hs head size, C // nh
    V  vocab_size

Reference: Radford et al. 2019, "Language Models are Unsupervised Multitask Learners" (GPT-2), and the
Hugging Face ``transformers`` implementation it is checked against in ``tests/model/test_parity.py``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.ragged import RaggedBatch, attend

if TYPE_CHECKING:  # pragma: no cover
    from model.kv_cache import PagedKVCache


# ---- config.json, field by field ----------------------------------------------------------------------------
# Every field of transformers' GPT2Config (plus the PretrainedConfig / GenerationConfig keys a GPT-2 directory
# carries) is either honoured (a GPT2Config field below), irrelevant to what the engine computes (listed with
# the reason), or refused unless it has its neutral value (the directory is refused with a message naming it).
# Checked against transformers.GPT2LMHeadModel in tests/model/test_config_fields.py.
ACTIVATIONS = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu", "quick_gelu", "relu", "silu", "swish", "tanh")
IRRELEVANT_FIELDS = {
    **dict.fromkeys(("resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_first_dropout"),
                    "dropout: training only, the engine never drops"),
    "initializer_range": "initialisation: training only",
    **dict.fromkeys(("summary_type", "summary_use_proj", "summary_activation", "summary_proj_to_labels"),
                    "GPT2DoubleHeadsModel's classification head, not the language model"),
    **dict.fromkeys(("use_cache", "output_attentions", "output_hidden_states", "return_dict", "torchscript"),
                    "what a forward call returns, not what it computes"),
    **dict.fromkeys(("model_type", "architectures", "transformers_version", "_name_or_path", "task_specific_params",
                     "id2label", "label2id", "num_labels", "problem_type", "finetuning_task", "tokenizer_class",
                     "prefix", "_commit_hash", "n_ctx"), "bookkeeping (model_type is checked; n_ctx read if no n_positions)"),
    **dict.fromkeys(("torch_dtype", "dtype"), "storage dtype: weights are converted to the engine's dtype (fp32)"),
    "pad_token_id": "padding is masked, a pad id is never fed",
    "sep_token_id": "not used by a decoder-only LM",
    "decoder_start_token_id": "encoder-decoder models only (is_encoder_decoder is refused)",
    "reorder_and_upcast_attn": "numerics only: scores are upcast to fp32, which the engine's fp32 already is",
    # decoding strategy: the app's own controls choose it, as arguments given to generate() override these
    **dict.fromkeys(("do_sample", "temperature", "top_k", "top_p", "typical_p", "num_beams", "num_beam_groups",
                     "num_return_sequences", "max_length", "max_new_tokens", "early_stopping", "length_penalty",
                     "diversity_penalty", "penalty_alpha", "chunk_size_feed_forward", "tf_legacy_loss",
                     "use_bfloat16", "remove_invalid_values", "output_scores", "return_dict_in_generate",
                     "cross_attention_hidden_size", "tie_encoder_decoder", "is_decoder"),
                    "decoding choices the app makes itself (max tokens, temperature, top-k, top-p)"),
}
# field -> the only value accepted (None: absent or null). Anything else changes the arithmetic or the stop.
REFUSED_UNLESS = {
    "add_cross_attention": False, "is_encoder_decoder": False, "quantization_config": None, "pruned_heads": {},
    "min_length": 0, "min_new_tokens": None, "suppress_tokens": None, "begin_suppress_tokens": None,
    "bad_words_ids": None, "forced_bos_token_id": None, "forced_eos_token_id": None, "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0, "encoder_no_repeat_ngram_size": 0, "stop_strings": None, "sequence_bias": None,
    "exponential_decay_length_penalty": None, "forced_decoder_ids": None, "epsilon_cutoff": 0.0,
    "eta_cutoff": 0.0, "min_p": None, "renormalize_logits": False,
}


@dataclass
class GPT2Config:
    """Hyper-parameters of a GPT-2, with the names of Hugging Face's ``config.json``.

    Defaults are GPT-2 small (124M parameters), so a config.json that omits a field means what it means there
    (transformers' ``GPT2Config`` defaults). ``from_hf_dict`` says which fields are honoured, which are
    irrelevant here, and which are refused.
    """

    vocab_size: int = 50257  # GPT-2's byte-level BPE vocabulary
    n_positions: int = 1024  # context window in tokens; no sequence may go past it
    n_embd: int = 768  # C, the width of the residual stream
    n_layer: int = 12  # transformer blocks: the "chapters" of the book
    n_head: int = 12  # attention heads; n_embd must divide by it
    n_inner: int | None = None  # MLP hidden width; None means 4 * n_embd as in GPT-2
    layer_norm_epsilon: float = 1e-5
    bos_token_id: int = 50256
    eos_token_id: int = 50256  # generation stops at this token (generation_config.json wins over config.json)
    activation_function: str = "gelu_new"  # the MLP's nonlinearity, one of ACTIVATIONS (transformers' ACT2FN names)
    tie_word_embeddings: bool = True  # False: the checkpoint has its own lm_head.weight (V, C)
    scale_attn_weights: bool = True  # scores divided by √head_dim
    scale_attn_by_inverse_layer_idx: bool = False  # scores of block i also divided by (i + 1)
    name: str = "gpt2"  # display name only, not part of the architecture
    extra: dict = field(default_factory=dict, repr=False)  # other config.json keys, written back unchanged

    def __post_init__(self) -> None:
        for key in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"config {key} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.n_inner is not None and (not isinstance(self.n_inner, int) or isinstance(self.n_inner, bool)
                                         or self.n_inner <= 0):
            raise ValueError(f"config n_inner must be a positive integer or null, got {self.n_inner!r}")
        eps = self.layer_norm_epsilon
        if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not 0 < eps < 1:
            raise ValueError(f"config layer_norm_epsilon must be a number in (0, 1), got {eps!r}")
        for key in ("bos_token_id", "eos_token_id"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"config {key} must be a token id (an integer >= 0), got {value!r}")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(f"config activation_function {self.activation_function!r} is not supported here "
                             f"(supported: {', '.join(ACTIVATIONS)})")
        for key in ("tie_word_embeddings", "scale_attn_weights", "scale_attn_by_inverse_layer_idx"):
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"config {key} must be true or false, got {getattr(self, key)!r}")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def inner_dim(self) -> int:
        return self.n_inner or 4 * self.n_embd

    def attention_scale(self, layer: int) -> float:
        """The factor block ``layer``'s attention scores are multiplied by (transformers' GPT2Attention)."""
        scale = 1.0 / math.sqrt(self.head_dim) if self.scale_attn_weights else 1.0
        return scale / (layer + 1) if self.scale_attn_by_inverse_layer_idx else scale

    def is_plain_gpt2(self) -> str | None:
        """None for GPT-2's own arithmetic; else the name of the first field that differs (for code paths, such
        as the sharded workers, that implement only the plain model)."""
        plain = GPT2Config()
        for key in ("activation_function", "tie_word_embeddings", "scale_attn_weights",
                    "scale_attn_by_inverse_layer_idx"):
            if getattr(self, key) != getattr(plain, key) and not (
                    key == "activation_function" and self.activation_function in ("gelu_pytorch_tanh", "gelu_fast")):
                return key
        return None

    _HF_KEYS = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner", "layer_norm_epsilon",
                "bos_token_id", "eos_token_id", "activation_function", "tie_word_embeddings", "scale_attn_weights",
                "scale_attn_by_inverse_layer_idx")

    @classmethod
    def from_hf_dict(cls, d: dict, name: str = "gpt2", generation: dict | None = None) -> "GPT2Config":
        """Build from a parsed Hugging Face ``config.json`` (and ``generation_config.json``, which wins for
        ``eos_token_id`` / ``bos_token_id`` as in transformers).

        Raises ``ValueError`` naming the field if the file describes another architecture, has impossible
        sizes, or sets a field this engine does not honour (``REFUSED_UNLESS``). Keys in neither list are kept
        in ``extra`` (transformers' GPT-2 does not read them either).
        """
        model_type = d.get("model_type", "gpt2")
        if model_type != "gpt2":
            raise ValueError(f"config.json has model_type {model_type!r}; only 'gpt2' is supported")
        for source, fields in (("config.json", d), ("generation_config.json", generation or {})):
            for key, neutral in REFUSED_UNLESS.items():
                value = fields.get(key)
                if value is None or value == neutral or (isinstance(neutral, dict) and not value):
                    continue
                raise ValueError(f"{source} sets {key}={json.dumps(value)[:60]}, which this engine does not "
                                 f"honour (it would change the logits or when generation stops)")
        kwargs = {k: d[k] for k in cls._HF_KEYS if k in d and d[k] is not None}
        if d.get("n_ctx") and "n_positions" not in kwargs:  # very old GPT-2 configs
            kwargs["n_positions"] = d["n_ctx"]
        for key in ("bos_token_id", "eos_token_id"):
            if generation and generation.get(key) is not None:
                kwargs[key] = generation[key]
            value = kwargs.get(key)
            if isinstance(value, list):  # transformers accepts a list of stop ids; one is what GPT-2 has
                if len(value) != 1:
                    raise ValueError(f"{key} {value!r} lists several tokens; this engine stops at exactly one")
                kwargs[key] = value[0]
        extra = {k: v for k, v in d.items() if k not in cls._HF_KEYS}
        return cls(**kwargs, name=name, extra=extra)

    def to_hf_dict(self) -> dict:
        d = dict(self.extra)
        d.update({k: getattr(self, k) for k in self._HF_KEYS})
        d.update({
            "model_type": "gpt2",
            "architectures": ["GPT2LMHeadModel"],
            "n_ctx": self.n_positions,
            "resid_pdrop": d.get("resid_pdrop", 0.0),
            "embd_pdrop": d.get("embd_pdrop", 0.0),
            "attn_pdrop": d.get("attn_pdrop", 0.0),
        })
        return d

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        return d


def activation(name: str):
    """The elementwise nonlinearity transformers' ``ACT2FN[name]`` computes (tensor -> tensor, same shape)."""
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):  # tanh approximation (Hendrycks & Gimpel 2016)
        return lambda x: F.gelu(x, approximate="tanh")
    if name == "gelu":
        return F.gelu  # exact, with erf
    if name == "quick_gelu":
        return lambda x: x * torch.sigmoid(1.702 * x)
    if name == "relu":
        return F.relu
    if name in ("silu", "swish"):
        return F.silu
    if name == "tanh":
        return torch.tanh
    raise ValueError(f"config activation_function {name!r} is not supported here")


def attention_reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                        mask: torch.Tensor | None, scale: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / √d) · V written out, for reading and for the attention map on screen.

    scale: the factor the scores are multiplied by; None means 1/√d (d = hs).

    q: (B, nh, T, hs), k and v: (B, nh, L, hs), mask: bool (B, 1, T, L) with True where a query may look,
    or None for no mask. Returns (output (B, nh, T, hs), weights (B, nh, T, L)), same dtype as q.
    Vaswani et al. 2017, "Attention Is All You Need", eq. 1.
    """
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # (B, nh, T, L)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights  # (B, nh, T, hs), (B, nh, T, L)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPT2Config, layer: int = 0):
        super().__init__()
        self.n_head = config.n_head
        self.head_dim = config.head_dim
        self.scale = config.attention_scale(layer)  # 1/√hs for GPT-2
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # Q, K, V for all heads in one matmul
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.readable = False  # True: use attention_reference (slower, keeps the weights)
        self.last_weights: torch.Tensor | None = None  # (B, nh, T, L) when readable

    def forward(self, x: torch.Tensor, layer: int, batch: "AttentionBatch | None",
                kv_cache: "PagedKVCache | None") -> torch.Tensor:
        if isinstance(batch, RaggedBatch):  # x: (N, C), the flat rows of a ragged pass (model/ragged.py)
            return self.c_proj(attend(self.c_attn(x), layer, batch, kv_cache, self.scale, self.n_head))
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)  # 3 × (B, T, C)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, self.head_dim)  # (B, T, nh, hs): the cache stores this layout
        v = v.view(B, T, self.n_head, self.head_dim)  # (B, T, nh, hs)
        mask = None if batch is None else batch.attn_mask  # (B, 1, T, L)
        if kv_cache is not None and batch is not None:
            kv_cache.write(layer, batch.slot_mapping, k, v)
            if batch.context_start is not None:  # one sequence whose slots are one run: read the cache in place
                k, v = kv_cache.view(layer, batch.context_start, batch.context_slots.size(1))  # 2 × (1, L, nh, hs)
            else:
                k, v = kv_cache.gather(layer, batch.context_slots)  # 2 × (B, L, nh, hs)
        k = k.transpose(1, 2)  # (B, nh, L, hs)
        v = v.transpose(1, 2)  # (B, nh, L, hs)
        if self.readable:
            if mask is None:
                mask = torch.ones(T, k.size(2), dtype=torch.bool, device=x.device).tril(k.size(2) - T)[None, None]
            y, self.last_weights = attention_reference(q, k, v, mask, self.scale)
        elif mask is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=self.scale)  # training: plain causal
        elif batch.sees_all:  # every query sees every key: the mask is all True
            y = F.scaled_dot_product_attention(q, k, v, scale=self.scale)
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config: GPT2Config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, config.inner_dim)
        self.c_proj = nn.Linear(config.inner_dim, config.n_embd)
        self.act = activation(config.activation_function)  # GPT-2's "gelu_new": GELU's tanh approximation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, config: GPT2Config, layer: int = 0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.attn = CausalSelfAttention(config, layer)
        self.ln_2 = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.mlp = MLP(config)

    def forward(self, x, layer, batch, kv_cache):
        x = x + self.attn(self.ln_1(x), layer, batch, kv_cache)
        return x + self.mlp(self.ln_2(x))


@dataclass
class AttentionBatch:
    """Where each new token sits, for one forward pass over a padded batch. Built by the engine.

    positions:     int64 (B, T)     position of each new token in its sequence (pad rows: 0)
    slot_mapping:  int64 (B, T)     KV-cache slot each new token's K and V are written to (pad: -1)
    context_slots: int64 (B, L)     slots to read, key j of sequence b holds position j (pad: 0)
    attn_mask:     bool (B, 1, T, L) True where query t of sequence b may attend to key j (causal and
                                    within the sequence's length; pad rows see key 0 so softmax stays finite)
    Without a KV cache, slot_mapping and context_slots are None and the keys are the new tokens themselves.
    Two hints let the model skip work; both describe the fields above and may be ignored (model/parallel/ does):
    sees_all:      True when attn_mask is all True (T = 1 and every row has all L keys), so attention needs no mask
    context_start: with B = 1, the first slot when context_slots is the run start, start + 1, ..., start + L - 1,
                   so the context can be read from the cache in place instead of gathered
    mirror:        with T = 1, (k, v, write_index) of a ``DecodeMirror`` (model/kv_cache.py): k[layer, :, :, :L]
                   holds the context of every row and head contiguously once this pass's K/V are also written
                   at write_index
    """

    positions: torch.Tensor
    attn_mask: torch.Tensor
    slot_mapping: torch.Tensor | None = None
    context_slots: torch.Tensor | None = None
    sees_all: bool = False
    context_start: int | None = None
    mirror: tuple | None = None


class GPT2(nn.Module):
    """GPT-2 language model. The LM head is ``wte.weight`` (tied, GPT-2's own) or, with
    ``tie_word_embeddings`` false, a separate ``lm_head.weight`` (V, C)."""

    def __init__(self, config: GPT2Config):
        super().__init__()
        self.config = config
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)  # the "dictionary": V × C
        self.wpe = nn.Embedding(config.n_positions, config.n_embd)
        self.h = nn.ModuleList(Block(config, i) for i in range(config.n_layer))
        self.ln_f = nn.LayerNorm(config.n_embd, eps=config.layer_norm_epsilon)
        self.lm_head = None if config.tie_word_embeddings else nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def init_weights(self, seed: int = 0) -> "GPT2":
        """GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/√(2·n_layer)."""
        gen = torch.Generator().manual_seed(seed)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "ln_" in name:
                nn.init.ones_(p)
            else:
                std = 0.02 / math.sqrt(2 * self.config.n_layer) if name.endswith("c_proj.weight") else 0.02
                with torch.no_grad():
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
        return self

    def forward(self, input_ids: torch.Tensor, batch: AttentionBatch | None = None,
                kv_cache: "PagedKVCache | None" = None, layer_ms: list[float] | None = None,
                logit_index: torch.Tensor | None = None) -> torch.Tensor:
        """Logits for ``input_ids``.

        input_ids: int64 (B, T). With ``batch`` None this is a plain causal pass from position 0 (training,
        tests). With ``batch`` the engine supplies positions and mask, and with ``kv_cache`` the K/V of the
        new tokens are written to, and the context read from, the paged cache. With a ``RaggedBatch``
        (model/ragged.py) input_ids is the flat int64 (N,) of every request's tokens, logit_index int64 (M,)
        flat rows, and the result (M, V) (or (N, V) without logit_index).
        layer_ms: if given, the wall time of each block in ms is appended (synchronising on CUDA).
        logit_index: int64 (B, K): compute the LM head only at these positions of each row (the LM head is
        the largest matmul of a small model; a decode step needs one position per sequence).
        Returns float logits (B, T, V), or (B, K, V) with logit_index.
        Raises ValueError if a position reaches n_positions.
        """
        if (batch is not None and kv_cache is not None and layer_ms is None and self._fast_layers is not None
                and not torch.is_grad_enabled() and not self.h[0].attn.readable and not self._hooked()):
            return self._forward_cached(input_ids, batch, kv_cache, logit_index)
        ragged = isinstance(batch, RaggedBatch)
        if ragged and self.h[0].attn.readable:
            raise ValueError("readable attention keeps (B, nh, T, L) weights: it needs a padded batch")
        B, T = (1, input_ids.numel()) if ragged else input_ids.shape
        if batch is None:
            if T > self.config.n_positions:
                raise ValueError(f"{T} tokens exceed the context window of {self.config.n_positions}")
            positions = torch.arange(T, device=input_ids.device).expand(B, T)
        else:
            positions = batch.positions
        x = self.wte(input_ids) + self.wpe(positions)  # (B, T, C)
        sync = torch.cuda.synchronize if input_ids.is_cuda else (lambda: None)
        for i, block in enumerate(self.h):
            if layer_ms is not None:
                sync()
                t0 = time.perf_counter_ns()
                x = block(x, i, batch, kv_cache)
                sync()
                layer_ms.append((time.perf_counter_ns() - t0) / 1e6)
            else:
                x = block(x, i, batch, kv_cache)
        if ragged:
            if logit_index is not None:
                x = x.index_select(0, logit_index)  # (M, C)
        elif logit_index is not None:
            x = x.gather(1, logit_index[:, :, None].expand(-1, -1, x.size(-1)))  # (B, K, C)
        x = self.ln_f(x)
        head_t = self._decode_head()
        if head_t is not None:
            return x @ head_t  # (B, T, V): the same product from a contiguous [C, V] copy
        return x @ self.lm_head_weight().t()  # (B, T, V): the LM head

    def lm_head_weight(self) -> torch.Tensor:
        """The LM head's weight, (V, C): ``lm_head.weight`` when the model has a separate head, else the tied
        ``wte.weight``."""
        return self.wte.weight if self.lm_head is None else self.lm_head.weight

    def prepare_for_decode(self) -> "GPT2":
        """Lay the weights out for fast decoding; the results of a pass do not change (within float rounding).

        Measured on this project's 2-core CPU (docs/benchmarks.md, "Decode path"): a batch-1 step is a chain
        of GEMVs, and MKL reads a weight stored ``[in, out]`` (``x @ W_in_out``) 1.3–1.9× faster than the
        same weight stored ``[out, in]`` (``x @ W.t()``). So every ``nn.Linear`` weight keeps its
        ``[out, in]`` shape but is re-stored so that ``weight.t()`` is contiguous (no extra memory), and the LM
        head gets a contiguous ``[C, V]`` copy (V × C × 4 bytes more; ``wte`` itself must stay ``[V, C]`` for
        the embedding lookup). The copy is used only with autograd off, and is rebuilt if the head weight
        changes in place (its version counter moves).

        It also enables the flat cached forward (``_forward_cached``) for engine passes with autograd off and no
        module hooks: the same arithmetic without per-module calls. Passes of 2 or more rows (batched decode,
        prefill, speculative verify) run their GEMMs on oneDNN-packed copies of the block weights and the LM
        head, made at the first such pass: about the weights' size again in memory (17 MB for the bundled
        model, 0.5 GB for GPT-2 small), up to 2–3× faster than MKL at 4–16 rows on this CPU. Returns self.
        """
        for module in self.modules():
            if isinstance(module, nn.Linear) and module is not self.lm_head:
                w = module.weight
                if not w.t().is_contiguous():
                    w.data = w.data.t().contiguous().t()
        self._head_t_for = None
        self._decode_head_enabled = True
        self._decode_head()
        self._fast_layers = None
        self._submodules = list(self.modules())
        cfg = self.config
        fuse = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu_fast": "tanh", "gelu": "none"}
        self._fused_act = fuse.get(cfg.activation_function)  # oneDNN's gelu algorithm, or None: apply act apart
        with torch.no_grad():
            self._fast_layers = [
                (b.ln_1.weight, b.ln_1.bias, b.attn.c_attn.weight.t(), b.attn.c_attn.bias, b.attn.c_proj.weight.t(),
                 b.attn.c_proj.bias, b.ln_2.weight, b.ln_2.bias, b.mlp.c_fc.weight.t(), b.mlp.c_fc.bias,
                 b.mlp.c_proj.weight.t(), b.mlp.c_proj.bias, cfg.attention_scale(i), b.mlp.act)
                for i, b in enumerate(self.h)]
        self._fast_for = self._fast_key()
        self._packable = [w for b in self.h for w in (b.attn.c_attn.weight, b.attn.c_proj.weight, b.mlp.c_fc.weight,
                                                      b.mlp.c_proj.weight)] + [self.lm_head_weight()]
        return self

    _fast_layers: list | None = None  # set by prepare_for_decode: per block, its tensors in the order used
    _DERIVED = ("_fast_layers", "_fast_for", "_submodules", "_packed", "_packed_for", "_packable")

    def __getstate__(self) -> dict:
        """Copies and pickles leave out what ``prepare_for_decode`` derived (views and oneDNN-packed copies of
        the weights, which cannot be copied); a copy runs the modules until it is prepared itself."""
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__
        return {k: v for k, v in state.items() if k not in self._DERIVED}

    def _fast_key(self) -> tuple[int, int]:
        """Replacing the weights (model.to, load_state_dict(assign=True)) replaces them all; two pointers see it."""
        return self.wte.weight.data_ptr(), self.h[-1].mlp.c_proj.weight.data_ptr()

    def _hooked(self) -> bool:
        """True when a forward hook is set on any submodule (or globally): the flat path would skip it, so the
        modules run instead."""
        from torch.nn.modules import module as m
        if m._global_forward_hooks or m._global_forward_pre_hooks:
            return True
        return any(mod._forward_hooks or mod._forward_pre_hooks for mod in self._submodules)
    _packed: list | None = None  # oneDNN-packed weights, and the (data_ptr, version) of each weight they copy
    _packed_for: tuple | None = None

    # oneDNN packed weights pay from this many rows per GEMM (measured, docs/benchmarks-engine.md: at 1 row MKL's
    # GEMV is faster, from 2 rows oneDNN's blocked GEMM is up to 2x faster than MKL on this CPU)
    PACKED_MIN_ROWS = 2

    def _packed_weights(self) -> list | None:
        """oneDNN-packed copies of every block weight and the LM head (``torch.ops.mkldnn._reorder_linear_weight``,
        the layout Inductor uses for CPU linears), packed for 16 rows; rebuilt when any weight changes in place
        (version counters). None where oneDNN is not available (MKL's GEMM is used instead)."""
        if not torch.backends.mkldnn.is_available() or self.wte.weight.dtype != torch.float32 \
                or self.wte.weight.device.type != "cpu":
            return None
        weights = self._packable
        key = (self._fast_for, [w._version for w in weights])
        if self._packed_for != key:
            try:
                self._packed = [torch.ops.mkldnn._reorder_linear_weight(w.detach(), 16) for w in weights]
            except (RuntimeError, AttributeError):  # a build without the op: MKL's GEMM it is
                self._packed = None
            self._packed_for = key
        return self._packed

    def _forward_cached(self, input_ids: torch.Tensor, batch: AttentionBatch, kv_cache: "PagedKVCache",
                        logit_index: torch.Tensor | None) -> torch.Tensor:
        """``forward`` with a KV cache and autograd off, written as a flat sequence of tensor ops on (B·T, C)
        rows: the same arithmetic as the blocks' modules (within float rounding), without their per-call
        overhead, which at batch 1 costs as much as the weights' GEMVs on this CPU. With 2+ rows the GEMMs run
        on oneDNN-packed weights (``_packed_weights``), with the MLP's GELU fused into the first.
        Returns float logits (B, K, V) with ``logit_index``, else (B, T, V)."""
        if self._fast_key() != self._fast_for:  # a weight was replaced (not modified in place): re-take views
            self.prepare_for_decode()
        ragged = isinstance(batch, RaggedBatch)
        B, T = (1, input_ids.numel()) if ragged else input_ids.shape
        N = B * T
        cfg = self.config
        C, nh, hs = cfg.n_embd, cfg.n_head, cfg.head_dim
        eps = cfg.layer_norm_epsilon
        packed = self._packed_weights() if N >= self.PACKED_MIN_ROWS else None
        linear = torch.ops.mkldnn._linear_pointwise if packed is not None else None
        x = F.embedding(input_ids.reshape(N), self.wte.weight) + F.embedding(batch.positions.reshape(N),
                                                                             self.wpe.weight)  # (N, C)
        if not ragged:
            mask = batch.attn_mask
            in_place = batch.context_start is not None
            mirror = batch.mirror if T == 1 else None
            L = batch.context_slots.size(1)
            start = batch.context_start
        for i, (w1, b1, wqkv, bqkv, wo, bo, w2, b2, wfc, bfc, wp, bp, scale, act) in enumerate(self._fast_layers):
            h = F.layer_norm(x, (C,), w1, b1, eps)
            qkv = torch.addmm(bqkv, h, wqkv) if packed is None else linear(h, packed[4 * i], bqkv, "none", [None], "")
            if ragged:
                y = attend(qkv, i, batch, kv_cache, scale, nh)  # (N, C): each request over its own keys
                x = x + (torch.addmm(bo, y, wo) if packed is None else linear(y, packed[4 * i + 1], bo, "none", [None], ""))
                x = self._mlp_fast(x, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps)
                continue
            q = qkv[:, :C].view(B, T, nh, hs).transpose(1, 2)  # (B, nh, T, hs)
            kv_cache.write(i, batch.slot_mapping, qkv[:, C:2 * C].view(B, T, nh, hs), qkv[:, 2 * C:].view(B, T, nh, hs))
            if in_place:
                k, v = kv_cache.view(i, start, L)  # 2 × (1, L, nh, hs)
            elif mirror is not None:
                mk, mv = mirror[0][i], mirror[1][i]  # (B, nh, capacity, hs): head-major, each head's keys one run
                mk.view(-1, hs).index_copy_(0, mirror[2], qkv[:, C:2 * C].reshape(N * nh, hs))
                mv.view(-1, hs).index_copy_(0, mirror[2], qkv[:, 2 * C:].reshape(N * nh, hs))
                k, v = mk[:, :, :L], mv[:, :, :L]  # 2 × (B, nh, L, hs)
            else:
                k, v = kv_cache.gather(i, batch.context_slots)  # 2 × (B, L, nh, hs)
            if mirror is None or in_place:
                k, v = k.transpose(1, 2), v.transpose(1, 2)  # (B, nh, L, hs)
            if batch.sees_all:
                y = F.scaled_dot_product_attention(q, k, v, scale=scale)
            else:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)  # (B, nh, T, hs)
            y = y.transpose(1, 2).reshape(N, C)
            x = x + (torch.addmm(bo, y, wo) if packed is None else linear(y, packed[4 * i + 1], bo, "none", [None], ""))
            x = self._mlp_fast(x, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps)
        if ragged:
            x = x if logit_index is None else x.index_select(0, logit_index)  # (M, C): only the rows sampled
            K = None
        elif logit_index is not None:
            K = logit_index.size(1)
            if T > 1 or K > 1:
                x = x.view(B, T, C).gather(1, logit_index[:, :, None].expand(-1, -1, C)).view(B * K, C)
        else:
            K = T
        x = F.layer_norm(x, (C,), self.ln_f.weight, self.ln_f.bias, eps)
        if packed is not None:
            logits = linear(x, packed[-1], None, "none", [None], "")
        else:
            logits = x @ self._decode_head()
        return logits if K is None else logits.view(B, K, -1)

    def _mlp_fast(self, x, i, packed, linear, w2, b2, wfc, bfc, wp, bp, act, eps) -> torch.Tensor:
        """x + MLP(LayerNorm(x)) for block i on (N, C) rows (the flat cached forward's second half)."""
        h = F.layer_norm(x, (x.size(-1),), w2, b2, eps)
        if packed is None:
            h = act(torch.addmm(bfc, h, wfc))
            return x + torch.addmm(bp, h, wp)
        if self._fused_act is not None:
            h = linear(h, packed[4 * i + 2], bfc, "gelu", [None], self._fused_act)
        else:
            h = act(linear(h, packed[4 * i + 2], bfc, "none", [None], ""))
        return x + linear(h, packed[4 * i + 3], bp, "none", [None], "")

    def _decode_head(self) -> torch.Tensor | None:
        """The contiguous [C, V] head copy, (re)built when stale; None unless prepared and autograd is off."""
        if not getattr(self, "_decode_head_enabled", False) or torch.is_grad_enabled():
            return None
        w = self.lm_head_weight()
        key = (w.data_ptr(), w._version, w.dtype, w.device)
        if getattr(self, "_head_t_for", None) != key:
            with torch.no_grad():
                self._head_t = w.detach().t().contiguous()  # (C, V)
            self._head_t_for = key
        return self._head_t

    def set_readable_attention(self, on: bool) -> None:
        """Switch every layer to ``attention_reference`` so ``attention_weights`` can be read after a pass."""
        for block in self.h:
            block.attn.readable = on
            block.attn.last_weights = None

    def attention_weights(self) -> list[torch.Tensor | None]:
        """Per layer, the (B, nh, T, L) weights of the last pass made with readable attention."""
        return [block.attn.last_weights for block in self.h]

    def num_parameters(self) -> int:
        """Parameters counted once (a tied LM head shares ``wte``; an untied one is counted)."""
        return sum(p.numel() for p in self.parameters())

    def weight_bytes(self) -> int:
        """Bytes of all parameters as stored now (dtype-aware)."""
        return sum(p.numel() * p.element_size() for p in self.parameters())

    def layer_weight_bytes(self) -> list[int]:
        """Bytes of each transformer block's parameters, in layer order: the size of each chapter."""
        return [sum(p.numel() * p.element_size() for p in b.parameters()) for b in self.h]
