"""``screenshot --kiosk --layout-json``: every control it lists meets a finger's target (issue 25's "done means").

One process per language runs the screenshot command's own code (``gui.cli``'s parser, ``gui.capture.screenshot`` for
the Live page on the fake engine, ``_render`` for tour pages) at 1280x720 and 1920x1080, as
``python main.py screenshot --kiosk --layout-json F --size WxH --lang L [--section N --illustrative]`` would,
and the test reads back the JSON files: each window is the size asked for, and its ``controls`` are at least
``target_px(height)`` (44 px at 720 lines, 66 at 1080) on each side with ``GAP_PX`` (8 px) between neighbours.
The tour pages carry the page strip: its 18 chips are counted too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui.audit.controls_audit import target_problems

ROOT = Path(__file__).resolve().parents[3]
SIZES = ((1280, 720), (1920, 1080))
SECTIONS = (1, 5, 16, 18)  # a section, the sampling page (terms in its caption), the game, the three questions

SHOOT = r'''
import sys
from gui.cli import _render, build_screenshot_parser
from gui.capture.screenshot import parse_size, screenshot_main

lang, folder = sys.argv[1], sys.argv[2]
for size in ("1280x720", "1920x1080"):
    common = ["--kiosk", "--lang", lang, "--size", size]
    args = build_screenshot_parser().parse_args(
        ["--out", f"{folder}/live-{size}.png", "--steps", "2", "--layout-json", f"{folder}/live-{size}.json"] + common)
    args.engine_target = "tests.gui.fake_engine:engine_main"  # the window's code, not the model's time
    if screenshot_main(args) != 0:
        sys.exit(f"live {size}: failed")
    for section in SECTIONS:
        args = build_screenshot_parser().parse_args(
            ["--out", f"{folder}/tour{section}-{size}.png", "--section", str(section), "--illustrative",
             "--layout-json", f"{folder}/tour{section}-{size}.json"] + common)
        if _render(args, parse_size(size)) != 0:
            sys.exit(f"tour {section} {size}: failed")
'''.replace("SECTIONS", repr(SECTIONS))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kiosk_layout_json_controls_meet_the_finger_targets(tmp_path, lang):
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    done = subprocess.run([sys.executable, "-c", SHOOT, lang, str(tmp_path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    for w, h in SIZES:
        pages = {"live": tmp_path / f"live-{w}x{h}.json"}
        pages.update({f"tour {s}": tmp_path / f"tour{s}-{w}x{h}.json" for s in SECTIONS})
        for name, path in pages.items():
            layout = json.loads(path.read_text(encoding="utf-8"))
            assert layout["size"] == [w, h], name
            controls = layout["controls"]
            if name == "live":  # the top bar, run/pause/step/reset and the three ideas
                assert len(controls) >= 12, (name, controls)
            else:  # the page strip's 18 chips, Back and Next
                chips = [c for c in controls if c["kind"] == "button" and c["rect"][1] < h * 0.1]
                assert len(chips) == 18, (name, [c["text"] for c in chips])
                assert {"◀", "▶"} <= {ch for c in controls for ch in c["text"]}, (name, controls)
            problems = target_problems(controls, h)
            assert problems == [], f"{lang} {w}x{h} {name}:\n" + "\n".join(problems)
