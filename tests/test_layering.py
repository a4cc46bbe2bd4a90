"""Layering: model/ never imports Qt, animations/ never imports torch or the model, assets/ imports nothing of ours;
gui/ above animations/, model/ beside them, the Live page and the tour independent, and no import cycles.

Two independent checks: a scan of every import statement (``ast``, so an import inside a function or under
``if TYPE_CHECKING`` counts too), and import-linter's contracts from pyproject.toml (import-linter is in the
``test`` extra; it is run by this interpreter, never found on PATH, and a run that checks no contract fails).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tools import lint_imports

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "model": {"PySide6", "pyqtgraph", "shiboken6", "gui", "animations"},
    "animations": {"torch", "model"},
    # the resolver of the bundled files: the standard library only, so every side can import it
    "assets": {"PySide6", "pyqtgraph", "shiboken6", "torch", "model", "gui", "animations", "bench"},
}


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in a file; relative imports are resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.append((node.lineno, str(node.args[0].value)))  # importlib.import_module("PySide6...")
    return found


def _violations(package: str) -> list[str]:
    bad = []
    files = sorted((ROOT / package).rglob("*.py"))
    assert files, f"no Python files under {package}/"
    for path in files:
        for line, module in imported_modules(path):
            top = module.split(".")[0]
            if top in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_forbidden_imports_by_ast(package):
    assert _violations(package) == []


def test_the_scan_sees_what_it_should(tmp_path):
    """The scanner itself finds plain, from, relative, nested and dynamic imports."""
    path = tmp_path / "model" / "probe.py"
    path.parent.mkdir()
    path.write_text("import os\nfrom PySide6.QtCore import QTimer\n"
                    "def f():\n    import pyqtgraph as pg\n    from . import gpt2\n"
                    "    importlib.import_module('shiboken6')\n")
    modules = {m for _, m in imported_modules(path, root=tmp_path)}
    assert {"os", "PySide6.QtCore", "pyqtgraph", "model", "shiboken6"} <= modules


def test_model_imports_without_qt_in_a_fresh_interpreter():
    """Importing the whole engine side (service included, as the spawned process does) loads no Qt module."""
    code = ("import sys, model.service, model.engine, model.cli, model.checkpoint, model.tokenizer\n"
            "model.service.EngineService\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6', 'gui')]\n"
            "print(bad); sys.exit(1 if bad else 0)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _contract_names() -> list[str]:
    from importlinter.api import read_configuration
    names = [c["name"] for c in read_configuration(str(ROOT / "pyproject.toml"))["contracts_options"]]
    assert names, "pyproject.toml declares no import-linter contract"
    return names


def test_import_linter_contracts():
    proc = lint_imports(ROOT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    names = _contract_names()
    for name in names:  # every contract was checked, and kept
        assert f"{name} KEPT" in proc.stdout, out[-3000:]
    assert f"Contracts: {len(names)} kept, 0 broken." in proc.stdout, out[-3000:]


def test_import_linter_run_fails_on_a_broken_contract(tmp_path):
    """The same run on a copy of the contracts over a model/ that imports Qt exits non-zero and says BROKEN."""
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(config[config.index("[tool.importlinter]"):], encoding="utf-8")
    for package in ("model", "gui", "animations", "gui/live", "gui/tour"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "model" / "probe.py").write_text("import PySide6.QtCore\n")
    proc = lint_imports(tmp_path)
    assert proc.returncode != 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{_contract_names()[0]} BROKEN" in proc.stdout, proc.stdout[-3000:]


def import_cycles(*packages: str) -> list[list[str]]:
    """Every group of modules of ``packages`` that import each other in a circle (an import inside a function
    counts), found by Tarjan's strongly connected components over grimp's import graph."""
    import grimp
    graph = grimp.build_graph(*packages)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) & graph.modules for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                cycles.append(sorted(group))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return cycles


def test_no_import_cycles():
    assert import_cycles("gui", "animations", "model") == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    package = tmp_path / "probe_cycle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from probe_cycle import b\n")
    (package / "b.py").write_text("def f():\n    from probe_cycle import a\n")
    (package / "c.py").write_text("from probe_cycle import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles("probe_cycle") == [["probe_cycle.a", "probe_cycle.b"]]


@pytest.mark.parametrize("probe, source, contract", [
    ("animations/probe.py", "import gui\n", 2),  # the drawing side reaching up into the window
    ("model/probe.py", "import animations\n", 2),
    ("gui/tour/probe.py", "def f():\n    import gui.live\n", 3),  # the tour reaching into the Live page
])
def test_import_linter_layers_and_independence_can_break(tmp_path, probe, source, contract):
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(config[config.index("[tool.importlinter]"):], encoding="utf-8")
    for package in ("model", "gui", "animations", "gui/live", "gui/tour"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / probe).write_text(source)
    proc = lint_imports(tmp_path)
    assert proc.returncode != 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{_contract_names()[contract]} BROKEN" in proc.stdout, proc.stdout[-3000:]
