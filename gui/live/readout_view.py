"""The Live page's figures as a view of the session: the readout line of the trip on stage, the model line, the
plots (ms per trip, tokens per second), the split bar and the extras' lines (the apprentice: speculative decoding;
the torn book: sharding) with their "why".

``LiveReadout`` renders from the session (``gui.live.state.SessionState``) and follows its changes:

* ``trip_count`` up: the session's last trip goes on the plots and into the meters (``SpecMeter``, ``ShardMeter``);
  ``trip_count`` back to 0 (Reset): the plots and the readout are cleared;
* ``engine_info``: the model line, the floor on the ms plot, and whether the readout says "loading";
* ``real_time`` and ``trip_seconds``: how much slower the trip is shown (by the stage's clock,
  ``trip_duration_s``, which ``LiveRunner`` keeps at the session's ``trip_seconds``);
* ``draft_k``: the apprentice's meter starts again.

The readout line is of the trip the stage shows, so it changes when the stage starts one
(``StageScene.trip_started``), not when the report arrives. The lookup presets and the apprentice's verdicts
say when their lines change (their ``changed`` signals); after the extras are written, ``extras_shown`` fires
(the idea toggles follow, ``gui.live.exhibit.ExhibitActions``).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from animations.units import ms_figure
from gui.i18n import tr_window as _tr
from gui.live.apprentice_choice import slower_reason
from gui.live.readout import model_text, readout_rule, readout_text, sharding_why, speedup_why


def floor_ms(info: dict | None) -> float | None:
    """The floor of one trip in ms: weight bytes ÷ the measured memory bandwidth (bytes/s) × 1000, from the
    engine's ``ready`` ``info``; None when either is unknown."""
    if info is None:
        return None
    bandwidth = float(info.get("memory_bandwidth_bytes_per_s") or 0)
    weight_bytes = float((info.get("model") or {}).get("weight_bytes") or 0)
    return weight_bytes / bandwidth * 1000.0 if bandwidth > 0 and weight_bytes > 0 else None


class LiveReadout(QObject):
    """The readout, the model line, the plots and the extras' lines of the Live page, rendered from the session.

    Args:
        session: the Live session's state.
        page: the ``LivePage`` (``readout_panel``, ``split_row``, ``trip_plot``, ``trip_plot_title``,
            ``rate_plot``, the apprentice's ``choice`` and the ``tear`` control).
        scene: the stage (its ``trip_started`` signal: the trip it now shows; its ``trip_duration_s``).
        spec_meter, shard_meter: what the apprentice and the torn book measure (fed each trip here).
        lookup: the ``LookupPresets`` (its line over the readout while one runs; ``changed``).
        verdicts: the ``ApprenticeVerdicts`` (``greedy_line``; ``changed``).
    """

    extras_shown = Signal()  # the extras' lines were written again

    def __init__(self, session, page, scene, spec_meter, shard_meter, lookup, verdicts):
        super().__init__(page)
        self.session = session
        self.live_page = page
        self.scene = scene
        self.readout = page.readout_panel.readout
        self.model_label = page.readout_panel.model_label
        self.trip_plot, self.rate_plot = page.trip_plot, page.rate_plot
        self.trip_plot_title = page.trip_plot_title
        self.apprentice_choice = page.apprentice.choice
        self.spec_meter = spec_meter
        self.shard_meter = shard_meter
        self.lookup = lookup
        self.verdicts = verdicts
        self._readout_args: dict | None = None  # the figures of the trip on stage, None before the first
        session.subscribe(self._follow_trip_count, "trip_count")
        session.subscribe(lambda _c: self._follow_engine(), "engine_info")
        session.subscribe(lambda _c: self._follow_engine(), "engine_error")  # a failed engine's reason
        session.subscribe(lambda _c: self.update_readout(), "real_time")
        session.subscribe(lambda _c: self.update_readout(), "trip_seconds")
        session.subscribe(lambda _c: self._follow_draft_k(), "draft_k")
        session.subscribe(lambda _c: self.update_extras(), "sharding_asked")  # "the book is being torn"
        scene.trip_started.connect(self._on_stage_trip)
        lookup.changed.connect(self.update_extras)
        verdicts.changed.connect(self.update_extras)

    # ---- the session's changes ------------------------------------------------------------------------------
    def _follow_trip_count(self, change) -> None:
        """A trip counted (its report is the session's ``last_trip``): the plots and the meters; 0: cleared."""
        if change.value == 0:
            self.trip_plot.clear_trips()
            self.rate_plot.clear_trips()
            self._readout_args = None
            self.update_readout()
            return
        report = self.session.last_trip
        if change.value <= change.old or report is None:
            return
        wall = float(report.get("wall_ms", 0.0))
        self.trip_plot.add_trip(change.value, wall, report.get("phase") in ("prefill", "mixed"))
        if wall > 0:
            tokens = int(report.get("tokens_out", len(report.get("tokens", []))))
            self.rate_plot.add_trip(change.value, tokens / wall * 1000.0)
        self.measure_extras(report)

    def _follow_engine(self) -> None:
        """An engine became ready, or none is: the model line, the floor, the readout."""
        self.retranslate_engine_texts()
        self.update_readout()

    def _follow_draft_k(self) -> None:
        self.spec_meter.reset()  # another number of guesses: its speed-up is measured again
        self.update_extras()

    def measure_extras(self, report: dict) -> None:
        """Feed one step report (a dict: ``wall_ms``, ``phase``, ``proposed``, per-shard ms...) to the meters."""
        self.spec_meter.add(report, self.session.spec_key())
        self.shard_meter.add(report)
        self.update_extras()

    # ---- the readout of the trip on stage -------------------------------------------------------------------
    def _on_stage_trip(self, trip: dict) -> None:
        """The stage started ``trip`` (a step report): the readout and the split bar say its figures ("one
        count, one word": the headline and the readout count the same trip)."""
        wall = float(trip.get("wall_ms", 0.0))
        tokens = int(trip.get("tokens_out", len(trip.get("tokens", []))))
        self._readout_args = {"wall": wall, "tokens": tokens, "batch": int(trip.get("batch", 1)),
                              "tokens_in": int(trip.get("tokens_in", 0) or 0)}
        self.update_readout()
        self.live_page.split_row.show_trip(trip, self.session.engine_info)  # reading, other work, floor

    def update_readout(self) -> None:
        """The readout line from the trip on stage, the engine's state, real time and seconds per trip."""
        s = self.session
        text = readout_text(self._readout_args, s.engine_info is not None, s.real_time,
                            float(getattr(self.scene, "trip_duration_s", 1.0)))
        if self.readout.text() != text:  # a changed text relayouts the page: only when it changes
            self.readout.setText(text)
        if self._readout_args is None:
            self.live_page.split_row.show_trip(None, None)

    def retranslate_engine_texts(self) -> None:
        """The model line, the readout's tooltip and the ms plot's title and floor, in the current language."""
        info = self.session.engine_info
        self.model_label.setText(model_text(info, self.session.engine_error))
        self.readout.setToolTip(readout_rule())  # the same in every trip: set once per language
        title = _tr("Measured ms per trip · orange: reading the question · blue: writing")
        floor = floor_ms(info)
        if floor is None:
            self.trip_plot.set_floor(None)
        else:
            self.trip_plot.setToolTip(_tr("Red line: the floor, weights ÷ measured memory bandwidth; no trip can be "
                                          "faster on this computer"))
            self.trip_plot.set_floor(floor)
            # a no-break space: the wrapped title never puts "ms" on a line of its own, away from its number
            title += " · " + _tr("red: the floor, {ms} ms").replace("{ms} ms", "{ms}\u00a0ms").format(
                ms=ms_figure(floor))
        self.trip_plot_title.setText(title)

    # ---- the extras: the apprentice and the torn book -------------------------------------------------------
    def update_extras(self) -> None:
        """The lines over the readout (a lookup preset's, the apprentice's speed-up, the torn book's split) and
        one "why"; then ``extras_shown``."""
        s = self.session
        lines = []
        if why_lookup := self.lookup.line():
            lines.append(why_lookup)  # a lookup preset: why the n-gram apprentice, and its measured speed-up
        apprentice = s.draft_k > 0 and s.apprentice_available
        details = getattr(self.live_page, "details", False)
        if apprentice:
            lines.append(self.spec_meter.text(s.spec_key(), s.draft_k, short=not details))
            if greedy := self.verdicts.greedy_line():
                lines.append(greedy)
        mode, n = s.sharding
        if n > 1:
            lines.append(self.shard_meter.text(mode, n))
        why = self._speedup_why(details) if apprentice and self.spec_meter.trips else ""
        if n > 1 and not why:
            why = sharding_why(self.shard_meter.compute_ms(), self.shard_meter.comm_ms())
        if s.sharding_asked is not None:  # the engine has not answered a sharding request yet
            lines.append(_tr("Starting the workers… the book is being torn (a few seconds)"))
        self.live_page.readout_panel.set_extras(lines, why)
        self.extras_shown.emit()

    def _speedup_why(self, details: bool) -> str:
        """Why the apprentice's measured speed-up is what it is ("" where the details view says it already)."""
        choice = self.apprentice_choice
        reason = (self.lookup.slower_reason() if self.lookup.active is not None else
                  slower_reason(choice.event, choice.kind(), self.session.sampling.greedy,
                                self.spec_meter.acceptance))
        # the details view shows each apprentice's verdict with its reason: one reason on screen, not two
        if details and reason in choice.verdict_text(choice.kind()):
            return ""
        key = self.session.spec_key()
        if self.spec_meter.busy(key):  # a speed-up timed on a busy computer is called unfair on its own line
            return ""
        return speedup_why(self.spec_meter.speedup(key), reason)
