#!/usr/bin/env bash
# The test command (README "Run the tests"; .ci/run runs exactly this). Extra arguments go to pytest.
#
# Runs as blind to this machine as a fresh one: everything the tests need is installed into .venv (the pinned
# CPU build of torch, the app with its `test` extra; as root on Debian/Ubuntu also the few system libraries
# Qt's offscreen platform needs), no activated venv, PYTHONPATH or user site-packages leaks in, and Qt sees
# only the bundled fonts: tests/conftest.py points fontconfig (FONTCONFIG_FILE) at a file that lists
# assets/fonts alone, so a text that would draw boxes on a machine without CJK fonts fails here too.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  need=()
  for pkg in libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ "$(command -v python3)" = /usr/bin/python3 ] && ! dpkg -s python3-venv >/dev/null 2>&1; then
    need+=(python3-venv)  # Debian keeps `python3 -m venv` (ensurepip) in its own package
  fi
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  fi
fi
unset VIRTUAL_ENV PYTHONPATH PYTHONHOME PYTHONSTARTUP ONE_TRIP_TEST_FONTS FONTCONFIG_FILE FONTCONFIG_PATH
# PYTHONDONTWRITEBYTECODE too: with it set (some machines set it for every shell), no module is ever cached as
# bytecode, so each of the suite's few hundred Python processes (engines, CLI runs, app launches) compiles torch's
# modules from source again: `import torch` takes 4.2-4.6 s instead of 2.2 s on a 2-core machine (measured)
unset PYTHONDONTWRITEBYTECODE
export PYTHONNOUSERSITE=1
python3 -m venv .venv
# A current pip first: the one a venv starts with (ensurepip's; 23.2 with Python 3.11) took 30 s to resolve the test
# extra against this machine's package indexes (62,000 files to weigh), pip 26 14 s; the upgrade itself 2 s
# -qq: errors only (a package index that a machine's pip config names but lacks is a warning for each package,
# and setuptools warns at every editable install that a folder named like a package can shadow it)
.venv/bin/python -m pip install -qq --no-compile 'pip>=26'
# --no-compile: no byte-compiling of every installed module (torch's thousands) at install, 30 s of the run;
# Python compiles and caches (__pycache__) only what the tests import, once
.venv/bin/python -m pip install -qq --no-compile -e '.[test]'
export QT_QPA_PLATFORM=offscreen
# The linter first ([tool.ruff] in pyproject.toml): a finding fails the command before any test runs.
.venv/bin/ruff check --no-cache .
# Two runs at once. The tests marked "serial" (they bound a wall-clock time: an exit within 2 s of a signal, a
# frame's cost; tests/conftest.py SERIAL) run in one process at the normal priority; all the others run on two
# workers (pytest-xdist) at nice 10, a small share of the CPU beside them (a nice-0 process gets about nine tenths
# of a core it shares with one nice-10 process: CFS weights 1024 against 110), so that the workers' load cannot
# fail a bound, and the serial tests' idle time is the workers' time. A test file stays on one
# worker, so its module fixtures are made once, and the files go in tests/conftest.py's order, the long ones
# first, not xdist's most-tests-first. The serial run's report follows the workers'. Status 5 (nothing selected,
# e.g. arguments that name one file) counts as a pass for one of the two runs. A worker that crashes (a
# segfault) ends the run at once with that test failed (--max-worker-restart 0): pytest-xdist 3.8's file
# scheduler can wait for ever after replacing a crashed worker (pytest-xdist issue 1378: the dead worker's
# finished files come back as empty work; seen here once, a hang).
serial_report="$(mktemp)"
serial_pid=""
trap 'kill "$serial_pid" 2>/dev/null || true; rm -f "$serial_report"' EXIT
.venv/bin/python -m pytest -q -m serial "$@" >"$serial_report" 2>&1 &
serial_pid=$!
status=0
nice -n 10 .venv/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --max-worker-restart 0 \
  -m "not serial" "$@" || status=$?
serial=0
wait "$serial_pid" || serial=$?
echo "--- the tests that bound a wall-clock time (marker serial), run beside them at the normal priority:"
cat "$serial_report"
if [ "$status" = 5 ]; then status=0; fi
if [ "$serial" != 0 ] && [ "$serial" != 5 ]; then status=$serial; fi
exit "$status"
