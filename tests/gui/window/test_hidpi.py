"""High DPI: the window at QT_SCALE_FACTOR 1, 1.5 and 2, in both languages, with no text cut off its box.

Each factor runs in its own process (the factor is read when the QApplication starts). The process builds the
window as ``run_app`` does (rounding policy first), on the fake engine, and for every visible QLabel,
QPushButton and QCheckBox with one line of text checks that the text's advance fits the room the widget has;
it also saves a PNG (``ONE_TRIP_HIDPI_SHOTS=DIR`` keeps them for a look by eye).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CHECK = r'''
import argparse, json, sys, time
from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QStyle, QStyleOptionButton
from gui.app import build_window, create_app

app = create_app()
assert QCoreApplication.instance() is app
args = argparse.Namespace(model=None, lang="en", device="cpu", threads=1, batch=1,
                          engine_target="tests.gui.fake_engine:engine_main")
window = build_window(args, app)
window.resize(1280, 800)
window.show()
window.start()
deadline = time.monotonic() + 30
while window.engine_info is None and time.monotonic() < deadline:
    app.processEvents(); time.sleep(0.01)
window.run_trips(3)
deadline = time.monotonic() + 5
while window.reports_received < 3 and time.monotonic() < deadline:
    app.processEvents(); time.sleep(0.01)

def room(w):
    if isinstance(w, QLabel):
        return w.contentsRect().width() - 2 * max(0, w.indent()) - 2 * w.margin()
    if isinstance(w, QCheckBox):
        opt = QStyleOptionButton(); w.initStyleOption(opt)
        return w.style().subElementRect(QStyle.SE_CheckBoxContents, opt, w).width()
    return w.width()

result = {"policy": QCoreApplication.instance().highDpiScaleFactorRoundingPolicy().name, "clipped": [],
          "checked": 0, "dpr": window.devicePixelRatioF()}
for lang in ("en", "zh"):
    window.set_language(lang)
    for _ in range(5):
        app.processEvents()
    for w in [c for t in (QLabel, QPushButton, QCheckBox) for c in window.findChildren(t)]:
        text = w.text()
        rich = isinstance(w, QLabel) and (w.wordWrap() or w.textFormat() == Qt.RichText)
        if not w.isVisible() or not text or "\n" in text or rich:
            continue
        if isinstance(w, QLabel) and w.objectName() == "statusLine":
            continue  # a status message may run long; it is one line by design and its end is not essential
        need = w.fontMetrics().horizontalAdvance(text)
        if isinstance(w, QPushButton):
            need = w.minimumSizeHint().width()
        have = room(w)
        result["checked"] += 1
        if need > have + 1:
            result["clipped"].append({"lang": lang, "widget": w.objectName() or type(w).__name__, "text": text,
                                      "need": need, "have": have})
    window.grab().save(sys.argv[1] + f"_{lang}.png")
window.stop()
window.close()
print("RESULT " + json.dumps(result))
'''


@pytest.mark.parametrize("factor", ["1", "1.5", "2"])
def test_text_fits_at_scale_factor(tmp_path, factor):
    shots = Path(os.environ.get("ONE_TRIP_HIDPI_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR=factor,
               ONE_TRIP_CONFIG_DIR=str(tmp_path / "cfg"))
    proc = subprocess.run([sys.executable, "-c", CHECK, str(shots / f"window_x{factor}")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    assert result["policy"] == "PassThrough"  # set before the QApplication existed
    assert abs(result["dpr"] - float(factor)) < 0.01
    assert result["checked"] > 10
    assert not result["clipped"], json.dumps(result["clipped"], ensure_ascii=False, indent=1)
    for lang in ("en", "zh"):
        assert (shots / f"window_x{factor}_{lang}.png").stat().st_size > 10_000
