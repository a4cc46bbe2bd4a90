"""The Live controller: the one object that turns the session's changes into engine commands.

The views (sliders, toggles, the presenter, the kiosk, a test) change the session (``SessionState``); the
controller subscribes to it and calls the bridge's typed methods (``EngineBridge.set_max_batch``,
``set_draft_k``, ``set_draft_kind``, ``set_sharding``). Nothing else commands the engine's settings.

    slider moved -> session.set_batch(n) -> Change("batch") -> LiveController -> EngineBridge.set_max_batch(n)
"""

from __future__ import annotations


class LiveController:
    """Commands the engine's settings from the session.

    Args:
        session: the Live session's state (``SessionState``): its batch and guesses are followed, its engine status
            says whether an engine is there to listen.
        bridge: the ``EngineBridge``.
    """

    def __init__(self, session, bridge):
        self.session = session
        self.bridge = bridge
        session.subscribe(lambda c: bridge.set_max_batch(c.value), "batch")
        session.subscribe(lambda c: self._send_draft_k(c.value), "draft_k")

    def _send_draft_k(self, k: int) -> None:
        if self.session.is_engine_ready():
            self.bridge.set_draft_k(k)

    def set_draft_kind(self, kind: str) -> bool:
        """The apprentice ``kind`` ("ngram" | "model") in the session and in the engine (told even when the
        session had it already: the engine may not). Returns True if the session's kind changed."""
        changed = self.session.set_draft_kind(kind)
        self.bridge.set_draft_kind(kind)
        return changed

    def request_sharding(self, mode: str, n: int) -> bool:
        """Ask the ready engine to tear the book ``n`` ways by ``mode``; False if no engine can be asked. The
        session's sharding changes when the engine confirms (``EngineEventHandler``)."""
        return self.session.is_engine_ready() and self.bridge.set_sharding(mode, n)

    def send_batch(self) -> None:
        """Tell the engine the session's table size again (a new engine is ready)."""
        self.bridge.set_max_batch(self.session.batch)

    def send_draft_k(self) -> None:
        """Tell the engine the session's guesses per trip again (a new engine is ready, with an apprentice)."""
        self.bridge.set_draft_k(self.session.draft_k)
