"""Bad or odd input that used to end in a traceback or in wrong output: each case with the value it must give.

Sampling ties, invalid UTF-8 and lone surrogates, JSON that is always valid UTF-8, a reader that closes the pipe,
out-of-range command-line durations, the notice when a sharded worker dies, GPU memory units.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from model.sampling import SamplingParams, distribution, sample
from model.tokenizer import Tokenizer, valid_text

ROOT = Path(__file__).resolve().parents[2]


# ---- sampling: exactly k tokens, ties broken by token id -----------------------------------------------------
def test_top_k_1_is_greedy_even_with_a_tie():
    p = distribution(torch.tensor([2.0, 2.0, 0.0, -1.0]), SamplingParams(temperature=1.0, top_k=1))
    assert p.tolist() == [1.0, 0.0, 0.0, 0.0]  # the lower id of the tie, alone
    for seed in range(20):
        tok, _ = sample(torch.tensor([2.0, 2.0, 0.0, -1.0]), SamplingParams(temperature=1.0, top_k=1, seed=seed),
                        torch.Generator().manual_seed(seed))
        assert tok == 0


def test_top_k_keeps_exactly_k_with_a_tie_at_the_edge():
    p = distribution(torch.tensor([3.0, 2.0, 2.0, 2.0, -1.0]), SamplingParams(temperature=1.0, top_k=2))
    assert int((p > 0).sum()) == 2 and p[0] > 0 and p[1] > 0  # id 1 wins the tie over ids 2 and 3
    e = torch.exp(torch.tensor(-1.0)).item()
    assert p[1].item() == pytest.approx(e / (1 + e))


def test_top_p_tie_at_the_edge_is_broken_by_token_id():
    p = distribution(torch.tensor([0.0, 1.0, 1.0, 1.0]), SamplingParams(temperature=1.0, top_p=0.5))
    assert (p > 0).tolist() == [False, True, True, False]


# ---- invalid UTF-8 and lone surrogates --------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("caf\udcff", "caf\ufffd"),  # b"caf\xff" from sys.argv (surrogateescape)
    ("a\ud800b", "a\ufffdb"),  # a lone surrogate from anywhere else
    ("\udce4\udcb8x", "\ufffdx"),  # a cut 3-byte character: one U+FFFD, as bytes.decode("utf-8", "replace")
    ("plain 一趟", "plain 一趟"),
])
def test_valid_text(text, expected):
    assert valid_text(text) == expected


def test_encode_lone_surrogate_reads_as_replacement_character(tiny_model_dir):
    tok = Tokenizer.from_dir(tiny_model_dir)
    assert tok.decode(tok.encode("a\ud800b")) == "a\ufffdb"


def _run(args, env_extra=None, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    return subprocess.run([sys.executable, "main.py", *args], cwd=ROOT, env=env, capture_output=True,
                          timeout=300, **kw)


def test_json_is_valid_utf8_for_an_invalid_prompt_even_on_an_ascii_stdout(tiny_model_dir):
    prompt = os.fsdecode(b"caf\xff")
    r = _run(["generate", prompt, "--json", "--max-new-tokens", "2", "--model", str(tiny_model_dir)],
             env_extra={"PYTHONIOENCODING": "ascii:strict"})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert out["requests"][0]["prompt"] == "caf\ufffd"
    assert b"U+FFFD" in r.stderr and b"notice" in r.stderr and b"Traceback" not in r.stderr


def test_a_closed_pipe_ends_quietly(tiny_model_dir):
    """``generate ... --json | head -c 1``: no BrokenPipeError traceback, status 141 (128 + SIGPIPE)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "main.py", "generate", "x" * 4000, "a", "b", "--json",
                             "--max-new-tokens", "30", "--model", str(tiny_model_dir)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(1)
    proc.stdout.close()  # the reader goes away before the whole object is written
    stderr = proc.stderr.read()
    rc = proc.wait(timeout=300)
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr, stderr
    assert rc in (0, 141)  # 0 only if the whole object fit the pipe before the close


@pytest.mark.parametrize("value", ["3000000", "inf", "-inf", "nan", "1e308", "-5", "0", "soon"])
def test_idle_seconds_out_of_range_is_refused_with_exit_2(value, capsys):
    import main
    with pytest.raises(SystemExit) as exc:
        main.main(["--kiosk", "--idle-seconds", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--idle-seconds" in err and "Traceback" not in err


def test_screen_index_is_range_checked(capsys):
    import main
    with pytest.raises(SystemExit) as exc:
        main.main(["--screen", "-1"])
    assert exc.value.code == 2


def test_ctrl_c_in_any_subcommand_is_one_line(monkeypatch, capsys):
    import main
    monkeypatch.setitem(main.COMMANDS, "screenshot", "tests.model.test_robustness:_interrupt")
    assert main.main(["screenshot", "--out", "x.png"]) == 130
    assert capsys.readouterr().err.strip() == "interrupted"


def _interrupt(argv):
    raise KeyboardInterrupt


# ---- a sharded worker that dies ------------------------------------------------------------------------------
class _Proc:
    def __init__(self, alive, exitcode=None, pid=100):
        self._alive, self.exitcode, self.pid = alive, exitcode, pid

    def is_alive(self):
        return self._alive


def test_worker_death_names_the_dead_worker_not_the_survivor():
    import queue

    from model.errors import ShardingError
    from model.parallel import ShardedRunner
    runner = ShardedRunner.__new__(ShardedRunner)
    runner.n, runner.failure, runner._closed = 2, None, False
    runner._procs = [_Proc(True, pid=11), _Proc(False, -9, pid=12)]
    runner._cmd_qs = []
    runner._stop = lambda graceful, timeout=2.0: None
    q = queue.Queue()
    q.put(("error", 0, "[../third_party/gloo/...] Read error [127.0.0.1]:1234: Connection reset by peer GLHF!"))
    runner._res_q = q
    with pytest.raises(ShardingError) as exc:
        runner._collect("step", 5.0, 1)
    message = str(exc.value)
    assert message == "worker 1 of 2 (pid 12) was killed (SIGKILL)"
    assert "Connection reset" not in message and "GLHF" not in message


@pytest.mark.parametrize("codes,named", [((0, -9), "worker 1 of 2 (pid 12) was killed (SIGKILL)"),
                                         ((-9, 0), "worker 0 of 2 (pid 11) was killed (SIGKILL)"),
                                         ((0, 3), "worker 1 of 2 (pid 12) exited with code 3")])
def test_when_both_workers_have_ended_the_cause_is_named(codes, named):
    """Worker 1 is killed; worker 0, its connection broken, exits with code 0 before the parent looks: the
    notice names the killed one (it once named the survivor, whichever rank came first)."""
    from model.parallel import ShardedRunner
    runner = ShardedRunner.__new__(ShardedRunner)
    runner.n = 2
    runner._procs = [_Proc(False, codes[0], pid=11), _Proc(False, codes[1], pid=12)]
    assert runner._dead() == named


# ---- GPU memory: bytes with a source, compared like with like ------------------------------------------------
def test_gpu_memory_is_nvidia_smi_bytes_and_the_roofline_text_compares_gb_with_gb(capsys):
    from model.teaching.costs import GPUS
    from model.teaching.costs_cli import roofline_main
    assert GPUS["h200"].memory_bytes == 143_771 * 2**20 == 150_754_820_096
    assert GPUS["h100"].memory_bytes == 81_559 * 2**20
    assert "143,771 MiB" in GPUS["h200"].source
    assert roofline_main(["--preset", "llama-3-70b", "--gpu", "h200"]) == 0
    text = capsys.readouterr().out
    assert "150.8 GB per GPU" in text and "weights 141.1 GB: fits" in text
    assert "141 GB per GPU" not in text
    assert roofline_main(["--preset", "llama-3-70b", "--gpu", "h200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["gpu_memory_gb"] == pytest.approx(150.754820096) and out["weight_gb"] == pytest.approx(141.107412992)
    assert out["fits"] is (out["weight_gb"] <= out["gpu_memory_gb"])
