"""Limits that were kept in silence (issue 38 item 9): a screenshot whose answer ends before --steps runs out
says so; an engine that does not get ready says it is still starting long before the timeout; record's help
gives --seconds' range."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from gui.capture import screenshot
from gui.capture.record import MAX_SECONDS, build_record_parser

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "assets" / "models" / "target"


def test_record_help_gives_the_range_of_seconds():
    help_text = " ".join(build_record_parser().format_help().split())
    seconds = help_text[help_text.rindex("--seconds S"):]  # the option's own line, not the usage
    assert f"0.1-{MAX_SECONDS:g}" in seconds.split("--fps")[0]


class _FrozenWindow:
    """A window whose engine process runs but never reports ready (a frozen engine)."""

    engine_info = None

    def __init__(self):
        self.bridge = SimpleNamespace(is_running=lambda: True)

    def model_failed(self) -> str | None:
        return None  # no fatal error: the engine runs, it only never says it is ready


def test_a_frozen_engine_is_said_to_be_still_starting_before_the_timeout(monkeypatch, capsys):
    monkeypatch.setattr(screenshot, "READY_TIMEOUT_S", 1.5)
    monkeypatch.setattr(screenshot, "STILL_STARTING_S", 0.3)
    said_at = []
    real_print = print

    def stamped(*a, **k):
        said_at.append(time.monotonic())
        real_print(*a, **k)

    monkeypatch.setattr("builtins.print", stamped)
    app = SimpleNamespace(processEvents=lambda: None)
    t0 = time.monotonic()
    assert screenshot.prepare_live(app, _FrozenWindow(), SimpleNamespace(steps=3, batch=1, prompt="x")) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2, lines
    assert "still starting" in lines[0]
    assert "did not start in time" in lines[1]
    assert said_at[0] - t0 < 1.0  # the notice came well before the timeout message
    assert said_at[1] - t0 >= 1.4


def test_a_screenshot_says_when_the_answer_finished_before_steps(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = tmp_path / "s.png"
    proc = subprocess.run([sys.executable, "main.py", "screenshot", "--out", str(out), "--steps", "300", "--size",
                           "1280x720", "--threads", "1"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    trips = int(line.split(" trips")[0].rsplit(", ", 1)[1])
    assert trips < 300  # the bundled model's answer ends long before 300 trips
    assert f"the answer finished after {trips} of the 300 trips of --steps" in line, line
    assert out.is_file()
