"""The guided tour: ``TourWidget`` (``gui.tour.tour``), its pages, data and game.

Never imports torch in this process: measurements that need a forward pass run in another process (the engine,
through ``EngineBridge.analyze``, or a short-lived helper process for offscreen screenshots: ``gui.tour.measure``).
Offscreen pictures of a page (``python main.py screenshot --section N``) are made by ``gui.capture.tour_shot``.
"""

from __future__ import annotations

__all__ = ["TourWidget", "SECTION_COUNT"]

SECTION_COUNT = 18  # 15 sections, the game, Terms (the metaphor table), Three questions


def __getattr__(name):
    if name == "TourWidget":
        from gui.tour.tour import TourWidget
        return TourWidget
    raise AttributeError(name)
