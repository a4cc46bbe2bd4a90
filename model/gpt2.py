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
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import torch
import torch.nn as nn
import torch.nn.functional as F

from model import decoder
from model.attention import attend
from model.config_fields import ACTIVATIONS, REFUSED_UNLESS  # config.json's fields: honoured, ignored, refused
from model.flat_forward import FlatForward
from model.ragged import RaggedBatch
from model.timing import NULL_TIMER, time_modules
from model.weight_mm import linear

if TYPE_CHECKING:  # pragma: no cover
    from model.kv_cache import PagedKVCache


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
    def from_hf_dict(cls, d: dict, name: str = "gpt2", generation: dict | None = None) -> GPT2Config:
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


class CausalSelfAttention(nn.Module):
    def __init__(self, config: GPT2Config, layer: int = 0):
        super().__init__()
        self.n_head = config.n_head
        self.head_dim = config.head_dim
        self.scale = config.attention_scale(layer)  # 1/√hs for GPT-2
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # Q, K, V for all heads in one matmul
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.readable = False  # True: attention written out (model/attention.py, slower, keeps the weights)
        self.last_weights: torch.Tensor | None = None  # (B, nh, T, L) when readable

    def forward(self, x: torch.Tensor, layer: int, batch: AttentionBatch | RaggedBatch | None,
                kv_cache: PagedKVCache | None) -> torch.Tensor:
        """x (B, T, C), or the (N, C) rows of a ragged pass (model/ragged.py) -> the same shape. With a cache, this
        pass's K/V are written to it and the context read from it (``attend``, model/attention.py)."""
        qkv = self.c_attn(x)  # (B, T, 3C): Q, K, V for all heads in one matmul
        y, weights = attend(qkv, layer, kv_cache, batch, self.scale, self.n_head, self.readable)  # (B, T, C)
        if self.readable:
            self.last_weights = weights  # (B, nh, T, L)
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
    Hints that let the model skip work; they describe the fields above and may be left unset (model/parallel/ does):
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

    # What model/attention.py reads, derived from the fields above the first time (a batch is not changed once
    # packed): attention reads them in every layer.

    @cached_property
    def shape(self) -> tuple[int, int]:
        """(B, T): sequences and new tokens per sequence."""
        return tuple(self.positions.shape)

    @cached_property
    def L(self) -> int:
        """Keys per sequence (with a KV cache)."""
        return self.context_slots.size(1)

    @cached_property
    def mask(self) -> torch.Tensor | None:
        """What attention masks with (model/attention.py): ``attn_mask``, or None when every query sees every key."""
        return None if self.sees_all else self.attn_mask


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

    def init_weights(self, seed: int = 0) -> GPT2:
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
                kv_cache: PagedKVCache | None = None, layer_ms: list[float] | None = None,
                logit_index: torch.Tensor | None = None, read_timer=None) -> torch.Tensor:
        """Logits for ``input_ids``.

        input_ids: int64 (B, T). With ``batch`` None this is a plain causal pass from position 0 (training,
        tests). With ``batch`` the engine supplies positions and mask, and with ``kv_cache`` the K/V of the
        new tokens are written to, and the context read from, the paged cache. With a ``RaggedBatch``
        (model/ragged.py) input_ids is the flat int64 (N,) of every request's tokens, logit_index int64 (M,)
        flat rows, and the result (M, V) (or (N, V) without logit_index).
        layer_ms: if given, the wall time of each block in ms is appended (synchronising on CUDA).
        read_timer: if given (``model/timing.py``), every weight-reading op of the pass (each Linear's GEMV/GEMM,
        the LM head, the embedding gathers) is bracketed by its ``begin()`` / ``end()``.
        logit_index: int64 (B, K): compute the LM head only at these positions of each row (the LM head is
        the largest matmul of a small model; a decode step needs one position per sequence).
        Returns float logits (B, T, V), or (B, K, V) with logit_index.
        Raises ValueError if a position reaches n_positions.
        """
        if self.takes_fused_path(batch, kv_cache):
            return self._flat.forward(input_ids, batch, kv_cache, logit_index, read_timer or NULL_TIMER, layer_ms)
        if read_timer is None:
            return self._forward_modules(input_ids, batch, kv_cache, layer_ms, logit_index, NULL_TIMER)
        handles = time_modules(self, read_timer)  # the modules' Linear and Embedding calls, bracketed
        try:
            return self._forward_modules(input_ids, batch, kv_cache, layer_ms, logit_index, read_timer)
        finally:
            for h in handles:
                h.remove()

    def _forward_modules(self, input_ids, batch, kv_cache, layer_ms, logit_index, rt) -> torch.Tensor:
        """``forward`` through the modules (training, readable attention, hooks, a model not prepared): the
        skeleton of model/decoder.py over ``embed``, the blocks and ``logits``."""
        ragged = isinstance(batch, RaggedBatch)
        if ragged and self.h[0].attn.readable:
            raise ValueError("readable attention keeps (B, nh, T, L) weights: it needs a padded batch")
        if batch is None:
            B, T = input_ids.shape
            if T > self.config.n_positions:
                raise ValueError(f"{T} tokens exceed the context window of {self.config.n_positions}")
            positions = torch.arange(T, device=input_ids.device).expand(B, T)
        else:
            positions = batch.positions
        return decoder.forward(self, self.h, input_ids, positions, (batch, kv_cache), logit_index, rt, layer_ms)

    def embed(self, input_ids: torch.Tensor, positions: torch.Tensor, rt=NULL_TIMER) -> torch.Tensor:
        """Token row + position row of every token: int64 (B, T) (or a ragged pass's (N,)) -> float (B, T, C) (or
        (N, C)). rt: unused (``forward`` times the embeddings by module hooks)."""
        x = self.wte(input_ids) + self.wpe(positions)  # (B, T, C)
        return x

    def logits(self, x: torch.Tensor, logit_index: torch.Tensor | None, rt=NULL_TIMER) -> torch.Tensor:
        """The final LayerNorm and the LM head: x float (B, T, C) -> logits (B, T, V), or at the positions
        ``logit_index`` int64 (B, K) -> (B, K, V); a ragged pass's x (N, C) with flat rows (M,) -> (M, V).
        rt: the weight-read timer, bracketing the LM head's product."""
        if x.dim() == 2:  # a ragged pass's rows
            if logit_index is not None:
                x = x.index_select(0, logit_index)  # (M, C)
        elif logit_index is not None:
            x = x.gather(1, logit_index[:, :, None].expand(-1, -1, x.size(-1)))  # (B, K, C)
        x = self.ln_f(x)
        head = self._head_matrix()
        rt.begin()
        if head is not None:
            logits = linear(x, head)  # (B, T, V)
        else:
            logits = x @ self.lm_head_weight().t()  # (B, T, V): the LM head
        rt.end()
        return logits

    def _head_matrix(self):
        """The LM head's ``WeightMatrix`` (model/weight_mm.py) for a pass through the modules: the converted
        module's own with fp16 / int8 weights; the flat pass's [C, V] one with fp32 once prepared and autograd off;
        None otherwise (a plain ``x @ Wᵀ`` that autograd can follow)."""
        if self.weights != "fp32":
            return (self.wte if self.lm_head is None else self.lm_head).matrix()
        return self._flat.head() if self._flat is not None and not torch.is_grad_enabled() else None

    def takes_fused_path(self, batch, kv_cache) -> bool:
        """True when ``forward`` with these arguments runs ``FlatForward.forward`` (model/flat_forward.py), not the
        blocks' modules (``_forward_modules``), layer timing or not (model/stages.py names the stages of either)."""
        return batch is not None and kv_cache is not None and self.flat_ready()

    def flat_ready(self) -> bool:
        """The flat pass (model/flat_forward.py) can run now: prepared for decoding, autograd off, attention not kept
        readable, no module hook set. Re-takes the flat pass's views if the weights were replaced."""
        if self._flat is None or torch.is_grad_enabled() or self.h[0].attn.readable or self._hooked():
            return False
        if self._flat.key != self.weights_key():  # a weight was replaced (not modified in place): re-take views
            self.prepare_for_decode()
        return True

    def decode_one(self, token_ids: list[int], position: int, kv_cache: PagedKVCache, start: int,
                   read_timer=None) -> torch.Tensor:
        """Float logits (V,) of the last of a few tokens (``token_ids``, the first at ``position``) of a lone
        sequence whose K/V fill ``kv_cache``'s slots from ``start`` in one run: ``FlatForward.decode_one``. Call
        only when ``flat_ready()``. Raises ValueError for no tokens or a position outside the context window."""
        return self._flat.decode_one(token_ids, position, kv_cache, start, read_timer or NULL_TIMER)

    def lm_head_weight(self) -> torch.Tensor:
        """The LM head's weight, (V, C): ``lm_head.weight`` when the model has a separate head, else the tied
        ``wte.weight``."""
        return self.wte.weight if self.lm_head is None else self.lm_head.weight

    @property
    def prepared_for_decode(self) -> bool:
        """True once ``prepare_for_decode`` laid the weights out (the flat fast path is on)."""
        return self._flat is not None

    def prepare_for_decode(self) -> GPT2:
        """Lay the weights out for fast decoding; the results of a pass do not change (within float rounding).

        Measured on this project's 2-core CPU (docs/benchmarks.md, "Decode path"): a batch-1 step is a chain
        of GEMVs, and MKL reads a weight stored ``[in, out]`` (``x @ W_in_out``) 1.3–1.9× faster than the
        same weight stored ``[out, in]`` (``x @ W.t()``). So every ``nn.Linear`` weight keeps its
        ``[out, in]`` shape but is re-stored so that ``weight.t()`` is contiguous (no extra memory), and the LM
        head gets a contiguous ``[C, V]`` copy (V × C × 4 bytes more; ``wte`` itself must stay ``[V, C]`` for
        the embedding lookup). The copy is used only with autograd off, and is rebuilt if the head weight
        changes in place (its version counter moves).

        It also enables the flat cached forward (``model/flat_forward.py``) for engine passes with autograd off and
        no module hooks: the same arithmetic without per-module calls; passes of 2+ rows run oneDNN-packed copies
        of the weights (about their size again in memory, made at the first such pass). Returns self.
        """
        for module in self.modules():
            if isinstance(module, nn.Linear) and module is not self.lm_head:
                w = module.weight
                if not w.t().is_contiguous():
                    w.data = w.data.t().contiguous().t()
        self._flat = FlatForward(self)
        return self

    _flat: FlatForward | None = None  # set by prepare_for_decode (model/flat_forward.py)
    weights = "fp32"  # "fp16" or "int8" once model/quantize.py has converted the weights (model/weight_mm.py)
    _DERIVED = ("_flat",)

    def __getstate__(self) -> dict:
        """Copies and pickles leave out what ``prepare_for_decode`` derived (views and oneDNN-packed copies of
        the weights, which cannot be copied); a copy runs the modules until it is prepared itself."""
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__
        return {k: v for k, v in state.items() if k not in self._DERIVED}

    def weights_key(self) -> tuple[int, int]:
        """Replacing the weights (model.to, load_state_dict(assign=True)) replaces them all; two pointers see it."""
        return self.wte.weight.data_ptr(), self.h[-1].mlp.c_proj.weight.data_ptr()

    def _hooked(self) -> bool:
        """True when a forward hook is set on any submodule (or globally): the flat path would skip it, so the
        modules run instead."""
        from torch.nn.modules import module as m
        if m._global_forward_hooks or m._global_forward_pre_hooks:
            return True
        return any(mod._forward_hooks or mod._forward_pre_hooks for mod in self._flat.submodules)

    def set_readable_attention(self, on: bool) -> None:
        """Switch every layer to ``attention_reference`` (model/attention.py) so ``attention_weights`` can be read
        after a pass."""
        for block in self.h:
            block.attn.readable = on
            block.attn.last_weights = None

    def attention_weights(self) -> list[torch.Tensor | None]:
        """Per layer, the (B, nh, T, L) weights of the last pass made with readable attention."""
        return [block.attn.last_weights for block in self.h]

    def num_parameters(self) -> int:
        """Parameters counted once (a tied LM head shares ``wte``; an untied one is counted; int8 weights count
        one each, their scales not)."""
        return sum(p.numel() for p in self.parameters())

    def weight_bytes(self) -> int:
        """Bytes of the weights as stored now: every parameter (dtype-aware: 4 bytes in fp32, 1 in int8) and the
        int8 weights' float32 row scales (``model/quantize.py``)."""
        return _stored_bytes(self)

    def layer_weight_bytes(self) -> list[int]:
        """Bytes of each transformer block's weights (as ``weight_bytes``), in layer order: each chapter's size."""
        return [_stored_bytes(b) for b in self.h]


def _stored_bytes(module: nn.Module) -> int:
    """Bytes of the parameters and persistent buffers (int8 scales) of ``module``, each tensor once."""
    tensors = {id(p): p for p in module.parameters()}
    for m in module.modules():
        tensors.update({id(b): b for name, b in m._buffers.items()
                        if b is not None and name not in m._non_persistent_buffers_set})
    return sum(t.numel() * t.element_size() for t in tensors.values())
