"""The Live page's collaborators get what they need in their constructors (issue 45, item 1): no object is
handed another after it is built (``runner.engine = ...``, ``engine.verdicts = ...``, ``.lookup = ...`` on three
objects, and a ``_sync_ideas`` workaround for the order of construction, all gone).

Read with ``ast``: in ``gui/live`` and ``gui/window`` no statement assigns an attribute of an object other than
``self`` (``a.b = ...``, ``self.a.b = ...``), except the settings listed below, which set a value on a widget or
the stage and hand over no collaborator.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# (file, the assigned attribute as written): a value on a widget or the stage, not a collaborator
SETTINGS = {
    ("gui/live/session.py", "self.scene.real_time"),  # the stage follows the session's real-time mode
    ("gui/live/plots.py", "label.anchors"),  # a pyqtgraph label's placement
    ("gui/live/seats.py", "self.seats[request_id].done"),  # a seat's own record
    ("gui/live/seats.py", "seat.answer"),
    ("gui/window/main_window.py", "self.scene.seat_redraw_budget"),  # seat cards redrawn per frame
    ("gui/window/main_window.py", "self.runner.main_new_tokens"),  # the kiosk's shorter answers
}


def _foreign_assignments(path: Path) -> list[str]:
    """``a.b`` targets of assignments in ``path`` whose object is not ``self`` itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name) and t.value.id == "self"):
                    found.append(ast.unparse(t))
    return found


def test_no_collaborator_is_wired_after_construction():
    files = sorted((ROOT / "gui" / "live").glob("*.py")) + sorted((ROOT / "gui" / "window").glob("*.py"))
    assert len(files) > 20
    bad = [f"{p.relative_to(ROOT)}: {target} = ..." for p in files for target in _foreign_assignments(p)
           if (str(p.relative_to(ROOT)), target) not in SETTINGS]
    assert not bad, "\n".join(bad)


def test_the_check_finds_a_late_wiring(tmp_path):
    late = tmp_path / "late.py"
    late.write_text("def build(runner, engine):\n    runner.engine = engine\n    self.engine.lookup = None\n")
    assert _foreign_assignments(late) == ["runner.engine", "self.engine.lookup"]


def test_the_construction_order_workaround_is_gone():
    for p in list((ROOT / "gui").rglob("*.py")):
        assert "_sync_ideas" not in p.read_text(encoding="utf-8"), p
