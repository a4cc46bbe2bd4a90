"""What the Live stage shows now, read back without changing it: for the window, the layout audit and the tests.

``StageQueries`` is mixed into ``animations.stage.scene.StageScene``; it reads the scene's parts (``_warehouse``,
``_desks``, ``_cheat``, ``_seats``, ``_apprentice``, ``_caption``) and its trip state (``_trip``, ``_t``,
``_duration``, ``_timeline``, ``_pending``, ``_lit``, ``_shard_mode``, ``_shard_n``).
"""

from __future__ import annotations

from PySide6.QtWidgets import QGraphicsSimpleTextItem

from animations.stage.cheat import CheatSheet
from animations.stage.desks import Desks
from animations.stage.warehouse import Warehouse


class StageQueries:
    """Read-only views of the stage's state (times in seconds of stage time)."""

    def busy(self) -> bool:
        """True while a trip is animating or waiting."""
        return self._timeline is not None or bool(self._pending)

    def current_trip(self) -> dict | None:
        return self._trip

    def trip_time_s(self) -> float:
        return self._t

    def current_duration_s(self) -> float:
        return self._duration

    # --- what tests, the audit and the window can read back ------------------------------------------------
    @property
    def warehouse(self) -> Warehouse:
        return self._warehouse

    @property
    def chapters(self):
        """The warehouse's chapter bars (QGraphicsRectItem), chapter 1 first; they never move."""
        return list(self._warehouse.bars)

    @property
    def desks(self) -> Desks:
        """The desks (``desks.n`` of them: one per worker)."""
        return self._desks

    @property
    def cheat_sheet(self) -> CheatSheet:
        return self._cheat

    def lit_chapter(self) -> int | None:
        """Index (0-based) of the layer being computed at the desks now, or None."""
        return self._lit

    def filled_cells(self) -> int:
        """Cheat-sheet cells drawn as in use now (= the real blocks in use)."""
        return self._cheat.grid.in_use

    def caption_text(self) -> str:
        return self._caption.text()

    def seat_texts(self) -> list[tuple[str, str, str]]:
        """(request_id, prompt shown, answer shown) per visible seat, in seat order."""
        self._finish_seats()
        return self._seats.shown()

    def slip_texts(self) -> list[str]:
        """The answers shown at the table now, in seat order (empty while the apprentice's column is up)."""
        if self._apprentice.visible():
            return []
        self._finish_seats()
        return [answer for _, _, answer in self._seats.shown()]

    def guess_states(self) -> list[tuple[str, str, str]]:
        """The apprentice's slips visible now: (state, guess, master's token beside a wrong guess)."""
        return self._apprentice.guess_states()

    def apprentice_visible(self) -> bool:
        return self._apprentice.visible()

    def sharding(self) -> tuple[str, int]:
        """(mode "tp" | "pp", number of desks) the stage draws."""
        return self._shard_mode, self._shard_n

    def text_items(self) -> list[QGraphicsSimpleTextItem]:
        """Every visible text item on the stage (each tagged with a role)."""
        self._finish_seats()
        return [it for it in self.items() if isinstance(it, QGraphicsSimpleTextItem) and it.isVisible()
                and it.text() and it.effectiveOpacity() > 0.01]
