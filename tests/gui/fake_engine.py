"""A fake engine process that speaks the engine protocol (model.service) without torch.

It answers like the real one: ``ready`` at start, ``accepted`` per submit, one ``step`` per granted forward pass
(continuous batching up to ``max_batch``), ``finished`` per request, ``idle`` when nothing is left.
Tokens are deterministic: request text is echoed word by word, so tests can compare the screen to it.
``options["die_after_steps"]`` makes the process exit abruptly after that many steps (for restart tests); with
``options["die_once_marker"]`` (a file path) it dies only if that file does not exist yet, and creates it.
``options["fake_sharding"]`` ("tp" or "pp") reports the book torn over two desks: every step carries two workers
whose compute / communication / bubble ms change from step to step (and lie inside the step's ``wall_ms``, as
the real workers' do); with it or ``options["fake_timing"]`` the steps' ``wall_ms`` and ``forward_ms`` (a part
of it) change from step to step too, so the screen's figures of one trip and of a window can be compared.
Each step's ``weight_read_ms`` is ``options["fake_read_share"]`` (default 0.7) of its ``forward_ms``.
``options["fake_loop"]`` makes every answer a loop (" of the number" again and again, never stopped by the fake:
the page must stop it). ``options["fake_extras"]`` offers the Live page's extras with nothing behind them: both apprentices
(``draft_kinds``; a guess count is taken and ignored) and a book on one desk that may be torn two ways, by pages or
by chapters (each ``set_sharding`` is answered at once with a ``sharding`` event), so that every control of the
page has something to do (tests/gui/kiosk/test_touch.py taps them all).
"""

from __future__ import annotations

import os
import queue
import time

WORDS = ["one", "trip", "one", "token", "the", "book", "goes", "to", "the", "desk"]


LOOP_WORDS = ["of", "the", "number"]  # ``options["fake_loop"]``: every answer is " of the number" again and again


def fake_tokens(prompt: str, n: int) -> list[str]:
    """The texts the fake engine writes for ``prompt`` (a pure function, shared with the tests). Each round of
    the ten words starts one word later than the one before, so an answer never writes the same phrase three
    times in a row (a loop, model/loops.py, which the page stops)."""
    start = len(prompt) % len(WORDS)
    return [" " + WORDS[(start + i + i // len(WORDS)) % len(WORDS)] for i in range(n)]


def loop_tokens(n: int) -> list[str]:
    """The texts of a looping model (``options["fake_loop"]``): " of the number of the number ..."."""
    return [" " + LOOP_WORDS[i % len(LOOP_WORDS)] for i in range(n)]


def fake_stages(n_layer: int) -> list[str]:
    """The stages a real engine's plain step with a KV cache reports (model/stages.py ``forward_stages``)."""
    layers = [f"{name}:{i}" for i in range(n_layer) for name in ("attention", "kv_write", "mlp")]
    return ["schedule", "pack", "embedding", *layers, "lm_head", "sample"]


def engine_main(commands, events, options: dict) -> None:
    shard_mode = options.get("fake_sharding")
    extras = bool(options.get("fake_extras"))
    vary = bool(shard_mode or options.get("fake_timing"))
    n_layer = 2
    layer_bytes = [40_000] * n_layer
    events.put({"type": "ready", "model": {
        "name": "fake-gpt2", "n_layer": n_layer, "n_head": 2, "n_embd": 32, "n_positions": 128,
        "vocab_size": 300, "parameters": 30_000, "weight_bytes": sum(layer_bytes) + 20_000,
        "layer_weight_bytes": layer_bytes}, "threads": 1, "device": "cpu",
        "memory_bandwidth_bytes_per_s": 10e9, "kv_bytes_per_block": 4096, "block_size": 16, "num_blocks": 64,
        **({"sharding": {"mode": shard_mode, "n": 2, "degrees_tp": [1, 2], "max_pp": 2,
                         "workers": [{"rank": r, "layers": [r, r + 1]} for r in range(2)] if shard_mode == "pp"
                         else []}} if shard_mode else {}),
        **({"draft_kinds": ["ngram", "model"], "sharding": {"mode": "tp", "n": 1, "degrees_tp": [1, 2], "max_pp": 2}}
           if extras else {})})
    max_batch = int(options.get("max_batch", 1))
    die_after = options.get("die_after_steps")
    grants = 0
    free_run = False
    waiting: list[dict] = []
    running: list[dict] = []
    step = 0
    announced_idle = True
    while True:
        busy = bool(waiting or running) and (free_run or grants > 0)
        try:
            cmd = commands.get_nowait() if busy else commands.get(timeout=0.05)
        except queue.Empty:
            cmd = None
        if cmd is not None:
            op = cmd.get("op")
            if op == "shutdown":
                return
            if op == "submit":
                prompt = cmd["prompt"]
                ids = [ord(c) % 256 for c in prompt][:64]
                if not prompt:
                    events.put({"type": "error", "message": "empty prompt"})
                    continue
                waiting.append({"id": cmd["request_id"], "prompt": prompt, "n": 0,
                                "max": int(cmd["max_new_tokens"]), "len": len(ids), "prefilled": False,
                                "texts": (loop_tokens if options.get("fake_loop") else
                                          lambda n: fake_tokens(prompt, n))(int(cmd["max_new_tokens"]))})
                events.put({"type": "accepted", "request_id": cmd["request_id"], "prompt_token_ids": ids,
                            "prompt_labels": list(prompt[:64]), "notice": None})
                announced_idle = False
            elif op == "grant":
                grants += int(cmd["n"])
            elif op == "free_run":
                free_run = bool(cmd["on"])
            elif op == "set_max_batch":
                max_batch = max(1, int(cmd["n"]))
            elif op == "reset":
                waiting.clear()
                running.clear()
                grants = 0
            elif op == "set_sharding" and extras:
                n = int(cmd["n"])  # like the real engine: a book torn by chapters says each worker's layers
                workers = [{"rank": r, "layers": [r * n_layer // n, (r + 1) * n_layer // n]} for r in range(n)] \
                    if cmd["mode"] == "pp" and n > 1 else []
                events.put({"type": "sharding", "mode": str(cmd["mode"]), "n": n, "workers": workers})
            continue
        if not (waiting or running):
            if not announced_idle:
                events.put({"type": "idle"})
                announced_idle = True
            continue
        if not (free_run or grants > 0):
            continue
        while waiting and len(running) < max_batch:
            running.append(waiting.pop(0))
        batch = running[:max_batch]
        t0 = time.perf_counter()
        time.sleep(0.002)
        tokens = []
        phase_set = set()
        for r in batch:
            phase_set.add("decode" if r["prefilled"] else "prefill")
            r["prefilled"] = True
            text = r["texts"][r["n"]]
            r["n"] += 1
            finish = "length" if r["n"] >= r["max"] else None
            word = text.strip()
            tokens.append({"request_id": r["id"],
                           "token_id": 100 + (WORDS.index(word) if word in WORDS else 20 + LOOP_WORDS.index(word)),
                           "position": r["len"] + r["n"] - 1, "text": text, "label": "␣" + text.strip(),
                           "top5": [[100, "␣one", 0.5]], "finish_reason": finish})
        wall = (time.perf_counter() - t0) * 1000
        step += 1
        workers = []
        forward = wall
        if vary:  # timings that differ per step: the last trip and the running average disagree
            wall = 4.0 + 7.0 * (step % 3)
            forward = wall * (0.6 + 0.1 * (step % 4))
        if shard_mode:
            for rank in range(2):
                compute = wall * (0.2 + 0.1 * rank)
                other = wall * (0.5 - 0.2 * rank) * (1 if step % 2 else 0.4)
                workers.append({"rank": rank, "compute_ms": compute, "comm_ms": other if shard_mode == "tp" else 0.0,
                                "bubble_ms": other if shard_mode == "pp" else 0.0, "weight_bytes": 60_000})
        if grants > 0 and not free_run:
            grants -= 1
        events.put({"type": "step", "report": {
            "step": step, "phase": phase_set.pop() if len(phase_set) == 1 else "mixed",
            "request_ids": [r["id"] for r in batch], "batch": len(batch),
            "tokens_in": sum(1 for _ in batch), "tokens_out": len(batch), "wall_ms": wall, "forward_ms": forward,
            "weight_bytes": 100_000, "kv_bytes": 0, "kv_bytes_in_use": 4096, "blocks_in_use": len(batch),
            "num_blocks": 64, "prefix_hit_tokens": 0, "layer_ms": [wall / 2, wall / 2], "tokens": tokens,
            "weight_read_ms": forward * float(options.get("fake_read_share", 0.7)),  # a measured part of the forward
            "proposed": 0, "accepted": 0, "bonus": 0, "draft_ms": 0.0, "verify_ms": 0.0, "workers": workers,
            "stages": fake_stages(n_layer)}})
        for r in list(batch):
            if r["n"] >= r["max"]:
                running.remove(r)
                events.put({"type": "finished", "request_id": r["id"], "text": "".join(r["texts"][:r["n"]]),
                            "finish_reason": "length", "ttft_ms": 1.0})
        if die_after is not None and step >= int(die_after):
            marker = options.get("die_once_marker")
            if marker is None or not os.path.exists(marker):
                if marker is not None:
                    open(marker, "w").close()
                os._exit(3)
