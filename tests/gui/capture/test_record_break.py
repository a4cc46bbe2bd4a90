"""Bad input found by trying to break ``record``: each ends in one line (status 2) and no file, or is drawn as
the one line it promises. Small clips (320x240, a frame or two) keep this quick."""

from __future__ import annotations

import numpy as np

from gui.capture.record import record_main


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
    import av  # the record extra is in the test extra: missing, it fails (not a skip)
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
    from gui.capture.record import caption_line
    assert caption_line("one\ntrip\t\x1b  一趟\r\n") == "one trip 一趟"
    clips = []
    for name, caption in (("broken.gif", "one\ntrip\n一趟"), ("one.gif", "one trip 一趟")):
        rc = record_main(["--section", "1", "--illustrative", "--lang", "zh", "--seconds", "0.2", "--fps", "5",
                          "--size", "320x240", "--caption", caption, "--out", str(tmp_path / name)])
        assert rc == 0, capsys.readouterr().err
        clips.append(_frames(tmp_path / name))
    assert np.array_equal(clips[0], clips[1])  # GIF: exact palette indices


def test_ctrl_c_while_the_tour_is_measured_is_one_line_and_ends_the_helper(tmp_path):
    """Ctrl+C (SIGINT to the process group, as a terminal sends it) while the helper process measures the tour
    page. Once: the wait sat in multiprocessing's code, where the handler may not raise, so only the 10 s
    backstop ended the process, the helper was orphaned and printed a BrokenPipeError traceback when it
    finished. Now: "interrupted" alone, status 130, at once, and the helper ended."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    from gui.cli import FORCE_EXIT_S
    root = Path(__file__).resolve().parents[3]
    env = {k: v for k, v in os.environ.items() if k != "ONE_TRIP_LOG_DIR"}
    env.update(PYTHONPATH=str(root), QT_QPA_PLATFORM="offscreen", ONE_TRIP_CONFIG_DIR=str(tmp_path / "config"))
    proc = subprocess.Popen([sys.executable, "main.py", "record", "--out", str(tmp_path / "x.mp4"), "--section",
                             "7", "--seconds", "1", "--fps", "2", "--size", "320x240",
                             # the pocket book: Ctrl+C is under test, not the book the helper measures
                             "--model", str(root / "assets" / "models" / "target")], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 60
    while not me.children(recursive=True):  # the helper has started: the measurement is under way
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.5)
    helpers = me.children(recursive=True)
    os.killpg(proc.pid, signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    gone, alive = psutil.wait_procs(helpers, timeout=10)
    time.sleep(0.5)  # an orphaned helper would print its traceback about now; nothing may come after the exit
    assert proc.returncode == 130 and stderr.decode().strip() == "interrupted", stderr.decode()
    assert took < FORCE_EXIT_S / 4, took  # at once: not after the measurement, nor the backstop
    assert not alive, alive
    assert [p.name for p in tmp_path.iterdir() if p.name != "config"] == []


def test_a_gif_whose_frames_cannot_wait_on_the_disk_is_refused_before_it_starts(tmp_path, capsys, monkeypatch):
    # once: the GIF's raw frames (w × h × 3 bytes each, for the palette pass) filled the disk first, then failed
    import shutil
    from collections import namedtuple
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 50_000_000, 50_000_000))
    line = _refused(["--section", "1", "--illustrative", "--seconds", "10", "--fps", "10", "--size", "640x480",
                     "--out", str(tmp_path / "a.gif")], tmp_path, capsys)  # 100 × 921,600 B = 92 MB > 50 MB
    assert "0.1 GB" in line and ".mp4" in line
    from gui.capture.video import space_problem
    assert space_problem(str(tmp_path / "a.gif"), (640, 480), 50) is None  # 46 MB fits
    assert space_problem(str(tmp_path / "a.mp4"), (640, 480), 100) is None  # written as it comes


def test_a_refused_command_makes_no_folder(tmp_path, capsys):
    # once: --out's missing folders were made first, then --model was refused, and the empty folders stayed
    line = _refused(["--out", str(tmp_path / "new" / "dir" / "x.mp4"), "--model", str(tmp_path / "nowhere")],
                    tmp_path, capsys)
    assert "nowhere" in line  # refused for the model, the thing that is wrong
    assert not (tmp_path / "new").exists()  # and --out's folders were never made
