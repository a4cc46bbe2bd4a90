"""The game's counters follow its rules exactly (gui/tour/game.py; no Qt)."""

from __future__ import annotations

import random

import pytest

from gui.tour.game import ACCEPT_WEIGHTS, GpuGame


def test_alone_one_token_per_press():
    g = GpuGame("alone", seed=1, sentence_tokens=5)
    for n in range(1, 13):
        g.press()
        assert (g.trips, g.tokens) == (n, n)
        assert g.accounted_ms == pytest.approx(8.0 * n)
    assert g.tokens_per_trip == 1.0
    assert g.sentences_done == 2  # 12 tokens, sentences of 5: two finished, the third has 2 tokens
    assert g.last[0]["read"] is False
    first = GpuGame("alone").press()
    assert first[0]["read"] and first[0]["tokens"] == 1  # the reading trip writes the first token


def test_apprentice_matches_the_rules_arithmetic():
    seed, L, presses = 3, 40, 9
    g = GpuGame("apprentice", seed=seed, sentence_tokens=L)
    rng = random.Random(seed)  # the same draws, reproduced from the documented rule
    expected, written = 0, 0
    for i in range(presses):
        ev = g.press()[0]
        if i == 0:
            assert ev["read"] and ev["tokens"] == 1 and ev["guesses"] == 0
            n = 1
        else:
            guesses = min(5, L - written)
            a = min(rng.choices(range(len(ACCEPT_WEIGHTS)), weights=ACCEPT_WEIGHTS)[0], guesses)
            n = min(a + 1, L - written)
            assert (ev["guesses"], ev["accepted"], ev["tokens"]) == (guesses, a, n)
        written += n
        expected += n
    assert (g.trips, g.tokens) == (presses, expected)
    assert g.accounted_ms == pytest.approx(8.0 * presses)
    assert g.tokens_per_trip == pytest.approx(expected / presses)
    assert g.tokens_per_trip > 2  # the apprentice really helps
    again = GpuGame("apprentice", seed=seed, sentence_tokens=L)
    for _ in range(presses):
        again.press()
    assert again.tokens == g.tokens  # seeded


def test_apprentice_never_writes_past_the_sentence():
    g = GpuGame("apprentice", seed=0, sentence_tokens=7)
    for _ in range(30):
        g.press()
        assert all(p.written <= 7 for p in g.people)
    assert g.tokens == 7 * g.sentences_done + sum(p.written for p in g.people)


def test_shared_table_newcomers_read_first():
    g = GpuGame("shared", seed=0, sentence_tokens=6, seats=3)
    trips = [g.press() for _ in range(10)]
    per_trip = [sum(e["tokens"] for e in t) for t in trips]
    readers = [[e["person"] for e in t if e["read"]] for t in trips]
    # one newcomer per trip while a seat is free, and their first trip reads the question (and writes one token);
    # everyone else seated writes one token per trip; person 1 finishes on trip 6 and leaves, so trip 7 seats
    # person 4, trip 8 person 5, trip 9 person 6; on trip 10 the table is full
    assert per_trip == [1, 2, 3, 3, 3, 3, 3, 3, 3, 3]
    assert readers == [[1], [2], [3], [], [], [], [4], [5], [6], []]
    assert (g.trips, g.tokens) == (10, sum(per_trip))
    assert g.accounted_ms == pytest.approx(80.0)
    assert g.sentences_done == 3  # persons 1, 2, 3 finish on trips 6, 7, 8


def test_bad_mode():
    with pytest.raises(ValueError):
        GpuGame("teleport")


def test_apprentice_takes_accepted_from_an_injected_source():
    asked, answers = [], iter([-2, 9, 4, 5])
    g = GpuGame("apprentice", seed=0, sentence_tokens=12, accept_source=lambda k: asked.append(k) or next(answers))
    assert g.next_guesses() == 0  # the first press reads the question: nothing to ask
    events = []
    while g.next_guesses() or not events:
        events.append(g.press()[0])
    # press 1 reads (+1); -2 is clamped to 0 kept (+1), 9 to 5 kept (+6, 8 written), then 4 guesses left: 4 (+4)
    assert asked == [5, 5, 4] and g.sentences_done == 1
    assert [(e["guesses"], e["accepted"], e["tokens"]) for e in events] == [(0, 0, 1), (5, 0, 1), (5, 5, 6),
                                                                            (4, 4, 4)]
    assert (g.trips, g.tokens) == (4, 12)
    assert GpuGame("alone", accept_source=lambda k: 3).next_guesses() == 0


def test_words_are_written_in_order_and_a_finished_sentence_stays():
    a, b = ["One", "␣trip", ",", "␣one", "␣token", "."], ["搬", "一", "趟"]
    g = GpuGame("shared", seed=0, seats=2, sentences=[a, b])
    first = g.press()  # person 1 sits down and reads: the reading trip writes the first token
    assert first[0]["words"] == ["One"] and g.snapshot()["people"][0]["words"] == ["One"]
    g.press()  # person 2 sits down; both write
    people = {p["number"]: p for p in g.snapshot()["people"]}
    assert people[1]["words"] == ["One", "␣trip"] and people[2]["words"] == ["搬"] and people[2]["target"] == 3
    g.press()
    events = g.press()  # person 2 writes its last token and leaves
    assert [e["words"] for e in events if e["person"] == 2] == [["趟"]]
    snap = g.snapshot()
    assert snap["finished"] == [{"person": 2, "words": b, "target": 3}]
    assert [p["number"] for p in snap["people"]] == [1]
    g2 = GpuGame("apprentice", seed=3, sentences=[a])  # several tokens a trip: the words follow the count
    g2.press()
    ev = g2.press()[0]
    assert ev["words"] == a[1:1 + ev["tokens"]]
