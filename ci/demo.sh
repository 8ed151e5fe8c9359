#!/usr/bin/env bash
# The main job: set up the environment, then run the arrowipc demo.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
python -m arrowipc.examples.demo "$@"
