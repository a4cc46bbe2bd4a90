"""What the presenter, the deck and the kiosk may ask of the window: ``LiveHost``, a small explicit interface.

They read and change the Live session through ``host.session`` (a ``gui.live.state.SessionState``) and call
the few window actions listed here; nothing else of the window (no ``getattr`` probing, no private attribute).
``gui.window.main_window.MainWindow`` is the one implementation in the app; tests drive the deck against a plain
stand-in (``tests/gui/presenter/test_deck_host.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: this module imports no Qt
    from gui.live.state import SessionState


@runtime_checkable
class LiveHost(Protocol):
    """The window as the presenter, the deck and the kiosk see it.

    Attributes: ``session`` (the Live session's state), ``tour`` (the tour page, built on first use), ``lang``
    ("en"/"zh"), ``font_family`` (str or None), ``actions`` (name -> QAction: the window's keys),
    ``kiosk_controller`` and ``presenter`` (None until a kiosk / presenter installs itself), ``main_new_tokens``
    (tokens the visitor's answer may take), ``session_finished`` (a Qt signal: the answer is complete and shown).
    """

    session: SessionState
    bridge: object  # the EngineBridge: its ``options["model_dir"]`` names the weights writing
    lang: str
    font_family: str | None
    actions: dict
    kiosk_controller: object | None  # and the widgets the kiosk and presenter mode adjust:
    prompt_box: object  # the prompt's QComboBox (presenter: click focus only; kiosk: a shorter limit)
    view: object  # the stage's QGraphicsView (presenter: it takes the keyboard focus)
    presenter: object | None
    main_new_tokens: int

    @property
    def tour(self): ...

    pages: object  # the QStackedWidget of the Live page and the tour (its ``widgetAdded``: the tour was built)

    def built_tour(self):
        """The tour page if it has been built, else None (``tour`` builds it)."""

    # ---- pages ---------------------------------------------------------------------------------------------
    def show_tour(self) -> None: ...

    def show_live(self) -> None: ...

    def is_tour_visible(self) -> bool: ...

    def set_language(self, lang: str) -> None: ...

    def set_presenter_mode(self, on: bool) -> None: ...

    def presenter_hidden(self) -> list:
        """The Live page's controls a speaker does not use (presenter mode hides them)."""

    # ---- the Live answer -----------------------------------------------------------------------------------
    def run(self) -> None: ...

    def pause(self) -> None: ...

    def toggle_run(self) -> None: ...

    def step_once(self) -> None: ...

    def reset(self) -> None: ...

    def set_prompt(self, text: str) -> None: ...

    def presets(self) -> list[str]: ...

    def is_session_done(self) -> bool:
        """True when no answer is in progress and nothing of the last one is left to show."""

    def engine_ready(self) -> bool:
        """True once the engine said ``ready`` (and has not died since)."""

    def model_failed(self) -> str | None:
        """Why no model could be loaded (the engine's message), or None."""


__all__ = ["LiveHost"]
