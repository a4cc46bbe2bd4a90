"""``python main.py generate``: drive the engine from the command line.

    python main.py generate PROMPT [PROMPT ...] [--max-new-tokens N] [--greedy | --temperature T] [--top-k K]
        [--top-p P] [--seed S] [--batching continuous|static] [--max-batch N] [--max-step-tokens N]
        [--no-kv-cache] [--no-prefix-cache]
        [--model DIR] [--device cpu|cuda] [--threads N] [--tp N | --pp N] [--json]
        [--draft model|ngram] [--draft-model DIR] [--draft-k K] [--weights fp32|fp16|int8]
        [--remeasure-floor]

Several prompts form one batch. A PROMPT of ``-`` is read from stdin (UTF-8), for text longer than the
command line allows (Linux caps one argument at 128 KiB). With ``--json`` stdout is one JSON object (the shape is
a contract other tools rely on; see ``result_json``). Bad input prints one line to stderr and exits with status 2.
``--tp N`` / ``--pp N`` run the model torn over N worker processes (tensor or pipeline parallel,
``model/parallel/``); each JSON step then carries ``workers``: per worker ``compute_ms``, ``comm_ms``,
``bubble_ms`` (pipeline idle time; 0 for tensor parallel) and ``weight_bytes``. If a worker dies, generation
goes on with the model on one process (a notice on stderr).
Each JSON step carries ``rows_computed``: rows the linear layers computed in that pass, equal to ``tokens_in``
(passes are ragged, ``model/ragged.py``) except on sharded runs, whose passes are padded (B × the longest row).
``--max-step-tokens N`` is the chunk size of chunked prefill, so a mixed workload can be driven from here.
``--weights fp32|fp16|int8`` is the precision of the target's weights (``model/quantize.py``; every weight product
goes through ``model/weight_mm.py``): fp16 is half the bytes (FBGEMM's fp16 kernel on the CPU), int8 one float32
scale per row (about a quarter). Without it, the machine's default: fp16 where its kernel measures faster than
fp32's, measured once per machine and kept with the floor's read speed (``--remeasure-floor`` measures both again).
The JSON's ``model.weights`` says which, ``model.weight_bytes`` counts the bytes really held, and
``model.weights_choice`` says how it was chosen (``model/weight_mm.py: choose_precision``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import assets
from model.argtypes import OneLineParser, command_name, float_in, int_in, say, threads_arg
from model.catalog import BundledModel

ASSETS = assets.root()  # importlib.resources: a checkout, an editable install or site-packages
BUNDLED_MODEL = ASSETS / "models" / "target-big"  # the big code book (model/catalog.py CODE)
BUNDLED_DRAFT = ASSETS / "models" / "target"  # its apprentice: the pocket code book
DEFAULT_DRAFT_K = 4  # guesses per verify pass when --draft is given without --draft-k (docs/benchmarks.md)


# Sampling by default, as the window does (model/catalog.py: temperature 0.8, top-p 0.95): greedy decoding of a
# 4.9M-parameter model falls into loops within a few dozen tokens ("the number of the number of ..."), and a
# newcomer's first command should show text they believe. A fixed seed keeps the output the same every run.
DEFAULT_TEMPERATURE = BundledModel.temperature
DEFAULT_TOP_P = BundledModel.top_p
DEFAULT_SEED = 0

MAX_NEW_TOKENS = 1_000_000  # far past any context window: the run stops at the window anyway ("context_full")
MAX_BATCH = 256  # the engine's most sequences per forward pass
MIN_SEED, MAX_SEED = -2**63, 2**64 - 1  # what torch.Generator.manual_seed accepts (model.sampling.SamplingParams)


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog=command_name("generate"),
                                description="Generate text with the engine and report every forward pass.")
    p.add_argument("prompts", nargs="+", metavar="PROMPT",
                   help="one or more prompts; several form one batch; - reads one from stdin")
    p.add_argument("--max-new-tokens", type=int_in(1, MAX_NEW_TOKENS), default=64, metavar="N",
                   help=f"tokens to write per prompt, 1-{MAX_NEW_TOKENS:,} (the context window stops it sooner)")
    sampling = p.add_mutually_exclusive_group()  # "--greedy --temperature 0.7" would silently drop one of them
    sampling.add_argument("--temperature", type=float_in(0.0, 100.0, "a temperature"), default=DEFAULT_TEMPERATURE,
                          metavar="T",
                   help=f"sampling temperature, 0 = greedy (default {DEFAULT_TEMPERATURE:g}, as the window samples: "
                        "greedy decoding of a small model soon loops)")
    sampling.add_argument("--greedy", action="store_true",
                   help="always the most likely token (same as --temperature 0): the exactness demos use it")
    p.add_argument("--top-k", type=int_in(0, 2**31 - 1), default=0, metavar="K", help="0 = no limit")
    p.add_argument("--top-p", type=_float, default=DEFAULT_TOP_P, metavar="P",
                   help=f"nucleus sampling, 1.0 = no limit (default {DEFAULT_TOP_P:g}, as the window)")
    p.add_argument("--seed", type=int_in(MIN_SEED, MAX_SEED, "a seed"), default=DEFAULT_SEED, metavar="S",
                   help=f"RNG seed (default {DEFAULT_SEED}: the same text every run); request i uses S + i so "
                        "prompts in a batch draw independently")
    p.add_argument("--batching", choices=("continuous", "static"), default="continuous")
    p.add_argument("--max-batch", type=int_in(1, MAX_BATCH), default=None, metavar="N",
                   help=f"most sequences per forward pass, 1-{MAX_BATCH} (default: all prompts)")
    p.add_argument("--max-step-tokens", type=int_in(1, 1_000_000), default=512, metavar="N",
                   help="most tokens fed in one forward pass: the chunk size of chunked prefill (default 512)")
    p.add_argument("--no-kv-cache", action="store_true", help="recompute the whole sequence every step")
    p.add_argument("--no-prefix-cache", action="store_true")
    p.add_argument("--model", default=None, metavar="DIR",
                   help="a GPT-2 directory in Hugging Face layout (default: the bundled model)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--threads", type=threads_arg(), default=None, metavar="N",
                   help="torch intra-op threads, 1-256 (default: cores - 1, at least 1)")
    p.add_argument("--draft-k", type=int_in(0, 8, "a number of draft guesses"), default=None, metavar="K",
                   help="speculative decoding: draft guesses per verify pass, 0 (off) to 8 "
                        f"(default: {DEFAULT_DRAFT_K} with --draft or --draft-model, else 0)")
    p.add_argument("--draft-stop", type=float_in(0.0, 1.0, "a probability"), default=None, metavar="P",
                   help="the draft model stops guessing once its likeliest token has a probability under P, 0-1 "
                        "(0: always K guesses; default: the engine's, DRAFT_STOP_BELOW in model/speculative.py)")
    p.add_argument("--draft", choices=("model", "ngram"), default=None,
                   help="the apprentice: a draft model, or ngram (prompt lookup: guesses copied from the "
                        "request's own earlier text, no model)")
    p.add_argument("--draft-model", default=None, metavar="DIR",
                   help="draft model directory (default: the bundled draft); implies --draft model")
    p.add_argument("--layer-timing", action="store_true", help="also time every layer")
    p.add_argument("--remeasure-floor", action="store_true",
                   help="measure the memory's read speed for the floor and the default weights' kernels again (both "
                        "are measured once per machine and kept in the user's cache folder)")
    p.add_argument("--weights", choices=("fp32", "fp16", "int8"), default=None,
                   help="the target's weights: fp32, fp16 (half the bytes) or int8 with a float32 scale per row "
                        "(about a quarter; CPU only, one process). Default: fp16 where it measures faster here, "
                        "else fp32 (measured once per machine)")
    shard = p.add_mutually_exclusive_group()
    shard.add_argument("--tp", type=int_in(1, 64), default=1, metavar="N",
                       help="tensor parallel over N worker processes (N divides n_head)")
    shard.add_argument("--pp", type=int_in(1, 64), default=1, metavar="N",
                       help="pipeline parallel over N worker processes (N <= n_layer)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of streaming text")
    return p


def setup_torch(threads: int | None, device: str) -> tuple[int, str]:
    """Set torch's intra-op threads once; check the device. Returns (threads, device).

    Raises ValueError if ``device`` is cuda and no CUDA device is available.
    """
    import torch

    from model.engine import default_threads
    n = threads or default_threads()
    torch.set_num_threads(n)
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for, but torch sees no CUDA device here")
    return n, device


def merged_notice(found: list[str] | None, engine_notice: str | None) -> str | list[str] | None:
    """One request's ``notice`` field: None when nothing was noticed, the sentence when one thing was, a list
    of sentences when several were: ``found`` (the command line's, e.g. a prompt that was not valid UTF-8)
    first, then the engine's (``engine_notice``, whose parts ``Engine.encode_prompt`` joins with "; ")."""
    items = list(found or [])
    if engine_notice:
        items.extend(part.strip() for part in engine_notice.split("; ") if part.strip())
    return None if not items else items[0] if len(items) == 1 else items


def result_json(engine, reports, request_ids, elapsed_s: float, threads: int, device: str,
                notices: list[list[str]] | None = None) -> dict:
    """The ``--json`` object: model, requests (in prompt order), steps, tokens_per_s (+ threads, device).

    Each request's ``notice`` is None, one sentence, or a list of sentences when there are several: the
    command line's (``notices[i]``, e.g. a prompt that was not valid UTF-8) and the engine's (a prompt cut to
    fit), see ``merged_notice``.
    """
    generated = sum(len(engine.finished[r].token_ids) for r in request_ids)
    requests = []
    for i, rid in enumerate(request_ids):
        res = engine.finished[rid].to_dict()
        res["notice"] = merged_notice(notices[i] if notices and i < len(notices) else None, res.get("notice"))
        requests.append(res)
    steps = [{"phase": r.phase, "batch": r.batch, "tokens_in": r.tokens_in, "rows_computed": r.rows_computed,
              "tokens_out": r.tokens_out,
              "wall_ms": r.wall_ms, "forward_ms": r.forward_ms, "weight_read_ms": r.weight_read_ms,
              "weight_bytes": r.weight_bytes,
              "kv_bytes": r.kv_bytes, "blocks_in_use": r.blocks_in_use, "prefix_hit_tokens": r.prefix_hit_tokens,
              "proposed": r.proposed, "accepted": r.accepted, "draft_ms": r.draft_ms, "verify_ms": r.verify_ms,
              **({"draft_weight_read_ms": r.draft_weight_read_ms} if r.draft_weight_read_ms else {}),
              **({"layer_ms": r.layer_ms} if r.layer_ms else {}), **({"workers": r.workers} if r.workers else {}),
              "stages": r.stages}
             for r in reports]
    decode_steps = [r for r in reports if r.phase in ("decode", "verify")]
    return {"model": {k: v for k, v in engine.model_info().items() if k != "layer_weight_bytes"},
            "requests": requests, "steps": steps,
            "tokens_per_s": generated / elapsed_s if elapsed_s > 0 else 0.0,
            "acceptance_rate": engine.acceptance_rate,
            "draft_kind": engine.draft_kind if engine.draft_k else None,
            "draft_stop_below": engine.draft_stop_below if engine.draft_k and engine.draft_kind == "model" else None,
            # tokens written per decode trip and sequence: 1 without a draft, up to k + 1 with one
            "tokens_per_trip": (sum(r.tokens_out for r in decode_steps) / sum(r.batch for r in decode_steps)
                                if decode_steps else None),
            "threads": threads, "device": device}


INVALID_UTF8 = "not valid UTF-8: the bytes that are not are read as U+FFFD (\ufffd)"


def generate_main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seed + len(args.prompts) - 1 > MAX_SEED:  # request i draws with seed S + i
        parser.error(f"argument --seed: with {len(args.prompts)} prompts (seeds S to S + {len(args.prompts) - 1}) "
                     f"S must be at most {MAX_SEED - len(args.prompts) + 1:,}, got {args.seed:,}")
    if args.greedy:
        args.temperature = 0.0
    from model.tokenizer import valid_text
    args.notices = [[] for _ in args.prompts]  # per prompt: what the command line found before the engine did
    if "-" in args.prompts:
        try:
            raw = sys.stdin.buffer.read()
        except (AttributeError, OSError, ValueError) as exc:  # no stdin at all (<&-), a read error
            return say(command_name("generate"), f"a PROMPT of - reads stdin, which cannot be read "
                                                 f"({'closed' if sys.stdin is None else exc})")
        text = raw.decode("utf-8", errors="replace")
        for i, p in enumerate(args.prompts):
            if p == "-" and text.encode("utf-8") != raw:
                args.notices[i].append(f"stdin is {INVALID_UTF8}")
        if text.encode("utf-8") != raw:
            print(f"notice: stdin is {INVALID_UTF8}", file=sys.stderr)
        args.prompts = [text if p == "-" else p for p in args.prompts]
    for i, prompt in enumerate(args.prompts):
        clean = valid_text(prompt)  # argv smuggles invalid bytes in as surrogates; the model reads U+FFFD
        if clean is not prompt:
            print(f"notice: prompt {i + 1} is {INVALID_UTF8}", file=sys.stderr)
            args.notices[i].append(f"prompt is {INVALID_UTF8}")
            args.prompts[i] = clean
    from model.errors import ModelLoadError, RequestError, ShardingError
    try:
        return _generate(args)
    except (ModelLoadError, RequestError, ValueError, ShardingError) as e:
        print(f"{command_name('generate')}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _generate(args) -> int:
    threads, device = setup_torch(args.threads, args.device)
    from model.checkpoint import load_pretrained
    from model.engine import Engine

    model_dir = Path(args.model) if args.model else BUNDLED_MODEL
    model, tokenizer = load_pretrained(model_dir, device=device)
    if args.weights == "int8" and (args.tp > 1 or args.pp > 1):
        raise ValueError("--weights int8 runs on one process; leave out --tp/--pp (the workers hold fp32 or fp16 "
                         "shards)")
    from model.quantize import set_precision
    from model.weight_mm import choose_precision
    choice = choose_precision(args.weights, model.config.n_embd, model.weight_bytes(), device,
                              remeasure=args.remeasure_floor)
    set_precision(model, choice["precision"])
    if args.remeasure_floor and device == "cpu":  # the floor's read speed, kept beside the choice: measured again too
        from model.hardware import decode_floors
        decode_floors(model.weight_bytes(), remeasure=True)
    engine = Engine(model, tokenizer, max_batch=min(args.max_batch or len(args.prompts), MAX_BATCH),
                    batching=args.batching, kv_cache=not args.no_kv_cache, max_step_tokens=args.max_step_tokens,
                    prefix_cache=not args.no_prefix_cache, layer_timing=args.layer_timing)
    engine.weights_choice = choice
    kind = args.draft or "model"
    if args.draft == "ngram" and args.draft_model:
        raise ValueError("--draft ngram uses no draft model; leave out --draft-model")
    k = args.draft_k if args.draft_k is not None else (DEFAULT_DRAFT_K if args.draft or args.draft_model else 0)
    if k and kind == "model":
        from model.catalog import identify
        from model.errors import ModelLoadError
        bundled = identify(model_dir)  # a bundled target brings its own draft (the poems model, its poems draft)
        draft_dir = Path(args.draft_model) if args.draft_model else (bundled.draft_path() if bundled else BUNDLED_DRAFT)
        try:
            draft, draft_tokenizer = load_pretrained(draft_dir, device=device)
        except ModelLoadError as e:  # say which of the two models it is
            raise ModelLoadError(f"draft model: {e}") from None
        engine.set_draft(draft, draft_tokenizer)
    if k:
        engine.set_draft_kind(kind)
        engine.set_draft_k(k)
    if args.draft_stop is not None:
        engine.draft_stop_below = args.draft_stop
    runner = None
    if args.tp > 1 or args.pp > 1:
        from model.parallel import ShardedRunner
        mode, n = ("tp", args.tp) if args.tp > 1 else ("pp", args.pp)
        runner = ShardedRunner.from_engine(engine, mode, n)
        engine.set_runner(runner)
    try:
        return _generate_on(args, engine, threads, device)
    finally:
        if runner is not None:
            runner.close()


def _run_with_fallback(engine):
    """``engine.run()``, except that a sharded pass whose worker died goes on with the model on this process."""
    from model.errors import ShardingError
    while engine.has_work():
        try:
            report = engine.step()
        except ShardingError as e:
            print(f"notice: {e}; the sharded run stops and generation goes on with the whole model in this "
                  f"one process (same tokens, no worker timings)", file=sys.stderr)
            engine.runner.close()
            engine.set_runner(None)
            continue
        if report is None:
            break
        yield report


def _generate_on(args, engine, threads: int, device: str) -> int:
    from model.sampling import SamplingParams

    ids = []
    for i, prompt in enumerate(args.prompts):
        sampling = SamplingParams(temperature=args.temperature, top_k=args.top_k, top_p=args.top_p,
                                  seed=None if args.seed is None else args.seed + i)
        ids.append(engine.add_request(prompt, max_new_tokens=args.max_new_tokens, sampling=sampling))
    for seq in engine.sequences():
        if seq.notice:
            print(f"notice: {seq.request_id}: {seq.notice}", file=sys.stderr)
    stream = not args.json and len(ids) == 1
    if stream:
        print(_prompt_read(engine, ids[0], args.prompts[0]), end="", flush=True)
    reports = []
    t0 = time.perf_counter()
    for report in _run_with_fallback(engine):
        reports.append(report)
        if stream:
            print("".join(t.text for t in report.tokens), end="", flush=True)
    elapsed = time.perf_counter() - t0
    result = result_json(engine, reports, ids, elapsed, threads, device, getattr(args, "notices", None))
    if args.json:
        write_json(result)
        return 0
    if stream:
        print()
    else:
        for rid, prompt in zip(ids, args.prompts):
            print(f"[{rid}] {_prompt_read(engine, rid, prompt)}{engine.finished[rid].text}")
    _print_summary(result, reports)
    return 0


def _prompt_read(engine, request_id: str, prompt: str) -> str:
    """The prompt as the model reads it: the text itself, or, when it was cut (too long), the kept part."""
    seq = next((s for s in engine.sequences() if s.request_id == request_id), None) \
        or engine.finished.get(request_id)
    if seq is None or not getattr(seq, "notice", None) or "cut" not in seq.notice:
        return prompt
    ids = getattr(seq, "prompt_token_ids", None)
    if ids is None:
        ids = seq.token_ids[:seq.num_prompt_tokens]
    return engine.tokenizer.decode(ids)


def write_json(obj) -> None:
    """One JSON object and a newline on stdout, always valid UTF-8 whatever stdout's own encoding (written as
    bytes; any surrogate that slipped through becomes U+FFFD)."""
    from model.tokenizer import valid_text
    text = valid_text(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text-only stream (tests' StringIO)
        sys.stdout.write(text)
    else:
        out.write(text.encode("utf-8"))
        out.flush()


def _print_summary(result: dict, reports) -> None:
    decode = [r.wall_ms for r in reports if r.phase in ("decode", "verify")]  # a verify pass is a decode trip
    prefill = [r.wall_ms for r in reports if r.phase not in ("decode", "verify")]
    m = result["model"]
    lines = [f"model {m['name']}: {m['parameters']:,} parameters, {m['weight_bytes'] / 1e6:.1f} MB, "
             f"{result['threads']} thread{'' if result['threads'] == 1 else 's'} on {result['device']}",
             f"{len(reports)} forward passes: prefill {sum(prefill):.1f} ms, "
             f"decode median {sorted(decode)[len(decode) // 2]:.2f} ms/step" if decode else
             f"{len(reports)} forward passes: prefill {sum(prefill):.1f} ms",
             f"time to first token {min(r['ttft_ms'] or 0 for r in result['requests']):.1f} ms, "
             f"{result['tokens_per_s']:.1f} tokens/s"]
    for r in result["requests"]:
        if r["finish_reason"] != "length":
            lines.append(f"finish: {r['finish_reason']}")
    print("\n".join(lines), file=sys.stderr)
