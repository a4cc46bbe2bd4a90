"""README's "Use the engine from Python" stays true (issue 38 item 10): its code block runs as written, from the
checkout, and prints what the text around it says it prints; the files it tells a learner to read exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Use the engine from Python"


def _section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert SECTION in text
    body = text.split(SECTION, 1)[1]
    return body.split("\n## ", 1)[0]


def test_the_readme_script_runs_and_prints_each_step():
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert len(blocks) == 1
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    proc = subprocess.run([sys.executable, "-c", blocks[0]], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    steps = [ln for ln in lines if ln.startswith("step ")]
    texts = [ln for ln in lines if not ln.startswith("step ")]
    assert steps[0].startswith("step 1: prefill batch 2"), steps  # both prompts in one pass
    assert all(" decode " in ln for ln in steps[1:])
    batches = [int(re.search(r"batch (\d+)", ln).group(1)) for ln in steps]
    assert batches[-1] == 1 and 2 in batches  # the shorter answer ends first, as the text says
    assert len(steps) == 6  # 6 tokens for the longer answer: the prefill writes the first, 5 decodes the rest
    assert len(texts) == 2 and all(t.startswith(("'", '"')) for t in texts)
    assert "MB of weights read" in steps[0]


def test_the_files_a_learner_is_sent_to_exist():
    links = re.findall(r"\]\(([^)]+)\)", _section())
    assert len(links) >= 6
    for link in links:
        assert (ROOT / link).exists(), link
