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


def tour_analysis(model_dir, prompt: str) -> dict:
    """The engine's answer to an ``analyze`` of kind "tour" for ``prompt``, made by ``model.teaching.analysis`` on
    the model in ``model_dir`` (what the window's engine process sends the tour)."""
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.teaching import analysis

    model, tok = load_pretrained(model_dir)
    engine = Engine(model, tok, kv_budget_bytes=analysis.KV_BUDGET_BYTES)
    out = analysis.tour(engine, prompt, bandwidth=1e10)
    # a kind that failed comes back as {"error": ...} and its page draws nothing: a test must not pass on that
    failed = {kind: v["error"] for kind, v in out.items() if isinstance(v, dict) and "error" in v}
    assert not failed, f"tour measurements failed: {failed}"
    return out


def make_tour(qtbot, model_dir, lang, family, analysis=None, show: bool = False):
    """A ``TourWidget`` on ``model_dir`` in ``lang`` at 1280×720, with ``analysis`` as its measurements."""
    from gui import i18n
    from gui.tour.data import TourData
    from gui.tour.tour import TourWidget

    i18n.set_language(lang)
    data = TourData(model_dir)
    data.analysis = analysis
    w = TourWidget(data=data, lang=lang, font_family=family)
    qtbot.addWidget(w)
    w.resize(1280, 720)
    if show:
        w.show()
    return w
