#!/usr/bin/env bash
# Side-by-side benchmarks against pyarrow; prints the ratio table (arrowipc time / pyarrow time).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
python bench/ratios.py "$@"
