"""One glossary decides each term in both languages (issue 38 item 8): ``gui.tour.glossary.VOCABULARY``.

Once the Chinese word for a token changed from screen to screen (the Live stage "读进 1 块 … 每秒 44 块", page 10
"每秒 token 数", page 7 "写一个新字"), Chinese captions kept "memory-bound"/"compute-bound" in English, and the
last two tabs were "Terms"/"The end" in English but "对照表"/"三个问题" in Chinese. Every text on every screen
comes from the translation file, so every message there is held to the vocabulary; the tour's pages, drawn in
both languages, are held to it as shown (tests/gui/tour/test_tour_counts.py draws them)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from gui.tour.glossary import VOCABULARY, vocabulary_problems

TS = Path(__file__).resolve().parents[3] / "assets" / "i18n" / "one_trip_zh_CN.ts"


def _messages():
    for context in ET.parse(TS).getroot():
        name = context.findtext("name")
        for m in context.findall("message"):
            translation = m.find("translation")
            if translation is not None and translation.get("type") in ("obsolete", "vanished"):
                continue
            yield name, m.findtext("source") or "", m.findtext("translation") or ""


def test_every_translated_text_says_each_term_the_glossary_way():
    problems = [f"[{ctx}] {p}" for ctx, src, tr in _messages() for p in vocabulary_problems(src, tr)]
    assert not problems, f"{len(problems)} texts:\n" + "\n".join(problems[:40])


def test_the_vocabulary_catches_what_the_issue_saw():
    # the test above can fail: each of the issue's examples is a problem
    assert vocabulary_problems("{n} tokens in", "读进 {n} 块")
    assert vocabulary_problems("Tokens per second", "每秒 token 数")
    assert vocabulary_problems("decode (memory-bound)", "解码（memory-bound）")
    assert vocabulary_problems("Terms", "对照表")
    assert not vocabulary_problems("{n} tokens in", "读进 {n} 个字")
    assert not vocabulary_problems("multi-token prediction", "多 token 预测：猜后面几个字")
    assert {w.key for w in VOCABULARY} >= {"token", "compute_bound", "memory_bound", "terms_page", "questions_page"}


def test_the_live_page_in_chinese_says_each_term_the_glossary_way(tmp_path):
    """The Live page as `screenshot --layout-json` lays it out in Chinese (stage, readout, controls, after real
    trips of the bundled model): no word the glossary rules out (once "读进 1 块 … 每秒 44 块"), and the warehouse
    names the memory it is on this CPU run (once "仓库 · 显存")."""
    import json
    import os
    import re
    import subprocess
    import sys

    root = TS.parents[2]
    layout = tmp_path / "live.json"
    proc = subprocess.run([sys.executable, "main.py", "screenshot", "--out", str(tmp_path / "live.png"), "--lang", "zh",
                           "--steps", "3", "--batch", "2", "--size", "1280x720", "--layout-json", str(layout),
                           # the pocket poetry book: the words on screen are under test, not the book
                           "--model", str(root / "assets" / "models" / "poems")],
                          cwd=root, env=dict(os.environ, QT_QPA_PLATFORM="offscreen"), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    texts = [item["text"] for item in json.loads(layout.read_text(encoding="utf-8"))["items"]]
    problems = [f"{m.group(0)!r} in {t!r}" for t in texts for w in VOCABULARY for p in w.zh_not
                if (m := re.search(p, t))]
    assert not problems, problems
    assert any("个字" in t for t in texts)  # the trip's count is on screen, in the glossary's word
    assert any(t.startswith("仓库") and "内存" in t and "显存" not in t for t in texts), texts
