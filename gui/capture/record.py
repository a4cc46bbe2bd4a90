"""``python main.py record --out FILE.mp4|.webm|.gif [--seconds S] [--fps F] [scene options]``: a clip, frame-exact.

The scene is the screenshot command's (``gui.cli.add_scene_options``): a tour page (``--section N``) or the Live
page running a real answer (``--prompt``, ``--batch``, ``--draft-k``, ``--tp``/``--pp``, ...). Its animation
clock is stepped (``AnimationClock.set_stepped``): frame i is rendered offscreen at exactly i / F seconds of
animation time, however long the machine takes to draw it, so a slow computer still makes a smooth clip of
exactly S × F frames of W×H pixels (then ``--hold`` seconds of the last frame).

The Live run is real: the engine decodes while the clip is made and the stage shows its measured reports,
paced by the window's own rule (paced mode: one trip lasts ``trip_duration_s`` on screen, the speed slider's
value, 1 s by default; its chapters are lit in proportion to their measured ms). Where the stage would stand
still waiting for the engine's next report (before the first trip, or on a slow machine), the recorder waits
in wall time before drawing the next frame, so waiting never shows in the clip.

Encoding: ``gui.capture.video.ClipWriter`` (PyAV). Ctrl+C: "interrupted", status 130, and no file under ``--out``
(the clip is written under a temporary name and renamed at the end).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
import time

from model.argtypes import OneLineParser, command_name

log = logging.getLogger(__name__)

MAX_SECONDS = 600.0
MAX_FPS = 60
ENGINE_WAIT_S = 60.0  # the longest the recorder waits for one report before it draws on anyway
DEFAULT_SECONDS = 10.0
DEFAULT_FPS = 30


def _seconds(lo: float, hi: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected seconds from {lo:g} to {hi:g}, got {text!r}")
        return value
    return parse


def build_record_parser() -> argparse.ArgumentParser:
    from gui.cli import add_scene_options
    from model.argtypes import int_in
    p = OneLineParser(prog=command_name("record"),
                      description="Record a tour page (--section) or a real Live run as a clip, frame-exact: frame "
                                  "i is drawn at i/F seconds of the animation clock, not of the wall.")
    p.add_argument("--out", required=True, metavar="FILE.mp4",
                   help="the clip; its extension picks the format: .mp4 (H.264), .webm (VP9), .gif")
    add_scene_options(p)
    p.add_argument("--seconds", type=_seconds(0.1, MAX_SECONDS), default=DEFAULT_SECONDS, metavar="S",
                   help=f"length of the clip in seconds of animation, 0.1-{MAX_SECONDS:g} "
                        f"(default {DEFAULT_SECONDS:g})")
    p.add_argument("--fps", type=int_in(1, MAX_FPS), default=DEFAULT_FPS, metavar="F",
                   help=f"frames per second, 1-{MAX_FPS} (default {DEFAULT_FPS})")
    p.add_argument("--hold", type=_seconds(0.0, 60.0), default=0.0, metavar="S",
                   help="then hold the last frame this many seconds, 0-60 (default 0)")
    p.add_argument("--caption", default=None, metavar="TEXT", help="a line of text along the bottom of every frame")
    return p


def record_main(argv: list[str]) -> int:
    """Parse ``argv`` and record the clip. Returns the exit status (2: bad arguments or no PyAV, one line)."""
    args = build_record_parser().parse_args(argv)
    from gui.capture.video import missing_library, out_problem, space_problem
    if (reason := missing_library()) is not None:
        print(f"record: {reason}", file=sys.stderr)
        return 2
    from gui.capture.screenshot import parse_size
    from gui.cli import model_dir_problem, run_interruptible, tear_problem
    try:
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"record: {exc}", file=sys.stderr)
        return 2
    frames = max(1, round(args.seconds * args.fps)) + round(args.hold * args.fps)
    checks = (lambda: frames_problem(args), lambda: model_dir_problem(args), lambda: tear_problem(args),
              lambda: space_problem(args.out, size, frames),
              lambda: out_problem(args.out, size))  # last: it creates --out's folder, once all else is right
    for check in checks:
        if (reason := check()) is not None:  # before the engine starts, and in one line
            print(f"record: {reason}", file=sys.stderr)
            return 2
    return run_interruptible(lambda: _record(args, size))


def frames_problem(args) -> str | None:
    """None, or the one-line reason ``--seconds`` × ``--fps`` is not at least one frame (--seconds 0.1 --fps 1
    would write a whole 1 s frame and call it 0.1 s)."""
    if round(args.seconds * args.fps) < 1:
        return (f"--seconds {args.seconds:g} at --fps {args.fps} is less than one frame; "
                f"give at least {1 / args.fps:g} s")
    return None


def _record(args, size: tuple[int, int]) -> int:
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY") and sys.platform.startswith("linux"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    logging.basicConfig(level=logging.WARNING, format="%(name)s %(levelname)s %(message)s")
    if args.section is not None:
        from gui.capture.tour_shot import open_section
        widget = open_section(args.section, args.lang, size, live=not args.illustrative, prompt=args.prompt,
                              stepped=True, model_dir=args.model)
        if isinstance(widget, int):
            return widget
        try:
            return _frames(args, size, widget, widget.clock, lambda: None,
                           f"tour page {args.section}, {args.lang}")
        finally:
            widget.clock.stop()
            widget.close()
            widget.deleteLater()
    from gui.capture.screenshot import open_live_window, prepare_live, wait_until
    opened = open_live_window(args, size, name="record", stepped=True)
    if isinstance(opened, int):
        return opened
    app, window = opened
    try:
        if (code := prepare_live(app, window, args, name="record")) != 0:
            return code
        if callable(getattr(window, "show_live", None)):
            window.show_live()  # --presenter opens on the deck's first tour page
        window.set_real_time(False)  # paced: the rule the window follows on screen
        window.run()

        def engine_ready() -> None:
            """The stage idle mid-answer means it waits for the engine's next report: wait for it here."""
            wait_until(app, lambda: window.scene.busy() or not window.is_running() or not window.bridge.is_running(),
                  ENGINE_WAIT_S)

        code = _frames(args, size, window, window.clock, engine_ready, "Live page")
        if code == 0 and not window.bridge.is_running():
            log.warning("record: the engine stopped during the clip")
        return code
    finally:
        window.close()
        window.stop()


def _frames(args, size, widget, clock, before_frame, what: str) -> int:
    """Step ``clock`` to i / fps, let ``before_frame`` wait for anything the scene needs, draw ``widget`` and
    encode it, for every frame; then the held frames. Returns 0, or 1 with one line on stderr."""
    from PySide6.QtCore import QCoreApplication

    from gui.audit.layout_audit import exact_image
    from gui.capture.video import ClipWriter, qimage_rgb
    from gui.cli import _RUN
    fps = int(args.fps)
    count = max(1, round(args.seconds * fps))
    held = round(args.hold * fps)
    if args.caption is not None and (reason := caption_problem(args.caption, size[1])) is not None:
        print(f"record: {reason}", file=sys.stderr)  # before any file is made
        return 2
    try:
        writer = ClipWriter(args.out, size, fps)
    except OSError as exc:
        print(f"record: cannot write beside {args.out} ({exc.strerror or exc})", file=sys.stderr)
        return 1
    _RUN.setdefault("cleanup", []).append(str(writer.tmp))
    progress = Progress(count + held)
    done = False
    try:
        rgb = None
        for i in range(count):
            clock.step_to(i / fps)  # animation time of frame i: exact, whatever the wall says
            QCoreApplication.processEvents()
            before_frame()
            image = exact_image(widget, size)
            if args.caption:
                draw_caption(image, args.caption)
            rgb = qimage_rgb(image)
            writer.write(rgb)
            QCoreApplication.processEvents()  # work queued after the paint (the Live page's grants, its words)
            progress.update(i + 1)
        for j in range(held):
            writer.write(rgb)
            progress.update(count + j + 1)
        path = writer.close()
        done = True
    except Exception as exc:  # noqa: BLE001 - a full disk, an encoder error: one line, and no file (Ctrl+C passes)
        progress.finish()
        print(f"record: could not write {args.out} ({type(exc).__name__}: {exc})", file=sys.stderr)
        return 1
    finally:
        progress.finish()
        if not done:
            writer.abort()
    codec = {".mp4": "H.264", ".webm": "VP9", ".gif": "GIF"}[writer.ext]
    hold = f" + {args.hold:g} s held" if held else ""
    print(f"record: {path} ({size[0]}x{size[1]}, {writer.frames} frames at {fps} fps, {args.seconds:g} s{hold}, "
          f"{codec}, {what}; made in {progress.elapsed_s():.1f} s)")
    return 0


def caption_line(text: str) -> str:
    """``--caption`` as the one line drawn: newlines, tabs and runs of spaces become one space, control and other
    unprintable characters (a stray escape, a NUL) are dropped."""
    return " ".join("".join(ch for ch in " ".join(str(text).split()) if ch.isprintable()).split())


def caption_font(height: int):
    """The caption's QFont for a frame ``height`` pixels high: the app's font at the type scale's heading size."""
    from PySide6.QtGui import QFont

    from animations.typescale import TypeScale
    from gui.app import QApplication
    font = QFont(QApplication.font())
    font.setPixelSize(max(12, round(TypeScale(height).px("heading"))))
    return font


def undrawable(text: str, font) -> list[str]:
    """The characters of ``text`` that no font Qt can reach (``font`` and its fallbacks) draws: each would show
    as a box (Qt shapes it with glyph 0, the font's "missing glyph"). In order of first appearance."""
    from PySide6.QtGui import QTextLayout
    missing = []
    for ch in dict.fromkeys(text):
        if ch.isspace():
            continue
        layout = QTextLayout(ch, font)
        layout.beginLayout()
        layout.createLine()
        layout.endLayout()
        if any(0 in run.glyphIndexes() for run in layout.glyphRuns()):
            missing.append(ch)
    return missing


def caption_problem(text: str, height: int) -> str | None:
    """None if ``caption_line(text)`` can be drawn without boxes, else the one-line reason (needs a QApplication
    with the app's fonts registered)."""
    line = caption_line(text)
    if not line:
        return "--caption is empty once its line breaks and control characters are removed"
    missing = undrawable(line, caption_font(height))
    if missing:
        shown = ", ".join(f"{ch} (U+{ord(ch):04X})" for ch in missing[:5]) + (" ..." if len(missing) > 5 else "")
        return f"--caption: no installed font can draw {shown}; it would show as a box"
    return None


def draw_caption(image, text: str) -> None:
    """Draw ``caption_line(text)`` on one line on a dark band along the bottom of ``image`` (a QImage, in place),
    elided to the width; its size follows the image's height (the type scale's heading size)."""
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtGui import QColor, QFontMetrics, QPainter
    w, h = image.width(), image.height()
    font = caption_font(h)
    metrics = QFontMetrics(font)
    band = metrics.height() * 1.6
    line = metrics.elidedText(caption_line(text), Qt.TextElideMode.ElideRight, int(w * 0.94))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(QRectF(0, h - band, w, band), QColor(15, 20, 25, 225))
        painter.setFont(font)
        painter.setPen(QColor("#eef3f8"))
        painter.drawText(QRectF(0, h - band, w, band),
                         Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextSingleLine, line)
    finally:
        painter.end()


class Progress:
    """A one-line progress bar on stderr (frames done / total, seconds left), redrawn in place; silent when
    stderr is not a terminal (a log file gets only the final line on stdout)."""

    WIDTH = 28

    def __init__(self, total: int, stream=None):
        self.total = max(1, int(total))
        self.stream = stream or sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last = 0.0
        self._shown = False

    def elapsed_s(self) -> float:
        return time.monotonic() - self.start

    def line(self, done: int) -> str:
        """The bar for ``done`` frames: ``[#####·····] 45/120 frames · 12 s left``."""
        filled = int(self.WIDTH * done / self.total)
        elapsed = self.elapsed_s()
        left = f"{elapsed / done * (self.total - done):.0f} s left" if done else "…"
        return f"record [{'#' * filled}{'·' * (self.WIDTH - filled)}] {done}/{self.total} frames · {left}"

    def update(self, done: int) -> None:
        now = time.monotonic()
        if not self.live or (now - self._last < 0.1 and done < self.total):
            return
        self._last = now
        self.stream.write("\r" + self.line(done) + "\x1b[K")
        self.stream.flush()
        self._shown = True

    def finish(self) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
