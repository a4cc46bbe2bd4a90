"""Page 14's thinner book on this machine: the tour's ``thin_book`` measurement (``model/teaching/thin_book.py``:
the model with fp32 and with int8 weights, bytes held and decode trip ms measured side by side) drawn as two bars
beside the big models' formula bars, on a scale of its own and labelled measured; the book the Live page reads
(fp32, fp16 or int8, ``in_use``) is named "in use on the Live page", an fp16 one with a third bar of its bytes."""

from __future__ import annotations

from animations.scenes.look import BLUE_LIGHT, GREEN, TEXT, T
from animations.units import fmt_bytes, fmt_ms


def draw_thin_book(scene, t: dict | None, x: float, y: float, w: float) -> float:
    """Draw ``t`` (the ``thin_book`` analysis; nothing when missing or unavailable) on ``scene`` (a
    ``TourScene``) from (x, y), ``w`` wide. Returns the y below what was drawn (``y`` when nothing was)."""
    if not t or not t.get("available"):
        return y
    in_use = (t.get("in_use") or {}).get("weights")  # the Live engine's own precision (model/weight_mm.py)
    keys = ("fp32", "int8") + (("fp16",) if in_use == "fp16" else ())
    names = {"fp32": T("FP32"), "int8": T("INT8"), "fp16": T("FP16")}
    name_w = max(scene.measure(n, "small").width() for n in names.values()) + 8
    full = 90.0  # the fp32 book's bar; int8's in proportion to its bytes
    most = float(t["fp32"]["weight_bytes"]) or 1.0
    figures = {
        "fp32": T("{bytes} · a trip {ms} · {tps} tok/s"),
        "int8": T("{bytes} ({ratio:.2f}×) · a trip {ms} · {tps} tok/s"),
        "fp16": "{bytes}",  # bytes only: its trip is the Live page's own, not part of this measurement
    }
    if in_use in figures:  # the same words as the page's FP16 / FP8 / 4-bit bars name the book the Live page reads
        figures[in_use] += " · " + T("in use on the Live page")

    note = T("median of {n} runs").format(n=t["runs"])  # interleaved ABBA: model/teaching/thin_book.py

    def row(y0: float, badge_first: bool = True) -> tuple[float, float]:
        """The badge (when ``badge_first``), then both books, from (x, y0). Returns (right end, bottom)."""
        x0, bottom = x, y0
        if badge_first:
            badge = scene.badge("measured", x, y0, note)
            x0, bottom = badge.sceneBoundingRect().right() + 20, badge.sceneBoundingRect().bottom()
        for i, key in enumerate(keys):
            r0 = t[key] if key != "fp16" else {"weight_bytes": t["in_use"]["weight_bytes"],
                                               "trip_ms": {"median": 0.0}, "tokens_per_s": 0.0}
            lab = scene.text(names[key], x0, y0, "small", TEXT, True, role="legend")
            r = lab.sceneBoundingRect()
            bw = max(3.0, full * float(r0["weight_bytes"]) / most)
            bar = scene.box(x0 + name_w, r.center().y() - 8, bw, 16, GREEN if key == "int8" else BLUE_LIGHT, None,
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
