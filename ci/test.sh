#!/usr/bin/env bash
# The test command: set up the environment, then run the whole test suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
python -m pytest -q -p no:cacheprovider tests "$@"
