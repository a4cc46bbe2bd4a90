"""The shipped .qm is the .ts compiled: a translation edited in the .ts but not recompiled would be lost."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

I18N = Path(__file__).resolve().parent.parent / "assets" / "i18n"


def test_committed_qm_matches_the_ts(tmp_path):
    beside = Path(sys.executable).parent / "pyside6-lrelease"  # the one of this interpreter's environment
    lrelease = str(beside) if beside.exists() else shutil.which("pyside6-lrelease")
    if lrelease is None:
        pytest.skip("pyside6-lrelease not installed")
    fresh = tmp_path / "fresh.qm"
    subprocess.run([lrelease, "-silent", str(I18N / "one_trip_zh_CN.ts"), "-qm", str(fresh)], check=True)
    assert fresh.read_bytes() == (I18N / "one_trip_zh_CN.qm").read_bytes(), (
        "run: pyside6-lrelease assets/i18n/one_trip_zh_CN.ts -qm assets/i18n/one_trip_zh_CN.qm")
