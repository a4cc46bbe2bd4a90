"""What the engine offers of the extras is the session's (issue 45, item 1: "views read state"): the apprentice's
kinds and the draft model's error (``SessionState.apprentice_offer``), the degrees of sharding
(``SessionState.sharding_offer``), the workers' layers (``SessionState.worker_layers``) and the sharding asked
and not answered (``SessionState.sharding_asked``). ``EngineEventHandler`` only sets them; the apprentice's
slider, its choice, the tearing control and the stage follow the session (``ExtrasControls``), whoever changed
it. A restarted engine is still asked for what the page showed."""

from __future__ import annotations

import pytest

from gui.live.state import ApprenticeOffer, Change, SessionState, ShardingOffer

pytestmark = pytest.mark.filterwarnings("error")

SHORT_CONTEXT = "draft model: its context window (64) is shorter than the target's (128)"

# ---- the state, Qt-free ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [
    lambda: ApprenticeOffer(()),  # no apprentice kind at all
    lambda: ApprenticeOffer(("model", "ngram")),  # not in DRAFT_KINDS' order
    lambda: ApprenticeOffer(("ngram", "lookup")),
    lambda: ApprenticeOffer(["ngram"]),  # a list is not a tuple
    lambda: ApprenticeOffer(("ngram",), ""),  # an error is said in words, or is None
    lambda: ApprenticeOffer(("ngram",), 3),
    lambda: ShardingOffer(()),
    lambda: ShardingOffer((1, 0)),
    lambda: ShardingOffer((1, True)),
    lambda: ShardingOffer([1, 2]),
    lambda: ShardingOffer((1, 2), 0),
    lambda: ShardingOffer((1, 2), 2.0),
])
def test_an_offer_with_a_bad_value_is_refused(make):
    with pytest.raises(ValueError):
        make()


def test_the_offers_are_validated_fields_that_say_when_they_change():
    s = SessionState()
    seen: list[Change] = []
    s.subscribe(seen.append)
    assert s.apprentice_offer is None and s.sharding_offer is None  # no engine has said yet
    assert s.set_apprentice_offer(ApprenticeOffer(("ngram", "model")))
    assert s.set_sharding_offer(ShardingOffer((1, 2, 4), 4))
    assert not s.set_sharding_offer(ShardingOffer((1, 2, 4), 4))  # the same offer: no change, no event
    before = s.snapshot()
    for bad in (lambda: s.set_apprentice_offer({"kinds": ("ngram",)}), lambda: s.set_apprentice_offer(None),
                lambda: s.set_sharding_offer((1, 2)), lambda: s.set_sharding_offer(None)):
        with pytest.raises(ValueError, match="offer"):
            bad()
    assert s.snapshot() == before
    assert [(c.field, c.value, c.old) for c in seen] == [
        ("apprentice_offer", ApprenticeOffer(("ngram", "model"), None), None),
        ("sharding_offer", ShardingOffer((1, 2, 4), 4), None)]


def test_the_page_offers_the_degrees_the_engine_allows():
    offer = ShardingOffer((1, 2, 3, 6), 3)  # six heads; three layers
    assert offer.degrees("tp") == (1, 2) and offer.degrees("pp") == (1, 2)
    assert ShardingOffer((1, 2, 4), 12).degrees("pp") == (1, 2, 4)
    assert offer.fit("tp", 4) == 2 and offer.fit("pp", 1) == 1 and ShardingOffer((1, 2, 4), 4).fit("tp", 4) == 4


def test_the_sharding_comes_with_its_workers_layers():
    s = SessionState()
    seen: list[tuple[str, object]] = []
    s.subscribe(lambda c: seen.append((c.field, c.value)))
    assert s.worker_layers == () and s.sharding_asked is None
    assert s.set_sharding_asked(("pp", 2))
    assert s.set_sharding("pp", 2, [[0, 1], [1, 2]])  # as the engine's event lists them
    assert s.worker_layers == ((0, 1), (1, 2)) and s.sharding == ("pp", 2)
    assert s.set_sharding_asked(None)
    assert s.set_sharding("tp", 2)  # by pages: no layers of its own
    assert seen == [("sharding_asked", ("pp", 2)), ("worker_layers", ((0, 1), (1, 2))), ("sharding", ("pp", 2)),
                    ("sharding_asked", None), ("worker_layers", ()), ("sharding", ("tp", 2))]
    before = s.snapshot()
    for bad in (lambda: s.set_sharding("pp", 2, [(1, 1)]), lambda: s.set_sharding("pp", 2, [(-1, 2)]),
                lambda: s.set_sharding("pp", 2, [(0, 1.5)]), lambda: s.set_sharding("pp", 2, [(0, 1, 2)]),
                lambda: s.set_sharding("pp", 2, 3), lambda: s.set_sharding_asked(("dp", 2)),
                lambda: s.set_sharding_asked(("tp", 5)), lambda: s.set_sharding_asked(["tp", 2])):
        with pytest.raises(ValueError):
            bad()
    assert s.snapshot() == before and len(seen) == 6  # nothing changed, nobody told


# ---- the controls and the stage follow the session -------------------------------------------------------------


def test_the_apprentice_slider_follows_its_availability_alone(qtbot, make_window):
    w = make_window(options={"fake_extras": True})  # both apprentices
    s = w.session
    s.set_draft_k(3)
    assert w.apprentice.value() == 3
    s.set_apprentice_available(False)  # no engine event: the session alone
    assert not w.apprentice.is_available() and not w.apprentice.slider.isEnabled()
    assert w.apprentice.value() == 0 and w.apprentice.reason() == "No apprentice: no draft model was found"
    s.set_apprentice_available(True)
    assert w.apprentice.is_available() and w.apprentice.value() == 3  # the session's guesses, shown again


def test_the_apprentice_slider_and_choice_follow_the_offer(qtbot, make_window):
    w = make_window()  # the fake engine: no apprentice
    s = w.session
    assert not w.apprentice.is_available() and not w.apprentice_choice.buttons["model"].isEnabled()
    s.set_apprentice_offer(ApprenticeOffer(("ngram", "model")))
    s.set_apprentice_available(True)
    assert w.apprentice.is_available() and w.apprentice.slider.isEnabled() and w.apprentice.reason() == ""
    assert w.apprentice_choice.buttons["model"].isEnabled() and w.apprentice_choice.has_kind("model")
    s.set_draft_kind("model")
    assert w.apprentice_choice.kind() == "model"
    s.set_apprentice_offer(ApprenticeOffer(("ngram",), SHORT_CONTEXT))  # the draft model did not load
    assert w.apprentice.is_available() and w.apprentice_choice.kind() == "ngram"
    assert not w.apprentice_choice.buttons["model"].isEnabled()
    assert w.apprentice.reason_label.text() == ("No draft model (its context window is too short): the apprentice "
                                                "copies its guesses from the text so far")
    assert w.apprentice.reason_label.toolTip() == SHORT_CONTEXT
    s.set_apprentice_available(False)
    assert w.apprentice.reason() == "No apprentice: its context window is too short"


def test_the_tearing_control_and_the_stage_follow_the_sharding_alone(qtbot, make_window):
    w = make_window(options={"fake_extras": True})  # may be torn two ways, by pages or by chapters
    assert w.tear.value() == 1 and w.scene.sharding() == ("tp", 1)
    w.session.set_sharding("tp", 2)  # no engine event: the session alone
    assert (w.tear.mode(), w.tear.value()) == ("tp", 2) and w.tear.value_label.text() == "2"
    assert w.scene.sharding() == ("tp", 2) and w.scene.desks.n == 2


def test_the_readout_says_the_book_is_being_torn_while_a_request_waits(qtbot, make_window):
    w = make_window(options={"fake_extras": True})
    tearing = "Starting the workers… the book is being torn (a few seconds)"
    assert tearing not in w.extra_readout.text()
    w.session.set_sharding_asked(("tp", 2))  # no engine event, no control: the session alone
    assert w.extra_readout.isVisibleTo(w) and tearing in w.extra_readout.text().split("\n")
    w.session.set_sharding_asked(None)
    assert tearing not in w.extra_readout.text()


def test_the_tearing_control_follows_the_offer_and_the_request(qtbot, make_window):
    w = make_window()  # the fake engine offers no sharding
    s = w.session
    assert w.tear.degrees("tp") == [1] and w.tear.degrees("pp") == [1]
    s.set_sharding_offer(ShardingOffer((1, 2, 4), 4))
    assert w.tear.isEnabled() and w.tear.degrees("tp") == [1, 2, 4] and w.tear.degrees("pp") == [1, 2, 4]
    s.set_sharding("pp", 2, ((0, 1), (1, 2)))
    assert (w.tear.mode(), w.tear.value()) == ("pp", 2) and w.scene.sharding() == ("pp", 2)
    s.set_sharding_asked(("tp", 4))
    assert w.tear.is_pending() and (w.tear.mode(), w.tear.value()) == ("tp", 4)
    assert not w.tear.slider.isEnabled() and w.tear.value_label.text() == "…"
    s.set_sharding_asked(None)  # no answer: the sharding in force again
    assert not w.tear.is_pending() and (w.tear.mode(), w.tear.value()) == ("pp", 2) and w.tear.slider.isEnabled()


def test_the_engines_ready_sets_the_offer_in_the_session(qtbot, make_window):
    w = make_window(options={"fake_extras": True})
    s = w.session
    assert s.apprentice_offer == ApprenticeOffer(("ngram", "model"), None) and s.apprentice_available
    assert s.sharding_offer == ShardingOffer((1, 2), 2) and s.sharding == ("tp", 1) and s.worker_layers == ()


# ---- a restarted engine: asked again for what the page shows ---------------------------------------------------


def _sent(w) -> list[dict]:
    sent: list[dict] = []
    w.bridge.send = lambda cmd: sent.append(cmd) or True
    return sent


def test_a_restarted_engine_is_asked_again_for_the_guesses_and_the_sharding(qtbot, make_window):
    w = make_window(options={"fake_extras": True})
    info = w.engine_info  # a new engine says the same: both apprentices, one desk
    w.set_sharding("tp", 2)
    qtbot.waitUntil(lambda: not w.tear.is_pending(), timeout=10_000)
    w.set_draft_k(3)
    sent = _sent(w)
    w.bridge.ready.emit(info)
    assert sent == [{"op": "set_max_batch", "n": 1}, {"op": "set_draft_k", "k": 3},
                    {"op": "set_sharding", "mode": "tp", "n": 2}]
    assert w.sharding() == ("tp", 1) and w.tear.is_pending() and w.tear.value() == 2 and w.apprentice.value() == 3
    assert "Starting the workers" in w.extra_readout.text()
    w.bridge.sharding.emit({"type": "sharding", "mode": "tp", "n": 2, "workers": []})
    assert w.sharding() == ("tp", 2) and not w.tear.is_pending() and w.scene.sharding() == ("tp", 2)
    assert w.status_line.text() == "The book is torn 2 ways by pages (TP): 2 desks work on every trip."


def test_a_restarted_engine_without_an_apprentice_shows_0_and_why(qtbot, make_window):
    w = make_window(options={"fake_extras": True})
    info = {k: v for k, v in w.engine_info.items() if k != "draft_kinds"}
    w.set_draft_k(3)
    sent = _sent(w)
    w.bridge.ready.emit({**info, "draft_error": SHORT_CONTEXT})
    assert {"op": "set_draft_k", "k": 0} in sent and w.session.draft_k == 0
    assert not w.apprentice.is_available() and w.apprentice.value() == 0
    assert w.apprentice.reason() == "No apprentice: its context window is too short"
