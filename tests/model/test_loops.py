"""The loop detector (model/loops.py) and the engine's stop on a loop (Engine.stop_loops)."""

from __future__ import annotations

import pytest
import torch

from model.loops import Loop, LoopWatch, find_loop, shown_text


@pytest.mark.parametrize("text, phrase", [
    ("def f(n):\n    return the number of the number of the number of", "the number of"),
    ("pass\n    pass\n    pass", "pass"),
    ("    self.a = a\n    self.a = a\n    self.a = a\n", "self.a = a"),
    ("明月明月明月", "明月"),
    ("x the the the y", "the"),
])
def test_loops_are_found(text, phrase):
    loop = find_loop(text)
    assert loop is not None and loop.phrase == phrase


@pytest.mark.parametrize("text", [
    "0, 0, 0, 0", ")))))", "----------", "萧萧萧", "a = 1\nb = 2\nc = 3", "(None, None, None)",
    "the number of the number of", "one two one two", "",
])
def test_no_loop_where_none_is(text):
    assert find_loop(text) is None


def test_shown_text_keeps_two_copies_and_cuts_the_third():
    text = "It says of the number of the number of the number of the"
    shown, loop = shown_text(text)
    assert shown == "It says of the number of the number"
    assert loop == Loop(phrase="of the number", start=8, cut=36, end=49)  # "It says " is 8, each copy 14
    assert find_loop(shown) is None


def test_fed_in_chunks_it_finds_the_loop_where_the_third_copy_ends():
    watch = LoopWatch()
    chunks = [" of", " the", " numb", "er", " of the", " number of", " the num", "ber of", " the"]
    found = [watch.feed(c) for c in chunks]
    assert found[:7] == [None] * 7  # "number" split over two chunks is one word, not "numb"
    assert found[7] == Loop(phrase="of the number", start=1, cut=29, end=42) == found[8]
    assert watch.text == "".join(chunks)


def test_a_long_text_without_a_loop_stays_clean():
    words = ["one", "trip", "one", "token", "the", "book", "goes", "to", "the", "desk"]
    text = "".join(" " + words[(i + i // 10) % 10] for i in range(600))
    assert find_loop(text) is None
    assert find_loop(" " + " ".join(words * 3)) is not None  # the same ten words three times is one


def _force_cycle(model, cycle: list[int]):
    """Make ``model`` write ``cycle`` again and again (greedy): each logit row picks the token after its own
    input token in the cycle. Returns the hook handle."""
    def hook(module, args, kwargs, out):
        ids = args[0] if args else kwargs["input_ids"]
        index = kwargs.get("logit_index")
        fed = ids.gather(1, index) if index is not None and ids.dim() == 2 else ids.view(out.shape[0], -1)[:, -1:]
        forced = torch.full_like(out, -1e4)
        for b in range(out.shape[0]):
            for k in range(out.shape[1]):
                last = int(fed[b, min(k, fed.shape[1] - 1)])
                nxt = cycle[(cycle.index(last) + 1) % len(cycle)] if last in cycle else cycle[0]
                forced[b, k, nxt] = 0.0
        return forced
    return model.register_forward_hook(hook, with_kwargs=True)


@pytest.mark.parametrize("stop", [True, False])
def test_the_engine_stops_a_looping_request(tiny, stop):
    from model.engine import Engine
    model, tokenizer = tiny
    cycle = tokenizer.encode(" the quick fox")[:3]
    assert len(cycle) == 3 and len(set(cycle)) == 3
    handle = _force_cycle(model, cycle)
    try:
        e = Engine(model, tokenizer, ragged=False)
        e.stop_loops = stop
        rid = e.add_request("Emoji:", max_new_tokens=40)
        for _ in e.run():
            pass
        res = e.finished[rid]
    finally:
        handle.remove()
    if stop:
        assert res.finish_reason == "loop"
        assert len(res.token_ids) < 40
        loop = find_loop(res.text)
        assert loop is not None and loop.end == len(res.text.rstrip())  # stopped as the third copy ended
    else:
        assert res.finish_reason == "length" and len(res.token_ids) == 40
