"""What the Live page says in words and figures: the readout line, the model line, the extras and their "why".

Every figure is measured (a step report's ``wall_ms``, the engine's measured memory bandwidth) or computed from a
stated formula (the floor: weight bytes ÷ measured bandwidth). Before the model is loaded the readout says so
instead of showing zeros. The model is named by a display name ("One Trip code model · 4.3M parameters · CPU"),
never by its folder name ("target").
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from animations.stage.style import trip_tokens
from animations.typescale import set_role
from animations.units import fmt_bytes, fmt_rate, ms_figure
from gui.i18n import tr_window as _tr


def fmt_params(n: int, lang: str | None = None) -> str:
    """A parameter count in the reader's units. English: 4321000 -> "4.3M", 124000000 -> "124M", 950000 ->
    "0.95M"; Chinese (``lang`` "zh", default: the current language): 4860000 -> "486 万", 124000000 ->
    "1.24 亿" (the tour's units)."""
    if lang is None:
        from gui.i18n import current_language
        lang = current_language()
    if lang == "zh":
        if n >= 1e8:
            return _tr("{y} × 100 million").format(y=f"{n / 1e8:.2f}")
        return _tr("{w} × 10,000").format(w=f"{n / 1e4:.0f}")
    m = n / 1e6
    return f"{m:.0f}M" if m >= 100 else f"{m:.1f}M" if m >= 1 else f"{m:.2f}M"


def model_display_name(folder: str) -> str:
    """A visitor's name for a model folder: the bundled ones by what they learned, any other by its folder."""
    names = {"target-big": _tr("One Trip code model"), "target": _tr("One Trip pocket code model"),
             "draft": _tr("One Trip apprentice model"), "poems-big": _tr("One Trip poetry model"),
             "poems": _tr("One Trip pocket poetry model"), "poems-draft": _tr("One Trip poetry apprentice")}
    return names.get(folder, folder or "GPT-2")


def device_name(device: str) -> str:
    """"cpu" -> "CPU", "cuda" / "cuda:0" -> "GPU"."""
    d = (device or "cpu").lower()
    return _tr("GPU") if d.startswith("cuda") else _tr("CPU") if d == "cpu" else d.upper()


def readout_text(args: dict | None, loaded: bool, real_time: bool, trip_s: float) -> str:
    """The readout line, all of *this trip* (the one on stage): its measured step in ms (``wall_ms``: the forward
    pass, sampling and bookkeeping), its tokens in and out (``animations.stage.style.trip_tokens``, the words the
    stage's headline uses), tokens/s = tokens out ÷ step ms × 1000 (so tok/s and ms agree), and how much slower
    it is shown.

    ``args``: {"wall": ms, "tokens": tokens out, "tokens_in": n, "batch": n} of the trip on stage, or None
    before the first trip.
    """
    if not loaded:
        return _tr("The model is loading: nothing measured yet.")
    if args is None:
        return _tr("Press Run: every trip below is a real forward pass, timed.")
    wall, tokens = float(args["wall"]), int(args["tokens"])
    tps = tokens / wall * 1000.0 if wall > 0 else 0.0
    if real_time:
        shown = _tr("shown at real speed")
    else:
        factor = trip_s * 1000.0 / wall if wall > 0 else 0.0
        shown = _tr("shown {factor}× slower").format(factor=f"{factor:,.0f}")
    per_trip = trip_tokens(int(args.get("tokens_in", tokens) or 0), tokens)  # as the stage's headline says it
    return _tr("This trip: whole step {ms} ms, measured · {per_trip} · {tps} tok/s · {shown}").format(
        ms=ms_figure(wall), shown=shown, per_trip=per_trip, tps=fmt_rate(tps))


def readout_rule() -> str:
    """The Live page's rule for its figures, in words (the readout's tooltip)."""
    return _tr("Every figure here is either of this trip (the one on stage: this line, the desks, the legend) "
               "or, where it says so, an average of the last trips.")


PRECISION_WORDS = {"fp32": "FP32", "fp16": "FP16", "int8": "INT8"}  # the engine's weights (model/weight_mm.py)


def model_text(info: dict | None, fatal: str | None) -> str:
    """The model line: display name, parameters, device, chapters, weights, threads."""
    if info is None:
        return _tr("Starting the model…") if fatal is None else _tr("No model is loaded.")
    model = info.get("model", {})
    params = int(model.get("parameters") or 0)
    name = model_display_name(str(model.get("name", "")))
    if params:
        name = _tr("{name} · {params} parameters").format(name=name, params=fmt_params(params))
    threads = info.get("threads", "?")
    threads = (_tr("1 thread") if threads == 1 else _tr("{n} threads").format(n=threads))
    # one line at 1280 px: the measured bandwidth is on the plot (its floor line), not here
    fields = {"name": name, "device": device_name(str(info.get("device", "cpu"))), "layers": model.get("n_layer", "?"),
              "weights": fmt_bytes(float(model.get("weight_bytes") or 0)), "threads": threads}
    precision = PRECISION_WORDS.get(str(model.get("weights")))  # the words of tour page 14's bars (FP16, ...)
    if precision is None:
        return _tr("{name} · {device} · {layers} chapters (layers) · {weights} of weights · {threads}").format(**fields)
    return _tr("{name} · {device} · {layers} chapters (layers) · {weights} of {precision} weights · {threads}").format(
        precision=precision, **fields)


def speedup_why(speedup: float | None, reason: str) -> str:
    """The one line saying why a measured speed-up goes against the source's claim, with the measured ``reason``
    (``gui.live.apprentice_choice.slower_reason``); "" when it does not go against it."""
    if speedup is None or speedup >= 1.0 or not reason:
        return ""
    return _tr("Slower here: {reason}.").format(reason=reason)


def sharding_why(compute_ms: float | None, comm_ms: float | None) -> str:
    """Why tearing the book does not pay on this computer, when communication outweighs compute; else ""."""
    if compute_ms is None or comm_ms is None or comm_ms <= compute_ms:
        return ""
    return _tr("Slower here: passing the pages between processes costs more than the tiny model's compute; "
               "tearing pays off for models too big for one GPU.")


class ReadoutPanel(QWidget):
    """The readout (big figures), the extras (apprentice, torn book) and their "why" line; also the model line,
    which the page shows in its footer beside the status line.

    Every label wraps: a long line in a narrow window grows the panel instead of being cut.
    """

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        col = QVBoxLayout(self)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        self.readout = self._label("readout", "readout")
        self.model_label = self._label("modelLabel", "info")
        self.extra_readout = self._label("extraReadout", "extra")
        self.why_label = self._label("whyLabel", "why")
        for w in (self.readout, self.extra_readout, self.why_label):
            col.addWidget(w)
        self.model_label.setAlignment(Qt.AlignRight | Qt.AlignVCenter)  # shown in the page's footer row
        self.extra_readout.setVisible(False)
        self.why_label.setVisible(False)

    def _label(self, name: str, role: str) -> QLabel:
        label = QLabel()
        label.setObjectName(name)
        label.setTextFormat(Qt.PlainText)
        label.setWordWrap(True)
        label.setAlignment(Qt.AlignCenter)
        label.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
        set_role(label, role)
        return label

    def set_extras(self, lines: list[str], why: str) -> None:
        """Show the extras' lines (hidden when empty) and the "why" line (hidden when "")."""
        text = "\n".join(lines)
        if self.extra_readout.text() != text:
            self.extra_readout.setText(text)
        self.extra_readout.setVisible(bool(lines))
        if self.why_label.text() != why:
            self.why_label.setText(why)
        self.why_label.setVisible(bool(why))
