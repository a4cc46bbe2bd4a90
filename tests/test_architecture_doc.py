"""docs/architecture.md names only what exists, and its package table names every module (issue 45, item 5: it named
``MainWindow._on_batch_changed`` and ``MainWindow._on_step`` after they had moved, and left out ``runner``,
``flat_forward``, ``state``, ``session_view`` and ``host``).

Read with ``ast`` (nothing is imported). What a backticked name must be:

* ``a/b.py`` or ``a/b/`` (a path): a file or folder of the repository;
* ``Class`` or ``Class.attr`` (a capitalised first part): a class of ours that defines ``attr`` (a method, a class
  attribute or a Qt signal, or ``self.attr`` set in one of its methods); Qt's own (``QTimer``) are not ours to check;
* ``model.x.y`` (starting with one of our packages): a module, then a name defined at its top level, then
  attributes of that class;
* in a row of the package table, a bare ``name`` or ``name.attr``: a module (or sub-package) of that row's
  package, then names in it; and every module of the row's package must be named in its row.

Other backticked text (a dict, a command line, a signal's words) is not a name and is not checked.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("model", "gui", "animations", "bench", "assets")
NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


def _code_spans(text: str) -> list[str]:
    """Backticked spans, each without a trailing call's arguments (``set_max_batch(n)`` -> ``set_max_batch``)."""
    return [re.sub(r"\(.*\)$", "", s.strip()) for s in re.findall(r"`([^`]+)`", text)]


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _sources() -> list[Path]:
    return [p for pkg in ("model", "gui", "animations", "bench") for p in (ROOT / pkg).rglob("*.py")] + [
        ROOT / "main.py"]


def _class_attrs(node: ast.ClassDef) -> set[str]:
    names = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            names |= {t.id for t in item.targets if isinstance(t, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
    for sub in ast.walk(node):  # self.x = ... in any method
        if isinstance(sub, (ast.Assign, ast.AnnAssign)):
            for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target]):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    names.add(t.attr)
    return names


@cache
def _classes() -> dict[str, list[set[str]]]:
    """Class name -> the attribute sets of every class of that name in our code."""
    out: dict[str, list[set[str]]] = {}
    for path in _sources():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, []).append(_class_attrs(node))
    return out


def _top_names(path: Path) -> dict[str, ast.AST | None]:
    names: dict[str, ast.AST | None] = {}
    for node in _tree(path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: None for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
    return names


def _resolve_in(folder: Path, parts: list[str]) -> str | None:
    """None if ``parts`` (module, then names) resolve under ``folder``; else what is missing."""
    first, rest = parts[0], parts[1:]
    if (folder / first).is_dir():
        return _resolve_in(folder / first, rest) if rest else None
    module = folder / f"{first}.py"
    if not module.is_file():
        return f"no module {first} in {folder.relative_to(ROOT)}/"
    if not rest:
        return None
    names = _top_names(module)
    if rest[0] not in names:
        return f"{module.relative_to(ROOT)} defines no {rest[0]}"
    node = names[rest[0]]
    for attr in rest[1:]:
        if not isinstance(node, ast.ClassDef) or attr not in _class_attrs(node):
            return f"{rest[0]} in {module.relative_to(ROOT)} has no {attr}"
        node = None
    return None


def _problem(span: str) -> str | None:
    """None if ``span`` names something that exists (or is not a name); else what is wrong."""
    if "/" in span and " " not in span:
        return None if (ROOT / span).exists() else f"no file or folder {span}"
    if not NAME.match(span):
        return None
    parts = span.split(".")
    if parts[0] in PACKAGES and len(parts) > 1:
        return _resolve_in(ROOT / parts[0], parts[1:])
    if parts[0][0].isupper():
        if re.match(r"Q[A-Z]", parts[0]):
            return None  # Qt's own (QTimer)
        if parts[0] not in _classes():
            return f"no class {parts[0]}"
        if len(parts) == 1:
            return None
        if len(parts) == 2 and any(parts[1] in attrs for attrs in _classes()[parts[0]]):
            return None
        return f"no class {parts[0]} with {'.'.join(parts[1:])}"
    return None


def _table_rows(text: str) -> list[tuple[list[Path], str]]:
    """(the row's package folders, its second cell) for each row of the package table."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not line.startswith("| `"):
            continue
        folders = [ROOT / s for s in re.findall(r"`([^`]+/)`", cells[0])]
        if folders:
            rows.append((folders, cells[1]))
    return rows


def test_every_name_in_the_prose_exists():
    text = DOC.read_text(encoding="utf-8")
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("| "))
    spans = _code_spans(prose)
    assert len(spans) > 40  # the walk from the slider to the stage names its methods
    bad = [f"`{s}`: {p}" for s in spans if (p := _problem(s))]
    assert not bad, "\n".join(bad)


def test_every_name_in_the_package_table_exists_in_its_package():
    rows = _table_rows(DOC.read_text(encoding="utf-8"))
    assert len(rows) >= 15
    bad = []
    for folders, cell in rows:
        for span in _code_spans(cell):
            if span.endswith("/"):  # a sub-package of the row's package
                if not any((f / span).is_dir() for f in folders):
                    bad.append(f"`{span}`: no such sub-package of {[str(f.relative_to(ROOT)) for f in folders]}")
                continue
            if not NAME.match(span) or span.split(".")[0] in PACKAGES:
                if NAME.match(span) and (p := _problem(span)):
                    bad.append(f"`{span}`: {p}")
                continue
            if span[0].isupper():  # a class named beside its module: it must exist in our code
                if p := _problem(span):
                    bad.append(f"`{span}`: {p}")
                continue
            problems = [_resolve_in(f, span.split(".")) for f in folders]
            if all(problems):
                bad.append(f"`{span}`: {problems[0]}")
    assert not bad, "\n".join(bad)


def test_the_package_table_names_every_module():
    rows = _table_rows(DOC.read_text(encoding="utf-8"))
    named_packages = {f for folders, _ in rows for f in folders}
    missing = []
    for folders, cell in rows:
        firsts = {s.split(".")[0].rstrip("/") for s in _code_spans(cell)}
        for folder in folders:
            for module in sorted(folder.glob("*.py")):
                if module.stem != "__init__" and module.stem not in firsts:
                    missing.append(f"{module.relative_to(ROOT)} is not named in the row of {folder.relative_to(ROOT)}/")
    # and every package of ours with modules has a row
    for pkg in ("model", "gui", "animations"):
        for init in (ROOT / pkg).rglob("__init__.py"):
            if any(init.parent.glob("[!_]*.py")) and init.parent not in named_packages:
                missing.append(f"{init.parent.relative_to(ROOT)}/ has no row")
    assert not missing, "\n".join(missing)


def test_a_stale_name_would_be_caught():
    """The check itself: the names the old page gave, that had moved, are found missing."""
    assert _problem("MainWindow._on_batch_changed") and _problem("MainWindow._on_step")
    assert _problem("gui.live.session.LiveRunner.nothing_here") and _problem("gui/live/nowhere.py")
    assert _problem("NoSuchClass.method")
    assert _problem("SessionControls._on_batch_changed") is None and _problem("model.runner.ModelRunner") is None
