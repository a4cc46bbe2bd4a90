"""Tour pages 7, 13 and 18 say the same thing about which part of a trip dominates here, from the tour's one
measured split (issue 34, item 2), and page 13 explains with bytes why the apprentice is not much cheaper.
Fed with hand-made measurements: no timing is asserted."""

from __future__ import annotations

import pytest

from tests.gui.tour_host import make_tour

SPLITS = {  # whole 4.8 ms; the reading measured; floor 0.43 ms (17.4 MB at 40 GB/s)
    "reading": {"whole_ms": 4.8, "reading_ms": 3.6, "paperwork_ms": 1.2, "reading_share": 0.75},
    "paperwork": {"whole_ms": 4.8, "reading_ms": 1.0, "paperwork_ms": 3.8, "reading_share": 1.0 / 4.8},
    "both": {"whole_ms": 4.8, "reading_ms": 2.4, "paperwork_ms": 2.4, "reading_share": 0.5},
}
# what each page says for each key, and what it must then never say
SAYS = {
    "reading": ("mostly reading the weights", "mostly reading the weights", "is 75% of the work of a trip of this book too"),  # noqa: E501
    "paperwork": ("mostly other work per step", "mostly other work per step", "mostly other work per step"),
    "both": ("reading the weights is 50% of the trip", "Reading the weights is 50% of a trip's work here",
             "reading the weights is 50% of the work of a trip of this book"),
}


def _analysis(key: str) -> dict:
    split = {**SPLITS[key], "comm_ms": 0.0, "floor_ms": 0.435, "read_speed_bytes_per_s": 17.4e6 / (SPLITS[key]["reading_ms"] / 1e3),  # noqa: E501
             "times_floor": SPLITS[key]["reading_ms"] / 0.435, "lesson": key, "forward_ms": 3.3, "trips": 16}
    decode = {"decode_ms": 3.3, "decode_ms_all": [3.3] * 16, "whole_ms_all": [4.8] * 16,
              "read_ms_all": [SPLITS[key]["reading_ms"]] * 16, "weight_bytes": 17_400_000, "bandwidth": 40e9,
              "floor_ms": 0.435, "split": split}
    spec = {"available": True, "k": 4, "passes": [{"proposed": 4, "accepted": 2, "tokens": 3,
                                                   "labels": ["a", "b", "c"], "draft_ms": 4.0, "verify_ms": 5.0}] * 8,
            "trips": 9, "weight_bytes": 17_400_000, "draft_weight_bytes": 7_900_000, "dictionary_bytes": 4_194_304,
            "draft_dictionary_bytes": 4_194_304, "draft_pass_ms": 1.0, "plain_pass_ms": 3.3, "split": split,
            "tokens": 24, "plain_trips": 24, "same_tokens": True, "acceptance": 0.5, "card_acceptance": {}}
    return {"decode": decode, "speculative": spec}


def _texts(w, index: int) -> str:
    from PySide6.QtWidgets import QGraphicsSimpleTextItem, QGraphicsTextItem
    w.goto(index)
    w.finish_animation()
    return " ".join(i.text() if isinstance(i, QGraphicsSimpleTextItem) else i.toPlainText()
                    for i in w.current_scene.items() if isinstance(i, (QGraphicsSimpleTextItem, QGraphicsTextItem)))


@pytest.mark.parametrize("key", ["reading", "paperwork", "both"])
def test_pages_7_13_18_agree_with_the_measured_split(qtbot, tiny_model_dir, fonts, key):
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, _analysis(key))
    pages = {7: _texts(w, 6), 13: _texts(w, 12), 18: _texts(w, 17)}
    for page, words in zip((7, 13, 18), SAYS[key]):
        assert words in " ".join(pages[page].split()), (page, key)
    others = {"reading": "mostly other work", "paperwork": "mostly reading the weights",
              "both": "mostly"}[key]
    for page in (7, 13):
        assert others not in " ".join(pages[page].split()), (page, key)
    # page 7 shows the three figures, labelled
    assert "reading the weights 3.6 ms" in pages[7] or "reading the weights 2.4 ms" in pages[7] or \
        "reading the weights 1.0 ms" in pages[7]
    assert "(both measured)" in pages[7] and "floor 0.43 ms (formula)" in " ".join(pages[7].split())


def test_page_13_explains_the_apprentice_with_its_dictionary_bytes(qtbot, tiny_model_dir, fonts):
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, _analysis("reading"))
    text = " ".join(_texts(w, 12).split())
    assert "Its dictionary (embedding + LM head, 4.2 MB) is 100% of the book's and 53% of its own 7.9 MB" in text
    assert "every guess reads it whole" in text and "not its dictionary" in text


@pytest.mark.parametrize("code, poems, reason", [(0.69, 0.15, True), (0.69, 0.81, False)])
def test_page_13_gives_the_sources_reason_only_where_the_model_cards_agree(qtbot, tiny_model_dir, fonts, code,
                                                                         poems, reason):
    """'Code repeats itself; a poem's next character is open' explains a code apprentice that keeps more; where
    the poetry apprentice keeps more, the page gives the two figures and no reason they would contradict."""
    analysis = _analysis("reading")
    analysis["speculative"]["card_acceptance"] = {"code": code, "poems": poems}
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, analysis)
    text = " ".join(_texts(w, 12).split())
    assert f"the code apprentice keeps {100 * code:.0f}%, the poetry apprentice {100 * poems:.0f}%" in text
    assert ("Code repeats itself" in text) is reason


def test_pages_speak_chinese(qtbot, tiny_model_dir, fonts):
    w = make_tour(qtbot, tiny_model_dir, "zh", fonts, _analysis("reading"))
    assert "大多在读权重" in _texts(w, 6) and "大多在读权重" in _texts(w, 12) and "读权重也占 75%" in _texts(w, 17)


def _thin() -> dict:
    def side(b, ms):
        return {"weight_bytes": b, "trip_ms": {"median": ms, "min": ms - 0.1, "max": ms + 0.1, "n": 3, "values": []},
                "tokens_per_s": 1000.0 / ms}
    return {"available": True, "fp32": side(17_400_000, 2.9), "int8": side(4_450_000, 1.9), "bytes_ratio": 0.256,
            "speedup": 2.9 / 1.9, "steps": 16, "runs": 3}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_page_14_draws_this_machines_int8_book_measured(qtbot, tiny_model_dir, fonts, lang):
    w = make_tour(qtbot, tiny_model_dir, lang, fonts, {"thin_book": _thin()})
    text = " ".join(_texts(w, 13).split())
    assert "17.4 MB" in text and "4.5 MB" in text and "2.9 ms" in text and "1.9 ms" in text
    assert "0.26" in text
    if lang == "en":
        assert "median of 3 runs" in text and "measured here" in text and "345 tok/s" in text and "(0.26×)" in text
    else:
        assert "3 轮的中位数" in text and "526" in text and "0.26 倍" in text
    # the Live engine's fp16 book: a third bar of its bytes, named with the page's own words
    fp16 = {**_thin(), "in_use": {"weights": "fp16", "weight_bytes": 8_700_000}}
    text16 = " ".join(_texts(make_tour(qtbot, tiny_model_dir, lang, fonts, {"thin_book": fp16}), 13).split())
    assert "FP16" in text16 and "8.7 MB" in text16
    assert ("in use on the Live page" if lang == "en" else "“现场”页正在用的") in text16
    assert ("in use on the Live page" if lang == "en" else "“现场”页正在用的") not in text
    # without the measurement the page keeps only its formula bars
    bare = make_tour(qtbot, tiny_model_dir, lang, fonts, {})
    assert "int8" not in " ".join(_texts(bare, 13).split())


@pytest.mark.parametrize("lives_in, says, never", [
    ("dram", "the read speed of RAM (the book is larger than the 33.6 MB cache)", "cache it fits in"),
    ("cache", "the read speed of the 33.6 MB cache it fits in", "read speed of RAM"),
    (None, "red line, the floor: 17.4 MB ÷ 40.0 GB/s = 0.43 ms", "cache it fits in"),
])
def test_page_7_floor_names_the_memory_the_book_lives_in(qtbot, tiny_model_dir, fonts, lives_in, says, never):
    """The floor is the book's bytes at the read speed of the memory it lives in (issue 43 item 4): the line says
    which, with this CPU's cache size; without a cache size it says the plain formula."""
    analysis = _analysis("reading")
    analysis["decode"].update(lives_in=lives_in, l3_bytes=32 * 2**20 if lives_in else None)
    w = make_tour(qtbot, tiny_model_dir, "en", fonts, analysis)
    text = " ".join(_texts(w, 6).replace("\u00a0", " ").replace("\u2060", "").split())
    assert says in text and never not in text
