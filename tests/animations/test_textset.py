"""Text set, not dumped: number+unit joins, whole formulas, and tokens shown as what they mean."""

from __future__ import annotations

from animations.textset import NBSP, WJ, bytes_text, keep_together, keep_units, plain, token_text


def test_a_number_keeps_its_unit():
    assert keep_units("moves 2 TB/s, in 12 ms") == f"moves 2{NBSP}TB{WJ}/{WJ}s, in 12{NBSP}ms"
    assert keep_units("1.6× faster") == "1.6× faster"  # glued stays glued
    assert keep_units("3 trips and 4 words") == f"3{NBSP}trips and 4 words"  # "words" is no unit
    assert keep_units("读了 1,200 字块") == f"读了 1,200{NBSP}字块"
    assert plain(keep_units("2 TB/s")) == "2 TB/s"


def test_a_formula_is_one_run():
    joined = keep_together("time = bytes / bandwidth")
    assert " " not in joined and joined.count(WJ) == 2 and plain(joined) == "time = bytes / bandwidth"


def test_tokens_are_shown_as_what_they_mean(qapp):
    from gui import i18n
    assert token_text("<|endoftext|>") == f"⟨end{NBSP}of{NBSP}text⟩"  # a token never breaks
    assert token_text("<E6 97>") == f"‹e6{NBSP}97›"
    assert token_text("\ufffd") == "‹?›"
    assert token_text("␣the") == "␣the"
    assert bytes_text("日".encode()[:2]) == "‹e6 97›"
    try:
        i18n.set_language("zh")
        assert token_text("<|endoftext|>") == "⟨文末⟩"
    finally:
        i18n.set_language("en")
