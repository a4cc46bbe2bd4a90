"""The presenter's V key: record the page on screen as an MP4 in the user's videos folder (``platformdirs``).

The clip is made by ``python main.py record`` in a child process (``QProcess``): rendering frames offscreen takes
seconds of CPU, and the window must keep animating meanwhile. The child gets the page as the speaker sees it: a
tour page (its number, the question, the language) or the Live page (prompt, seats, apprentice, torn book,
model), at the window's size (rounded down to even sides, as yuv420p needs), for ``seconds``. A line on screen
says where the file goes, and again when it is there (or why not). When the window closes (or the application
quits) during a recording, the child is stopped cleanly (SIGTERM: it deletes its temporary file and stops its
engine, as after Ctrl+C; ``gui.cli.Terminated``), and killed only if it has not ended within ``STOP_WAIT_MS``.
"""

from __future__ import annotations

import datetime
import importlib.util
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QProcess

if TYPE_CHECKING:
    from gui.live.host import LiveHost

log = logging.getLogger(__name__)

RECORD_SECONDS = 10.0  # the record command's default length
NOTE_MS = 6000
STOP_WAIT_MS = 12_000  # the record child's own backstop after a signal is 10 s (gui.cli.FORCE_EXIT_S)


def videos_dir() -> Path:
    """The user's videos folder (``platformdirs.user_videos_dir``: ~/Videos, or XDG_VIDEOS_DIR), then One Trip."""
    import platformdirs
    return Path(platformdirs.user_videos_dir()) / "One Trip"


def record_args(window: LiveHost, out: Path, seconds: float = RECORD_SECONDS) -> list[str]:
    """The ``record`` command line (after ``main.py``) for the page ``window`` shows now (the tour's section
    and prompt, or the Live session's prompt, batch, apprentice and sharding)."""
    w, h = max(320, window.width() // 2 * 2), max(240, window.height() // 2 * 2)
    args = ["record", "--out", str(out), "--seconds", f"{seconds:g}", "--size", f"{w}x{h}",
            "--lang", window.lang or "en"]
    if window.presenter is not None and window.presenter.presenter_mode:
        args.append("--presenter")
    model = window.bridge.options.get("model_dir")
    if model:  # the book the window runs, on a tour page too (its measurements are of that book)
        args += ["--model", str(model)]
    if window.is_tour_visible():
        tour = window.tour
        return args + ["--section", str(tour.current_index + 1), f"--prompt={tour.prompt}"]
    session = window.session
    # "--prompt=TEXT" in one word: a prompt that starts with "-" ("- a list", "-x") is then not read as an option
    args += [f"--prompt={session.prompt}", "--batch", str(session.batch)]
    if session.draft_k:
        args += ["--draft-k", str(session.draft_k)]
    mode, n = session.sharding
    if n > 1:
        args += [f"--{mode}", str(n)]
    return args


def main_script() -> str:
    """The path of ``main.py``: the installed module's, else the checkout's."""
    spec = importlib.util.find_spec("main")
    return spec.origin if spec is not None and spec.origin else str(Path(__file__).parents[2] / "main.py")


def page_name(args: list[str]) -> str:
    """A file-name part for the page in ``args``: "page-7" or "live"."""
    return f"page-{args[args.index('--section') + 1]}" if "--section" in args else "live"


class PageRecorder(QObject):
    """Starts one ``record`` child at a time for the presenter's window and says on screen how it went; stops it
    cleanly when the window closes or the application quits (``stop``)."""

    def __init__(self, presenter):
        super().__init__(presenter)
        self.presenter = presenter
        self.process: QProcess | None = None
        self.out: Path | None = None
        presenter.window.installEventFilter(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.stop)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Close and watched is self.presenter.window:
            self.stop()
        return False

    def recording(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def stop(self, wait_ms: int = STOP_WAIT_MS) -> None:
        """Stop a recording in progress: SIGTERM (the child deletes its temporary file and stops its engine),
        up to ``wait_ms`` for it to end, then SIGKILL. Nothing is said on screen (the window is going)."""
        if not self.recording():
            return
        process = self.process
        try:
            process.finished.disconnect(self._finished)
        except (RuntimeError, TypeError):
            pass
        log.info("window closing: stopping the recording of %s", self.out)
        process.terminate()
        if not process.waitForFinished(wait_ms):
            log.warning("the recording did not stop in %.0f s; killed", wait_ms / 1000)
            process.kill()
            process.waitForFinished(2000)

    def record(self, seconds: float = RECORD_SECONDS) -> Path | None:
        """Start recording the page shown; returns the file it will write, or None if one is being made."""
        tr = QCoreApplication.translate
        note = self.presenter.pace_note
        if self.recording():
            note.say(tr("Presenter", "Still recording {path}").format(path=self.out), ms=NOTE_MS)
            return None
        folder = videos_dir()
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        probe = record_args(self.presenter.window, Path("x.mp4"), seconds)
        self.out = folder / f"one-trip-{page_name(probe)}-{stamp}.mp4"
        args = record_args(self.presenter.window, self.out, seconds)
        self.process = QProcess(self.presenter)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        self.process.finished.connect(self._finished)
        script = main_script()
        log.info("recording: %s %s", script, " ".join(args))
        self.process.start(sys.executable, [script, *args])
        note.say(tr("Presenter", "Recording this page ({s} s) to {path}").format(s=f"{seconds:g}", path=self.out),
                 ms=NOTE_MS)
        return self.out

    def _finished(self, code: int, _status=None) -> None:
        tr = QCoreApplication.translate
        output = bytes(self.process.readAll()).decode("utf-8", "replace").strip() if self.process else ""
        if code == 0 and self.out is not None and self.out.is_file():
            log.info("recorded %s", self.out)
            self.presenter.pace_note.say(tr("Presenter", "Saved: {path}").format(path=self.out), ms=NOTE_MS)
        else:
            reason = output.splitlines()[-1] if output else f"exit status {code}"
            log.warning("recording failed: %s", output or reason)
            self.presenter.pace_note.say(tr("Presenter", "Recording failed: {reason}").format(reason=reason),
                                         ms=NOTE_MS)
