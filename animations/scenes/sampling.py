"""Section 6: drawing lots (sampling): the model's scores for the next token, reshaped by temperature, top-k and
top-p, and the lot drawn.

Measured numbers come from ``ctx["analysis"]`` (the engine's ``analyze`` answer, ``model/teaching/analysis.py``);
without it the scene draws illustrative numbers and says so.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QColor

from animations.scenes.base import TourScene
from animations.scenes.look import ACCENT, BLUE_LIGHT, DIM, EDGE, PANEL, SCENE_H, TEXT, T, px
from animations.scenes.look import analysis_of as _analysis

# --------------------------------------------------------------------------------------------------------------
ILLUSTRATIVE_TOP = [("␣the", 3.1), ("␣a", 2.4), ("␣it", 1.9), ("␣to", 1.5), ("␣and", 1.2), ("␣is", 1.0),
                    ("␣of", 0.8), ("␣in", 0.6)]


def candidates(ctx: dict) -> tuple[list[str], list[float], bool]:
    """(labels, logits, live?) of the next-token candidates: the live top-50, or an illustrative few."""
    a = _analysis(ctx, "next_token")
    if a:
        return list(a["labels"]), list(a["logits"]), True
    return [x for x, _ in ILLUSTRATIVE_TOP], [y for _, y in ILLUSTRATIVE_TOP], False


def reshape(ctx: dict) -> list[float]:
    """Probabilities of the candidates after temperature, top-k and top-p (renormalised over the candidates).

    temperature 0 → all on the best; top_k 0 → no limit; top_p 1 → no limit (Holtzman et al. 2020).
    """
    s = ctx.get("sampling") or {}
    temp, top_k, top_p = float(s.get("temperature", 1.0)), int(s.get("top_k", 0)), float(s.get("top_p", 1.0))
    _, logits, _ = candidates(ctx)
    n = len(logits)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: -logits[i])
    if temp <= 0.005:
        probs = [0.0] * n
        probs[order[0]] = 1.0
        return probs
    m = max(logits)
    e = [math.exp((x - m) / temp) for x in logits]
    keep = set(order[:top_k] if top_k > 0 else order)
    total = sum(e[i] for i in keep)
    probs = [e[i] / total if i in keep else 0.0 for i in range(n)]
    if top_p < 1.0:
        acc, nucleus = 0.0, set()
        for i in order:
            if i not in keep:
                continue
            nucleus.add(i)
            acc += probs[i]
            if acc >= top_p:
                break
        total = sum(probs[i] for i in nucleus)
        probs = [probs[i] / total if i in nucleus else 0.0 for i in range(n)]
    return probs


LOST = "\u25a1"  # the poems corpus writes this where a character of the old text is lost (not a missing glyph)


def shown_label(label: str) -> str:
    """A candidate's label as the page shows it: the poems corpus' lost-character sign as what it means
    ("⟨lost⟩" / "⟨缺字⟩"), never the bare sign."""
    return label.replace(LOST, "⟨" + T("lost") + "⟩") if LOST in label else label


def _whitespace(label: str) -> bool:
    from animations.token_text import WHITESPACE_MARKS
    core = label.replace(" ", "")
    return bool(core) and all(c in WHITESPACE_MARKS for c in core)


def rows(labels: list[str], logits: list[float]) -> list[tuple[str, list[int], str]]:
    """The candidates as the page's rows, likeliest first: (what the row shows, the candidates it sums, its role).

    A word or sign is a row of its own (role "token": the model's own token). The whitespace tokens (a space, a
    line break, runs of them: ␣ ↵ ↵↵␣␣ …) share one row, as do the poems corpus' lost-character signs: the page is
    about drawing words, and twenty kinds of blank would fill it. A group of one is shown as its token."""
    order = sorted(range(len(logits)), key=lambda i: -logits[i])
    blank = [i for i in order if _whitespace(labels[i])]
    lost = [i for i in order if LOST in labels[i] and i not in blank]
    out: list[tuple[float, str, list[int], str]] = []
    for members, name in ((blank, T("spaces, line breaks ({n})")), (lost, T("lost characters ({n})"))):
        if len(members) == 1:
            out.append((logits[members[0]], shown_label(labels[members[0]]), members, "token"))
        elif members:
            out.append((logits[members[0]], name.format(n=len(members)), members, "axis"))
    grouped = set(blank) | set(lost)
    out += [(logits[i], shown_label(labels[i]), [i], "token") for i in order if i not in grouped]
    out.sort(key=lambda r: -r[0])
    return [(text, members, role) for _, text, members, role in out]


class SamplingScene(TourScene):
    """§6: the live model's next-token candidates as bars, reshaped by the sliders; a draw; the same odds at
    three temperatures."""

    title = "Drawing lots (sampling)"
    number = 6

    LEFT_W = 700.0  # the candidates' column; the rest is the panel on why and how the draw is shaped

    def draw(self, ctx: dict) -> None:
        # the candidates in the largest style that leaves room for the drawn token and the pill: the best 8 rows,
        # or the best 6 when a small view makes the text large
        for bs, n in (("label", 8), ("small", 8), ("label", 6), ("small", 6)):
            if self.attempt(lambda: self._candidates(ctx, bs, n), bottom=SCENE_H - 4):
                break
        else:
            self._candidates(ctx, "small", 6)
        # the panel: the reason with the three temperatures' chart, else without it
        for chart in (True, False):
            if self.attempt(lambda: self._why(ctx, "body", chart), bottom=SCENE_H - 4):
                return
        self._why(ctx, "body", False)

    def _candidates(self, ctx: dict, bs: str, n: int = 8) -> bool:
        """The ``n`` likeliest rows of next-token candidates (``rows``) as bars (labels and figures in style
        ``bs``), the drawn one, the pill."""
        labels, logits, live = candidates(ctx)
        probs = reshape(ctx)
        s = ctx.get("sampling") or {}
        drawn = s.get("drawn")
        if drawn is not None and not 0 <= drawn < len(labels):
            drawn = None
        table = rows(labels, logits)
        shown = table[:n]
        if drawn is not None and not any(drawn in m for _, m, _ in shown):
            shown[-1] = next(r for r in table if drawn in r[1])  # the drawn token keeps its bar
        prompt = ctx.get("prompt", "")
        tail = prompt if len(prompt) < 40 else "…" + prompt[-38:]
        left_w = self.LEFT_W
        _, y = self.para(T("After “{tail}”, the next token could be:").format(tail=tail), 40, self.top, left_w,
                         "body", TEXT, role="caption")
        lab_w = max([self.measure(text, bs).width() for text, _, _ in shown] + [40.0]) + 16
        x0 = 40 + lab_w
        pct_w = self.measure("100.0%", bs).width() + 14
        full = 40 + left_w - x0 - pct_w
        bh = self.lh(bs)
        y += 14
        for r, (text, members, role) in enumerate(shown):
            p = sum(probs[i] for i in members)
            color = ACCENT if drawn in members else (BLUE_LIGHT if p > 0 else QColor("#3a4652"))
            self.text(text, x0 - 16, y, bs, TEXT if p > 0 else DIM, align="right", role=role)
            bar = self.box(x0, y + 3, max(3.0, full * p), bh - 6, color, None, radius=5)
            self.pop_in(bar, 0.2 + 0.1 * r)
            figure = (f"{100 * p:.1f}%" if p >= 0.0005 else "<0.1%") if p > 0 else T("cut")  # never a bare 0.0 %
            self.text(figure, x0 + max(3.0, full * p) + 12, y, bs, TEXT if p > 0 else DIM, role="readout")
            y += bh + 12
        a = _analysis(ctx, "next_token")
        note = T("top 50 of {v:,}, renormalised").format(v=a["vocab_size"]) if a else T("model not loaded")
        kind = "measured" if live else "illustrative"
        if drawn is not None:
            d = self.text(T("Drawn: {tok}").format(tok=shown_label(labels[drawn])), x0, y + 2, "number", ACCENT,
                          True, role="readout")
            dr = d.sceneBoundingRect()
            pill = self.badge(kind, 40 + left_w, dr.center().y() - (self.lh("small", True) + px("small") * 0.3) / 2,
                              note, align="right")
            if pill.sceneBoundingRect().left() < dr.right() + 16:  # no room beside the drawn token: below it
                pill.setPos(40, dr.bottom() + 8)
        else:
            pill = self.badge(kind, 40, y + 10, note, max_w=left_w)
        if any(LOST in labels[i] for _, m, _ in shown for i in m):  # not a missing glyph: a sign of the corpus
            self.para(T("⟨lost⟩: a character lost from the old texts; the poems corpus marks the gap with a sign, "
                        "and the model learnt to write it"), 40, pill.sceneBoundingRect().bottom() + 8, left_w,
                      "small", DIM, role="legend")
        return True

    def _why(self, ctx: dict, style: str, chart: bool) -> bool:
        """The right panel: the settings, why draw at all (in ``style``) and, with ``chart``, what temperature
        does to these very odds."""
        s = ctx.get("sampling") or {}
        top = self.top
        rx = 40 + self.LEFT_W + 40
        rw = 1560 - rx
        settings = T("temperature {t:.2f} · top-p {p:.2f} · top-k {k}").format(
            t=float(s.get("temperature", 1)), p=float(s.get("top_p", 1)), k=int(s.get("top_k", 0)) or T("off"))
        # a line may break between the settings, never inside one ("top-" / "k off"): no-break space and hyphen
        settings = " · ".join(part.replace(" ", "\u00a0").replace("-", "\u2011") for part in settings.split(" · "))
        _, ry = self.para(settings, rx, top, rw, "label", DIM, role="readout")
        panel_top = ry + 8
        why, y = self.para(T("Why not always take the most likely token? Always taking the top one (greedy) makes "
                             "text dull and repetitive: it can loop for ever. Drawing keeps some variety. Temperature "
                             "below 1 sharpens the odds, above 1 flattens them; top-k keeps the k best; top-p keeps "
                             "the fewest tokens whose odds add up to p. Reasoning models often use a lower "
                             "temperature.").replace("top-", "top\u2011"), rx + 20, panel_top + 14, rw - 40, style,
                         TEXT, role="caption")  # "top-p" and "top-k" never break at their hyphen
        self.fade_in(why, 0.8)
        if chart:
            _, y = self.para(T("The same odds at three temperatures"), rx + 20, y + 18, rw - 40, "heading", ACCENT,
                             True, role="heading")
            temps = (0.5, 1.0, 2.0)
            col_w = (rw - 40) / 3
            chart_h = SCENE_H - 4 - 12 - 14 - y - self.lh("small") - 10
            if chart_h < 48:  # too flat to read
                return False
            labels, logits, _ = candidates(ctx)
            first5 = [members for _, members, _ in rows(labels, logits)[:5]]  # the candidates' first five rows
            for c, temp in enumerate(temps):
                pr = reshape(dict(ctx, sampling={"temperature": temp, "top_k": 0, "top_p": 1.0}))
                cx = rx + 20 + c * col_w
                bw = (col_w - 24) / max(1, len(first5))
                for j, members in enumerate(first5):
                    h = max(2.0, chart_h * sum(pr[i] for i in members))
                    bar = self.box(cx + j * bw, y + 10 + chart_h - h, bw - 4, h, BLUE_LIGHT if j else ACCENT, None,
                                   radius=2)
                    self.fade_in(bar, 1.0 + 0.2 * c)
                self.text(f"{temp:g}", cx + (col_w - 24) / 2, y + 14 + chart_h, "small", DIM,
                          align="center", role="axis")
            y += 14 + chart_h + self.lh("small")
        self.box(rx, panel_top, rw, y + 12 - panel_top, PANEL, EDGE, z=0)
        return True
