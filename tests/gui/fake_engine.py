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
the page must stop it). ``options["fake_extras"]`` offers the Live page's extras with nothing behind them: both
apprentices (``draft_kinds``; a guess count is taken and ignored) and a book on one desk that may be torn two
ways, by pages or by chapters (each ``set_sharding`` is answered at once with a ``sharding`` event), so that every
control of the page has something to do (tests/gui/kiosk/test_touch.py taps them all).
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


def _ready_event(n_layer: int, layer_bytes: list[int], shard_mode: str | None, extras: bool) -> dict:
    """The ``ready`` event of a fake two-layer model, with the torn book or the Live page's extras offered."""
    return {"type": "ready", "model": {
        "name": "fake-gpt2", "n_layer": n_layer, "n_head": 2, "n_embd": 32, "n_positions": 128,
        "vocab_size": 300, "parameters": 30_000, "weight_bytes": sum(layer_bytes) + 20_000,
        "layer_weight_bytes": layer_bytes}, "threads": 1, "device": "cpu",
        "memory_bandwidth_bytes_per_s": 10e9, "kv_bytes_per_block": 4096, "block_size": 16, "num_blocks": 64,
        **({"sharding": {"mode": shard_mode, "n": 2, "degrees_tp": [1, 2], "max_pp": 2,
                         "workers": [{"rank": r, "layers": [r, r + 1]} for r in range(2)] if shard_mode == "pp"
                         else []}} if shard_mode else {}),
        **({"draft_kinds": ["ngram", "model"], "sharding": {"mode": "tp", "n": 1, "degrees_tp": [1, 2], "max_pp": 2}}
           if extras else {})}


def _token_event(r: dict, text: str) -> dict:
    """One ``step`` report's token for request ``r`` (its count ``n`` already advanced past ``text``)."""
    finish = "length" if r["n"] >= r["max"] else None
    word = text.strip()
    return {"request_id": r["id"],
            "token_id": 100 + (WORDS.index(word) if word in WORDS else 20 + LOOP_WORDS.index(word)),
            "position": r["len"] + r["n"] - 1, "text": text, "label": "␣" + text.strip(),
            "top5": [[100, "␣one", 0.5]], "finish_reason": finish}


def _fake_workers(shard_mode: str | None, wall: float, step: int) -> list[dict]:
    """Two workers' compute / communication / bubble ms (inside the step's ``wall`` ms) for a torn book."""
    workers = []
    if shard_mode:
        for rank in range(2):
            compute = wall * (0.2 + 0.1 * rank)
            other = wall * (0.5 - 0.2 * rank) * (1 if step % 2 else 0.4)
            workers.append({"rank": rank, "compute_ms": compute, "comm_ms": other if shard_mode == "tp" else 0.0,
                            "bubble_ms": other if shard_mode == "pp" else 0.0, "weight_bytes": 60_000})
    return workers


class _FakeEngine:
    """The fake engine's state between commands: the queues of requests, the granted passes, the step count."""

    def __init__(self, events, options: dict) -> None:
        self.events, self.options = events, options
        self.shard_mode = options.get("fake_sharding")
        self.extras = bool(options.get("fake_extras"))
        self.vary = bool(self.shard_mode or options.get("fake_timing"))
        self.n_layer = 2
        self.layer_bytes = [40_000] * self.n_layer
        self.max_batch = int(options.get("max_batch", 1))
        self.die_after = options.get("die_after_steps")
        self.grants = 0
        self.free_run = False
        self.waiting: list[dict] = []
        self.running: list[dict] = []
        self.step = 0
        self.announced_idle = True

    def busy(self) -> bool:
        """Whether there is work and a pass to do it with."""
        return bool(self.waiting or self.running) and (self.free_run or self.grants > 0)

    def handle(self, cmd: dict) -> bool:
        """Obey one command; False for ``shutdown``."""
        op = cmd.get("op")
        if op == "shutdown":
            return False
        if op == "submit":
            self._submit(cmd)
        elif op == "grant":
            self.grants += int(cmd["n"])
        elif op == "free_run":
            self.free_run = bool(cmd["on"])
        elif op == "set_max_batch":
            self.max_batch = max(1, int(cmd["n"]))
        elif op == "reset":
            self.waiting.clear()
            self.running.clear()
            self.grants = 0
        elif op == "set_sharding" and self.extras:
            n = int(cmd["n"])  # like the real engine: a book torn by chapters says each worker's layers
            workers = [{"rank": r, "layers": [r * self.n_layer // n, (r + 1) * self.n_layer // n]} for r in range(n)] \
                if cmd["mode"] == "pp" and n > 1 else []
            self.events.put({"type": "sharding", "mode": str(cmd["mode"]), "n": n, "workers": workers})
        return True

    def _submit(self, cmd: dict) -> None:
        """Queue a request (its answer written in advance) and say ``accepted``; an empty prompt is an error."""
        prompt = cmd["prompt"]
        ids = [ord(c) % 256 for c in prompt][:64]
        if not prompt:
            self.events.put({"type": "error", "message": "empty prompt"})
            return
        self.waiting.append({"id": cmd["request_id"], "prompt": prompt, "n": 0,
                             "max": int(cmd["max_new_tokens"]), "len": len(ids), "prefilled": False,
                             "texts": (loop_tokens if self.options.get("fake_loop") else
                                       lambda n: fake_tokens(prompt, n))(int(cmd["max_new_tokens"]))})
        self.events.put({"type": "accepted", "request_id": cmd["request_id"], "prompt_token_ids": ids,
                         "prompt_labels": list(prompt[:64]), "notice": None})
        self.announced_idle = False

    def idle_or_blocked(self) -> bool:
        """True when no pass can be made now (saying ``idle`` once when nothing is left)."""
        if not (self.waiting or self.running):
            if not self.announced_idle:
                self.events.put({"type": "idle"})
                self.announced_idle = True
            return True
        return not (self.free_run or self.grants > 0)

    def trip(self) -> None:
        """One forward pass: a token for every running request, the ``step`` report, ``finished`` events."""
        while self.waiting and len(self.running) < self.max_batch:
            self.running.append(self.waiting.pop(0))
        batch = self.running[:self.max_batch]
        t0 = time.perf_counter()
        time.sleep(0.002)
        tokens = []
        phase_set = set()
        for r in batch:
            phase_set.add("decode" if r["prefilled"] else "prefill")
            r["prefilled"] = True
            text = r["texts"][r["n"]]
            r["n"] += 1
            tokens.append(_token_event(r, text))
        wall = (time.perf_counter() - t0) * 1000
        self.step += 1
        forward = wall
        if self.vary:  # timings that differ per step: the last trip and the running average disagree
            wall = 4.0 + 7.0 * (self.step % 3)
            forward = wall * (0.6 + 0.1 * (self.step % 4))
        workers = _fake_workers(self.shard_mode, wall, self.step)
        if self.grants > 0 and not self.free_run:
            self.grants -= 1
        self.events.put({"type": "step", "report": {
            "step": self.step, "phase": phase_set.pop() if len(phase_set) == 1 else "mixed",
            "request_ids": [r["id"] for r in batch], "batch": len(batch),
            "tokens_in": sum(1 for _ in batch), "tokens_out": len(batch), "wall_ms": wall, "forward_ms": forward,
            "weight_bytes": 100_000, "kv_bytes": 0, "kv_bytes_in_use": 4096, "blocks_in_use": len(batch),
            "num_blocks": 64, "prefix_hit_tokens": 0, "layer_ms": [wall / 2, wall / 2], "tokens": tokens,
            "weight_read_ms": forward * float(self.options.get("fake_read_share", 0.7)),  # a measured part of it
            "proposed": 0, "accepted": 0, "bonus": 0, "draft_ms": 0.0, "verify_ms": 0.0, "workers": workers,
            "stages": fake_stages(self.n_layer)}})
        for r in list(batch):
            if r["n"] >= r["max"]:
                self.running.remove(r)
                self.events.put({"type": "finished", "request_id": r["id"], "text": "".join(r["texts"][:r["n"]]),
                                 "finish_reason": "length", "ttft_ms": 1.0})

    def maybe_die(self) -> None:
        """Exit abruptly after ``die_after_steps`` steps (once only, with ``die_once_marker``)."""
        if self.die_after is not None and self.step >= int(self.die_after):
            marker = self.options.get("die_once_marker")
            if marker is None or not os.path.exists(marker):
                if marker is not None:
                    open(marker, "w").close()
                os._exit(3)


def engine_main(commands, events, options: dict) -> None:
    engine = _FakeEngine(events, options)
    events.put(_ready_event(engine.n_layer, engine.layer_bytes, engine.shard_mode, engine.extras))
    while True:
        try:
            cmd = commands.get_nowait() if engine.busy() else commands.get(timeout=0.05)
        except queue.Empty:
            cmd = None
        if cmd is not None:
            if not engine.handle(cmd):
                return
            continue
        if engine.idle_or_blocked():
            continue
        engine.trip()
        engine.maybe_die()
