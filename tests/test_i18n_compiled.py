"""The shipped .qm is the .ts compiled: a translation edited in the .ts but not recompiled would be lost."""

from __future__ import annotations

from pathlib import Path

from tests.tools import compile_ts

I18N = Path(__file__).resolve().parent.parent / "assets" / "i18n"


def test_committed_qm_matches_the_ts(tmp_path):
    fresh = tmp_path / "fresh.qm"
    compile_ts(I18N / "one_trip_zh_CN.ts", fresh)  # PySide6's own lrelease, never one found on PATH
    assert fresh.read_bytes() == (I18N / "one_trip_zh_CN.qm").read_bytes(), (
        "run: pyside6-lrelease assets/i18n/one_trip_zh_CN.ts -qm assets/i18n/one_trip_zh_CN.qm")
