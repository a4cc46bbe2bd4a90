"""Offscreen pictures of a tour page: ``open_section`` (a shown, offscreen ``TourWidget`` on one page; also
``python main.py record``) and ``render_section_png`` (``python main.py screenshot --section N``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gui.tour import SECTION_COUNT
from gui.tour.measure import measure_in_subprocess


def open_section(section: int, lang: str, size: tuple[int, int] = (1600, 900), live: bool = True,
                 analysis: dict | None = None, prompt: str | None = None, stepped: bool = False,
                 kiosk: bool = False, presenter: bool = False, model_dir: str | None = None):
    """Tour page ``section`` in a shown, offscreen ``TourWidget`` of ``size`` (w, h) pixels, its intro at time 0
    (arguments as ``render_section_png``; ``model_dir``: the book measured, default the language's bundled
    one). Returns the widget, or an exit status (2) after one line on stderr.
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

    from animations.fonts import register_fonts
    from gui import i18n
    from gui.app import BODY_PX, create_app
    from gui.tour.data import TourData, default_prompt
    from gui.tour.tour import TourWidget

    app = create_app()
    family = register_fonts()
    f = QFont(family)
    f.setPixelSize(BODY_PX)
    app.setFont(f)
    i18n.set_language(lang)
    from model.catalog import for_language
    # the book given (--model), else the one the window runs in this language (poems for Chinese)
    model_dir = Path(model_dir) if model_dir else for_language(lang).path()
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
            widget.game_press()
    widget.show()
    QCoreApplication.processEvents()
    return widget


def render_section_png(section: int, lang: str, out: str, size: tuple[int, int] = (1600, 900), live: bool = True,
                       analysis: dict | None = None, prompt: str | None = None,
                       layout_json: str | None = None, kiosk: bool = False, presenter: bool = False,
                       code: bool = False, model_dir: str | None = None) -> int:
    """Render tour page ``section`` offscreen to the PNG ``out``. Returns 0, or 1/2 with a message on stderr.

    section: 1–15 the source's sections, 16 the game, 17 Terms (the metaphor table), 18 Three questions.
    lang: "zh" or "en". size: (width, height) in pixels. live: measure on the bundled model first (in a helper
    process, a few seconds); otherwise, or if that fails, measured figures are drawn as illustrations.
    analysis: measurements to use instead (the ``data`` of an ``analyze`` answer of kind "tour").
    code: the code view open beside the scene (``gui.code_view.tour``: on the pages the engine carries out).
    """
    widget = open_section(section, lang, size, live=live, analysis=analysis, prompt=prompt, kiosk=kiosk,
                          presenter=presenter, model_dir=model_dir)
    if isinstance(widget, int):
        return widget
    from PySide6.QtCore import QCoreApplication
    if code:
        from gui.code_view.tour import TourCode
        widget.code_view = TourCode(widget)
        widget.code_view.set_open(True)
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
