#!/usr/bin/env bash
# Installs everything the tests need into .venv (system libraries for Qt's offscreen platform where apt-get
# is available and they are missing, the pinned CPU build of torch, the test extras) and runs the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  need=()
  for pkg in libegl1 libgl1 libxkbcommon0 libfontconfig1 libdbus-1-3 libglib2.0-0; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
  done
  if [ ${#need[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  fi
fi
python3 -m venv .venv
.venv/bin/python -m pip install -q -e '.[test]'
export QT_QPA_PLATFORM=offscreen
exec .venv/bin/python -m pytest -q "$@"
