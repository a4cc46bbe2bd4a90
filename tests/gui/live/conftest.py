"""Fixtures of the Live page's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def apprentice_window(make_window):
    """A window whose (fake) engine offers both apprentices, as a real engine with a draft model does, and whose
    commands to the engine are kept in ``window.sent`` instead of being sent."""
    w = make_window()
    w.engine._take_offer({**(w.engine_info or {}), "draft_kinds": ["model", "ngram"], "draft_kind": "model"})
    w.sent = []
    w.bridge.send = lambda cmd: w.sent.append(cmd) or True
    return w
