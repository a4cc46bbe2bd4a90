"""Shared fixtures for every test package.

- Qt runs offscreen (``QT_QPA_PLATFORM=offscreen``) unless the caller chose a platform.
- ``no_running_timers`` (autouse): fails a test that leaves a QTimer, QThread, Qt animation or AnimationClock
  running once its widgets are closed (napari's idea). It only looks when a QApplication exists, so tests
  without Qt pay nothing.
- ``english_after_each_test`` (autouse): the process-wide translator goes back to English after every test.
- Qt warnings fail tests under ``tests/gui`` and ``tests/animations`` (pytest-qt's ``qt_log_level_fail``).
- ``tiny_model_dir`` (session): a random 2-layer GPT-2 with a small byte-level BPE, saved in Hugging Face layout.
- The machine's fonts are hidden from Qt: fontconfig reads a config (``FONTCONFIG_FILE``) that lists only
  ``assets/fonts``, so every run sees what a fresh machine without CJK fonts sees, and a text that would draw
  boxes there fails here too. ``ONE_TRIP_TEST_FONTS=system`` keeps the machine's fonts.
- ``app_font`` (session, used by every test under ``tests/gui`` and ``tests/animations``): the bundled fonts
  registered and the application font set the way the app does it (``animations.fonts``).
"""

from __future__ import annotations

import functools
import os
import signal
import weakref
from pathlib import Path

import pytest

# Settings and logs of the app under test go to a scratch place, never to the user's own (gui/settings.py, logs.py)
_SCRATCH = Path(__import__("tempfile").mkdtemp(prefix="one-trip-tests-"))
# The offscreen platform's one screen is 800x800 unless a config file says otherwise (its "configfile" option):
# a 1280x720 screen (the kiosk and projector size), so that the touch tests' 1280x720 window lies on it.
(_SCRATCH / "offscreen.json").write_text(
    '{"screens": [{"name": "offscreen-720p", "x": 0, "y": 0, "width": 1280, "height": 720,'
    ' "logicalDpi": 96, "logicalBase": 96, "dpr": 1}]}', encoding="utf-8")
os.environ.setdefault("QT_QPA_PLATFORM", f"offscreen:configfile={_SCRATCH / 'offscreen.json'}")
os.environ.setdefault("ONE_TRIP_CONFIG_DIR", str(_SCRATCH / "config"))
os.environ.setdefault("ONE_TRIP_LOG_DIR", str(_SCRATCH / "log"))
os.environ.setdefault("ONE_TRIP_CACHE_DIR", str(_SCRATCH / "cache"))  # the measured read speed (model.hardware)

ROOT = Path(__file__).resolve().parent.parent

# A run started in the background of a non-interactive shell (scripts/test.sh's serial run; `pytest &`) begins with
# Ctrl+C ignored, and so would every command a test starts: Python makes SIGINT a KeyboardInterrupt only where it
# starts with the default action, so `generate` would ignore the Ctrl+C that test_cli_abuse sends it. A handler set
# here is the default again in each command (exec resets a handled signal, not an ignored one).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def _hide_system_fonts(scratch: Path) -> Path:
    """A fontconfig file that lists only the bundled fonts (the Noto Sans SC subset and the DejaVu Sans subset,
    the Latin fallback), with its cache in ``scratch``; exported as ``FONTCONFIG_FILE`` before Qt reads fonts,
    so this process and every subprocess it starts see no system font."""
    from xml.sax.saxutils import escape

    import assets
    conf = scratch / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>\n'
        f"  <dir>{escape(str(assets.FONTS))}</dir>\n  <cachedir>{escape(str(scratch / 'fontconfig'))}</cachedir>\n"
        "</fontconfig>\n", encoding="utf-8")
    return conf


if os.environ.get("ONE_TRIP_TEST_FONTS") != "system":
    os.environ["FONTCONFIG_FILE"] = str(_hide_system_fonts(_SCRATCH))
    os.environ.pop("FONTCONFIG_PATH", None)
    os.environ.pop("FONTCONFIG_SYSFONTS", None)

TINY_CORPUS = [
    "The quick brown fox jumps over the lazy dog. One trip, one token.\n",
    "Once upon a time, a little robot carried books from the warehouse to the desk.\n",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "每按一下，就是把书搬一趟。从前有一座山，山里有一座庙。\n",
    "KV 缓存 = 2 × 层数 × KV 头数 × 每头维度 × 长度 × 批大小 × 字节数。\n",
] * 4


# Tests that bound a wall-clock time (the app exits within 2 s of a signal, an engine's death is noticed at once,
# Ctrl+C ends a command at once, a frame's cost): scripts/test.sh runs them in a run of their own at the normal
# priority, beside the two workers at nice 10, so that the workers' load cannot fail them. Matched against the
# test's node id; the one list of them (a test marked ``serial`` anywhere else is refused). Only the tests that
# bound a time: their neighbours in the same files (the kiosk on the fake engine, record's bad arguments, the
# stage's renders, the screenshot command, a Ctrl+C test that bounds no time) run on the two workers.
# tests/model/test_orphans.py bounds a time too (no worker outlives its killed engine by 5 s) but runs on the
# workers: the kernel ends those workers (PR_SET_PDEATHSIG), 0.55 s after the kill at a load of 11-14, and its three
# tests passed 3 times in 3 beside three busy loops on this 2-core machine.
SERIAL = ("tests/gui/test_app.py::test_exit_mid_decode_is_clean",
          "tests/gui/kiosk/test_kiosk.py::test_kiosk_app_exits_cleanly",
          "tests/gui/window/test_recovery.py::",
          "tests/gui/capture/test_record_break.py::test_ctrl_c_",
          "tests/gui/capture/test_screenshot_args.py::test_ctrl_c_",
          "tests/gui/capture/test_screenshot_args.py::test_sigterm_",
          "tests/animations/test_render.py::test_frame_cost_")
SERIAL_FILES = frozenset(key.split("::", 1)[0] for key in SERIAL)


def pytest_ignore_collect(collection_path, config):
    """The serial run (``-m serial``, scripts/test.sh's run beside the workers) reads only the files that hold its
    tests: reading all of them took 7.6 s of the run's 10 s of collecting 15 tests."""
    if config.getoption("markexpr", None) != "serial" or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    try:
        relative = collection_path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return relative not in SERIAL_FILES


# The files that take longest on a worker, longest first (--durations on a 2-core machine). scripts/test.sh hands
# whole files to the two workers in collection order (--dist loadfile --no-loadscope-reorder): these go first, so
# that neither worker is left alone with a long file at the end while the other has nothing to do.
LONG_FILES = ("tests/model/test_cli_abuse.py", "tests/gui/tour/test_tour_counts.py",
              "tests/gui/presenter/test_record_key.py", "tests/gui/live/test_live_extras.py",
              "tests/bench/test_bench_report.py", "tests/gui/live/test_live_layout.py", "tests/test_newcomer.py",
              "tests/gui/tour/test_tour_layout.py", "tests/gui/kiosk/test_touch.py", "tests/gui/capture/test_record.py",
              "tests/model/test_orphans.py", "tests/model/test_engine.py", "tests/gui/kiosk/test_kiosk_controls.py",
              "tests/model/test_parallel.py", "tests/model/test_quantize.py", "tests/test_i18n_complete.py",
              "tests/model/test_ragged.py", "tests/model/test_service.py", "tests/model/test_cli.py",
              "tests/test_install.py", "tests/model/test_robustness.py", "tests/gui/capture/test_silent_limits.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        listed = any(item.nodeid.startswith(key) for key in SERIAL)
        if item.get_closest_marker("serial") is not None and not listed:
            raise pytest.UsageError(f"{item.nodeid} is marked serial but not listed in tests/conftest.py SERIAL, "
                                    "which the serial run's collection reads: list it there instead")
        if listed:
            item.add_marker(pytest.mark.serial)
        parts = Path(str(item.fspath)).parts
        if "gui" in parts or "animations" in parts:
            item.add_marker(pytest.mark.usefixtures("app_font"))
            item.add_marker(pytest.mark.qt_log_level_fail("WARNING"))
            # the offscreen platform's own notice, not a problem of ours
            item.add_marker(pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints"))
    # the long files first, each file's tests in their own order (a stable sort)
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(LONG_FILES)))


# Every QThread and animation clock made in this process, kept weakly (``_track_instances``): the check after each
# test looks at these few instead of scanning every live object (gc.get_objects: 240k objects, about 100 ms a test,
# a fifth of a GUI test file's time).
_MADE: dict[str, weakref.WeakSet] = {}


def _track_instances(cls: type, kind: str) -> None:
    """From now on, every ``cls`` (subclasses included: they call this ``__init__``) lands in ``_MADE[kind]``."""
    init = cls.__init__
    if getattr(init, "_one_trip_tracked", False):
        return
    made = _MADE.setdefault(kind, weakref.WeakSet())

    @functools.wraps(init)
    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.add(self)

    tracked._one_trip_tracked = True
    cls.__init__ = tracked


def pytest_collection_finish(session):
    """Track threads and clocks before the first test (and its module fixtures) can make one."""
    from PySide6.QtCore import QThread

    _track_instances(QThread, "QThread")
    for clock_type in _clock_types():
        _track_instances(clock_type, "AnimationClock")


def _running_qt_objects() -> list[str]:
    """Descriptions of every timer, thread, animation and animation clock still running."""
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    app = QCoreApplication.instance()
    if app is None:
        return []
    owners = [app]
    if isinstance(app, QApplication):
        owners += list(QApplication.topLevelWidgets())
    found = _RunningObjects()
    for owner in owners:
        _note_running_children(owner, found)
    for kind, running in (("QThread", "isRunning"), ("AnimationClock", "is_running")):
        for obj in list(_MADE.get(kind, ())):
            try:
                if getattr(obj, running)():
                    found.note(obj, kind)
            except RuntimeError:  # the C++ object is already gone
                continue
    return found.found


class _RunningObjects:
    """The running objects found so far, each described once."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.seen: set[int] = set()

    def note(self, obj, what: str) -> None:
        if id(obj) not in self.seen:
            self.seen.add(id(obj))
            parent = obj.parent()
            self.found.append(f"{what} {obj.objectName() or type(obj).__name__} (parent: "
                              f"{type(parent).__name__ if parent is not None else None})")


def _note_running_children(owner, found: _RunningObjects) -> None:
    """``owner``'s active timers, running threads and running animations."""
    from PySide6.QtCore import QAbstractAnimation, QThread, QTimer

    for timer in owner.findChildren(QTimer):
        if timer.isActive():
            found.note(timer, "QTimer")
    for thread in owner.findChildren(QThread):
        if thread.isRunning():
            found.note(thread, "QThread")
    for anim in owner.findChildren(QAbstractAnimation):
        if anim.state() == QAbstractAnimation.State.Running:
            found.note(anim, "animation")


def _clock_types() -> tuple[type, ...]:
    """The animation clock classes that can be imported: the app's and the GUI tests' stand-in."""
    clock_types = []
    try:
        from animations.clock import AnimationClock
        clock_types.append(AnimationClock)
    except ImportError:
        pass
    try:
        from tests.gui.stand_in import AnimationClock as StandInClock
        clock_types.append(StandInClock)
    except ImportError:
        pass
    return tuple(clock_types)


def _stop_everything() -> None:
    from PySide6.QtCore import QAbstractAnimation, QCoreApplication, QTimer
    from PySide6.QtWidgets import QApplication

    app = QCoreApplication.instance()
    owners = [app] + (list(QApplication.topLevelWidgets()) if isinstance(app, QApplication) else [])
    for owner in owners:
        for timer in owner.findChildren(QTimer):
            timer.stop()
        for anim in owner.findChildren(QAbstractAnimation):
            anim.stop()
    for clock in list(_MADE.get("AnimationClock", ())):
        try:
            clock.stop()
        except RuntimeError:
            pass
    for thread in list(_MADE.get("QThread", ())):
        try:
            if thread.isRunning():
                thread.quit()
                thread.wait(2000)
        except RuntimeError:
            pass


@pytest.fixture(scope="session")
def app_font(qapp) -> str:
    """The bundled fonts registered and made the application font, as ``gui.app.setup_app`` does; the family."""
    from animations.fonts import use_app_font
    return use_app_font(qapp)


@pytest.fixture(autouse=True)
def english_after_each_test():
    """Put the application's language back to English after each test (the translator is process-global)."""
    yield
    import sys
    i18n = sys.modules.get("gui.i18n")
    if i18n is not None and i18n.current_language() != "en":
        i18n.set_language("en")


def _qt_free(request) -> bool:
    """A test of model/ (which never imports Qt: tests/test_layering.py) that takes no Qt fixture cannot leave a Qt
    object running, so the check is skipped for it."""
    if {"qapp", "qtbot"} & set(request.fixturenames):
        return False
    return Path(str(request.node.fspath)).resolve().is_relative_to(Path(__file__).resolve().parent / "model")


@pytest.fixture(autouse=True)
def no_running_timers(request):
    """Fail the test if it leaves any QTimer, QThread, Qt animation or AnimationClock running.

    Runs after pytest-qt has closed the test's widgets (autouse fixtures are set up first, torn down last).
    """
    yield
    if "PySide6.QtCore" not in __import__("sys").modules or _qt_free(request):
        return
    from PySide6.QtCore import QCoreApplication
    if QCoreApplication.instance() is None:
        return
    QCoreApplication.processEvents()
    running = _running_qt_objects()
    if running:
        _stop_everything()  # so the next test starts clean
        pytest.fail("left running after the test: " + "; ".join(running), pytrace=False)


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A random GPT-2 (2 layers, 2 heads, 32 wide, 128 positions) with a small byte-level BPE, in HF layout."""
    from tokenizers import ByteLevelBPETokenizer

    from model.checkpoint import save_pretrained
    from model.gpt2 import GPT2, GPT2Config
    from model.tokenizer import EOS_TEXT

    out = tmp_path_factory.mktemp("tiny_gpt2")
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(TINY_CORPUS, vocab_size=400, min_frequency=2, special_tokens=[EOS_TEXT],
                            show_progress=False)
    tok_json = out / "tokenizer.json"
    bpe.save(str(tok_json))
    vocab = bpe.get_vocab_size()
    eos = bpe.token_to_id(EOS_TEXT)
    config = GPT2Config(vocab_size=vocab, n_positions=128, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=eos, eos_token_id=eos, name="tiny-random-gpt2")
    model = GPT2(config).init_weights(seed=0)
    save_pretrained(model, out, tok_json)
    return out
