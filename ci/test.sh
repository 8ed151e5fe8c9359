#!/usr/bin/env bash
# The test command: set up the environment, run the whole test suite (the Spark tests use a local
# SparkSession), then, on a full run (no arguments), ci/spark_wheel.sh: the built wheel shipped to
# local-cluster executors. ARROWIPC_SKIP_SPARK_WHEEL=1 leaves that step out.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
python -m pytest -q -p no:cacheprovider tests "$@" 2>&1 | tee "$log"
if [ "$#" -eq 0 ] && [ "${ARROWIPC_SKIP_SPARK_WHEEL:-0}" != 1 ]; then
  bash ci/spark_wheel.sh
  echo "pytest summary, repeated after the wheel check:"
  tail -n 1 "$log"
fi
