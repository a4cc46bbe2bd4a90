"""One way to write bytes, milliseconds and rates on every screen (animations/units.py): SI units with a
lower-case k, about three significant figures."""

from __future__ import annotations

import pytest

from animations.units import fmt_bytes, fmt_ms, fmt_rate, ms_figure


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (-5, "0 B"), (512, "512 B"), (999, "999 B"), (999.6, "1.0 kB"), (49_152, "49.2 kB"),
    (99_940, "99.9 kB"), (99_960, "100 kB"), (163_000_000, "163 MB"), (999_400_000, "999 MB"),
    (999_600_000, "1.0 GB"), (16_060_000_000, "16.1 GB"), (2.5e15, "2,500 TB"),
])
def test_bytes(n, text):
    assert fmt_bytes(n) == text


def test_bytes_never_writes_an_upper_case_kilo():
    assert all("KB" not in fmt_bytes(10 ** e * 1.234) for e in range(0, 16))


@pytest.mark.parametrize("ms, figure", [
    (0.0, "0.00"), (0.042, "0.04"), (0.42, "0.42"), (0.996, "1.00"), (1.0, "1.0"), (8.13, "8.1"),
    (9.96, "10"), (63.4, "63"), (1234.5, "1,234"),
])
def test_ms(ms, figure):
    assert ms_figure(ms) == figure
    assert fmt_ms(ms) == figure + " ms"


def test_ms_not_measured():
    assert fmt_ms(None) == "—"


@pytest.mark.parametrize("rate, figure", [(1090.4, "1,090"), (45.4, "45"), (2.46, "2.5"), (0.5, "0.50")])
def test_rate(rate, figure):
    assert fmt_rate(rate) == figure
