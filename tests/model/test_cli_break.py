"""Bad input found by trying to break ``generate`` (issue 28's new options): each is refused by the parser in
one line with exit status 2, before any model loads, or read without a traceback."""

from __future__ import annotations

import pytest

from model.cli import generate_main

MAX_SEED = 2**64 - 1  # what torch.Generator accepts


def _refused(argv, capsys) -> str:
    """Run generate on ``argv``; assert status 2, no stdout, one stderr line without a traceback; return it."""
    try:
        rc = generate_main(argv)
    except SystemExit as e:  # argparse
        rc = e.code
    captured = capsys.readouterr()
    assert rc == 2, captured
    assert captured.out == "" and "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_greedy_with_a_temperature_is_refused_not_silently_dropped(capsys):
    # once: --greedy won without a word and the 0.7 the user typed was ignored
    line = _refused(["hi", "--model", "/nowhere", "--greedy", "--temperature", "0.7"], capsys)
    assert "--greedy" in line and "--temperature" in line


def test_a_seed_that_overflows_for_the_last_prompt_names_what_was_typed(capsys):
    # once: loaded the model, then "seed must be a whole number (64-bit), got 18446744073709551616", a number
    # nobody typed (prompt 2 draws with S + 1)
    line = _refused(["a", "b", "--model", "/nowhere", "--seed", str(MAX_SEED)], capsys)
    assert "--seed" in line and "2 prompts" in line and "/nowhere" not in line


@pytest.mark.parametrize("args,needle", [(["--seed", str(2**70)], "--seed"), (["--seed", str(-2**63 - 1)], "--seed"),
                                         (["--draft-k", "9"], "--draft-k"), (["--draft-k", "-1"], "--draft-k"),
                                         (["--temperature", "nan"], "--temperature")])
def test_out_of_range_values_are_refused_before_the_model_loads(capsys, args, needle):
    line = _refused(["hi", "--model", "/nowhere", *args], capsys)  # a model error would name /nowhere
    assert needle in line and "/nowhere" not in line


def test_a_closed_stdin_is_one_line(monkeypatch, capsys):
    # once: AttributeError: 'NoneType' object has no attribute 'buffer' (generate - <&-)
    monkeypatch.setattr("sys.stdin", None)
    line = _refused(["-", "--model", "/nowhere"], capsys)
    assert "stdin" in line
