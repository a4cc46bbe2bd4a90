"""The paged KV cache: its reported bytes are the bytes of the tensors it holds, blocks are counted and
returned, and preemption when the pool runs out changes no token.

Formulas checked here: KV bytes per token = 2 (K and V) × n_layer × n_head × head_dim × bytes per element
(Kwon et al. 2023, PagedAttention); a sequence of L tokens holds ceil(L / block_size) blocks.
"""

from __future__ import annotations

import math

import pytest
import torch

from model.engine import Engine
from model.kv_cache import BlockManager, PagedKVCache
from tests.model.conftest import prompt_ids, run_to_end

BLOCK = 16


def _per_token_bytes(config) -> int:
    return 2 * config.n_layer * config.n_head * (config.n_embd // config.n_head) * 4  # fp32


def _tensors_in(obj) -> list[torch.Tensor]:
    """Every torch tensor reachable from ``obj``'s attributes (one level, lists and dicts included)."""
    found = []
    for value in vars(obj).values():
        items = value if isinstance(value, (list, tuple)) else (value.values() if isinstance(value, dict) else [value])
        found += [v for v in items if isinstance(v, torch.Tensor)]
    return found


@pytest.mark.parametrize("budget", [1, 300_000, 10**12])
def test_allocated_bytes_are_the_live_tensors(make_engine, tiny, budget):
    config = tiny[0].config
    engine = make_engine(kv_budget_bytes=budget)
    num_blocks = engine.num_blocks
    window_blocks = math.ceil(config.n_positions / BLOCK)
    assert window_blocks <= num_blocks <= 64 * window_blocks  # at least one window, at most 64
    if budget == 300_000:
        assert num_blocks == budget // (_per_token_bytes(config) * BLOCK)
    formula = _per_token_bytes(config) * (num_blocks * BLOCK + 1)  # + 1 scratch slot for padding
    held = sum(t.nbytes for t in _tensors_in(engine.cache))
    assert engine.kv_bytes_allocated == formula == held
    assert engine.cache.bytes_per_block == _per_token_bytes(config) * BLOCK


def test_no_cache_holds_no_bytes(make_engine):
    engine = make_engine(kv_cache=False)
    assert engine.kv_bytes_allocated == 0 and engine.blocks_in_use == 0 and engine.cache is None


def test_blocks_in_use_and_kv_bytes_read_per_step(make_engine, tiny):
    config = tiny[0].config
    _, tok = tiny
    per_token = _per_token_bytes(config)
    engine = make_engine(prefix_cache=False, max_step_tokens=24)
    lengths = [1, 15, 16, 17, 33]
    for i, n in enumerate(lengths):
        engine.add_request(prompt_ids(n, 40 + i, tok.vocab_size, tok.eos_token_id), max_new_tokens=20)
    while engine.has_work():
        report = engine.step()
        live = engine.scheduler.running
        # a prompt's blocks are reserved when it is admitted, even while its prefill is still in chunks
        expect_blocks = sum(math.ceil(max(s.num_prompt_tokens, s.num_computed) / BLOCK) for s in live)
        assert report.blocks_in_use == engine.blocks_in_use == expect_blocks
        assert report.kv_bytes_in_use == expect_blocks * BLOCK * per_token
        # bytes read = every context token of every row of this pass (what attention gathered)
        context = 0
        for rid in report.request_ids:
            seq = next((s for s in live if s.request_id == rid), None)
            done = seq.num_computed if seq is not None else len(engine.finished[rid].prompt_token_ids) + \
                len(engine.finished[rid].token_ids) - 1 + (engine.finished[rid].finish_reason == "stop")
            context += done
        assert report.kv_bytes == context * per_token
    assert engine.blocks_in_use == 0 and engine.kv_bytes_in_use == 0  # every block went back to the pool


def test_decode_kv_bytes_from_positions(make_engine, tiny):
    """Independent of engine internals: in a pure decode pass, row b reads position+1 keys of the token it fed."""
    config = tiny[0].config
    _, tok = tiny
    engine = make_engine()
    for i, n in enumerate([3, 20, 50]):
        engine.add_request(prompt_ids(n, 60 + i, tok.vocab_size, tok.eos_token_id), max_new_tokens=8)
    decodes = [r for r in run_to_end(engine) if r.phase == "decode"]
    assert decodes
    for r in decodes:
        assert r.tokens_out == r.batch  # every row sampled, so positions tell the context lengths
        assert r.kv_bytes == sum(t.position for t in r.tokens) * _per_token_bytes(config)


def test_preemption_keeps_greedy_ids(tiny):
    """A pool of one context window (8 blocks) and three requests that need 12: some are preempted and
    recomputed, and every token is still what an unconstrained engine writes."""
    model, tok = tiny
    prompts = [prompt_ids(20, 80 + i, tok.vocab_size, tok.eos_token_id) for i in range(3)]
    results = {}
    for budget in (1, 10**9):
        engine = Engine(model, tok, kv_budget_bytes=budget, prefix_cache=False)
        rids = [engine.add_request(p, max_new_tokens=40) for p in prompts]
        reports = run_to_end(engine)
        assert all(r.blocks_in_use <= engine.num_blocks for r in reports)
        results[budget] = ([engine.finished[r].token_ids for r in rids], sum(r.tokens_in for r in reports),
                           engine.num_blocks)
    (ids_small, fed_small, blocks_small), (ids_big, fed_big, _) = results[1], results[10**9]
    assert blocks_small == 8
    assert ids_small == ids_big
    assert fed_small > fed_big  # the preempted work was really recomputed


def test_smallest_pool_still_holds_a_full_window(tiny):
    """However small the budget, the pool holds one whole context window, so any single request can finish."""
    model, tok = tiny
    engine = Engine(model, tok, kv_budget_bytes=1, block_size=64)
    assert engine.num_blocks == 2
    rid = engine.add_request(prompt_ids(100, 90, tok.vocab_size, tok.eos_token_id), max_new_tokens=60)
    run_to_end(engine)
    res = engine.finished[rid]
    assert res.finish_reason in ("context_full", "stop")
    assert engine.blocks_in_use == 0


# ---- BlockManager alone -------------------------------------------------------------------------------------

def test_block_manager_prefix_sharing_and_refcounts():
    bm = BlockManager(num_blocks=6, block_size=4)
    a = list(range(10))  # blocks [0..3] [4..7] [8, 9]
    ta = bm.allocate_prompt(a)
    assert len(ta.blocks) == 3 and ta.prefix_hit_tokens == 0 and bm.blocks_in_use == 3
    bm.register_full_blocks(ta, a, num_computed=10)
    tb = bm.allocate_prompt(list(range(8)) + [99])  # shares the two full blocks
    assert tb.prefix_hit_tokens == 8 and tb.blocks[:2] == ta.blocks[:2] and bm.blocks_in_use == 4
    assert bm.blocks[ta.blocks[0]].ref_count == 2
    bm.free_table(ta)
    assert bm.blocks_in_use == 3  # shared blocks stay with b
    bm.free_table(tb)
    assert bm.blocks_in_use == 0
    tc = bm.allocate_prompt(list(range(8)) + [7])  # freed but still hashed: a later request hits them
    assert tc.prefix_hit_tokens == 8
    # an exact multiple of the block size: the last block is computed, never matched, so one token is fed
    td = bm.allocate_prompt(list(range(8)))
    assert td.prefix_hit_tokens == 4


def test_block_manager_refuses_when_full_and_changes_nothing():
    bm = BlockManager(num_blocks=2, block_size=4, prefix_caching=False)
    t = bm.allocate_prompt([1, 2, 3, 4, 5])
    assert bm.allocate_prompt([1] * 5) is None and bm.blocks_in_use == 2
    assert bm.ensure_capacity(t, 8) and not bm.ensure_capacity(t, 9) and len(t.blocks) == 2
    bm.free_table(t)
    assert bm.blocks_in_use == 0 and bm.allocate_prompt([1] * 8) is not None


def test_paged_cache_write_then_gather_roundtrip():
    cache = PagedKVCache(n_layer=2, n_head=2, head_dim=3, num_blocks=4, block_size=4)
    k = torch.randn(1, 5, 2, 3)
    v = torch.randn(1, 5, 2, 3)
    slots = torch.tensor([[13, 2, 7, 0, 9]])
    cache.k[0, :cache.scratch_slot].fill_(7.0)
    cache.write(1, slots, k, v)
    gk, gv = cache.gather(1, slots)
    assert torch.equal(gk, k) and torch.equal(gv, v)
    assert bool((cache.k[0, :cache.scratch_slot] == 7.0).all())  # layer 0 untouched
    assert torch.count_nonzero(cache.k[:, cache.scratch_slot]) == 0  # padding reads zeros, never garbage
    assert torch.count_nonzero(cache.v[:, cache.scratch_slot]) == 0


def test_paged_cache_view_reads_a_run_of_slots_in_place():
    cache = PagedKVCache(n_layer=2, n_head=2, head_dim=3, num_blocks=4, block_size=4)
    k, v = torch.randn(1, 6, 2, 3), torch.randn(1, 6, 2, 3)
    slots = torch.arange(5, 11)[None]
    cache.write(0, slots, k, v)
    vk, vv = cache.view(0, 5, 6)
    gk, gv = cache.gather(0, slots)
    assert torch.equal(vk, gk) and torch.equal(vv, gv) and vk.shape == (1, 6, 2, 3)
    assert vk.data_ptr() == cache.k[0, 5].data_ptr()  # no copy
    assert cache.nbytes == 2 * 2 * (4 * 4 + 1) * 2 * 3 * 4
