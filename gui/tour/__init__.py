"""The guided tour: ``TourWidget`` and ``render_section_png`` (``python main.py screenshot --section N``).

Never imports torch in this process: measurements that need a forward pass run in another process (the engine,
through ``EngineBridge.analyze``, or a short-lived helper process for offscreen screenshots).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = ["TourWidget", "render_section_png", "open_section", "measure_in_subprocess", "SECTION_COUNT"]

SECTION_COUNT = 18  # 15 sections, the game, the metaphor table, the three questions


def __getattr__(name):
    if name == "TourWidget":
        from gui.tour.tour import TourWidget
        return TourWidget
    raise AttributeError(name)


def _measure_child(model_dir: str, prompt: str, draft_dir: str | None) -> dict:
    """Runs in the helper process: load the model, measure everything the tour shows."""
    from model.teaching.analysis import analyze_model_dir  # torch: only ever imported in the child
    return analyze_model_dir(model_dir, {"kind": "tour", "prompt": prompt, "analysis_id": "offline"},
                             draft_dir=draft_dir)


def _measure_entry(conn, model_dir: str, prompt: str, draft_dir: str | None) -> None:
    """The helper process's target: the measurement (or its error) sent up ``conn``. A parent that went away
    meanwhile (Ctrl+C) is not an error here: nothing is printed, the helper just ends."""
    try:
        try:
            event = _measure_child(model_dir, prompt, draft_dir)
        except Exception as exc:  # noqa: BLE001 - said by the parent, in its log
            event = {"error": f"{type(exc).__name__}: {exc}"}
        conn.send(event)
    except (BrokenPipeError, ConnectionError, EOFError, OSError):
        pass
    finally:
        conn.close()


POLL_S = 0.05  # how often the wait for the helper looks at its pipe


def measure_in_subprocess(prompt: str, model_dir: str | Path | None = None, timeout_s: float = 180.0) -> dict | None:
    """``model.teaching.analysis`` kind "tour" for ``prompt``, run in a spawned helper process (torch stays out of this
    one). Returns the data by kind, or None if the model cannot be loaded or it takes longer than ``timeout_s``.

    The wait sleeps in this file (``time.sleep``), where the record and screenshot commands' Ctrl+C handler may
    raise KeyboardInterrupt (``gui.cli._SAFE_FILES``); the helper is then ended, without a word of its own."""
    import multiprocessing as mp
    import time

    from gui.tour.data import BUNDLED_MODEL
    from model.catalog import identify  # standard library only: no torch in this process
    from model.procs import children_ignore_sigint
    model_dir = Path(model_dir) if model_dir else BUNDLED_MODEL
    bundled = identify(model_dir)
    draft = bundled.draft_path() if bundled else model_dir.parent / "draft"
    ctx = mp.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    helper = ctx.Process(target=_measure_entry, args=(send, str(model_dir), prompt,
                                                     str(draft) if draft.is_dir() else None), daemon=True)
    try:
        with children_ignore_sigint():  # Ctrl+C is this process's to handle, not the helper's
            helper.start()
        send.close()  # the helper holds the only writing end: its death reads as EOF here
        deadline = time.monotonic() + timeout_s
        while not receive.poll(0):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no answer in {timeout_s:g} s")
            time.sleep(POLL_S)
        event = receive.recv()
    except Exception as exc:  # noqa: BLE001 - no model, a crash or a timeout: the tour shows illustrations
        log.warning("tour: measurement failed (%s: %s)", type(exc).__name__, exc)
        return None
    finally:
        receive.close()
        if helper.pid is not None:
            if helper.is_alive():
                helper.terminate()
            helper.join(5)
    if event.get("error"):
        log.warning("tour: measurement failed (%s)", event["error"])
        return None
    return event.get("data")


def open_section(section: int, lang: str, size: tuple[int, int] = (1600, 900), live: bool = True,
                 analysis: dict | None = None, prompt: str | None = None, stepped: bool = False,
                 kiosk: bool = False, presenter: bool = False):
    """Tour page ``section`` in a shown, offscreen ``TourWidget`` of ``size`` (w, h) pixels, its intro at time 0
    (arguments as ``render_section_png``). Returns the widget, or an exit status (2) after one line on stderr.
    ``stepped``: the widget's animation clock moves only by ``clock.step_to`` (``python main.py record``).
    ``presenter``: the tour's text one type step larger, as ``--presenter`` shows it."""
    if not 1 <= int(section) <= SECTION_COUNT:
        print(f"screenshot: --section must be 1..{SECTION_COUNT}, got {section}", file=sys.stderr)
        return 2
    if lang not in ("zh", "en"):
        print(f"screenshot: --lang must be zh or en, got {lang!r}", file=sys.stderr)
        return 2
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtGui import QFont

    from gui import i18n
    from gui.app import BODY_PX, create_app
    from gui.fonts import register_fonts
    from gui.tour.data import TourData, default_prompt
    from gui.tour.tour import TourWidget

    app = create_app()
    family = register_fonts()
    f = QFont(family)
    f.setPixelSize(BODY_PX)
    app.setFont(f)
    i18n.set_language(lang)
    from model.catalog import for_language
    model_dir = for_language(lang).path()  # the model the window runs in this language (poems for Chinese)
    data = TourData(model_dir)
    question = prompt or default_prompt(model_dir, lang)
    if analysis is None and live and data.tokenizer is not None:
        analysis = measure_in_subprocess(question, model_dir)
    data.analysis = analysis
    widget = TourWidget(bridge=None, data=data, lang=lang, font_family=family)
    if stepped:
        widget.clock.set_stepped(True)
    widget.prompt = question
    widget.prompt_edit.setText(question)
    widget.resize(*size)
    if presenter:
        widget.set_presenter(True)
    if kiosk:  # the kiosk's touch mode: finger-sized targets, no question field (gui.kiosk.touch)
        from gui.kiosk.touch import install_touch
        install_touch(widget, kiosk=True)
    widget.goto(int(section) - 1)
    if widget.pages_key() == "game":
        for _ in range(3):  # a game in progress says more than an empty table
            widget._game_press()
    widget.show()
    QCoreApplication.processEvents()
    return widget


def render_section_png(section: int, lang: str, out: str, size: tuple[int, int] = (1600, 900), live: bool = True,
                       analysis: dict | None = None, prompt: str | None = None,
                       layout_json: str | None = None, kiosk: bool = False, presenter: bool = False) -> int:
    """Render tour page ``section`` offscreen to the PNG ``out``. Returns 0, or 1/2 with a message on stderr.

    section: 1–15 the source's sections, 16 the game, 17 the metaphor table, 18 the three questions.
    lang: "zh" or "en". size: (width, height) in pixels. live: measure on the bundled model first (in a helper
    process, a few seconds); otherwise, or if that fails, measured figures are drawn as illustrations.
    analysis: measurements to use instead (the ``data`` of an ``analyze`` answer of kind "tour").
    """
    widget = open_section(section, lang, size, live=live, analysis=analysis, prompt=prompt, kiosk=kiosk,
                          presenter=presenter)
    if isinstance(widget, int):
        return widget
    from PySide6.QtCore import QCoreApplication
    try:
        widget.finish_animation()
        widget.clock.stop()
        QCoreApplication.processEvents()
        path = Path(out)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"screenshot: cannot create the folder of {path} ({exc.strerror or exc})", file=sys.stderr)
            return 2
        from gui.audit.layout_audit import exact_image, write_layout_json
        if layout_json:
            write_layout_json(widget, layout_json, lang)
        if not exact_image(widget, size).save(str(path)):
            print(f"screenshot: could not write {path}", file=sys.stderr)
            return 1
    finally:
        widget.clock.stop()
        widget.close()
        widget.deleteLater()
    return 0
