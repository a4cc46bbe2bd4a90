"""The tour asks each model what it continues with words (issue 24, items 3, 4 and 7): the default question
switches with the model, page 6's candidates are mostly words on the bundled models in both languages, special
tokens never show raw, pages 9, 16 and 18 say each thing once and in the page's language, and tour.py's parts
stay small."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gui.tour.data import DEFAULT_PROMPTS, TOUR_PROMPTS, TourData, default_prompt, tour_prompt_for
from model import catalog
from tests.gui.tour_host import make_tour

ROOT = Path(__file__).resolve().parents[3]
CJK = re.compile(r"[\u3400-\u9fff]")


def test_default_question_is_the_models_own():
    assert default_prompt(catalog.CODE.path(), "en") == TOUR_PROMPTS["code"] == "This method is called when"
    assert default_prompt(catalog.POEMS.path(), "zh") == TOUR_PROMPTS["poems"] == "床前明月光，"
    assert default_prompt(catalog.POEMS.path(), "en") == "床前明月光，"  # the model decides, not the language
    assert default_prompt("/nowhere/own-model", "zh") == DEFAULT_PROMPTS["zh"]


def test_live_presets_that_go_on_with_whitespace_are_replaced():
    code = catalog.CODE.path()
    assert tour_prompt_for("def fibonacci(n):", code, "en") == TOUR_PROMPTS["code"]
    assert tour_prompt_for("This module provides", code, "en") == "This module provides"
    assert tour_prompt_for("my own words", code, "en") == "my own words"
    assert tour_prompt_for("  ", code, "en") == TOUR_PROMPTS["code"]
    assert tour_prompt_for("白日依山尽，", catalog.POEMS.path(), "zh") == "白日依山尽，"


@pytest.mark.parametrize("bundled", [catalog.CODE, catalog.POEMS], ids=["code", "poems"])
def test_page_6_candidates_are_mostly_words(bundled):
    """The real bundled model's top 8 next tokens after the tour's question: at least 6 are words."""
    from animations.token_text import is_junk
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.teaching import analysis

    model, tok = load_pretrained(bundled.path())
    engine = Engine(model, tok, kv_budget_bytes=analysis.KV_BUDGET_BYTES)
    top = analysis.next_token(engine, TOUR_PROMPTS[bundled.key])["labels"][:8]
    words = [lab for lab in top if not is_junk(lab)]
    assert len(words) >= 6, top


def test_junk_and_special_tokens():
    from animations.token_text import is_junk, shown_token
    assert is_junk("␣") and is_junk("↵↵␣␣") and is_junk("<|endoftext|>") and is_junk("<E4 B8>")
    assert not is_junk("␣the") and not is_junk("月") and not is_junk("␣<E4>x")
    assert shown_token("<|endoftext|>") == "⟨end of text⟩"
    assert shown_token("a<|pad|>") == "a⟨pad⟩"
    assert shown_token("␣the") == "␣the"


def _texts(scene) -> list[str]:
    from animations.scenes.audit import texts
    return [t.text for t in texts(scene)]


def test_special_token_is_shown_as_its_meaning(qtbot, tiny_model_dir, fonts):
    from gui import i18n
    fake = {"next_token": {"labels": ["<|endoftext|>", "␣the", "␣a"], "logits": [3.0, 2.0, 1.0],
                           "vocab_size": 300}}
    try:
        for lang, meaning in (("en", "end of text"), ("zh", "文末")):
            w = make_tour(qtbot, tiny_model_dir, lang, fonts, fake)
            w.goto(5)
            w.finish_animation()
            shown = " ".join(_texts(w.current_scene))
            assert "<|" not in shown and meaning in shown, shown
    finally:
        i18n.set_language("en")


def test_question_switches_with_the_model(qtbot, fonts):
    from gui import i18n
    i18n.set_language("en")
    w = make_tour(qtbot, catalog.CODE.path(), "en", fonts)
    assert w.prompt == TOUR_PROMPTS["code"]
    w.set_prompt("def fibonacci(n):")  # the Live page's first preset: it would go on with a line break
    assert w.prompt == TOUR_PROMPTS["code"]
    w.data = TourData(catalog.POEMS.path())  # the window's model switch
    assert w.prompt == "床前明月光，" and w.prompt_edit.text() == "床前明月光，"
    w.prompt_edit.setText("my own question")
    w._ask_own_question()
    w.data = TourData(catalog.CODE.path())
    assert w.prompt == "my own question"  # the learner's question stays


def test_pages_say_things_once_and_in_their_language(qtbot, tiny_model_dir, fonts):
    from gui import i18n
    from tests.gui.tour_host import tour_analysis
    i18n.set_language("en")
    measured = tour_analysis(tiny_model_dir, "The quick brown fox")
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, measured)
    w.goto(8)  # page 9: one pill for the five formula rows, nothing about an engine not running
    w.finish_animation()
    texts = _texts(w.current_scene)
    assert sum(1 for t in texts if t.strip() == "formula") == 1, texts
    assert not any("not running" in t for t in texts)
    w.goto(15)  # page 16: the modes and the press are the buttons under the stage, not drawn again
    w.finish_animation()
    texts = _texts(w.current_scene)
    assert "Press: one trip" not in texts
    for mode in ("Alone", "With the apprentice", "Sharing the table"):  # once: a row of the three-ways chart
        assert sum(1 for t in texts if t.strip() == mode) <= 1, (mode, texts)
    w.goto(17)  # page 18 in English: no Chinese line
    w.finish_animation()
    assert not any(CJK.search(t) for t in _texts(w.current_scene))


def test_tour_widget_is_split_in_small_parts():
    for name in ("tour.py", "layout.py", "terms.py", "controls.py"):
        n = len((ROOT / "gui" / "tour" / name).read_text(encoding="utf-8").splitlines())
        assert n <= 450, f"gui/tour/{name}: {n} lines"
