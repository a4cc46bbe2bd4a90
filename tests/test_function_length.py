"""No function is over 60 lines (issue 45: a function a reader can hold at once).

Counted from ``def`` to its last line (decorators not counted), over every Python file the project tracks
(``git ls-files``; the ``.venv`` and build folders are not the project's). ``LONGER`` lists the functions still
allowed to be longer, each with why: it may only shrink.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT = 60
LONGER: dict[str, str] = {}  # "path::qualified.name": why it may be longer


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    yield name, child.end_lineno - child.lineno + 1
                yield from walk(child, name + ".")
            else:
                yield from walk(child, prefix)
    yield from walk(tree, "")


def _python_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return [REPO / line for line in out.splitlines() if line]


def test_no_function_is_over_60_lines():
    files = _python_files()
    assert len(files) > 100  # the walk sees the project
    long = {f"{p.relative_to(REPO)}::{name}": n for p in files for name, n in _functions(p) if n > LIMIT}
    unexplained = {k: n for k, n in long.items() if k not in LONGER}
    assert not unexplained, "functions over 60 lines (split them where their meaning splits):\n" + "\n".join(
        f"{k}: {n} lines" for k, n in sorted(unexplained.items(), key=lambda kv: -kv[1]))
    assert not set(LONGER) - set(long), f"no longer long, take them off LONGER: {sorted(set(LONGER) - set(long))}"


def test_the_counter_counts_a_long_function(tmp_path):
    body = "\n".join(f"        x{i} = {i}" for i in range(LIMIT))
    f = tmp_path / "m.py"
    f.write_text(f"class A:\n    def short(self):\n        return 1\n\n    def long(self):\n{body}\n", encoding="utf-8")
    got = dict(_functions(f))
    assert got["A.short"] == 2 and got["A.long"] == LIMIT + 1
