"""Every count a tour page states about what it draws agrees with the drawing (issue 38 item 7), on every page,
in both languages, with the measurements the window gets (measured in a helper process as ``screenshot --section``
does). The pocket books are measured: the counts follow the prompt's tokens and the cache's blocks, which the
pocket and the big book of a family share (one tokenizer), and the pocket book's measurement takes a fifth of the
big book's time (21 s against 109 s on a loaded 2-core machine).

Once: page 15 said "256-token system prompt (16 blocks of 16 tokens)" and drew 17 squares a row (18 in Chinese,
whose question is longer); page 13 said "24 tokens in 6 trips" and listed trips 1-5 (the prefill trip, which
writes the first token, was counted and not drawn). Scenes mark a stating text with ``claim`` and the drawn
members with ``count`` (``animations/scenes/counts.py``); this test reads the number in the text as shown.
"""

from __future__ import annotations

import re

import pytest

from animations.scenes.counts import claims, drawn
from gui.tour.glossary import VOCABULARY

# at least these pages state counts (the test cannot pass vacuously)
PAGES_WITH_COUNTS = {"tokenize", "reasoning", "speculative", "prefix"}


def _shown(item) -> str:
    text = item.toPlainText() if hasattr(item, "toPlainText") else item.text()
    return text.replace("\u00a0", " ").replace("\u2009", " ").replace("\u202f", " ")


@pytest.fixture(scope="module", params=["en", "zh"])
def lang_tour(request, qapp, app_font):
    from gui import i18n
    from gui.tour.data import TourData, default_prompt
    from gui.tour.measure import measure_in_subprocess
    from gui.tour.tour import TourWidget
    from model.catalog import CODE_POCKET, POEMS_POCKET

    lang = request.param
    model_dir = {"en": CODE_POCKET, "zh": POEMS_POCKET}[lang].path()
    assert (model_dir / "model.safetensors").is_file(), f"the bundled pocket book is missing: {model_dir}"
    i18n.set_language(lang)
    data = TourData(model_dir)
    data.analysis = measure_in_subprocess(default_prompt(model_dir, lang), model_dir)
    assert data.analysis is not None and data.analysis["speculative"].get("available"), "no measurement"
    tour = TourWidget(bridge=None, data=data, lang=lang, font_family=app_font)
    tour.resize(1280, 720)
    tour.show()
    yield lang, tour
    tour.clock.stop()
    tour.close()
    tour.deleteLater()
    i18n.set_language("en")


def test_every_stated_count_matches_the_drawing(lang_tour):
    from gui import i18n

    lang, tour = lang_tour
    i18n.set_language(lang)
    problems, with_counts = [], set()
    try:
        _check_pages(tour, lang, problems, with_counts)
    finally:
        tour.clock.stop()  # the module's tour outlives this test; its clock must not
    assert not problems, "\n".join(problems)
    assert PAGES_WITH_COUNTS <= with_counts, with_counts


def test_every_page_says_each_term_the_glossary_way(lang_tour):
    """Issue 38 item 8, on screen: every text a Chinese page draws (scene, caption) holds none of the words the
    glossary rules out, and the strip's last two tabs carry the glossary's names in both languages."""
    import re

    from gui import i18n
    from gui.tour.sections import PAGES

    lang, tour = lang_tour
    i18n.set_language(lang)
    problems = []
    try:
        for index in range(len(PAGES)):
            tour.goto(index)
            tour.finish_animation()
            texts = [_shown(i) for i in tour.view.scene().items() if hasattr(i, "toPlainText") or
                     hasattr(i, "text") and callable(i.text)]
            texts.append(tour._caption_plain)
            for text in texts if lang == "zh" else ():  # the words a Chinese screen must not use
                for pattern in (p for word in VOCABULARY for p in word.zh_not):
                    if (m := re.search(pattern, text)) is not None:
                        problems.append(f"page {index + 1} ({lang}): {m.group(0)!r} in {text!r}")
    finally:
        tour.clock.stop()
    names = {w.key: (w.zh if lang == "zh" else w.en) for w in VOCABULARY}
    assert tour.chip_strip.full_labels[16] == names["terms_page"]
    assert tour.chip_strip.full_labels[17] == names["questions_page"]
    assert not problems, "\n".join(problems[:30])


def _check_pages(tour, lang: str, problems: list, with_counts: set) -> None:
    from gui.tour.sections import PAGES
    for index, page in enumerate(PAGES):
        tour.goto(index)
        tour.finish_animation()
        items = tour.view.scene().items()
        members = drawn(items)
        for item, name, n in claims(items):
            with_counts.add(page.key)
            text = _shown(item)
            if not re.search(rf"(?<![\d.,]){n}(?![\d.,])", text):
                problems.append(f"page {index + 1} ({lang}): {name}: {n} is not written in {text!r}")
            if members.get(name, 0) != n:
                problems.append(f"page {index + 1} ({lang}): {text!r} states {n} {name}, the page draws "
                                f"{members.get(name, 0)}")
