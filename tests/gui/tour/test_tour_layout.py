"""The tour's pages are laid out from measured text: on every page (1–18), in both languages, at 1280×720 and
1920×1080, live and illustrative, the layout audit (``animations.scenes.audit``) finds no two texts over each
other, nothing clipped, no empty text, no untagged text, no line through a text and no font under height / 60
window px once the scene is fitted to the view."""

from __future__ import annotations

import pytest

from tests.gui.tour_host import tour_analysis

PROMPT = "The quick brown fox 每按一下 什么批？"
SIZES = [(1280, 720), (1920, 1080)]


def _press(w, mode: str, n: int) -> None:
    w.start_game(mode)
    for _ in range(n):
        w._game_press()


# the states of a page that draw differently: (name, how to get there from the previous state)
STATES = {
    "sampling": [("", None), (" drawn", lambda w: w._draw()), (" greedy", lambda w: w._set_sampling(temperature=0.0))],
    "kv_size": [(" 2,000", lambda w: w._set_kv_tokens(2000)), (" 100,000", lambda w: w._set_kv_tokens(100_000))],
    "game": [(" new", lambda w: _press(w, "alone", 0)), (" alone", lambda w: _press(w, "alone", 14)),
             (" apprentice", lambda w: _press(w, "apprentice", 6)), (" shared", lambda w: _press(w, "shared", 14))],
}


@pytest.fixture(scope="module")
def measured(tiny_model_dir):
    return tour_analysis(tiny_model_dir, PROMPT)




def audit_every_page(qtbot, data, lang, family, sizes, prompt: str = PROMPT) -> list[str]:
    from PySide6.QtCore import QCoreApplication

    from animations.scenes import audit
    from gui import i18n
    from gui.tour.tour import TourWidget

    i18n.set_language(lang)
    bad: list[str] = []
    try:
        w = TourWidget(data=data, lang=lang, font_family=family)
        qtbot.addWidget(w)
        w.set_prompt(prompt)
        w.show()
        for size in sizes:
            w.resize(*size)
            QCoreApplication.processEvents()
            for i in range(w.section_count):
                w.goto(i)
                for state, change in STATES.get(w.pages_key(), [("", None)]):
                    if change is not None:
                        change(w)
                    w.finish_animation()
                    QCoreApplication.processEvents()
                    scene = w.current_scene
                    for _ in range(3):  # the view's size settles after the build: build again until it fits
                        if not scene.needs_rebuild(w.view):
                            break
                        scene.build(w.context())
                        scene.finish()
                        QCoreApplication.processEvents()
                    scale = w.view.transform().m11()
                    height = w.window().height()
                    for problem in audit.problems(w.current_scene, scale, height / 60):
                        bad.append(f"page {i + 1}{state} {lang} {size[0]}x{size[1]}: {problem}")
    finally:
        i18n.set_language("en")
    return bad




@pytest.mark.parametrize("lang", ["en", "zh"])
def test_live_pages_pass_the_layout_audit(qtbot, tiny_model_dir, measured, fonts, lang):
    from gui.tour.data import TourData

    data = TourData(tiny_model_dir)
    data.analysis = measured
    bad = audit_every_page(qtbot, data, lang, fonts, SIZES)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bundled_model_pages_pass_the_layout_audit(qtbot, fonts, lang):
    from gui.tour.data import TourData

    data = TourData()  # the bundled model's tokenizer and weights; no engine: illustrative measurements
    assert data.tokenizer is not None, f"the bundled model must load (it ships with the app): {data.error}"
    bad = audit_every_page(qtbot, data, lang, fonts, SIZES[:1])
    assert not bad, "\n".join(bad[:20])


LONG = {"en": "Please explain, step by step and with a small worked example in Python, how the key-value cache of "
                "a transformer decoder saves work during generation, and why its size grows with the context!!",
         "zh": "请一步一步地解释：在大语言模型生成文字的时候，键值缓存到底省下了哪些计算？"
               "为什么它的大小会随着上下文长度一起增长？"
               "能不能举一个很小的例子，用几行代码演示一下整个过程，再说说显存不够时怎么办？"}


@pytest.mark.parametrize("lang,prompt", [("en", LONG["en"]), ("zh", LONG["zh"]), ("en", LONG["zh"])])
def test_a_long_question_still_fits_every_page(qtbot, fonts, lang, prompt):
    """A visitor's 200-character question (the kiosk's limit): pages that show it shorten or wrap it."""
    from gui.tour.data import TourData

    data = TourData()
    assert data.tokenizer is not None, f"the bundled model must load (it ships with the app): {data.error}"
    bad = audit_every_page(qtbot, data, lang, fonts, SIZES[:1], prompt=prompt)
    assert not bad, "\n".join(bad[:20])


def test_byte_pieces_are_grouped_into_their_character():
    from gui.tour.data import group_pieces

    raw = ["什".encode()[:2], "什".encode()[2:], b"a", "批".encode()[:1], "批".encode()[1:], "？".encode()[:2]]
    toks = [{"id": i} for i in range(len(raw))]
    group_pieces(toks, raw)
    assert toks[0]["group"] == toks[1]["group"] == 0 and toks[1]["group_text"] == "什"
    assert "group" not in toks[2]
    assert toks[3]["group"] == toks[4]["group"] == 1 and toks[4]["group_text"] == "批"
    assert "group_text" not in toks[5]  # cut off at the end: never a whole character


def test_a_missing_translation_never_blanks_a_label(qapp):
    from PySide6.QtCore import QCoreApplication

    from animations.scenes.look import T
    from gui import i18n
    i18n.set_language("zh")
    try:
        source = "a sentence that has no translation in the .ts file"
        assert QCoreApplication.translate("Tour", source) in ("", source)
        assert T(source) == source
    finally:
        i18n.set_language("en")


def test_scene_text_grows_when_its_view_is_small(qtbot, fonts):
    """A view under VIEW_FRACTION of its window gets larger scene text (so the floor holds once fitted); a view
    that is big enough, or not shown, gets the default; a sliver is capped."""
    from PySide6.QtWidgets import QGraphicsView, QVBoxLayout, QWidget

    from animations.scenes import look
    from animations.scenes.opening import RequestScene
    from animations.typescale import TypeScale

    window = QWidget()
    qtbot.addWidget(window)
    view = QGraphicsView(window)
    QVBoxLayout(window).addWidget(view)
    scene = RequestScene()
    view.setScene(scene)
    assert look.fit_factor(view) == 1.0  # not shown yet
    window.resize(1280, 720)
    window.show()
    qtbot.waitUntil(lambda: view.viewport().height() > 600)

    def expected() -> float:  # the small style at the floor (height / 48), FLOOR_MARGIN above it, once fitted
        scale = min(view.viewport().width() / look.SCENE_W, view.viewport().height() / look.SCENE_H)
        return look.FLOOR_MARGIN * TypeScale(720).minimum / (scale * look.SCENE_TYPE.px("small"))

    # a view taller than VIEW_FRACTION of its window: the text is built smaller, so it comes out at the type scale
    assert look.fit_factor(view) == pytest.approx(expected(), rel=1e-3) and look.fit_factor(view) < 1.0
    view.setFixedHeight(340)  # the rest of the window taken by other things
    qtbot.waitUntil(lambda: view.viewport().height() <= 340)
    factor = look.fit_factor(view)
    assert expected() < look.MAX_FACTOR  # the view is small, not a sliver: the factor is not capped
    assert factor == pytest.approx(expected(), rel=1e-3) and factor > 1.0
    scene.build({"prompt": "x"})
    assert scene.factor == pytest.approx(factor) and not scene.needs_rebuild(view)
    view.setFixedHeight(700)
    qtbot.waitUntil(lambda: view.viewport().height() > 600)
    assert scene.needs_rebuild(view)
