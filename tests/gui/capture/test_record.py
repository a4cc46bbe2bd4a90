"""``main.py record`` (issue #26): clips decoded with PyAV, the library that wrote them: S × F frames of W×H,
H.264 in yuv420p for .mp4, VP9 for .webm, a looping GIF; consecutive frames differ while the page animates; two
runs of a tour page give identical frames; bad arguments and a missing PyAV are one line and status 2; Ctrl+C
leaves no file under the requested name. Clips are short and small (a few frames, 320-480 px wide)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from gui.capture.record import Progress, record_main

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "assets" / "models" / "target"


def decode(path: Path):
    """(frames as RGB arrays, codec name, pixel format, container format name)."""
    import av  # the record extra is in the test extra: missing, it fails (not a skip)
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        codec, pix_fmt = stream.codec_context.name, stream.codec_context.pix_fmt
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(stream)]
        return frames, codec, pix_fmt, container.format.name


def _record(argv, capsys) -> str:
    rc = record_main(argv)
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return captured.out


def test_a_tour_page_as_mp4_is_h264_yuv420p_with_s_times_f_frames_that_move(qapp, tmp_path, capsys):
    out = tmp_path / "page7.mp4"
    said = _record(["--section", "7", "--illustrative", "--lang", "en", "--seconds", "2", "--fps", "5",
                    "--size", "1280x720", "--out", str(out)], capsys)
    frames, codec, pix_fmt, _ = decode(out)
    assert len(frames) == 10  # 2 s × 5 fps
    assert frames[0].shape == (720, 1280, 3)
    assert (codec, pix_fmt) == ("h264", "yuv420p")
    # the page's tokens come in one trip at a time in its second second: each step changes the picture
    steps = [int((np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 40).sum()) for a, b in zip(frames, frames[1:])]
    assert all(n > 100 for n in steps[4:]), steps  # pixels that changed by more than 40 levels
    assert "10 frames at 5 fps" in said and list(tmp_path.iterdir()) == [out]  # no temporary file left beside it


def test_two_recordings_of_a_tour_page_are_the_same_frames(qapp, tmp_path, capsys):
    """The clock is stepped, not read from the wall: a busy machine cannot change a frame. GIF: lossless
    palette indices, so the frames compare exactly; the palette is one per clip and the file loops."""
    clips = []
    for name in ("a.gif", "b.gif"):
        _record(["--section", "7", "--illustrative", "--lang", "zh", "--seconds", "2", "--fps", "4",
                 "--size", "1280x720", "--out", str(tmp_path / name)], capsys)
        frames, codec, pix_fmt, fmt = decode(tmp_path / name)
        assert (len(frames), frames[0].shape, codec, fmt) == (8, (720, 1280, 3), "gif", "gif")
        clips.append(np.stack(frames))
    assert np.array_equal(clips[0], clips[1])
    moved = [not np.array_equal(a, b) for a, b in zip(clips[0], clips[0][1:])]
    assert all(moved[4:]), moved  # and it is not a still: each frame of the second second differs
    assert b"NETSCAPE2.0" in (tmp_path / "a.gif").read_bytes()  # the looping extension


def test_webm_is_vp9_and_hold_and_caption_add_what_they_say(qapp, tmp_path, capsys):
    out = tmp_path / "c.webm"
    _record(["--section", "1", "--illustrative", "--seconds", "0.5", "--fps", "4", "--hold", "1",
             "--caption", "One trip, one token", "--size", "320x240", "--out", str(out)], capsys)
    frames, codec, pix_fmt, _ = decode(out)
    assert codec == "vp9" and len(frames) == 2 + 4  # 0.5 s × 4 fps, then 1 s held
    assert all(np.abs(f.astype(int) - frames[1].astype(int)).mean() < 1.0 for f in frames[2:])
    plain = tmp_path / "plain.webm"
    _record(["--section", "1", "--illustrative", "--seconds", "0.5", "--fps", "4",
             "--size", "320x240", "--out", str(plain)], capsys)
    other = decode(plain)[0]
    bottom = slice(200, 240)  # the caption's band along the bottom; the top of the page is untouched
    assert np.abs(frames[1][bottom].astype(int) - other[1][bottom].astype(int)).mean() > 5
    assert np.abs(frames[1][:100].astype(int) - other[1][:100].astype(int)).mean() < 2


@pytest.mark.parametrize("args,needle", [
    (["--out", "x.avi"], ".mp4"),
    (["--out", "x.mp4", "--size", "321x240"], "even"),
    (["--out", "x.mp4", "--fps", "0"], "--fps"),
    (["--out", "x.mp4", "--seconds", "nan"], "--seconds"),
    (["--out", "x.mp4", "--seconds", "0"], "--seconds"),
    (["--out", "x.gif", "--hold", "-1"], "--hold"),
    (["--out", "x.mp4", "--section", "19"], "1 to 18"),
])
def test_bad_arguments_are_one_line_and_2(tmp_path, capsys, args, needle):
    args = [str(tmp_path / a) if a.startswith("x.") else a for a in args]
    try:
        rc = record_main(args)
    except SystemExit as e:
        rc = e.code
    captured = capsys.readouterr()
    assert rc == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], captured.err
    assert list(tmp_path.iterdir()) == []


def test_without_pyav_record_says_how_to_install_it_and_exits_2(tmp_path, monkeypatch):
    """A fresh interpreter where ``import av`` fails (a module that raises ImportError shadows it)."""
    (tmp_path / "av.py").write_text("raise ImportError('No module named av')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "main.py", "record", "--section", "1", "--out", str(tmp_path / "x.mp4")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'one-trip[record]'" in lines[0], proc.stderr
    assert not (tmp_path / "x.mp4").exists()


def test_progress_bar_counts_frames_and_says_the_time_left():
    class Tty:
        text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    bar = Progress(120, stream=Tty())
    bar.start -= 10.0  # 10 s spent on 40 frames: 20 s left for the other 80
    line = bar.line(40)
    assert "40/120 frames" in line and "20 s left" in line and line.count("#") == 9
    bar.update(120)
    bar.finish()
    assert bar.stream.text.startswith("\r") and "120/120" in bar.stream.text and bar.stream.text.endswith("\n")
    quiet = Progress(10, stream=open(os.devnull, "w"))
    quiet.update(10)  # not a terminal: nothing written, nothing to end
    assert not quiet._shown


def test_a_live_run_is_recorded_from_the_real_engine(qapp, tmp_path, capsys):
    """The Live page: the engine decodes while the clip is made; the stage's trips move from frame to frame."""
    out = tmp_path / "live.mp4"
    said = _record(["--lang", "en", "--threads", "1", "--seconds", "2", "--fps", "5", "--size", "1280x720",
                    "--model", str(BUNDLED), "--out", str(out)], capsys)  # the pocket book: it loads at once
    frames, codec, pix_fmt, _ = decode(out)
    assert (len(frames), frames[0].shape, codec, pix_fmt) == (10, (720, 1280, 3), "h264", "yuv420p")
    moving = sum(np.abs(a.astype(int) - b.astype(int)).mean() > 0.05 for a, b in zip(frames, frames[1:]))
    assert moving >= 8, moving  # the carts roll in every step (a trip lasts 1 s on screen by default)
    assert "Live page" in said


def _recording(tmp_path):
    """A real ``record`` of the Live page, in its own session, once its temporary clip has frames in it; returns
    (process, its engine processes, the clips folder)."""
    env = {k: v for k, v in os.environ.items() if k != "ONE_TRIP_LOG_DIR"}
    env.update(PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen", ONE_TRIP_CONFIG_DIR=str(tmp_path / "config"))
    clips = tmp_path / "clips"
    out = clips / "x.mp4"
    proc = subprocess.Popen([sys.executable, "main.py", "record", "--out", str(out), "--seconds", "300", "--fps",
                             "10", "--size", "1280x720", "--lang", "en", "--threads", "1", "--model", str(BUNDLED)],
                            cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    me = psutil.Process(proc.pid)
    deadline = time.monotonic() + 120

    def encoding() -> bool:  # the temporary file has frames in it
        return any(p.stat().st_size > 2000 for p in clips.glob(".x.part-*")) if clips.is_dir() else False

    while not encoding():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    return proc, me.children(recursive=True), clips


def test_ctrl_c_during_a_recording_leaves_no_file(tmp_path):
    """A real SIGINT to the process group while frames are being made (as tests/gui/capture/test_screenshot_args.py
    does for screenshot): 'interrupted', status 130, nothing under --out and no temporary file beside it."""
    proc, engines, clips = _recording(tmp_path)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.decode().strip().splitlines()[-1] == "interrupted"
    assert stdout == b"" and list(clips.iterdir()) == []
    gone, alive = psutil.wait_procs(engines, timeout=10)
    assert not alive, alive


def test_an_encoder_error_is_one_line_and_leaves_no_file(qapp, tmp_path, capsys, monkeypatch):
    from gui.capture import video

    def broken(self, rgb):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(video.ClipWriter, "write", broken)
    rc = record_main(["--section", "1", "--illustrative", "--seconds", "0.2", "--fps", "10", "--size", "1280x720",
                      "--out", str(tmp_path / "x.mp4")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 1 and len(err) == 1 and "No space left on device" in err[0], err
    assert list(tmp_path.iterdir()) == []


def test_sigterm_during_a_recording_is_handled_as_ctrl_c(tmp_path):
    """SIGTERM to the record process alone (``kill PID``, a window closing its V-key child) while frames are made
    (issue 38 item 2): 'terminated', status 143, nothing under --out and no hidden temporary file, the engine
    ended and no leaked-semaphore warning (once: killed at once, leaving .x.part-XXXX.mp4 and a warning)."""
    proc, engines, clips = _recording(tmp_path)
    proc.terminate()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert stderr.decode().strip().splitlines()[-1] == "terminated"
    assert "leaked" not in stderr.decode()
    assert stdout == b"" and list(clips.iterdir()) == []
    gone, alive = psutil.wait_procs(engines, timeout=10)
    assert not alive, alive
