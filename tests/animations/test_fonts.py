"""One font family for every text in both languages: the bundled Noto Sans SC subset (animations/fonts.py)."""

from __future__ import annotations

import os
import sys
import xml.etree.ElementTree as ET

import pytest
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QRawFont, QTextLayout

import assets
from animations import fonts

# the readable marks of token labels (model/tokenizer.py) and a few the stage draws
MARKS = "␣↵⇥␀␛␍⟨⟩·…→×÷≈≤≥−±√²³"
LACKED = set("↵⇥␀␛␍⟨⟩ᵀ✗↻")  # the marks NotoSansSC-OneTrip.otf has no glyph for (checked with fontTools)
GENERIC = {"Sans Serif", "Serif", "Monospace"}  # names Qt's fontconfig database always lists


def drawn_by(font: QFont, text: str) -> dict[str, int]:
    """Family name -> number of glyphs Qt draws ``text`` with, in ``font`` (fallbacks included).

    A box (glyph 0, ``.notdef``) counts under ``".notdef"``, whatever font it came from.
    """
    layout = QTextLayout(text, font)
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    found: dict[str, int] = {}
    for run in layout.glyphRuns():
        name = run.rawFont().familyName()
        glyphs = run.glyphIndexes()
        boxes = sum(1 for g in glyphs if g == 0)
        if boxes:
            found[".notdef"] = found.get(".notdef", 0) + boxes
        if len(glyphs) > boxes:
            found[name] = found.get(name, 0) + len(glyphs) - boxes
    return found


def translations() -> str:
    root = ET.parse(assets.I18N / "one_trip_zh_CN.ts").getroot()
    return "".join(m.findtext("translation") or "" for m in root.iter("message"))


@pytest.mark.skipif(os.environ.get("ONE_TRIP_TEST_FONTS") == "system" or not sys.platform.startswith("linux"),
                    reason="the machine's fonts were asked for, or Qt does not use fontconfig here")
def test_tests_see_only_the_bundled_fonts(qapp):
    """tests/conftest.py hides the machine's fonts from Qt, as on a fresh machine without CJK fonts."""
    assert set(QFontDatabase.families()) - GENERIC == {fonts.FAMILY, fonts.GLYPH_FALLBACK}


def test_the_app_font_is_the_one_family(qapp, app_font):
    assert app_font == fonts.FAMILY == fonts.register_fonts()
    assert QGuiApplication.font().family() == fonts.FAMILY
    assert QFont().family() == fonts.FAMILY  # a font made without a family gets it too


def test_english_and_chinese_are_drawn_by_the_one_family(qapp):
    font = fonts.app_font(24)
    assert drawn_by(font, "Decode step 12: 4.1 ms, 1,090 tokens/s (KV cache)") == {fonts.FAMILY: 49}
    chinese = "每一趟把整本书搬到桌上，写出一个字。"
    assert drawn_by(font, chinese) == {fonts.FAMILY: len(chinese)}


def test_the_one_family_has_every_translated_character(qapp):
    fonts.register_fonts()
    text = {ch for ch in translations() if not ch.isspace()}
    assert len(text) > 500
    font = fonts.app_font(24)
    drawn = {ch: set(drawn_by(font, ch)) for ch in text}
    missing = sorted(ch for ch in text if drawn[ch] != {fonts.FAMILY} and not (
        ch in LACKED and drawn[ch] == {fonts.GLYPH_FALLBACK}))
    assert not missing, f"{fonts.FAMILY} lacks {''.join(missing)}"


def test_marks_the_one_family_lacks_come_from_the_bundled_fallback(qapp):
    font = fonts.app_font(24)
    for mark in MARKS:
        assert set(drawn_by(font, mark)) <= {fonts.FAMILY, fonts.GLYPH_FALLBACK}, mark
    assert set(drawn_by(font, "↵⇥␀")) == {fonts.GLYPH_FALLBACK}  # not in the CJK subset (LACKED)


def test_the_one_family_has_every_character_a_bundled_model_writes_in_one_token(qapp):
    """The poetry model samples from ~4,000 hanzi, many outside GB 2312 level 1: none may come out as a box.

    Characters outside the Basic Multilingual Plane (a dozen rare Extension B hanzi) are not in Noto Sans CJK
    SC itself, so they are left out; control characters are shown by token labels as marks, never drawn.
    """
    from model.tokenizer import Tokenizer

    fonts.register_fonts()
    text = set()
    for tj in sorted(assets.MODELS.glob("*/tokenizer.json")):
        tok = Tokenizer.from_dir(tj.parent)
        text.update(ch for i in range(tok.vocab_size) for ch in tok.decode([i]))
    wanted = "".join(sorted(ch for ch in text if ord(ch) >= 0x2E80 and ord(ch) < 0x10000 and ch != "\ufffd"))
    assert len(wanted) > 3000  # the poetry model's hanzi are there
    raw = QRawFont.fromFont(fonts.app_font(24))  # the family's own glyphs (a run may hold .notdef boxes)
    assert raw.familyName() == fonts.FAMILY
    missing = "".join(ch for ch in wanted if not raw.supportsCharacter(ord(ch)))
    assert not missing, f"{len(missing)} characters would be boxes: {missing[:60]}"
