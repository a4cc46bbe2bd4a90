"""``python main.py generate``: the --json contract, batching, and bad input that must end in one clear line.

The real command runs in subprocesses (started together, since each pays for importing torch); the many small
bad-argument cases run ``generate_main`` in-process.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from model.cli import generate_main
from model.tokenizer import Tokenizer

ROOT = Path(__file__).resolve().parents[2]

CONTRACT_MODEL = {"name", "n_layer", "n_head", "n_embd", "n_positions", "vocab_size", "parameters", "weight_bytes"}
CONTRACT_REQUEST = {"prompt", "prompt_token_ids", "token_ids", "text", "finish_reason", "ttft_ms"}
CONTRACT_STEP = {"phase", "batch", "tokens_in", "tokens_out", "wall_ms", "weight_bytes", "kv_bytes",
                 "blocks_in_use", "prefix_hit_tokens"}

ODD_TEXTS = [
    "line one\r\nline two\r\n\tindented",
    "\x1b[31mred\x1b[0m and \x1b]0;title\x07",
    "zero\u200bwidth\u200c non\u200djoiner \ufeff",
    "emoji 😀🚀👩‍💻❤️ and 一趟一个字，小抄",
]
BATCH_PROMPTS = ["The quick brown fox", "", "   ", *ODD_TEXTS]
LONG_PROMPT = ("一趟一个字 The quick brown fox jumps. " * 7000)[:200_000]


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "main.py", "generate", *args]


@pytest.fixture(scope="module")
def runs(tiny_model_dir, tmp_path_factory):
    """Every subprocess this module needs, started at once; name -> (returncode, stdout, stderr, seconds)."""
    broken = tmp_path_factory.mktemp("broken") / "model"
    shutil.copytree(tiny_model_dir, broken)
    data = (broken / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(data[:len(data) // 2])
    model = str(tiny_model_dir)
    common = ["--model", model, "--threads", "1"]
    commands = {
        "batch": _cmd(*BATCH_PROMPTS, "--max-new-tokens", "12", "--json", *common),
        "batch_nokv": _cmd(*BATCH_PROMPTS, "--max-new-tokens", "12", "--json", "--no-kv-cache", *common),
        "long": _cmd("-", "--max-new-tokens", "4", *common),  # 200,000 characters exceed one argv entry
        "missing": _cmd("hi", "--model", str(tmp_path_factory.mktemp("empty") / "nowhere"), "--threads", "1"),
        "truncated": _cmd("hi", "--model", str(broken), "--threads", "1"),
        "bad_temperature": _cmd("hi", "--temperature", "abc", *common),
        "cuda": _cmd("hi", "--device", "cuda", *common),
    }
    stdin = {"long": LONG_PROMPT.encode("utf-8")}
    started = {}
    for name, cmd in commands.items():
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started[name] = (proc, time.perf_counter())
    out = {}
    for name, (proc, t0) in started.items():
        stdout, stderr = proc.communicate(stdin.get(name, b""), timeout=240)
        out[name] = (proc.returncode, stdout.decode("utf-8"), stderr.decode("utf-8"), time.perf_counter() - t0)
    return out


def _json(run) -> dict:
    rc, stdout, stderr, _ = run
    assert rc == 0, stderr
    return json.loads(stdout)


def test_json_contract(runs):
    result = _json(runs["batch"])
    assert {"model", "requests", "steps", "tokens_per_s"} <= set(result)
    assert CONTRACT_MODEL <= set(result["model"])
    assert result["model"]["n_layer"] == 2 and result["model"]["n_positions"] == 128
    m = result["model"]
    # no --weights: the machine's default precision, measured (or read back from the cache), fp16 where faster
    assert m["weights_choice"]["asked"] is None and m["weights_choice"]["source"] in ("measured", "cached")
    assert m["weights"] == m["weights_choice"]["precision"] in ("fp32", "fp16")
    assert m["bytes_per_weight"] == {"fp32": 4, "fp16": 2}[m["weights"]]
    if m["weights"] == "fp32":
        assert m["parameters"] * 4 == m["weight_bytes"]
    else:  # fp16 matrices and embeddings; biases and layer norms stay fp32
        assert m["parameters"] * 2 < m["weight_bytes"] < m["parameters"] * 4 * 0.6
    assert len(result["requests"]) == len(BATCH_PROMPTS)
    for req, prompt in zip(result["requests"], BATCH_PROMPTS):
        assert CONTRACT_REQUEST <= set(req)
        assert req["prompt"] == prompt
        assert req["finish_reason"] in ("length", "stop")
        assert isinstance(req["ttft_ms"], (int, float)) and req["ttft_ms"] > 0
        assert all(isinstance(i, int) for i in req["prompt_token_ids"] + req["token_ids"])
    for step in result["steps"]:
        assert CONTRACT_STEP <= set(step)
        assert step["phase"] in ("prefill", "decode", "mixed")
        assert 0 < step["weight_read_ms"] <= step["forward_ms"]  # measured, model/timing.py
    assert result["tokens_per_s"] > 0
    generated = sum(len(r["token_ids"]) for r in result["requests"])
    assert sum(s["tokens_out"] for s in result["steps"]) >= generated


def test_prompts_form_one_batch(runs):
    result = _json(runs["batch"])
    steps = result["steps"]
    assert steps[0]["phase"] == "prefill" and steps[0]["batch"] == len(BATCH_PROMPTS)
    assert steps[0]["tokens_in"] == sum(len(r["prompt_token_ids"]) for r in result["requests"])
    still_running = [s for s in steps if s["phase"] == "decode"]
    assert still_running and still_running[0]["batch"] == len(BATCH_PROMPTS) - sum(
        len(r["token_ids"]) == 0 and r["finish_reason"] == "stop" for r in result["requests"])


def test_no_kv_cache_gives_same_ids(runs):
    cached, recomputed = _json(runs["batch"]), _json(runs["batch_nokv"])
    assert [r["token_ids"] for r in cached["requests"]] == [r["token_ids"] for r in recomputed["requests"]]
    assert all(s["kv_bytes"] == 0 for s in recomputed["steps"])
    assert sum(s["tokens_in"] for s in recomputed["steps"]) > sum(s["tokens_in"] for s in cached["steps"])


def test_empty_and_whitespace_prompts(runs, tiny):
    _, tok = tiny
    requests = _json(runs["batch"])["requests"]
    empty, spaces = requests[1], requests[2]
    assert empty["prompt_token_ids"] == [tok.eos_token_id]  # documented: start from end-of-text
    assert spaces["prompt_token_ids"] == tok.encode("   ") and spaces["prompt_token_ids"]
    assert len(spaces["token_ids"]) > 0 or spaces["finish_reason"] == "stop"


def test_odd_text_round_trips(runs, tiny_model_dir):
    tok = Tokenizer.from_dir(tiny_model_dir)
    requests = _json(runs["batch"])["requests"]
    for req, text in zip(requests[3:], ODD_TEXTS):
        assert req["prompt"] == text
        assert tok.decode(req["prompt_token_ids"]) == text
        assert req["text"] == tok.decode(req["token_ids"])


@pytest.mark.parametrize("text", ["a\x00b\x00", "\x00", *ODD_TEXTS, "\ud800 lone surrogate"])
def test_odd_text_through_the_engine(make_engine, text):
    """NUL cannot travel in argv, so the same round trip is checked in-process (lone surrogates become U+FFFD)."""
    engine = make_engine()
    rid = engine.add_request(text, max_new_tokens=2)
    list(engine.run())
    res = engine.finished[rid]
    expected = text.replace("\ud800", "\ufffd")  # U+FFFD, not "?"
    assert engine.tokenizer.decode(res.prompt_token_ids) == expected


def test_long_prompt_capped_with_notice(runs):
    rc, stdout, stderr, seconds = runs["long"]
    assert rc == 0, stderr
    assert "notice" in stderr and "cut" in stderr
    assert "Traceback" not in stderr
    # streaming mode echoes what the model reads (the kept end of the prompt), then the text: not 200,000 chars
    assert LONG_PROMPT[-60:] in stdout and len(stdout) < 20_000
    assert not stdout.startswith(LONG_PROMPT[:100])
    # responsive by construction: the text is cut to its last 20,000 characters before tokenizing, and the
    # tokens to the context window, so the prefill is bounded whatever was pasted (speed lives in bench/)
    assert f"last 20,000 of {len(LONG_PROMPT):,} characters" in stderr
    assert re.search(r"cut from the left to its last \d+ of \d+ tokens", stderr)


@pytest.mark.parametrize("name,needle", [("missing", "nowhere"), ("truncated", "model.safetensors"),
                                         ("bad_temperature", "abc"), ("cuda", "cuda")])
def test_bad_input_exits_2_with_one_line(runs, name, needle):
    rc, stdout, stderr, _ = runs[name]
    assert rc == 2, (stdout, stderr)
    assert "Traceback" not in stderr
    assert needle in stderr
    error_lines = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(error_lines) == 1, stderr
    assert stdout == ""


@pytest.mark.parametrize("args", [["--top-k", "-1"], ["--top-p", "0"], ["--top-p", "1.5"], ["--temperature", "-1"],
                                  ["--temperature", "nan"], ["--temperature", "inf"], ["--max-new-tokens", "0"],
                                  ["--max-new-tokens", "x"], ["--max-batch", "0"], ["--seed", "x"],
                                  ["--threads", "0"], ["--batching", "dynamic"], ["--device", "tpu"]])
def test_bad_arguments_in_process(tiny_model_dir, capsys, args):
    try:
        rc = generate_main(["hi", "--model", str(tiny_model_dir), "--threads", "1", *args])  # the last value wins
    except SystemExit as e:  # argparse
        rc = e.code
    captured = capsys.readouterr()
    assert rc == 2, captured
    assert "Traceback" not in captured.err and captured.err.strip()
    assert captured.out == ""


def test_no_prompt_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        generate_main([])
    assert info.value.code == 2


def test_in_process_json_matches_engine(tiny_model_dir, capsys, make_engine, tiny):
    """The JSON's token ids are the engine's own greedy ids for the same prompt."""
    assert generate_main(["hello world", "--model", str(tiny_model_dir), "--threads", "1",
                          "--max-new-tokens", "6", "--json", "--greedy"]) == 0
    result = json.loads(capsys.readouterr().out)
    engine = make_engine()
    rid = engine.add_request("hello world", max_new_tokens=6)
    list(engine.run())
    assert result["requests"][0]["token_ids"] == engine.finished[rid].token_ids
