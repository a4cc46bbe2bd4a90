"""The presenter's V key (issue #26): the page on screen is recorded by a ``record`` child process into the
user's videos folder, with a line on screen saying where, then that it is saved (or why not)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gui.capture.record import build_record_parser
from gui.presenter import record_key
from gui.presenter.presenter import Presenter
from tests.gui.tour_host import ensure_tour

FAKE_RECORD = """
import json, sys
from pathlib import Path
args = sys.argv[1:]
Path(sys.argv[0]).with_suffix(".json").write_text(json.dumps(args))
out = Path(args[args.index("--out") + 1])
if "--section" in args and args[args.index("--section") + 1] == "5":
    print("record: something went wrong", file=sys.stderr)
    sys.exit(1)
out.parent.mkdir(parents=True, exist_ok=True)
out.write_bytes(b"clip")
"""


@pytest.fixture
def stage(qtbot, make_window, tmp_path, monkeypatch):
    fake = tmp_path / "fake_main.py"
    fake.write_text(FAKE_RECORD)
    monkeypatch.setattr(record_key, "main_script", lambda: str(fake))
    monkeypatch.setattr(record_key, "videos_dir", lambda: tmp_path / "Videos")
    window = make_window(trip_s=0.02)
    tour = ensure_tour(qtbot, window)
    presenter = Presenter(window).install()
    window.show_tour()
    window.activateWindow()
    yield window, presenter, tour, fake.with_suffix(".json")
    window.close()


def _args(path) -> list[str]:
    return json.loads(path.read_text())


def test_v_on_a_tour_page_records_that_page_into_the_videos_folder(qtbot, stage, tmp_path):
    window, presenter, tour, said = stage
    tour.goto(6)
    qtbot.keyClick(window, Qt.Key_V)
    recorder = presenter.recorder
    out = recorder.out
    assert out.parent == tmp_path / "Videos" and out.name.startswith("one-trip-page-7-") and out.suffix == ".mp4"
    assert presenter.pace_note.isVisible() and str(out) in presenter.pace_note.text()
    qtbot.waitUntil(lambda: out.is_file() and "Saved" in presenter.pace_note.text(), timeout=20_000)
    args = _args(said)
    assert args[0] == "record" and args[args.index("--section") + 1] == "7"
    assert args[args.index("--seconds") + 1] == "10"
    w, h = (int(x) for x in args[args.index("--size") + 1].split("x"))
    assert (w, h) == (window.width() // 2 * 2, window.height() // 2 * 2)  # even sides, as yuv420p needs


def test_v_on_the_live_page_passes_its_settings_and_a_failure_is_said(qtbot, stage):
    window, presenter, tour, said = stage
    window.show_live()
    window.set_batch(3)
    window.set_prompt("def add(a, b):")
    qtbot.keyClick(window, Qt.Key_V)
    out = presenter.recorder.out
    assert out.name.startswith("one-trip-live-")
    qtbot.waitUntil(lambda: out.is_file(), timeout=20_000)
    args = _args(said)
    assert "--section" not in args
    parsed = build_record_parser().parse_args(args[1:])  # as the record command will read them
    assert parsed.prompt == "def add(a, b):" and parsed.batch == 3
    window.show_tour()
    tour.goto(4)  # the fake recorder fails on page 5
    qtbot.waitUntil(lambda: presenter.recorder.process.state() == presenter.recorder.process.ProcessState.NotRunning)
    qtbot.keyClick(window, Qt.Key_V)
    qtbot.waitUntil(lambda: "something went wrong" in presenter.pace_note.text(), timeout=20_000)
    assert not presenter.recorder.out.exists()


def test_no_recording_in_a_kiosk(qtbot, stage):
    window, presenter, tour, said = stage
    window.kiosk_controller = object()
    try:
        presenter.record_page()
        assert getattr(presenter, "recorder", None) is None
    finally:
        del window.kiosk_controller


@pytest.mark.parametrize("prompt", ["- a list item", "-x", "--help"])
def test_a_prompt_that_starts_with_a_dash_reaches_the_recorder(qtbot, stage, prompt):
    # once: the child got "--prompt -x" and failed with "argument --prompt: expected one argument"
    window, presenter, tour, said = stage
    window.show_live()
    window.set_prompt(prompt)
    assert build_record_parser().parse_args(record_key.record_args(window, Path("x.mp4"))[1:]).prompt == prompt
    window.show_tour()
    tour.prompt = prompt
    assert build_record_parser().parse_args(record_key.record_args(window, Path("x.mp4"))[1:]).prompt == prompt


def test_closing_the_window_stops_a_recording_cleanly(qtbot, make_window, tmp_path, monkeypatch):
    """The real `record` child (issue 38 item 2): closing the window while it makes frames stops it with SIGTERM,
    which it handles as Ctrl+C: it ends within the wait, status 143, and leaves no clip and no hidden
    ``.NAME.part-XXXX.mp4`` in the videos folder. Once the child ran on (or was killed by QProcess's
    destructor, leaving the partial file)."""
    from PySide6.QtCore import QProcess
    videos = tmp_path / "Videos"
    monkeypatch.setattr(record_key, "videos_dir", lambda: videos)
    from model.catalog import CODE_POCKET
    # the Live page on the pocket book: the child's first frames come after its engine's start (a tour page
    # would be measured first, about 10 s of the child's time on the pocket book; this test is about stopping)
    window = make_window(trip_s=0.02, options={"model_dir": str(CODE_POCKET.path())})
    presenter = Presenter(window).install()
    recorder = record_key.PageRecorder(presenter)
    args = record_key.record_args(window, Path("x.mp4"))
    assert "--model" in args and "--section" not in args
    presenter.recorder = recorder
    out = recorder.record(seconds=300)
    process = recorder.process
    qtbot.waitUntil(lambda: any(p.stat().st_size > 2000 for p in videos.glob(f".{out.stem}.part-*")),
                    timeout=120_000)
    window.close()
    assert process.state() == QProcess.ProcessState.NotRunning
    assert process.exitStatus() == QProcess.ExitStatus.NormalExit and process.exitCode() == 143, \
        bytes(process.readAll()).decode(errors="replace")
    assert list(videos.iterdir()) == []
