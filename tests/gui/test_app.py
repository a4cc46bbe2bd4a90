"""The app as a user starts it: clean exit mid-decode (close, SIGTERM, SIGINT), and the screenshot command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]

RUN_APP = ("import argparse, sys; from gui.app import run_app; "
           "sys.exit(run_app(argparse.Namespace(model=sys.argv[1], lang='en', device='cpu', threads=1, "
           "kiosk=sys.argv[2:] == ['kiosk'], idle_seconds=600, batch=2)))")

BAD_OUTPUT = ("QThread", "Traceback", "qt WARNING", "qt ERROR", "qt CRITICAL")


class AppProcess:
    """The app in a subprocess; stderr lines are collected with their arrival time; descendants are tracked."""

    def __init__(self, model_dir: Path, extra_env: dict[str, str], kiosk: bool = False):
        env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ONE_TRIP_AUTORUN="1", **extra_env)
        self.proc = subprocess.Popen([sys.executable, "-c", RUN_APP, str(model_dir)] + (["kiosk"] if kiosk else []),
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[tuple[float, str]] = []
        self.children: set[int] = set()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def seen(self, text: str) -> float | None:
        return next((t for t, line in self.lines if text in line), None)

    def wait_for(self, text: str, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.track_children()
            t = self.seen(text)
            if t is not None:
                return t
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"never saw {text!r}; stderr:\n" + self.stderr())

    def track_children(self) -> None:
        try:
            self.children |= {c.pid for c in psutil.Process(self.proc.pid).children(recursive=True)}
        except psutil.NoSuchProcess:
            pass

    def finish(self, timeout: float = 10) -> tuple[int, float]:
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=2)
        return code, time.monotonic()

    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _alive(pids: set[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def stop_mid_decode(app: AppProcess, how: str, wait_engine: bool = True) -> None:
    """Let ``app`` decode for a moment, stop it ``how`` (a signal, or "close"/"chord" which the app does itself
    from its environment), and check the exit: code 0 within 2 s of the window closing, no child process left,
    no QThread warning, traceback or Qt warning on stderr."""
    try:
        app.wait_for("status: Running.", timeout=90)
        if wait_engine:
            app.wait_for("engine process", timeout=5)
        time.sleep(1.2)  # some trips in
        app.track_children()
        assert app.children, "the engine process was not seen"
        if how == "sigterm":
            app.proc.send_signal(signal.SIGTERM)
        elif how == "sigint":
            app.proc.send_signal(signal.SIGINT)
        closing = app.wait_for("window closing", timeout=10)
        code, ended = app.finish()
    finally:
        app.kill()
    assert code == 0, app.stderr()
    assert ended - closing < 2.0, f"took {ended - closing:.2f} s to exit"
    time.sleep(0.2)
    assert not _alive(app.children), "child processes left behind"
    for bad in BAD_OUTPUT:
        assert bad not in app.stderr(), app.stderr()


@pytest.mark.parametrize("how", ["close", "sigterm", "sigint"])
def test_exit_mid_decode_is_clean(tiny_model_dir, how):
    extra = {"ONE_TRIP_AUTOCLOSE_MS": "1500"} if how == "close" else {}
    app = AppProcess(tiny_model_dir, extra)
    stop_mid_decode(app, how)
    # mid-decode: the last status before the window closed is "Running." (not "Done." nor a stop), so the stop
    # came while the engine was still writing the answer
    closing = app.seen("window closing")
    said = [line.split("status: ", 1)[1] for t, line in app.lines if "status: " in line and t <= closing]
    assert said and said[-1] == "Running.", said


def test_screenshot_command(tiny_model_dir, tmp_path):
    out = tmp_path / "shot.png"
    code = ("import argparse, sys; from gui.capture.screenshot import screenshot_main; "
            "sys.exit(screenshot_main(argparse.Namespace(model=sys.argv[1], out=sys.argv[2], "
            "prompt='def fibonacci(n):', steps=5, batch=3, lang='zh', size='1280x800', device='cpu', threads=1)))")
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.pop("QT_QPA_PLATFORM", None)  # the command must choose offscreen itself
    proc = subprocess.run([sys.executable, "-c", code, str(tiny_model_dir), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    from PySide6.QtGui import QImage
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)
    assert "5 trips" in proc.stdout


def test_screenshot_refuses_bad_size(tmp_path, capsys):
    import argparse

    from gui.capture.screenshot import screenshot_main
    assert screenshot_main(argparse.Namespace(out=str(tmp_path / "x.png"), size="huge")) == 2
    assert "--size" in capsys.readouterr().err
