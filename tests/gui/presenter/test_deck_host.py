"""The deck driven against the Live session interface alone: a plain stand-in host (``gui.live.host.LiveHost``)
holding a ``SessionState``, no ``MainWindow`` and none of its private attributes."""

from __future__ import annotations

from gui.live.host import LiveHost
from gui.live.state import SessionState
from gui.presenter.deck import LIVE, Deck


class FakeGame:
    sentences_done = 0
    trips = 0


class FakeTour:
    """The tour as the deck uses it: ``current_index``, ``goto``, ``pages_key``, ``game``."""

    def __init__(self):
        self.current_index = 0
        self.game = FakeGame()

    def goto(self, index: int) -> None:
        self.current_index = index

    def pages_key(self) -> str:
        return "game" if self.current_index == 15 else "section"


class FakeHost:
    """Only what ``LiveHost`` lists (``__slots__``: no ``_session``, ``_fatal``, ``engine_info`` to fall back on)."""

    __slots__ = ("session", "bridge", "tour", "pages", "lang", "font_family", "actions", "kiosk_controller",
                 "presenter", "main_new_tokens", "prompt_box", "view", "_tour_shown", "done", "failed", "calls")

    def __init__(self):
        self.session = SessionState()
        self.tour = FakeTour()
        self.lang, self.font_family, self.actions = "en", None, {}
        self.kiosk_controller = self.presenter = self.prompt_box = self.view = self.bridge = self.pages = None
        self.main_new_tokens = 64
        self._tour_shown = True
        self.done = True
        self.failed = None
        self.calls = []

    def show_tour(self):
        self._tour_shown = True
        self.calls.append("show_tour")

    def show_live(self):
        self._tour_shown = False
        self.calls.append("show_live")

    def built_tour(self):
        return self.tour

    def is_tour_visible(self):
        return self._tour_shown

    def is_session_done(self):
        return self.done

    def model_failed(self):
        return self.failed

    def engine_ready(self):
        return True

    # the answer's actions (unused by the deck)
    def set_language(self, lang): ...
    def set_presenter_mode(self, on): ...
    def presenter_hidden(self): return []
    def run(self): ...
    def pause(self): ...
    def toggle_run(self): ...
    def step_once(self): ...
    def reset(self): ...
    def set_prompt(self, text): ...
    def presets(self): return []


def test_the_stand_in_is_a_live_host():
    assert isinstance(FakeHost(), LiveHost)


def test_the_deck_walks_the_host_and_waits_on_the_sessions_answer(qapp):
    host = FakeHost()
    deck = Deck(host, [1, 2, LIVE, 3])
    deck.first()
    assert deck.shown() == 1
    assert deck.next() and deck.shown() == 2
    assert deck.next() and deck.shown() == LIVE and host.calls[-1] == "show_live"
    # on the Live page: nothing started on this visit, so the deck is not done with it
    assert not deck.live_done()
    host.session.start_answer()  # an answer started here ...
    host.session.set_run_state("running")
    host.done = False
    assert not deck.live_done()
    host.session.set_run_state("complete")  # ... and complete, with all its trips shown
    host.done = True
    assert deck.live_done()
    assert deck.next() and deck.shown() == 3 and host.tour.current_index == 2
    assert not deck.next()  # the last item
    assert deck.prev() and deck.shown() == LIVE


def test_a_model_that_failed_lets_the_deck_move_on(qapp):
    host = FakeHost()
    deck = Deck(host, [LIVE, 1])
    deck.first()
    assert not deck.live_done()
    host.failed = "no weights"
    assert deck.live_done()


def test_live_reached_without_the_deck_counts_answers_from_then(qapp):
    host = FakeHost()
    deck = Deck(host, [1, LIVE, 2])
    host.session.start_answer()
    host.session.start_answer()  # two answers before the speaker came to Live
    host.show_live()
    assert deck.sync() == 1
    assert not deck.live_done()  # the earlier answers do not count
    host.session.start_answer()
    assert deck.live_done()
