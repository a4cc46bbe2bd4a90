"""Page 14's thinner book on this machine: the tour's ``thin_book`` measurement (``model/teaching/thin_book.py``:
the model with fp32 and with int8 weights, bytes held and decode trip ms measured side by side) drawn as two bars
beside the big models' formula bars, on a scale of its own and labelled measured."""

from __future__ import annotations

from animations.scenes.look import BLUE_LIGHT, GREEN, TEXT, T
from animations.units import fmt_bytes, fmt_ms


def draw_thin_book(scene, t: dict | None, x: float, y: float, w: float) -> float:
    """Draw ``t`` (the ``thin_book`` analysis; nothing when missing or unavailable) on ``scene`` (a
    ``TourScene``) from (x, y), ``w`` wide. Returns the y below what was drawn (``y`` when nothing was)."""
    if not t or not t.get("available"):
        return y
    names = {"fp32": T("FP32"), "int8": T("INT8")}
    name_w = max(scene.measure(n, "small").width() for n in names.values()) + 8
    full = 90.0  # the fp32 book's bar; int8's in proportion to its bytes
    most = float(t["fp32"]["weight_bytes"]) or 1.0
    figures = {
        "fp32": T("{bytes} · a trip {ms} · {tps} tok/s"),
        "int8": T("{bytes} ({ratio:.2f}×) · a trip {ms} · {tps} tok/s"),
    }

    note = T("median of {n} runs").format(n=t["runs"])  # interleaved ABBA: model/teaching/thin_book.py

    def row(y0: float, badge_first: bool = True) -> tuple[float, float]:
        """The badge (when ``badge_first``), then both books, from (x, y0). Returns (right end, bottom)."""
        x0, bottom = x, y0
        if badge_first:
            badge = scene.badge("measured", x, y0, note)
            x0, bottom = badge.sceneBoundingRect().right() + 20, badge.sceneBoundingRect().bottom()
        for i, key in enumerate(("fp32", "int8")):
            r0 = t[key]
            lab = scene.text(names[key], x0, y0, "small", TEXT, True, role="legend")
            r = lab.sceneBoundingRect()
            bw = max(3.0, full * float(r0["weight_bytes"]) / most)
            bar = scene.box(x0 + name_w, r.center().y() - 8, bw, 16, BLUE_LIGHT if key == "fp32" else GREEN, None,
                            radius=3)
            scene.fade_in(bar, 0.4 + 0.2 * i)
            fig = scene.text(figures[key].format(
                bytes=fmt_bytes(r0["weight_bytes"]), ms=fmt_ms(r0["trip_ms"]["median"]),
                tps=f"{r0['tokens_per_s']:,.0f}", ratio=t["bytes_ratio"], speed=t["speedup"]),
                x0 + name_w + bw + 8, y0, "small", TEXT, role="readout")
            x0 = fig.sceneBoundingRect().right() + 24
            bottom = max(bottom, r.bottom(), fig.sceneBoundingRect().bottom())
        return x0 - 24, bottom

    done = scene.attempt(lambda: (lambda end_bottom: end_bottom[1] if end_bottom[0] <= x + w else False)(row(y)))
    if done:
        return done
    bottom = row(y, badge_first=False)[1]  # too wide for one row: the books, then the badge under them
    return scene.badge("measured", x, bottom + 2, note, max_w=w).sceneBoundingRect().bottom()


__all__ = ["draw_thin_book"]
