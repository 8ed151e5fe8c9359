#!/usr/bin/env bash
# Shared set-up for every ci/ script: a project virtual environment with the build and test
# dependencies, and the Cython extensions built in place. Safe to run again (fast when done).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VENV="${ARROWIPC_VENV:-$ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
stamp="$VENV/.deps-$(cat ci/requirements-dev.txt pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  python -m pip install --quiet --upgrade pip
  python -m pip install --quiet -r ci/requirements-dev.txt
  touch "$stamp"
fi
python setup.py build_ext --inplace --quiet 2>&1 | grep -vE "^(warning: |.*Cython.*DEF)" || true
python -c "import arrowipc._core.batch_decode" || { echo "arrowipc: building the extensions failed" >&2; exit 1; }
