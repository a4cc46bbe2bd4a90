"""Bad input found by trying to break ``record``: each ends in one line (status 2) and no file, or is drawn as
the one line it promises. Small clips (320x240, a frame or two) keep this quick."""

from __future__ import annotations

import numpy as np
import pytest

from gui.record import record_main

av = pytest.importorskip("av")


def _refused(argv, tmp_path, capsys) -> str:
    try:
        rc = record_main(argv)
    except SystemExit as e:
        rc = e.code
    captured = capsys.readouterr()
    assert rc == 2 and captured.out == "", captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert [p for p in tmp_path.iterdir()] == []  # nothing written, not even a temporary file
    return lines[0]


def _frames(path) -> np.ndarray:
    with av.open(str(path)) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


def test_less_than_one_frame_is_refused(tmp_path, capsys):
    # once: --seconds 0.1 --fps 5 wrote one whole 0.2 s frame and said "0.1 s"
    line = _refused(["--section", "1", "--illustrative", "--seconds", "0.1", "--fps", "5", "--size", "320x240",
                     "--out", str(tmp_path / "a.mp4")], tmp_path, capsys)
    assert "less than one frame" in line and "0.2 s" in line


def test_a_size_with_a_superscript_digit_says_what_a_size_looks_like(tmp_path, capsys):
    # once: "invalid literal for int() with base 10: '1²80'" ("²".isdigit() is True, int("²") fails)
    line = _refused(["--section", "1", "--size", "1²80x720", "--out", str(tmp_path / "a.mp4")], tmp_path, capsys)
    assert "--size must look like 1920x1080" in line


def test_a_caption_no_font_can_draw_is_refused_not_drawn_as_boxes(qapp, tmp_path, capsys):
    # once: the rocket was drawn as a box (the bundled fonts have no emoji)
    line = _refused(["--section", "1", "--illustrative", "--seconds", "0.2", "--fps", "5", "--size", "320x240",
                     "--caption", "一趟 🚀", "--out", str(tmp_path / "a.gif")], tmp_path, capsys)
    assert "U+1F680" in line and "--caption" in line


def test_a_caption_with_line_breaks_is_drawn_as_one_line(qapp, tmp_path, capsys):
    # once: "a\nb\nc" was drawn as three lines centred on a one-line band: only the middle one showed
    from gui.record import caption_line
    assert caption_line("one\ntrip\t\x1b  一趟\r\n") == "one trip 一趟"
    clips = []
    for name, caption in (("broken.gif", "one\ntrip\n一趟"), ("one.gif", "one trip 一趟")):
        rc = record_main(["--section", "1", "--illustrative", "--lang", "zh", "--seconds", "0.2", "--fps", "5",
                          "--size", "320x240", "--caption", caption, "--out", str(tmp_path / name)])
        assert rc == 0, capsys.readouterr().err
        clips.append(_frames(tmp_path / name))
    assert np.array_equal(clips[0], clips[1])  # GIF: exact palette indices
