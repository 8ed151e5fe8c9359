#!/usr/bin/env bash
# The test command. Sets up the environment (ci/env.sh), then:
#   bash ci/test.sh                 the whole suite (Spark tests use a local SparkSession), then
#                                   ci/spark_wheel.sh: the built wheel shipped to local-cluster
#                                   executors. The wheel check runs even when pytest fails; the
#                                   exit status is non-zero if either failed, and both results are
#                                   printed at the end.
#   bash ci/test.sh ARGS...         pytest with those arguments only (e.g. tests/ipc, -k name);
#                                   no wheel check.
# ARROWIPC_SKIP_SPARK_WHEEL=1 leaves the wheel check out of a full run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

if [ "$#" -gt 0 ]; then
  exec python -m pytest -q -p no:cacheprovider "$@"
fi

set +e
python -m pytest -q -p no:cacheprovider tests 2>&1 | tee "$log"
pytest_status=${PIPESTATUS[0]}
wheel_status=0
wheel_result="skipped (ARROWIPC_SKIP_SPARK_WHEEL=1)"
if [ "${ARROWIPC_SKIP_SPARK_WHEEL:-0}" != 1 ]; then
  bash ci/spark_wheel.sh
  wheel_status=$?
  if [ "$wheel_status" -eq 0 ]; then wheel_result="passed"; else wheel_result="FAILED (exit $wheel_status)"; fi
fi
set -e

echo
echo "pytest:      $(tail -n 1 "$log") (exit $pytest_status)"
echo "wheel check: $wheel_result"
[ "$pytest_status" -eq 0 ] && [ "$wheel_status" -eq 0 ]
