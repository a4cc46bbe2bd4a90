"""The app installs like any Python app: a wheel of this checkout, installed into a new virtual environment,
gives a ``one-trip`` command that works from another folder, with every bundled file read from the installed
package (``assets``, through ``importlib.resources``), never from the checkout.

To stay fast the wheel is built without build isolation and installed without dependencies; the new
environment then sees the dependencies (torch, PySide6, ...) of the running one through a ``.pth`` line added
after the install. A ``.pth`` line only adds a folder to ``sys.path``: the ``.pth`` files in that folder (such
as an editable install's finder, which maps the packages to the checkout) are not run.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = "Scripts" if sys.platform == "win32" else "bin"
EXE = ".exe" if sys.platform == "win32" else ""
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
                              "shots", "runs", "runs-*", "corpus", "corpus-*", ".whl", ".gl")


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _clean_env() -> dict:
    """This process's environment without anything that would put the checkout or a venv on sys.path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of this checkout (so no build/ folder lands in the checkout)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=SKIP)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          "-w", tmp / "dist", src], env=_clean_env(), cwd=tmp)
    shutil.rmtree(src)
    found = sorted((tmp / "dist").glob("one_trip-*.whl"))
    assert len(found) == 1, found
    return found[0]


def test_the_wheel_holds_every_file_under_assets(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = _run(["git", "ls-files", "assets"], cwd=ROOT).stdout.split() if (ROOT / ".git").exists() else []
    on_disk = [p.relative_to(ROOT).as_posix() for p in (ROOT / "assets").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    expected = set(tracked) or set(on_disk)
    assert {"assets/__init__.py", "assets/models/target/model.safetensors", "assets/models/target/tokenizer.json",
            "assets/fonts/NotoSansSC-OneTrip.otf", "assets/i18n/one_trip_zh_CN.qm"} <= expected
    assert expected - names == set()
    assert {"gui/tour/__init__.py", "animations/scenes/__init__.py", "main.py"} <= names  # subpackages too
    assert not any(n.startswith("tests/") for n in names)


def test_installed_wheel_generates_from_another_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / BIN / f"python{EXE}"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel],
         env=_clean_env())
    # only now the running environment's dependencies (installing first keeps pip from seeing its one-trip)
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    deps = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "zz-test-dependencies.pth").write_text("".join(f"{d}\n" for d in deps), encoding="utf-8")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([python, "-c", "import sys, assets, main, model, animations.fonts; "
                  "print(assets.root()); print(main.__file__); print(model.__file__); print(repr(sys.path))"],
                 cwd=elsewhere, env=_clean_env()).stdout.splitlines()
    for line in where[:3]:
        assert Path(line).resolve().is_relative_to(site.resolve()), where
    entries = {Path(p or elsewhere).resolve() for p in ast.literal_eval(where[3])}
    assert ROOT.resolve() not in entries, where[3]  # the checkout is not on sys.path (its .venv may be)

    one_trip = venv / BIN / f"one-trip{EXE}"
    proc = _run([one_trip, "generate", "def fibonacci(n):", "--max-new-tokens", "6", "--draft-k", "1",
                 "--threads", "1", "--json"], cwd=elsewhere, env=_clean_env())
    result = json.loads(proc.stdout)
    config = json.loads((ROOT / "assets" / "models" / "target-big" / "config.json").read_text(encoding="utf-8"))
    assert result["model"]["n_layer"] == config["n_layer"]
    assert result["model"]["vocab_size"] == config["vocab_size"]
    assert 1 <= len(result["requests"][0]["token_ids"]) <= 6
    assert result["acceptance_rate"] is not None  # the bundled draft model was found too
    assert not list(elsewhere.iterdir())  # nothing written into the working folder

    # the installed command calls itself what the user typed, in help and in errors (never "main.py")
    helped = _run([one_trip, "--help"], cwd=elsewhere, env=_clean_env()).stdout
    assert helped.startswith("usage: one-trip ") and "(one-trip COMMAND --help for each)" in helped, helped
    assert "main.py" not in helped
    bad = subprocess.run([str(one_trip), "generate", "x", "--max-new-tokens", "0"], cwd=elsewhere, env=_clean_env(),
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("one-trip generate: error:"), bad.stderr
