"""What the apprentice and the torn book measure on the Live page, from the engine's step reports.

- ``SpecMeter``: acceptance rate, tokens per trip and the measured speed-up of speculative decoding against
  plain decoding of the same prompt.
- ``ShardMeter``: per-worker compute, communication and idle time of tensor / pipeline parallel trips.

Both keep the last ``RECENT`` trips only, and say so (``window_label``). Every figure comes from the step
reports (measured wall time per trip, ms); nothing is estimated. No widgets: Qt is used for translation only.
"""

from __future__ import annotations

from collections import deque

from animations.textset import keep_units
from gui.i18n import tr_window as _tr

RECENT = 20  # the window of the Live page's running figures: the last RECENT trips
BUSY_SHARE = 0.1  # trips that waited this share of their wall time for a busy processor make no fair comparison


def window_label(k: int) -> str:
    """How many trips a running figure covers, in words: "the last trip" or "average of the last 7 trips"."""
    return _tr("the last trip") if k == 1 else _tr("average of the last {k} trips").format(k=k)


def _mean(values) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


class SpecMeter:
    """Acceptance, tokens per trip and speed-up of speculative decoding, over the last ``RECENT`` trips.

    A *plain* trip is a decode trip without guesses; a *verify* trip is one with guesses. All figures are over
    the same window, the last ``RECENT`` verify trips since the slider last moved: acceptance = accepted ÷
    proposed guesses, tokens per trip = tokens ÷ trips, ms per token = measured ``wall_ms`` (draft passes
    included) ÷ tokens, tok/s = 1000 ÷ ms per token (so the two always agree). The speed-up divides the ms per
    token of the last ``RECENT`` plain trips of the same prompt at the same table size and sharding (the last
    plain run of it) by that of the verify trips.

    Each trip also keeps the ms it waited for a processor other programs kept busy (wall ms − the step's CPU ms,
    ``cpu_ms`` in the engine's report). Where the waits are ``BUSY_SHARE`` or more of either side's wall time,
    ``busy`` is True: the two sides were timed under different loads, and the lines say the speed-up is not a
    fair figure (seen on a loaded machine: the same apprentice measured from 0.54× to 2.52×).
    """

    def __init__(self):
        self._plain: dict[tuple, deque[tuple[float, int, float]]] = {}  # (wall ms, tokens, ms waited)
        self.reset()

    def reset(self) -> None:
        """Forget the verify trips (the slider moved, or a new answer); plain baselines are kept."""
        # one entry per verify trip: (proposed, accepted, bonus, tokens, wall ms, ms waited for a processor)
        self._spec: deque[tuple[int, int, int, int, float, float]] = deque(maxlen=RECENT)
        self._key: tuple | None = None

    def add(self, report: dict, key: tuple) -> None:
        """Count one step report; ``key`` says what "the same prompt" means (prompt, batch, sharding)."""
        phase = report.get("phase")
        wall = float(report.get("wall_ms") or 0.0)
        tokens = int(report.get("tokens_out") or len(report.get("tokens") or []))
        if wall <= 0 or tokens <= 0:
            return
        cpu = report.get("cpu_ms")
        wait = max(0.0, wall - float(cpu)) if isinstance(cpu, (int, float)) else 0.0
        if phase == "decode":
            plain = self._plain.setdefault(key, deque(maxlen=RECENT))
            if self._key is None or self._key == key:
                plain.append((wall, tokens, wait))
        elif phase == "verify" and int(report.get("proposed") or 0) > 0:
            if self._key != key:  # another prompt or table: start counting again
                self.reset()
                self._key = key
            self._spec.append((int(report.get("proposed") or 0), int(report.get("accepted") or 0),
                               int(report.get("bonus") or 0), tokens, wall, wait))

    def start_plain(self, key: tuple) -> None:
        """A new plain run of ``key`` begins: its baseline is measured afresh."""
        self._plain[key] = deque(maxlen=RECENT)

    @property
    def trips(self) -> int:
        """Verify trips in the window (at most ``RECENT``)."""
        return len(self._spec)

    @property
    def proposed(self) -> int:
        return sum(t[0] for t in self._spec)

    @property
    def accepted(self) -> int:
        return sum(t[1] for t in self._spec)

    @property
    def tokens(self) -> int:
        return sum(t[3] for t in self._spec)

    @property
    def acceptance(self) -> float | None:
        """Accepted ÷ proposed guesses over the window (0 … 1), None before the first verify trip."""
        return self.accepted / self.proposed if self.proposed else None

    @property
    def tokens_per_trip(self) -> float | None:
        """Tokens ÷ verify trips over the window."""
        return self.tokens / self.trips if self.trips else None

    def plain_ms(self, key: tuple) -> float | None:
        """ms per token of the last ``RECENT`` plain trips of ``key``: their wall ms ÷ their tokens."""
        plain = self._plain.get(key, ())
        tokens = sum(t[1] for t in plain)
        return sum(t[0] for t in plain) / tokens if tokens else None

    def spec_ms(self) -> float | None:
        """ms per token of the verify trips in the window: their wall ms ÷ their tokens."""
        return sum(t[4] for t in self._spec) / self.tokens if self.tokens else None

    def busy(self, key: tuple) -> bool:
        """True when the plain trips of ``key`` or the verify trips in the window waited ``BUSY_SHARE`` or more of
        their wall ms for a processor busy with other programs (``SpecMeter``)."""
        plain = self._plain.get(key, ())
        sides = ((sum(t[2] for t in plain), sum(t[0] for t in plain)),
                 (sum(t[5] for t in self._spec), sum(t[4] for t in self._spec)))
        return any(wall > 0 and wait >= BUSY_SHARE * wall for wait, wall in sides)

    def speedup(self, key: tuple) -> float | None:
        plain, spec = self.plain_ms(key), self.spec_ms()
        if plain is None or spec is None or spec <= 0:
            return None
        return plain / spec

    def text(self, key: tuple, k: int, short: bool = False) -> str:
        """The apprentice's line: the window, acceptance, tokens per trip and the speed-up.

        ``short`` (the visitor's view, under the stage): without the ms per token and tok/s, which the details
        view's line adds; the figures it keeps are the same as the long line's.
        """
        if not self.trips:
            return _tr("Apprentice: {k} guesses per trip; waiting for its first check…").format(k=k)
        acc = f"{100 * (self.acceptance or 0.0):.0f}"
        tpt = f"{self.tokens_per_trip:.2f}"
        speed = self.speedup(key)
        busy = speed is not None and self.busy(key)
        if short:
            line = _tr("Apprentice, {window}: {acc}% of guesses kept · {tpt} tokens per trip").format(
                window=window_label(self.trips), acc=acc, tpt=tpt)
            if speed is None:
                line += " · " + _tr("speed-up: run 0 guesses once to measure")
            else:  # a figure timed under two different loads is not shown to a visitor at all
                line += " · " + (_tr("speed-up: not fair now, the computer is busy") if busy else
                                 _tr("{x}× the speed of plain decoding").format(x=f"{speed:.2f}"))
            return keep_units(line)
        spec = self.spec_ms() or 0.0
        line = _tr("Apprentice, {window}: {acc}% of guesses kept ({a} of {p}) · {tpt} tokens per trip · "
                   "{ms} ms per token = {tps} tok/s").format(
            window=window_label(self.trips), acc=acc, a=self.accepted, p=self.proposed,
            tpt=tpt, ms=f"{spec:.2f}", tps=f"{1000.0 / spec:,.0f}" if spec > 0 else "0")
        if speed is None:
            line += " · " + _tr("speed-up: run this prompt with 0 guesses once to measure plain decoding")
        else:
            line += " · " + _tr("{x}× the speed of plain decoding of this prompt ({plain} ms per token)").format(
                x=f"{speed:.2f}", plain=f"{self.plain_ms(key):.2f}")
            if busy:
                line += " · " + _tr("not a fair figure: the computer was busy with other programs during these trips")
        return keep_units(line)  # a wrapped line never parts a figure from its unit ("3.20" | "ms")


class ShardMeter:
    """Per trip: the measured step (``wall_ms``) and the average over the desks of their compute,
    communication and bubble ms; the running figures are averages over the last ``RECENT`` sharded trips
    since the last change of sharding. Each desk's parts lie inside the step, so the averaged parts never add
    up to more than the averaged step."""

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        # one entry per trip: (step ms, compute ms, communication ms, bubble ms), the parts averaged over desks
        self._trips: deque[tuple[float, float, float, float]] = deque(maxlen=RECENT)

    @property
    def trips(self) -> int:
        """Sharded trips in the window (at most ``RECENT``)."""
        return len(self._trips)

    def add(self, report: dict) -> None:
        workers = report.get("workers") or []
        if not workers:
            return
        def avg(key: str) -> float:
            return sum(float(w.get(key) or 0.0) for w in workers) / len(workers)
        self._trips.append((float(report.get("wall_ms") or 0.0), avg("compute_ms"), avg("comm_ms"),
                            avg("bubble_ms")))

    def step_ms(self) -> float | None:
        """Average measured step ms (the whole trip) over the window; None before the first sharded trip."""
        return _mean(t[0] for t in self._trips)

    def compute_ms(self) -> float | None:
        """Average per-desk compute ms per trip over the window (None before the first sharded trip)."""
        return _mean(t[1] for t in self._trips)

    def comm_ms(self) -> float | None:
        """Average per-desk communication ms per trip over the window (None before the first)."""
        return _mean(t[2] for t in self._trips)

    def bubble_ms(self) -> float | None:
        """Average per-desk idle (pipeline bubble) ms per trip over the window (None before the first)."""
        return _mean(t[3] for t in self._trips)

    def text(self, mode: str, n: int) -> str:
        how = _tr("by pages (TP)") if mode == "tp" else _tr("by chapters (PP)")
        if not self.trips:
            return _tr("Book torn {n} ways {how}: waiting for the first trip…").format(n=n, how=how)
        line = _tr("Book torn {n} ways {how}, {window}: step {s} ms; per desk: compute {c} ms · "
                   "communication {m} ms").format(n=n, how=how, window=window_label(self.trips),
                                                  s=f"{self.step_ms():.2f}", c=f"{self.compute_ms():.2f}",
                                                  m=f"{self.comm_ms():.2f}")
        if mode == "pp":
            line += " · " + _tr("idle (bubble) {b} ms").format(b=f"{self.bubble_ms():.2f}")
        return keep_units(line)  # a wrapped line never parts a figure from its unit ("3.56" | "ms")
