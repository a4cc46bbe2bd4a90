"""Plain-data records the engine produces: one ``StepReport`` per forward pass, one ``TokenEvent`` per new token.

They hold only ints, floats, strings and lists, so they cross a process boundary (pickle) and become JSON
without help. The GUI draws from them; nothing in them is estimated: times are measured with
``time.perf_counter_ns`` around the real work, byte counts are computed from the tensors' shapes and dtypes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class TokenEvent:
    """A token a request produced in one step."""

    request_id: str
    token_id: int
    position: int  # 0-based position of the token in its sequence
    text: str  # newly printable text (may be "" while a multi-byte character is incomplete)
    label: str  # readable label of the token itself (␣ for a leading space, hex for partial bytes)
    top5: list[tuple[int, str, float]] = field(default_factory=list)  # (id, label, probability) drawn from
    finish_reason: str | None = None  # "stop", "length", "context_full", "loop" (Engine.stop_loops) when it ends it
    accepted_from_draft: bool = False  # speculative decoding: the draft proposed this token and it was kept


@dataclass
class StepReport:
    """One forward pass of the target model (and, with speculative decoding, the draft passes before it).

    phase: "prefill" (only prompt tokens), "decode" (only one new token per sequence), "mixed" (both, as
    continuous batching with chunked prefill does), "verify" (speculative decoding: k + 1 positions checked).
    wall_ms: wall time of the whole step in ms (forward pass, sampling, bookkeeping).
    forward_ms: wall time of the target's forward pass alone.
    weight_read_ms: the measured part of forward_ms spent in the pass's weight-reading work: every weight
    GEMV/GEMM (Q/K/V, attention projection, MLP fc and proj), the LM head and the embedding gathers, each timed
    with clock reads around it (``model/timing.py``; 0 < weight_read_ms <= forward_ms). forward_ms minus it is
    the rest: attention over the KV cache, layer norms, activations, residual adds, Python between ops. On a
    sharded pass it is rank 0's (each worker's own is in ``workers``). Not a floor: weight_bytes ÷ the memory's
    read speed is how fast the reading could go.
    draft_weight_read_ms: the same, summed over the draft model's passes of a verify step (0 otherwise).
    layer_ms: per-layer forward time in ms, when the engine was asked to time layers, else [].
    weight_bytes: bytes of weights read by the target's pass (every parameter once per pass).
    kv_bytes: bytes of K and V read from the cache by attention in this pass (0 without a KV cache).
    kv_bytes_in_use: blocks in use × bytes per block after the step.
    blocks_in_use / num_blocks: paged KV-cache occupancy after the step.
    prefix_hit_tokens: prompt tokens whose K/V came from the prefix cache for requests admitted in this step.
    rows_computed: rows the target's linear layers computed in this pass: tokens_in on a ragged pass
    (model/ragged.py), B × the longest row's tokens on a padded one.
    """

    step: int
    phase: str
    request_ids: list[str]
    batch: int
    tokens_in: int
    tokens_out: int
    wall_ms: float
    forward_ms: float
    weight_bytes: int
    kv_bytes: int
    kv_bytes_in_use: int
    blocks_in_use: int
    num_blocks: int
    prefix_hit_tokens: int
    layer_ms: list[float] = field(default_factory=list)
    rows_computed: int = 0
    weight_read_ms: float = 0.0
    tokens: list[TokenEvent] = field(default_factory=list)
    # speculative decoding (zero when off)
    proposed: int = 0
    accepted: int = 0
    bonus: int = 0
    draft_ms: float = 0.0
    verify_ms: float = 0.0
    draft_weight_read_ms: float = 0.0
    draft_kind: str = ""  # who guessed in a verify pass: "model" (the draft model) or "ngram" (prompt lookup)
    # per sequence of a verify pass: {"request_id", "labels": the draft's k guesses as readable labels}, so the
    # window can show a rejected guess crossed out (accepted ones equal the emitted tokens)
    guesses: list[dict] = field(default_factory=list)
    # sharding: one dict per worker {"rank", "compute_ms", "comm_ms", "bubble_ms", "weight_bytes", "weight_read_ms"}
    workers: list[dict] = field(default_factory=list)
    # the named stages this step went through, in order (model/stages.py): "schedule", "pack", "embedding",
    # "attention:0", "kv_write:0", "mlp:0", ..., "lm_head", "sample"; a per-layer stage ends in ":layer"
    stages: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)
