"""Application start-up and shutdown: ``run_app(args)`` is what ``python main.py`` calls.

Order matters: the high-DPI rounding policy is set before the ``QApplication`` exists; fonts are registered
and the translator installed before the window is built. Shutdown is quick and clean whatever ends the app
(closing the window, SIGINT, SIGTERM): the window stops its clock and timers and the bridge stops the engine
process, then the event loop returns 0.
"""

from __future__ import annotations

import logging
import os
import signal
import sys

from PySide6.QtCore import QCoreApplication, Qt, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtGui import QFont, QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication

import assets
from animations.fonts import register_fonts
from gui import i18n
from gui.engine_link.bridge import DEFAULT_TARGET, EngineBridge
from gui.live.state import TRIP_SECONDS_RANGE

log = logging.getLogger(__name__)

APP_NAME = "One Trip"
ORG_NAME = "One Trip"
BODY_PX = 20  # body text pixel size at 1080p; everything on screen is at least this large or close to it


def _opt(args, name: str, default=None):
    return getattr(args, name, default) if args is not None else default


_QT_LEVELS = {QtMsgType.QtDebugMsg: logging.DEBUG, QtMsgType.QtInfoMsg: logging.INFO,
              QtMsgType.QtWarningMsg: logging.WARNING, QtMsgType.QtCriticalMsg: logging.ERROR,
              QtMsgType.QtFatalMsg: logging.CRITICAL}
# Notices of the offscreen platform itself (kiosk tests, screenshots); they say nothing about the app.
_QT_NOISE = ("This plugin does not support propagateSizeHints",)


def _qt_message(msg_type, context, message) -> None:
    level = _QT_LEVELS.get(msg_type, logging.WARNING)
    if any(noise in message for noise in _QT_NOISE):
        level = logging.DEBUG
    logging.getLogger("qt").log(level, "%s", message)


def install_qt_message_handler() -> None:
    """Send Qt's own messages to ``logging`` (logger "qt"), so they land in the log and never on a screen."""
    qInstallMessageHandler(_qt_message)


def create_app(argv: list[str] | None = None) -> QApplication:
    """The ``QApplication`` (created once), with the rounding policy set first and names for QSettings."""
    app = QApplication.instance()
    if app is None:
        QGuiApplication.setHighDpiScaleFactorRoundingPolicy(Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    QCoreApplication.setApplicationName(APP_NAME)
    QGuiApplication.setDesktopFileName("one-trip")  # assets/one-trip.desktop; the icon from assets/icons
    app.setWindowIcon(QIcon(str(assets.ICONS / "one-trip.png")))
    QCoreApplication.setOrganizationName(ORG_NAME)
    from gui.settings import configure_qsettings
    configure_qsettings()  # every QSettings() reads and writes one INI file (ONE_TRIP_CONFIG_DIR for tests)
    return app


def setup_app(app: QApplication, lang: str) -> str:
    """Fonts and language. Returns the font family in use (one with Chinese glyphs when one exists)."""
    family = register_fonts()
    font = QFont(family)
    font.setPixelSize(BODY_PX)
    app.setFont(font)
    i18n.set_language(lang if lang in i18n.LANGUAGES else "en")
    return family


# The engine times each layer on one trip in this many (model.service's layer_timing_every): timing every layer
# took the trip off its fast path (+61 % on the forward, issue 34) and the Live page's trips were slower than the
# engine's; the stage lights the chapters by the last sampled trip's layer times (bench/live_vs_headless.py).
LAYER_TIMING_EVERY = 16


def engine_options(args) -> dict:
    """The engine's options from the command line (see ``model.service.engine_main``)."""
    return {"model_dir": _opt(args, "model"), "draft_model_dir": _opt(args, "draft_model"),
            "device": _opt(args, "device", "cpu") or "cpu",
            "threads": _opt(args, "threads"), "max_batch": int(_opt(args, "batch", 1) or 1),
            "layer_timing": True, "layer_timing_every": int(_opt(args, "layer_timing_every", LAYER_TIMING_EVERY)),
            "remeasure_floor": bool(_opt(args, "remeasure_floor", False))}


def choose_language(args) -> str:
    """The interface language of this start: ``--lang``, else the one saved last time, else the system locale's
    (``gui.settings.system_language``: zh for a Chinese locale, en for any other)."""
    from gui import settings as app_settings
    lang = _opt(args, "lang") or app_settings.saved_language() or app_settings.system_language()
    return lang if lang in i18n.LANGUAGES else app_settings.system_language()


def build_window(args, app: QApplication):
    """Build (not show) the main window with its engine bridge."""
    from gui.window.main_window import MainWindow
    lang = choose_language(args)
    family = setup_app(app, lang)
    bridge = EngineBridge(engine_options(args), target=_opt(args, "engine_target", None) or DEFAULT_TARGET)
    window = MainWindow(bridge, lang=lang, font_family=family)
    if lang != "en":
        window.set_language(lang)  # the stage re-reads its strings too
    return window


def install_signal_handlers(app: QApplication, window) -> QTimer:
    """SIGINT/SIGTERM close the window (and so quit with 0). Returns the timer that lets Python see signals.

    Qt's event loop runs in C++; a short timer hands control back to the interpreter so that Python signal
    handlers run promptly.
    """
    def on_signal(signum, _frame):
        log.info("signal %s: closing", signum)
        from gui.kiosk.kiosk import close_for_good
        QTimer.singleShot(0, lambda: close_for_good(window))  # a kiosk window refuses a plain close()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    waker = QTimer(app)
    waker.setInterval(200)
    waker.timeout.connect(lambda: None)
    waker.start()
    return waker


MAX_TIMER_MS = 86_400_000  # one day; QTimer takes at most 2**31 - 1 ms


def env_ms(name: str) -> int | None:
    """A delay in milliseconds from the environment variable ``name`` (0 to one day), or None when it is unset.

    A value that is not a whole number or lies outside the range is ignored with a WARNING naming the variable,
    the value and what is done instead: these hooks exist for tests, and a typo must not stop the window.
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_TIMER_MS:
        log.warning("%s=%r is not a whole number of milliseconds from 0 to %d; ignored", name, raw, MAX_TIMER_MS)
        return None
    return value


def run_app(args) -> int:
    """Open the main window and run until it is closed. Returns the exit code (0 on a clean exit).

    ``args`` (argparse Namespace): ``model`` (str or None: bundled model), ``lang`` ("zh"/"en"), ``device``,
    ``threads``, ``kiosk`` and friends (later). The environment variable ``ONE_TRIP_AUTOCLOSE_MS`` closes the
    window after that many milliseconds (for tests); ``ONE_TRIP_AUTORUN=1`` presses Run at start.
    """
    from gui import settings as app_settings
    from gui.logs import setup_logging
    log_file = setup_logging("gui")
    install_qt_message_handler()
    app = create_app()
    settings = app_settings.load(args)
    problem = app_settings.write_problem()
    if problem:  # said once; the app runs on what it could read (or the defaults)
        log.warning("settings cannot be saved (%s); running on the settings read and the defaults", problem)
    else:
        app_settings.write_defaults_if_new(app_settings.Settings())  # a new file lists every key an operator may set
    log.info("settings %s (from %s); log %s", settings, app_settings.settings_path(), log_file)
    window = build_window(args, app)
    kiosk = bool(_opt(args, "kiosk", False))
    window.persist_settings = not kiosk  # a visitor's language switch must not become the kiosk's language
    lo, hi = TRIP_SECONDS_RANGE
    window.session.set_trip_seconds(min(hi, max(lo, round(float(settings.trip_seconds), 2))))
    waker = install_signal_handlers(app, window)
    from gui.kiosk.kiosk import KioskController
    from gui.presenter.presenter import Presenter
    controller = KioskController(window, settings).install() if kiosk else None
    Presenter(window, screens=controller.screens if controller else None, screen=settings.screen,
              deck=settings.deck).install(
        presenter_mode=bool(_opt(args, "presenter", False)))
    from gui.kiosk.touch import install_touch  # kiosk, --touch or a touch screen: swipe, tap, finger-sized targets
    install_touch(window, kiosk=kiosk, force=bool(_opt(args, "touch", False)))
    if controller is not None:
        controller.show()
    elif _opt(args, "screen", None) is not None:
        window.presenter.screens.fullscreen()
    else:
        window.show()
    window.start()
    if os.environ.get("ONE_TRIP_AUTORUN") == "1":
        window.run()
    autoclose = env_ms("ONE_TRIP_AUTOCLOSE_MS")
    if autoclose is not None:  # tests: close this long after the engine is ready (with AUTORUN: mid-decode)
        window.bridge.ready.connect(lambda _info: QTimer.singleShot(int(autoclose), window.close),
                                    Qt.SingleShotConnection)
    chord_ms = env_ms("ONE_TRIP_OPERATOR_CHORD_MS")
    # tests: the operator chord, this long after the engine is ready
    if chord_ms is not None and controller is not None:
        window.bridge.ready.connect(lambda _info: QTimer.singleShot(int(chord_ms), controller.operator_action.trigger),
                                    Qt.SingleShotConnection)
    code = app.exec()
    waker.stop()
    window.stop()  # idempotent: already done by closeEvent
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    return int(code)
