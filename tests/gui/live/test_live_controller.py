"""The Live controller: the session's changes become the bridge's typed engine commands, and nothing else."""

from __future__ import annotations

from gui.live.controller import LiveController
from gui.live.state import SessionState


class RecordingBridge:
    """Stands in for ``EngineBridge``: keeps each typed command it is given."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def command(*args):
            self.calls.append((name, *args))
            return True
        return command


def test_batch_and_guesses_follow_the_session():
    s, b = SessionState(), RecordingBridge()
    LiveController(s, b)
    s.set_batch(4)
    s.set_draft_k(3)  # no engine ready yet: nothing to tell
    assert b.calls == [("set_max_batch", 4)]
    s.set_engine_status("loading")
    s.set_engine_status("ready")
    s.set_draft_k(2)
    s.set_batch(4)  # unchanged: no command
    assert b.calls == [("set_max_batch", 4), ("set_draft_k", 2)]


def test_draft_kind_and_sharding_go_through_the_controller():
    s, b = SessionState(), RecordingBridge()
    c = LiveController(s, b)
    assert c.set_draft_kind("model") and s.draft_kind == "model"
    assert not c.set_draft_kind("model")  # the engine is told again all the same
    assert not c.request_sharding("tp", 2)  # no engine to ask
    s.set_engine_status("ready")
    assert c.request_sharding("pp", 2)
    assert s.sharding == ("tp", 1)  # the session's sharding is the engine's answer, not the request
    c.send_batch()
    c.send_draft_k()
    assert b.calls == [("set_draft_kind", "model"), ("set_draft_kind", "model"), ("set_sharding", "pp", 2),
                       ("set_max_batch", 1), ("set_draft_k", 0)]
