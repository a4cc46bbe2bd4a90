"""Abuse of the window and the screenshot command: bad input gets one clear line and exit status 2, never a
traceback, and is refused before anything slow starts."""

from __future__ import annotations

import pytest

from gui.cli import screenshot_main


@pytest.mark.parametrize("make_out, needle", [
    (lambda tmp: tmp, "is a folder"),                                   # --out is a directory
    (lambda tmp: tmp / "shot", "suffix-less"),                          # no image suffix
    (lambda tmp: tmp / "shot.bmpx", "bmpx"),                            # a format Qt cannot write
    (lambda tmp: [(tmp / "f").write_text("x"), tmp / "f" / "s.png"][1], "cannot create its folder"),  # parent is a file
])
@pytest.mark.parametrize("section", [None, "1"])
def test_screenshot_bad_out_is_exit_2_before_rendering(tmp_path, capsys, make_out, needle, section):
    out = make_out(tmp_path)
    argv = ["--out", str(out)] + (["--section", section, "--illustrative"] if section else [])
    assert screenshot_main(argv) == 2  # used to be a FileNotFoundError traceback, or exit 1 after the whole run
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("size", ["100000x100000", "320x99999", "0x0", "abc"])
def test_screenshot_absurd_size_is_exit_2(tmp_path, capsys, size):
    assert screenshot_main(["--out", str(tmp_path / "s.png"), "--size", size, "--section", "1",
                            "--illustrative"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("screenshot: --size") and "\n" not in err


@pytest.mark.parametrize("threads", ["0", "-3", "many"])
def test_window_bad_threads_is_a_usage_error(capsys, threads):
    """--threads 0 used to open the window and then kill its engine with a RuntimeError."""
    import main
    with pytest.raises(SystemExit) as info:
        main.main(["--threads", threads])
    assert info.value.code == 2 and "--threads" in capsys.readouterr().err
