#!/usr/bin/env bash
# The main job: set up the environment, then run the arrowipc ETL pipeline on embedded local
# Spark (generate Arrow IPC data, read/join/aggregate/write through the "arrowipc" data source,
# check the result independently, print a report). Options: python -m arrowipc.examples.etl -h.
# The earlier file/stream demo stays available as: python -m arrowipc.examples.demo
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
python -m arrowipc.examples.etl "$@"
