"""Why the draft model cannot help, said from what was found: ``draft_reason(draft_error)``.

The engine process sends its loader's one-line error (``model/checkpoint.py``, ``model/tokenizer.py``,
``Engine.set_draft``); this turns it into a short translated phrase for the apprentice's label: the missing file
and its folder, the part of the tokenizer that differs, the two vocabulary sizes. The full message stays in the
label's tooltip and in the log.
"""

from __future__ import annotations

import re
from pathlib import Path

from gui.i18n import tr_window as _tr

_MISSING = (  # the loader's messages that name a missing file (model/checkpoint.py, model/tokenizer.py)
    re.compile(r"^no (?P<file>tokenizer) in (?P<dir>.+?): expected"),
    re.compile(r"^no (?P<file>config\.json|model\.safetensors) in (?P<dir>.+)$"),
    re.compile(r"^tokenizer file missing: (?P<path>.+?) \("),
    re.compile(r"^(?:model|tokenizer) directory not found: (?P<dir>.+)$"),
)
_PARTS = ("model type", "vocabulary", "merges", "special tokens")


def draft_reason(error: str | None) -> str:
    """A short, translated reason why the draft model cannot help, from the engine's ``draft_error``: what was
    found (the missing file and its folder, the part of the tokenizer that differs, the two vocabulary sizes),
    never a guess. The full message is the label's tooltip and is in the log."""
    e = " ".join((error or "").split())
    e = e[len("draft model: "):] if e.startswith("draft model: ") else e
    for pattern in _MISSING:
        m = pattern.search(e)
        if not m:
            continue
        found = m.groupdict()
        if found.get("path"):
            path = Path(found["path"])
            return _tr("{file} is missing from its folder {folder}").format(file=path.name, folder=path.parent.name)
        folder = Path(found["dir"]).name
        if not found.get("file"):
            return _tr("its folder {folder} was not found").format(folder=folder)
        name = "tokenizer.json" if found["file"] == "tokenizer" else found["file"]
        return _tr("{file} is missing from its folder {folder}").format(file=name, folder=folder)
    m = re.search(r"tokenizer differs from the target's in its (?P<part>[a-z ]+):", e)
    if m and m.group("part") in _PARTS:
        part = {"model type": _tr("model type"), "vocabulary": _tr("vocabulary"), "merges": _tr("merges"),
                "special tokens": _tr("special tokens")}[m.group("part")]
        return _tr("its tokenizer differs from the master's in its {part}").format(part=part)
    m = re.search(r"has (?P<d>\d+) tokens in its vocabulary, the target (?P<t>\d+)", e)
    if m:
        return _tr("its vocabulary has {d} tokens, the master's {t}").format(d=m.group("d"), t=m.group("t"))
    low = e.lower()
    if "context window" in low:
        return _tr("its context window is too short")
    if "kv cache" in low:
        return _tr("it needs the KV cache")
    if e:
        return _tr("it could not be loaded (see the log)")
    return _tr("no draft model was found")
