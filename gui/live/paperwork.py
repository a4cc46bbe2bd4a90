"""Reading versus paperwork: one measured trip in three figures, drawn as parts of one bar with the floor on it,
and a line saying what they mean for this model on this machine.

The figures are ``model.teaching.lessons.trip_split`` (one formula, one place; ``model.teaching.lessons`` imports no
torch):

    reading_ms   = the step report's ``weight_read_ms``      measured: the engine's weight GEMVs/GEMMs, LM head
                                                             and embedding gather, timed in the trip itself
    comm_ms      = the desks' mean ``comm_ms``                measured: a torn book's pages passed between desks
    wait_ms      = wall_ms − the step's CPU ms (``cpu_ms``)  measured: the engine waited for a processor that
                                                             other programs kept busy (shares are of the rest)
    draft_ms     = the step report's ``draft_ms``             measured: the apprentice's guessing (its passes)
    paperwork_ms = wall_ms − reading − comm − wait − draft   measured: the rest of the step (attention over the
                                                             KV cache, norms, sampling, scheduling, Python)
    floor_ms     = weight_bytes ÷ read speed × 1000           formula: how fast the book could be read at the
                                                             memory's measured read speed (``ready``'s
                                                             ``memory_bandwidth_bytes_per_s``, measured once per
                                                             machine), the red line of the ms-per-trip plot

The sentence follows the measured shares (``trip_split``'s ``lesson`` key: "reading", "paperwork", "both",
"communication", "unmeasured"); ``SplitRow.trip`` keeps the figures and the key it chose for ``screenshot
--layout-json``.
"""

from __future__ import annotations

from collections import deque

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from animations.textset import keep_units
from animations.typescale import set_role
from animations.units import fmt_bytes, ms_figure
from gui.i18n import tr_window as _tr
from gui.live.readout import device_name
from model.teaching import lessons

READING_COLOR = QColor("#ff6b6b")  # the floor line's red on the ms-per-trip plot
PAPERWORK_COLOR = QColor("#5b7690")
COMM_COLOR = QColor("#c792ea")  # the torn book's pages passed between desks
FLOOR_COLOR = QColor("#ffffff")
WAIT_COLOR = QColor("#2c3a48")  # the step waited for a processor busy with other programs
MOSTLY = lessons.MOSTLY  # a part at least this share of the trip "mostly" makes the trip


def _num(value) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v and v not in (float("inf"), float("-inf")) else None


WAIT_SHOWN = 0.1  # waiting for the processor is named when it is at least this share of the step
SPLIT_WINDOW = 8  # the split row's figures: medians of the last this-many trips like the one on stage


def _comm(report: dict) -> float:
    workers = [w for w in report.get("workers") or [] if isinstance(w, dict)]
    return sum(_num(w.get("comm_ms")) or 0.0 for w in workers) / len(workers) if workers else 0.0


def _kind(report: dict) -> tuple:
    """Trips alike enough to share a median: same phase, batch and number of desks."""
    return (report.get("phase"), report.get("batch"), len(report.get("workers") or []))


def trip_figures(report: dict | None, info: dict | None, recent: list[dict] | None = None) -> dict | None:
    """The split of the median trip (``model.teaching.lessons.median_trip``: by reading share) among ``report``
    and the trips of ``recent`` (older reports, oldest first) of the same kind (``_kind``), at most
    ``SPLIT_WINDOW`` in all, with the model and read speed of ``info`` (the engine's ``ready`` event), so that one
    trip the machine's scheduler interrupted does not flip the lesson and every figure is of one real trip.
    ``model.teaching.lessons.trip_split``'s figures plus "step" (the median trip's step number), "forward_ms",
    "weight_read_ms", "cpu_ms" (as that trip's report has them; weight_read_ms None when a trip lacks it),
    "on_stage" (the step of ``report``), "phase", "batch", "desks", "trips" (how many trips it is the median
    of) and "steps" (their step numbers). None when the report has no positive ``wall_ms``."""
    if not report:
        return None
    whole = _num(report.get("wall_ms"))
    if whole is None or whole <= 0:
        return None
    same = [r for r in (recent or []) if _kind(r) == _kind(report) and r is not report
            and (_num(r.get("wall_ms")) or 0) > 0 and r.get("step") != report.get("step")]
    trips = (same + [report])[-SPLIT_WINDOW:]
    measured = all((_num(r.get("weight_read_ms")) or 0) > 0 for r in trips)
    info = info or {}
    weight_bytes = _num((info.get("model") or {}).get("weight_bytes")) or 0.0
    bandwidth = _num(info.get("memory_bandwidth_bytes_per_s")) or 0.0
    splits = []
    for r in trips:
        wall, cpu = float(r["wall_ms"]), _num(r.get("cpu_ms"))
        sp = lessons.trip_split(wall, _num(r.get("weight_read_ms")) if measured else None, weight_bytes, bandwidth,
                                comm_ms=max(0.0, _comm(r)), wait_ms=max(0.0, wall - cpu) if cpu is not None else 0.0,
                                draft_ms=max(0.0, _num(r.get("draft_ms")) or 0.0))
        splits.append({**sp, "step": r.get("step"), "forward_ms": _num(r.get("forward_ms")),
                       "weight_read_ms": _num(r.get("weight_read_ms")) if measured else None,
                       "cpu_ms": cpu})
    median = lessons.median_trip(splits)
    floor = info.get("floor") or {}
    return {**median, "on_stage": report.get("step"), "phase": report.get("phase"), "batch": report.get("batch"),
            "weight_bytes": weight_bytes, "l3_bytes": _num(floor.get("l3_bytes")), "lives_in": floor.get("applies"),
            "desks": max(1, len(report.get("workers") or [])), "trips": len(trips),
            "steps": [r.get("step") for r in trips]}


def _pace(f: dict) -> str:
    """"at 7.2 GB/s, 6× slower than the memory could" from the measured read speed and the floor."""
    speed = fmt_bytes(f["read_speed_bytes_per_s"])
    k = f.get("times_floor")
    if k is None:
        return _tr("at {speed}/s").format(speed=speed)
    if k < 1.5:
        return _tr("at {speed}/s, about as fast as the memory could").format(speed=speed)
    return _tr("at {speed}/s, {k}× slower than the memory could").format(speed=speed, k=f"{k:.0f}")


def figures_text(f: dict) -> str:
    """The figures, each labelled measured or formula."""
    parts = []
    if f["comm_ms"] > 0:
        parts.append(_tr("communication {c} ms, measured").format(c=ms_figure(f["comm_ms"])))
    interrupted = bool(f.get("interrupted"))
    if interrupted:  # the reading's clock ran while the thread waited: its figure would hold part of the wait
        parts.append(_tr("the trip's own work {w} ms, measured; a busy processor interrupted the reading, so it is "
                         "not split from the rest").format(w=ms_figure(f["paperwork_ms"])))
    elif f["reading_ms"] is not None:
        # a wait too small to name stays in the other work, so the figures on screen add up to the step
        hidden = 0.0 if f.get("wait_ms", 0.0) >= WAIT_SHOWN * f["whole_ms"] else f.get("wait_ms", 0.0)
        parts.append(_tr("reading the weights {r} ms, measured").format(r=ms_figure(f["reading_ms"])))
        parts.append(_tr("other work {p} ms, measured").format(p=ms_figure(f["paperwork_ms"] + hidden)))
    else:
        parts.append(_tr("whole step {w} ms, measured; the reading is not timed separately here").format(
            w=ms_figure(f["whole_ms"])))
    if f.get("draft_ms", 0.0) > 0:  # the apprentice's guessing: its own work, not the master's pass
        parts.append(_tr("the apprentice's guesses {d} ms, measured").format(d=ms_figure(f["draft_ms"])))
    if interrupted or f.get("wait_ms", 0.0) >= WAIT_SHOWN * f["whole_ms"]:
        parts.append(_tr("waiting for a busy processor {w} ms, measured").format(w=ms_figure(f["wait_ms"])))
    if f["floor_ms"] is not None:
        parts.append(_tr("floor {f} ms, formula").format(f=ms_figure(f["floor_ms"])))
    return " · ".join(parts)


def where_text(f: dict, device: str) -> str:
    """Where the book lives: its bytes beside this CPU's last-level cache (``model.hardware.decode_floors``: the
    size the OS reports, and which memory's floor applies), "17.4 MB of weights, inside this CPU's 32 MB cache" or
    "109 MB of weights, more than this CPU's 32 MB cache: read from RAM"; without a cache size (a GPU, or an OS
    that does not say), "17.4 MB of weights on a CPU"."""
    size = fmt_bytes(f["weight_bytes"])
    llc = f.get("l3_bytes")
    if not llc or f.get("lives_in") not in ("cache", "dram") or device_name(device) != _tr("CPU"):
        return _tr("{size} of weights on a {device}").format(size=size, device=device_name(device))
    if f["lives_in"] == "cache":
        return _tr("{size} of weights, inside this CPU's {llc} cache").format(size=size, llc=fmt_bytes(llc))
    return _tr("{size} of weights, more than this CPU's {llc} cache: read from RAM").format(size=size,
                                                                                          llc=fmt_bytes(llc))


def lesson_text(f: dict, device: str) -> str:
    """The sentence for ``f["lesson"]`` (``model.teaching.lessons.trip_lesson``), of what is on screen only: the trip's
    parts on this machine; "" when the reading was not measured (no claim)."""
    where = where_text(f, device)
    key = f["lesson"]
    if key == "communication":
        return _tr("Book torn {n} ways: passing the pages between desks is the largest part of the trip").format(
            n=f["desks"])
    if key == "reading":
        return _tr("{where}: the trip is mostly reading the weights, {pace}").format(where=where, pace=_pace(f))
    if key == "paperwork":
        return _tr("{where}: the trip is mostly other work per step (attention, sampling, Python), not reading the "
                   "weights").format(where=where)
    if key == "both":
        return _tr("{where}: reading the weights is {pct}% of the trip's work, {pace}; the rest is other work per "
                   "step").format(where=where, pct=f"{100 * f['reading_share']:.0f}", pace=_pace(f))
    return ""


def split_text(f: dict, device: str) -> str:
    """One line: which trips the figures are of, the figures, then the lesson they teach (``lesson_text``)."""
    lesson = lesson_text(f, device)
    figures = figures_text(f)
    if f.get("trips", 1) > 1:
        figures = _tr("the median of the last {n} trips: {figures}").format(n=f["trips"], figures=figures)
    line = _tr("{figures} · {lesson}").format(figures=figures, lesson=lesson) if lesson else figures
    return keep_units(line)  # a wrapped line never parts a figure from its unit ("19.5" | "MB")


class SplitBar(QWidget):
    """The trip as one bar: reading (red), communication (violet, a torn book), other work (blue-grey), waiting
    for a busy processor (dark), widths in
    proportion to the measured ms, and the floor as a white tick at its share of the step; paints no text (the
    line beside it says the figures)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("splitBar")
        self.parts: tuple[float, ...] | None = None  # (reading, communication, other work, waiting) ms
        self.floor: float | None = None  # ms, on the same scale
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)

    def set_parts(self, parts: tuple[float, ...] | None, floor: float | None = None) -> None:
        if parts != self.parts or floor != self.floor:
            self.parts, self.floor = parts, floor
            self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        h = max(8, self.fontMetrics().height() - 4)
        return QSize(h * 8, h)

    def paintEvent(self, _event) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        r = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        p.setPen(Qt.NoPen)
        p.setBrush(QColor("#17202a"))
        p.drawRoundedRect(r, 3, 3)
        total = sum(self.parts) if self.parts else 0.0
        if total > 0:
            x = r.left()
            for ms, color in zip(self.parts, (READING_COLOR, COMM_COLOR, PAPERWORK_COLOR, WAIT_COLOR)):
                w = r.width() * ms / total
                if ms > 0:
                    w = max(2.0, w)  # a sliver stays visible: it is never nothing
                p.setBrush(color)
                p.drawRect(QRectF(x, r.top(), min(w, r.right() - x), r.height()))
                x += w
            if self.floor and self.floor < total:
                fx = r.left() + r.width() * self.floor / total
                p.setPen(QPen(FLOOR_COLOR, 2))
                p.drawLine(int(fx), int(r.top()), int(fx), int(r.bottom()))
        p.end()


# the line's share of the row against the bar's 1: five sixths, so that the line with every figure named (a wait
# for a busy processor too) stays two lines at 1280 px and the stage above keeps its width
LABEL_STRETCH = 5


class SplitRow(QWidget):
    """The bar and its line. ``show_trip(report, info)`` when a trip goes on stage; until then the line says what
    the bar means. ``trip``: the figures and the lesson key on screen now (None before a trip)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(8)
        self.bar = SplitBar()
        self.label = QLabel()
        self.label.setObjectName("splitLabel")
        self.label.setTextFormat(Qt.PlainText)
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Minimum)
        set_role(self.label, "split")
        row.addWidget(self.bar, 1, Qt.AlignVCenter)
        row.addWidget(self.label, LABEL_STRETCH)
        self._args: tuple | None = None
        self.trip: dict | None = None
        self.recent: deque[dict] = deque(maxlen=4 * SPLIT_WINDOW)  # reports shown, oldest first

    def height_for(self, width: int) -> int:
        """The row's height at ``width`` px: the line's wrapped height at the narrower of the width it has now and
        its stretch share (5 of 6 after the spacing), so that a line that grows by one wrap is never clipped."""
        share = int((width - 8) * LABEL_STRETCH / (LABEL_STRETCH + 1))
        label_w = min(self.label.width(), share) if self.label.width() > 0 else share
        # + 2 px: a text layout of the same lines can come out a pixel taller than the label's own estimate
        return max(self.bar.sizeHint().height(), self.label.heightForWidth(max(1, label_w)) + 2)

    def show_trip(self, report: dict | None, info: dict | None) -> None:
        """Split the trip ``report`` (``trip_figures``) and say it; a trip that cannot be split leaves the bar
        empty and the line saying what the bar means."""
        if report is None:
            self.recent.clear()  # a new answer: its figures start afresh
        elif not self.recent or self.recent[-1] is not report:
            if self.recent and report.get("step") is not None and report.get("step") == self.recent[-1].get("step"):
                self.recent.pop()  # the same trip again (a retranslation): not twice in the median
            self.recent.append(report)
        self._args = (report, info)
        f = trip_figures(report, info, list(self.recent)[:-1] if report is not None else None)
        self.trip = f
        if f is None:
            self.bar.set_parts(None)
            text = _tr("Each trip in one bar: red, reading the weights; blue-grey, the rest of the step; white, the "
                       "floor (the weights' bytes at the memory's measured read speed)")
        else:
            shown = f.get("interrupted") or f["wait_ms"] >= WAIT_SHOWN * f["whole_ms"]
            wait = f["wait_ms"] if shown else 0.0  # drawn as the line says it
            rest = f["paperwork_ms"] + f.get("draft_ms", 0.0) + f["wait_ms"] - wait  # blue-grey: the rest of the step
            self.bar.set_parts((f["reading_ms"] or 0.0, f["comm_ms"], rest, wait),
                               f["floor_ms"])
            text = split_text(f, str((info or {}).get("device", "cpu")))
        if self.label.text() != text:
            self.label.setText(text)
        self.bar.setToolTip(_tr("Red: reading the weights, measured in the trip · violet: passing pages between "
                                "desks, measured · blue-grey: the rest of the step, measured · dark: waiting for a "
                                "processor busy with other programs, measured · white tick: the floor, the weights' "
                                "bytes at the memory's measured read speed (a formula)"))

    def retranslate(self) -> None:
        if self._args is not None:
            self.show_trip(*self._args)

    def has_split(self) -> bool:
        return self.bar.parts is not None
