"""Give a test window a tour to host, the way MainWindow hosts one (``tour``, ``show_tour``, ``show_live``,
``is_tour_visible``), when the window does not host one itself yet."""

from __future__ import annotations


def ensure_tour(qtbot, window):
    """Return ``window.tour``; if the window has none, attach a real ``TourWidget`` (without an engine) with the
    host methods the kiosk and presenter use. The tour is closed by qtbot at teardown."""
    if getattr(window, "tour", None) is not None and callable(getattr(window, "show_tour", None)):
        return window.tour
    from gui.tour.tour import TourWidget
    tour = TourWidget(bridge=None, font_family=getattr(window, "font_family", None))
    qtbot.addWidget(tour)
    state = {"tour": True}

    def show_tour():
        state["tour"] = True

    def show_live():
        state["tour"] = False

    window.tour = tour
    window.show_tour = show_tour
    window.show_live = show_live
    window.is_tour_visible = lambda: state["tour"]
    return tour
