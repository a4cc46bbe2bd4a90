"""Smoke-render the stage offscreen at several moments of a trip, in English and Chinese.

Set ONE_TRIP_SHOTS=DIR to keep the PNGs for looking at them.
"""

import os
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QRectF, QTranslator
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter

from animations.stage.scene import StageScene
from tests.tools import compile_ts

ROOT = Path(__file__).resolve().parents[2]
TS = ROOT / "assets" / "i18n" / "one_trip_zh_CN.ts"
STAGE_SOURCES = sorted((ROOT / "animations" / "stage").glob("*.py")) + [ROOT / "animations" / "items.py"]


def render(scene: StageScene, name: str, out: Path | None) -> QImage:
    img = QImage(1600, 700, QImage.Format.Format_ARGB32)
    img.fill(QColor("black"))
    painter = QPainter(img)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    scene.render(painter, QRectF(0, 0, 1600, 700), scene.sceneRect())
    painter.end()
    if out is not None:
        img.save(str(out / f"{name}.png"))
    return img


def distinct_colors(img: QImage, step: int = 23) -> int:
    return len({img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)})


def batch_trip(n: int, phase: str = "decode") -> dict:
    ids = [f"r{i}" for i in range(n)]
    tokens = [{"request_id": r, "label": f"␣w{i}", "text": f" w{i}"} for i, r in enumerate(ids)]
    return {"phase": phase, "batch": n, "request_ids": ids, "layer_ms": [1.0, 2.0, 1.0, 3.0], "wall_ms": 6.0,
            "blocks_in_use": 4 * n, "tokens": tokens, "tokens_in": 29 if phase == "prefill" else n}


def _ts_sources() -> set[str]:
    root = ET.parse(TS).getroot()
    return {m.findtext("source") for c in root.iter("context") if c.findtext("name") == "StageScene"
            for m in c.iter("message")}


def test_every_stage_string_has_a_chinese_translation():
    used = set()
    for path in STAGE_SOURCES:
        used |= set(re.findall(r'\b_?tr\(\s*"((?:[^"\\]|\\.)*)"', path.read_text(encoding="utf-8")))
    assert used, "no _tr strings found"
    missing = used - _ts_sources()
    assert not missing, f"strings without a translation in {TS.name}: {sorted(missing)}"


@pytest.fixture
def chinese(qapp, tmp_path):
    """The Chinese translator, compiled from the .ts with pyside6-lrelease (the real Qt path)."""
    qm = tmp_path / "one_trip_zh_CN.qm"
    compile_ts(TS, qm)  # PySide6's own lrelease, never one found on PATH
    translator = QTranslator()
    assert translator.load(str(qm))
    QCoreApplication.installTranslator(translator)
    yield translator
    QCoreApplication.removeTranslator(translator)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_stage_renders_through_a_trip(qapp, request, lang):
    if lang == "zh":
        request.getfixturevalue("chinese")
    out = Path(os.environ["ONE_TRIP_SHOTS"]) if os.environ.get("ONE_TRIP_SHOTS") else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    from animations.fonts import register_fonts
    scene = StageScene()
    scene.set_font_family(register_fonts())  # the bundled CJK family: no boxes for Chinese
    scene.set_language(lang)
    scene.configure([3_150_000] * 4, 49_152, 256, "one-trip-gpt2")
    idle = render(scene, f"{lang}_idle", out)
    assert distinct_colors(idle) > 5
    scene.show_trip(batch_trip(1, "prefill"))
    frames = []
    for t, name in [(0.1, "prefill_load"), (0.3, "prefill_reading"), (0.45, "prefill_slip")]:
        scene.advance(t)
        frames.append(render(scene, f"{lang}_{name}", out))
    scene.advance(1.0)
    scene.show_trip(batch_trip(8))
    scene.advance(0.5)
    frames.append(render(scene, f"{lang}_batch8_mid", out))
    scene.advance(0.35)
    frames.append(render(scene, f"{lang}_batch8_slips", out))
    scene.advance(1.0)
    assert not scene.busy()
    assert len({f.cacheKey() for f in frames}) == len(frames)
    assert all(distinct_colors(f) > 8 for f in frames)
    if lang == "zh":
        assert any("\u4e00" <= ch <= "\u9fff" for ch in scene.caption_text())
        metrics = QFontMetrics(scene._caption.font())
        assert all(metrics.inFontUcs4(ord(ch)) for ch in scene.caption_text() if not ch.isspace()), \
            f"{scene.font_family} lacks glyphs for the caption"
    else:
        # English words: no Chinese character (the middle dot "·" between clauses is English punctuation too)
        caption = scene.caption_text()
        assert caption.replace("·", "").isascii() and not any("\u4e00" <= ch <= "\u9fff" for ch in caption)


def test_set_language_switches_captions(qapp, chinese):
    scene = StageScene()
    scene.configure([1000] * 4, 100, 16, "m")
    QCoreApplication.removeTranslator(chinese)
    scene.set_language("en")
    english = scene.caption_text()
    QCoreApplication.installTranslator(chinese)
    scene.set_language("zh")
    assert scene.caption_text() != english
    assert "仓库" in scene.warehouse.header.text()
    with pytest.raises(ValueError):
        scene.set_language("fr")


def test_frame_cost_with_batch_16_is_small(qapp):
    """Advancing the stage (no painting) costs well under a 16 ms frame with 16 requests at the table."""
    scene = StageScene()
    scene.configure([3_150_000] * 12, 49_152, 512, "gpt2")
    costs = []
    for _k in range(2):
        scene.show_trip(batch_trip(16))
        while scene.busy():
            t0 = time.perf_counter()
            scene.advance(1 / 60)
            costs.append(time.perf_counter() - t0)
    costs.sort()
    assert costs[len(costs) // 2] < 0.004, f"median advance {costs[len(costs) // 2] * 1e3:.2f} ms"


def test_a_scene_made_without_a_family_has_chinese_glyphs_in_a_fresh_process():
    """No fixture, no app font: a StageScene alone still picks the bundled family, which covers every Chinese
    translation of the stage (with the machine's fonts hidden, tests/conftest.py, boxes would show here)."""
    import subprocess
    import sys
    code = ("import sys\nfrom PySide6.QtWidgets import QApplication\nfrom PySide6.QtGui import QFontMetrics, QFont\n"
            "app = QApplication([])\nfrom animations.stage.scene import StageScene\nscene = StageScene()\n"
            "m = QFontMetrics(QFont(scene.font_family))\n"
            "text = sys.stdin.read()\n"
            "print(scene.font_family, ''.join(sorted({c for c in text\n"
            "                                         if not c.isspace() and not m.inFontUcs4(ord(c))})))\n")
    root = ET.parse(TS).getroot()
    text = "".join(m.findtext("translation") or "" for c in root.iter("context") if c.findtext("name") == "StageScene"
                   for m in c.iter("message"))
    assert any("\u4e00" <= ch <= "\u9fff" for ch in text)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, input=text, capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    family, _, missing = proc.stdout.strip().partition(" OneTrip")
    assert family == "Noto Sans SC" and missing.strip() == "", proc.stdout
