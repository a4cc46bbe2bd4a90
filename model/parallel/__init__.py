"""Tearing the book: tensor and pipeline parallelism over real worker processes.

A ``ShardedRunner`` starts ``n`` worker processes (spawn), joins them with ``torch.distributed`` (gloo on CPU,
NCCL on CUDA) and runs the engine's forward passes on them (``Engine.set_runner``). Each worker holds only its
shard of the weights and its own part of the paged KV cache; the engine keeps the block tables and sends the
slots with every step.

Tensor parallel ("every page down the middle"; Shoeybi et al. 2019, "Megatron-LM", section 3):
    attn.c_attn   column-parallel, split per head inside each of Q, K and V: rank r keeps heads
                  [r·nh/n, (r+1)·nh/n) of Q, of K and of V, so attention runs on its own heads with no talk
    attn.c_proj   row-parallel: each rank multiplies its heads' slice, an all-reduce sums the partial products,
                  the bias is added once, after the sum
    mlp.c_fc      column-parallel (GELU is elementwise, so it needs no talk)
    mlp.c_proj    row-parallel + all-reduce, bias after the sum
    embeddings, layer norms, LM head: replicated (small at this size). Two all-reduces per layer per pass.
    Each worker's KV cache holds all layers, only its heads.

Pipeline parallel ("by chapters"; Huang et al. 2019, "GPipe"): contiguous stages of layers (``split_layers``);
the first stage embeds, the last applies ln_f and the LM head (it keeps its own copy of ``wte``, the tied head,
as Megatron's first and last stages do). Activations go stage to stage with send/recv. A batch above 1 is cut
into micro-batches so that stage s works on micro-batch j while stage s+1 works on j-1. Each worker's KV cache
holds all heads, only its layers.

Measured per worker and per pass, with ``time.perf_counter_ns`` inside the worker (a system-wide monotonic
clock on Linux, macOS and Windows, so timestamps of processes on one machine compare):
    compute_ms   time in the worker's own matmuls, attention, norms
    comm_ms      TP: time inside all_reduce, including waiting for the slowest rank (the sync line)
                 PP: time inside send, and inside recv from the moment the sender handed the data over
    bubble_ms    PP only: time a stage sat idle, waiting in recv before the previous stage had sent
                 (pipeline fill), plus the time from its last micro-batch to the end of the whole pass
                 (drain); the sender's timestamp travels in the activation message itself
    weight_bytes bytes of the parameters the worker holds
    weight_read_ms the part of compute_ms in the worker's weight GEMVs/GEMMs, LM head and embedding gathers
                 (``model/timing.py``: clock reads around each)

Control: one queue per worker carries the step's small tensors (numpy), one result queue brings back every
worker's timings and, from rank 0 (TP) or the last stage (PP), the logits. Every wait has a timeout; a worker
that dies or hangs makes ``forward`` raise ``ShardingError`` and the runner stops the others.
"""

from model.parallel.plan import (
                                 MAX_WORKERS,
                                 MODES,
                                 START_TIMEOUT_S,
                                 check_degree,
                                 free_port,
                                 max_pp,
                                 split_layers,
                                 tp_degrees,
)
from model.parallel.runner import ShardedRunner, WorkerInfo, describe
from model.parallel.shard import shard_state

__all__ = ["MAX_WORKERS", "MODES", "START_TIMEOUT_S", "ShardedRunner", "WorkerInfo", "check_degree", "describe",
           "free_port", "max_pp", "shard_state", "split_layers", "tp_degrees"]
