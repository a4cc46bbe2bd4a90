"""Every English UI string in the code has a finished Chinese translation in the .ts; a missing one falls back to
English, never to an empty string.

The source strings are found with ``ast`` (not regular expressions): calls ``QCoreApplication.translate("Ctx",
"text")`` / ``translate("Ctx", "text")``, ``self.tr("text")`` (context: the enclosing class), and calls of a
one-argument helper (``_tr("text")``, ``_set_status("text")``...) whose body translates its argument in a fixed
context: the module's own, or one imported from another module (``from gui.i18n import tr_window as _tr``).
"""

from __future__ import annotations

import ast
import functools
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TS = ROOT / "assets" / "i18n" / "one_trip_zh_CN.ts"
PACKAGES = ("gui", "animations")


def _const_str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _helpers(tree: ast.Module, found: dict[str, str] | None = None) -> dict[str, str]:
    """Module-level or method helpers ``def h(text)`` that call translate("Ctx", text): {name: Ctx}.

    ``found``: helpers of other modules already known (a method mixed into a class in another file).
    """
    found = dict(found or {})
    for fn in ast.walk(tree):
        ctx = _translate_context(fn)
        if ctx is not None:
            found[fn.name] = ctx
    # a helper of another module imported under a name of this one (``from gui.i18n import tr_window as _tr``)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in found and alias.asname:
                    found[alias.asname] = found[alias.name]
    # a helper that calls another helper with its argument (``_set_status`` -> ``_tr``)
    changed = True
    while changed:
        changed = False
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name not in found:
                helper = _helper_called_with_first_param(fn, found)
                if helper is not None:
                    found[fn.name] = found[helper]
                    changed = True
    return found


def _first_param(fn: ast.FunctionDef) -> str | None:
    """The name of a function's first parameter other than ``self`` (None without one)."""
    params = [a.arg for a in fn.args.args if a.arg != "self"]
    return params[0] if params else None


def _translate_context(fn) -> str | None:
    """The context ``Ctx`` when ``fn`` is a function that calls translate("Ctx", its first parameter)."""
    if not isinstance(fn, ast.FunctionDef):
        return None
    first = _first_param(fn)
    if first is None:
        return None
    ctx_found = None
    for call in ast.walk(fn):
        if isinstance(call, ast.Call) and _call_name(call) == "translate" and len(call.args) >= 2:
            ctx = _const_str(call.args[0])
            arg = call.args[1]
            if ctx and isinstance(arg, ast.Name) and arg.id == first:
                ctx_found = ctx
    return ctx_found


def _helper_called_with_first_param(fn: ast.FunctionDef, found: dict[str, str]) -> str | None:
    """The first known helper that ``fn`` calls with its own first parameter, or None."""
    first = _first_param(fn)
    if first is None:
        return None
    for call in ast.walk(fn):
        if (isinstance(call, ast.Call) and _call_name(call) in found and call.args
                and isinstance(call.args[0], ast.Name) and call.args[0].id == first):
            return _call_name(call)
    return None


@functools.cache  # the sources do not change during a run; three tests read the scan
def source_strings() -> frozenset[tuple[str, str, str]]:
    """{(context, source text, "file:line")} of every translatable string literal in gui/ and animations/."""
    out: set[tuple[str, str, str]] = set()
    paths = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in paths}
    methods: dict[str, str] = {}
    for tree in trees.values():  # methods such as ``_set_status`` are called from mixins in other files
        methods.update({k: v for k, v in _helpers(tree).items() if not k.startswith("_tr")})
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = trees[path]
            helpers = _helpers(tree, methods)
            where = path.relative_to(ROOT)

            def visit(node, cls: str | None):
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.ClassDef):
                        visit(child, child.name)
                        continue
                    if isinstance(child, ast.Call):
                        name = _call_name(child)
                        if name in ("translate", "tr") and len(child.args) >= 2:  # tr(ctx, text) too
                            ctx, text = _const_str(child.args[0]), _const_str(child.args[1])
                            if ctx and text:
                                out.add((ctx, text, f"{where}:{child.lineno}"))
                        elif (name == "tr" and isinstance(child.func, ast.Attribute) and child.args and cls
                              and _const_str(child.args[0])):  # self.tr("..."): the class is the context
                            out.add((cls, _const_str(child.args[0]), f"{where}:{child.lineno}"))
                        elif name in helpers and len(child.args) == 1 and _const_str(child.args[0]):
                            out.add((helpers[name], _const_str(child.args[0]), f"{where}:{child.lineno}"))
                    visit(child, cls)

            visit(tree, None)
    return frozenset(out)


def finished_translations() -> dict[tuple[str, str], str]:
    root = ET.parse(TS).getroot()
    table = {}
    for context in root.iter("context"):
        name = context.findtext("name", "")
        for message in context.iter("message"):
            tr = message.find("translation")
            if tr is None or tr.get("type") in ("unfinished", "obsolete", "vanished"):
                continue
            if (tr.text or "").strip():
                table[(name, message.findtext("source"))] = tr.text
    return table


def test_the_scanner_finds_the_window_strings():
    strings = {(c, s) for c, s, _ in source_strings()}
    assert ("MainWindow", "Run") in strings  # self-check: a scanner that finds nothing passes nothing
    assert len(strings) > 100
    # the window's one helper, imported by the Live page's modules as _tr, is followed there too
    found = {(c, s) for c, s, where in source_strings() if where.startswith("gui/live/readout.py")}
    assert ("MainWindow", "One Trip code model") in found


def test_every_source_string_has_a_finished_translation():
    have = finished_translations()
    missing = sorted(f"{where}: [{ctx}] {text!r}" for ctx, text, where in source_strings() if (ctx, text) not in have)
    assert not missing, f"{len(missing)} strings without a finished Chinese translation:\n" + "\n".join(missing)


def test_translations_keep_their_placeholders():
    have = finished_translations()
    import re
    bad = []
    for (ctx, src), zh in have.items():
        if set(re.findall(r"\{\w*\}", src or "")) != set(re.findall(r"\{\w*\}", zh or "")):
            bad.append(f"[{ctx}] {src!r} -> {zh!r}")
    assert not bad, "\n".join(bad)


def test_a_missing_translation_falls_back_to_english(qapp, tmp_path):
    from PySide6.QtCore import QCoreApplication

    from gui.i18n import TsTranslator
    ts = tmp_path / "t.ts"
    ts.write_text("<?xml version='1.0' encoding='utf-8'?><TS version='2.1' language='zh_CN'><context><name>X</name>"
                  "<message><source>Run</source><translation>开始</translation></message>"
                  "<message><source>Pause</source><translation type='unfinished'></translation></message>"
                  "</context></TS>", encoding="utf-8")
    translator = TsTranslator(ts)
    QCoreApplication.installTranslator(translator)
    try:
        assert QCoreApplication.translate("X", "Run") == "开始"
        assert QCoreApplication.translate("X", "Pause") == "Pause"  # unfinished: English, not ""
        assert QCoreApplication.translate("X", "Never listed") == "Never listed"
    finally:
        QCoreApplication.removeTranslator(translator)
