#!/usr/bin/env bash
# Shared set-up for every ci/ script: a project virtual environment (.venv/) with the build, runtime
# and test dependencies, arrowipc installed in it in editable mode (so `arrowipc` and
# `import arrowipc` work from any folder once it is activated: `source .venv/bin/activate`), and the
# Cython extensions built in place. Safe to run again: fast when done.
#
# The first run downloads and installs about 1.4 GB (pyspark alone is 0.5 GB) and takes a few
# minutes; every step prints one line, with the seconds since the start.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
VENV="${ARROWIPC_VENV:-$ROOT/.venv}"
_t0=$SECONDS
_step() { echo "[setup $((SECONDS - _t0))s] $*"; }

if [ ! -x "$VENV/bin/python" ]; then
  _step "creating the virtual environment $VENV"
  "$PY" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
_log="$VENV/setup.log"

_deps="$VENV/.deps-$(cat ci/requirements-dev.txt pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$_deps" ]; then
  _step "installing the dependencies of ci/requirements-dev.txt (first time: ~1.4 GB, a few minutes)"
  python -m pip install --quiet --upgrade pip >"$_log" 2>&1 || { cat "$_log" >&2; exit 1; }
  # one line per package as pip reaches it: progress without pip's full output
  python -m pip install --upgrade -r ci/requirements-dev.txt 2>&1 | tee -a "$_log" \
    | sed -un 's/^Collecting \([^ ]*\).*/  collecting \1/p'
  [ "${PIPESTATUS[0]}" -eq 0 ] || { tail -40 "$_log" >&2; echo "arrowipc: installing the dependencies failed" >&2; exit 1; }
  touch "$_deps"
fi

_editable="$VENV/.editable-$(printf '%s' "$ROOT" | sha256sum | cut -c1-16)"
if [ ! -f "$_editable" ]; then
  # the editable install builds the extensions in place as well
  _step "installing arrowipc in editable mode and building its extensions (about a minute)"
  python -m pip install --no-build-isolation --no-deps --editable . >>"$_log" 2>&1 \
    || { tail -40 "$_log" >&2; echo "arrowipc: the editable install failed" >&2; exit 1; }
  touch "$_editable"
fi

# incremental: rebuilds only extensions whose sources changed (about a second when none did)
python setup.py -q build_ext --inplace >"$VENV/build.log" 2>&1 \
  || { tail -40 "$VENV/build.log" >&2; echo "arrowipc: building the extensions failed" >&2; exit 1; }
grep -E "warning:|error:" "$VENV/build.log" | grep -vE "Warning|warnings.warn" >&2 || true
# the Spark JVM source's jar (prints one line and goes on when there is no JDK)
python java/build_jar.py
python -c "import arrowipc.ipc._batch_decode" || { echo "arrowipc: the extensions do not import" >&2; exit 1; }
_step "ready: $(python --version), arrowipc from $ROOT (activate with: source ${VENV#"$ROOT"/}/bin/activate)"
