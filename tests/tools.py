"""Tools the tests run, found from the running interpreter, never from PATH.

A test that cannot find its tool fails (the tools ship with the ``test`` extra): a check that runs nothing must
not pass, nor hide as a skip.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def lrelease() -> Path:
    """Qt's ``lrelease`` of the PySide6 this interpreter imports (the binary ``pyside6-lrelease`` runs).

    Raises ``FileNotFoundError`` if that PySide6 has none.
    """
    import PySide6
    exe = Path(PySide6.__file__).resolve().parent / ("lrelease.exe" if sys.platform == "win32" else "lrelease")
    if not exe.is_file():
        raise FileNotFoundError(f"no lrelease in {exe.parent} (PySide6-Essentials ships it)")
    return exe


def compile_ts(ts: Path, qm: Path) -> None:
    """``lrelease -silent TS -qm QM``; raises ``CalledProcessError`` if it fails, ``AssertionError`` if no file."""
    subprocess.run([str(lrelease()), "-silent", str(ts), "-qm", str(qm)], check=True, timeout=120)
    assert qm.is_file() and qm.stat().st_size > 0, f"lrelease wrote no {qm}"


def lint_imports(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """import-linter's ``lint-imports`` run by this interpreter (``python -c``, the console script's own entry
    point ``importlinter.cli.lint_imports_command``), in ``cwd`` (where it reads ``pyproject.toml``), with
    ``cwd`` first on ``sys.path`` so the packages under test are the ones there. No cache is written."""
    import os
    code = ("import sys; sys.path.insert(0, '.'); from importlinter.cli import lint_imports_command; "
            "lint_imports_command(sys.argv[1:])")
    env = dict(os.environ, PYTHONPATH=str(cwd) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code, "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=180, env=env)
