"""Numbers with their units, written one way on every screen: the Live page, its stage and the tour.

Plain Python (no Qt, no torch), so the window (gui/) and the drawing side (animations/) both use it. The rule:
decimal (SI) units for bytes, ``B``, ``kB``, ``MB``, ``GB``, ``TB`` (1 kB = 1000 bytes, lower-case k as SI
writes it), and about three significant figures for every figure: one decimal under 100, none from 100 up
("48.0 kB", "17.4 MB", "163 MB"); milliseconds and rates with two decimals under 1, one under 10, none from
10 up ("0.42", "8.1", "63", "1,090").
"""

from __future__ import annotations

__all__ = ["fmt_bytes", "ms_figure", "fmt_ms", "fmt_rate"]

BYTE_UNITS = ("kB", "MB", "GB", "TB")


def fmt_bytes(n: float) -> str:
    """``n`` bytes (negative counts as 0) in decimal units: ``"512 B"``, ``"48.0 kB"``, ``"17.4 MB"``,
    ``"163 MB"``, ``"16.1 GB"``; a figure that would round to 1000 goes to the next unit (``"1.0 MB"``)."""
    n = float(max(0.0, n))
    if n < 999.5:
        return f"{n:.0f} B"
    for unit in BYTE_UNITS:
        n /= 1000.0
        if n < 999.5 or unit == BYTE_UNITS[-1]:
            return f"{n:.1f} {unit}" if n < 99.95 else f"{n:,.0f} {unit}"
    raise AssertionError("unreachable")


def _figure(x: float) -> str:
    x = float(x)
    if abs(x) < 1:
        return f"{x:.2f}"
    return f"{x:.1f}" if abs(x) < 9.95 else f"{x:,.0f}"


def ms_figure(ms: float) -> str:
    """Milliseconds as a figure without the unit, for texts that say "{ms} ms": ``0.42`` -> ``"0.42"``,
    ``8.13`` -> ``"8.1"``, ``63.4`` -> ``"63"``, ``1234`` -> ``"1,234"``."""
    return _figure(ms)


def fmt_ms(ms: float | None) -> str:
    """Milliseconds with the unit: ``"0.42 ms"``, ``"8.1 ms"``, ``"63 ms"``; ``"—"`` for None (not measured)."""
    return "—" if ms is None else f"{_figure(ms)} ms"


def fmt_rate(per_s: float) -> str:
    """A rate (tokens per second, trips per second) as a figure without the unit, the same digits as ``ms_figure``:
    ``1090.4`` -> ``"1,090"``, ``45.4`` -> ``"45"``, ``2.46`` -> ``"2.5"``."""
    return _figure(per_s)
