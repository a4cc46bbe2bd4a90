"""What a newcomer meets in the first five minutes (issue 28): the program's own name, the system's language,
every notice in the JSON, a reason that names what was found, and text that does not loop by default."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from model.argtypes import program_name

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "assets" / "models" / "target"
DRAFT = ROOT / "assets" / "models" / "draft"


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update(extra)
    return env


# ---- 1. the program's name is the one the user typed -----------------------------------------------------------

@pytest.mark.parametrize("argv0, name", [
    ("/home/ana/.venv/bin/one-trip", "one-trip"),
    ("one-trip.exe", "one-trip"),
    ("/src/one-trip/main.py", "main.py"),
    ("main.py", "main.py"),
    ("-c", "one-trip"),
    ("/usr/lib/python3/site-packages/pytest/__main__.py", "one-trip"),
])
def test_program_name_is_what_was_typed(argv0, name):
    assert program_name(argv0) == name


def test_a_launcher_named_one_trip_says_one_trip_in_help_and_errors(tmp_path):
    launcher = tmp_path / "one-trip"  # what pip's console script is: a file of that name calling main.main()
    launcher.write_text(f"import sys; sys.path.insert(0, {str(ROOT)!r}); import main; sys.exit(main.main())\n")
    helped = subprocess.run([sys.executable, str(launcher), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.stdout.startswith("usage: one-trip ") and "(one-trip COMMAND --help for each)" in helped.stdout
    assert "main.py" not in helped.stdout
    bad = subprocess.run([sys.executable, str(launcher), "generate", "x", "--top-p", "2"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("one-trip generate: error:"), bad.stderr
    unknown = subprocess.run([sys.executable, str(launcher), "fly"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and unknown.stderr.startswith("one-trip: unknown command 'fly'")
    from_checkout = subprocess.run([sys.executable, "main.py", "kv-size", "--help"], cwd=ROOT, capture_output=True,
                                   text=True, timeout=60)
    assert from_checkout.stdout.startswith("usage: main.py kv-size")


# ---- 2. a first start follows the system's language ------------------------------------------------------------

@pytest.mark.parametrize("lang, expected", [("zh_CN.UTF-8", "zh"), ("zh_TW.UTF-8", "zh"), ("en_US.UTF-8", "en"),
                                            ("fr_FR.UTF-8", "en"), ("C", "en")])
def test_system_language_follows_the_locale_of_the_environment(lang, expected):
    code = ("from PySide6.QtCore import QCoreApplication; app = QCoreApplication([]); "
            "from gui.settings import system_language; print(system_language())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(LANG=lang, LC_ALL=lang),
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == expected, out.stderr


def test_first_start_without_a_saved_language_follows_the_system(qapp, tmp_path, monkeypatch):
    from argparse import Namespace

    from gui import app as app_module
    from gui import settings as app_settings
    monkeypatch.setenv(app_settings.ENV_CONFIG_DIR, str(tmp_path / "cfg"))
    try:
        app_settings.configure_qsettings()
        assert app_settings.write_defaults_if_new(app_settings.Settings()) is True
        assert app_settings.saved_language() is None  # the defaults file does not pin a language
        for system, args, expected in (("en", Namespace(), "en"), ("zh", Namespace(), "zh"),
                                       ("zh", Namespace(lang="en"), "en")):
            monkeypatch.setattr(app_settings, "system_language", lambda locale=None, s=system: s)
            assert app_module.choose_language(args) == expected
        app_settings.remember_language("zh")
        monkeypatch.setattr(app_settings, "system_language", lambda locale=None: "en")
        assert app_module.choose_language(Namespace()) == "zh"  # a saved choice wins over the locale
    finally:
        monkeypatch.undo()
        app_settings.configure_qsettings()


# ---- 3. every notice about a request reaches its JSON ------------------------------------------------------------

def _generate_json(*runs: tuple[list[str], bytes | None]) -> list[dict]:
    """``main.py generate ARGS --json`` on the pocket book (the notices are about the input, not the book), one
    process per run, started together (each pays for importing torch)."""
    procs = [(subprocess.Popen([sys.executable, "main.py", "generate", *args, "--json", "--threads", "1",
                                "--model", str(TARGET)], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE), stdin) for args, stdin in runs]
    results = []
    for proc, stdin in procs:
        stdout, stderr = proc.communicate(stdin or b"", timeout=240)
        assert proc.returncode == 0, stderr
        results.append(json.loads(stdout))
    return results


def test_invalid_utf8_is_noticed_in_the_json_beside_a_cut():
    long_prompt = b"x = 1\n" * 2000 + b"\xff\xfe"  # invalid bytes, and far past the context window
    result, clean, one = _generate_json((["-", "--max-new-tokens", "2"], long_prompt),
                                        (["print(1)", "--max-new-tokens", "2"], None),
                                        (["-", "--max-new-tokens", "2"], b"ab\xffcd"))
    notice = result["requests"][0]["notice"]
    assert isinstance(notice, list) and len(notice) == 2, notice
    assert "UTF-8" in notice[0] and "cut" in notice[1]
    assert clean["requests"][0]["notice"] is None
    assert isinstance(one["requests"][0]["notice"], str) and "UTF-8" in one["requests"][0]["notice"]


# ---- 4. the reason on screen names what was found ---------------------------------------------------------------

def test_a_draft_folder_without_its_tokenizer_is_said_as_such(qapp, tmp_path):
    from gui.live.draft_reason import draft_reason
    from model.checkpoint import load_pretrained
    from model.errors import ModelLoadError
    folder = tmp_path / "my-draft"
    shutil.copytree(DRAFT, folder)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelLoadError) as err:
        load_pretrained(folder)
    reason = draft_reason(str(err.value))
    assert "tokenizer.json" in reason and "my-draft" in reason and "differs" not in reason


def test_a_different_tokenizer_names_the_part_that_differs(qapp, tmp_path):
    from gui.live.draft_reason import draft_reason
    from model.checkpoint import load_pretrained
    from model.engine import Engine
    from model.errors import RequestError
    folder = tmp_path / "other-merges"
    shutil.copytree(DRAFT, folder)
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    merges = spec["model"]["merges"]
    merges[-1], merges[-2] = merges[-2], merges[-1]  # same vocabulary, one pair of merges in another order
    (folder / "tokenizer.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")
    model, tokenizer = load_pretrained(TARGET)
    draft, draft_tokenizer = load_pretrained(folder)
    with pytest.raises(RequestError) as err:
        Engine(model, tokenizer).set_draft(draft, draft_tokenizer)
    assert "in its merges" in str(err.value)
    assert "merges" in draft_reason(str(err.value))


# ---- 5. the command line's default text does not loop -----------------------------------------------------------

def _loops(text: str, n: int = 3, times: int = 3) -> bool:
    words = re.findall(r"\w+", text)
    grams = [tuple(words[i:i + n]) for i in range(len(words) - n + 1)]
    return any(grams.count(g) >= times for g in set(grams))


def _generate_json_here(capsys, args) -> dict:
    """``main.py generate ARGS --json --threads 1`` run in this process (``model.cli.generate_main``, the function
    the command runs): the answers are the command's; the command's own process is tested above."""
    from model.cli import generate_main
    capsys.readouterr()
    code = generate_main([*args, "--json", "--threads", "1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_the_default_generate_samples_and_greedy_is_one_flag_away(capsys):
    sampled = _generate_json_here(capsys, ["def fibonacci(n):", "--max-new-tokens", "32"])
    greedy = _generate_json_here(capsys, ["def fibonacci(n):", "--max-new-tokens", "32", "--greedy"])
    zero = _generate_json_here(capsys, ["def fibonacci(n):", "--max-new-tokens", "32", "--temperature", "0"])
    assert _loops(greedy["requests"][0]["text"])  # the trap the default avoids: "the number of the number of"
    assert not _loops(sampled["requests"][0]["text"]), sampled["requests"][0]["text"]
    assert greedy["requests"][0]["token_ids"] == zero["requests"][0]["token_ids"]
    again = _generate_json_here(capsys, ["def fibonacci(n):", "--max-new-tokens", "32"])
    assert again["requests"][0]["token_ids"] == sampled["requests"][0]["token_ids"]  # the default seed is fixed
