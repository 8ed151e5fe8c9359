#!/usr/bin/env bash
# Memory check: the corpus replay (every arrow-testing IPC corpus file and regression input, read
# as stream and as file, to_pylist()-ed and exported) under valgrind memcheck, once for 1 round
# and once for 3: no invalid reads or writes, no uninitialised reads in arrowipc, and no leak that
# grows with the number of inputs. Logs land in $VALGRIND_LOG_DIR (default: build/valgrind).
# Usage: bash ci/valgrind.sh [--limit K]      (about 10 minutes for the whole corpus on 2 cores)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
LOG_DIR="${VALGRIND_LOG_DIR:-$ROOT/build/valgrind}"
mkdir -p "$LOG_DIR"
# the real interpreter: valgrind must run python itself, not a wrapper script (pyenv shims)
PY_BIN="$(python -c 'import sys; print(sys.executable)')"
"$PY_BIN" tests/untrusted/memcheck_replay.py --valgrind --log-dir "$LOG_DIR" "$@"
