#!/usr/bin/env bash
# The wheel on Spark executors: build the arrowipc wheel, install it with pyspark and pyarrow into
# a fresh virtual environment, pack that environment with venv-pack, and run the ETL pipeline on
# a local-cluster master whose executors receive the environment through spark.archives.
# Nothing here comes from the checkout at run time: the driver runs the fresh environment, the
# executors the unpacked archive, and the pipeline reports where its Python workers imported
# arrowipc from (checked below). Usage: bash ci/spark_wheel.sh [--rows N]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"     # project venv with 'build'; cwd = repo root
ROOT="$PWD"
ROWS="${ARROWIPC_WHEEL_ROWS:-2000000}"
if [ "${1:-}" = "--rows" ]; then ROWS="$2"; fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/arrowipc-wheel-XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
t0=$SECONDS
step() { echo "[spark_wheel $((SECONDS - t0))s] $*"; }

# The wheel as users build it: from what a fresh clone holds (no jar built beforehand, no
# extensions), in an isolated build environment (python -m build's default, as pip install .),
# which has no pyspark unless the build backend asks for it (java/build_backend.py).
step "building the wheel (python -m build, isolated) from a clean copy of the tracked files"
mkdir -p "$WORK/src"
git -C "$ROOT" ls-files -z --cached --others --exclude-standard \
  | tar cf - --null -T - --ignore-failed-read 2>/dev/null | tar xf - -C "$WORK/src"
python -m build --wheel --outdir "$WORK/dist" "$WORK/src" > "$WORK/build.log" 2>&1 \
  || { tail -40 "$WORK/build.log"; exit 1; }
WHEEL="$(ls "$WORK"/dist/arrowipc-*.whl)"
step "built $(basename "$WHEEL")"
JAR_IN_WHEEL=arrowipc/spark/jars/arrowipc-spark.jar
if command -v javac >/dev/null 2>&1; then
  python -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$WHEEL" "$JAR_IN_WHEEL" \
    || { echo "spark_wheel: a JDK is here but the wheel has no $JAR_IN_WHEEL" >&2; exit 1; }
  step "the wheel carries $JAR_IN_WHEEL"
fi

# The base interpreter of the project venv: the packed environment links to it, so it must sit
# at the same path wherever the environment is unpacked (true here; see the README for clusters).
BASE_PY="$(python -c 'import sys; print(sys._base_executable)')"
step "fresh environment: the wheel with its [spark] extra (pyspark, pyarrow) and venv-pack"
"$BASE_PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet "${WHEEL}[spark]" venv-pack

# Executors take pyspark from Spark's own python/lib/pyspark.zip, so the archive leaves the
# 450 MB pyspark package out: it ships arrowipc, pyarrow, numpy and the codecs.
step "packing the environment (venv-pack, without pyspark)"
"$WORK/venv/bin/venv-pack" -p "$WORK/venv" -o "$WORK/env.tar.gz" \
  --exclude "lib/python*/site-packages/pyspark/*" --exclude "lib/python*/site-packages/pyspark-*" \
  --exclude "lib/python*/site-packages/py4j/*" > /dev/null
step "env.tar.gz: $(du -h "$WORK/env.tar.gz" | cut -f1)"

# The driver plans data-source reads in Python workers of its own, which run PYSPARK_PYTHON
# relative to the driver's working directory: give it the same environment there.
RUN="$WORK/run"
mkdir -p "$RUN/environment"
tar -xzf "$WORK/env.tar.gz" -C "$RUN/environment"

step "ETL pipeline on local-cluster[2,1,1024] with spark.archives=env.tar.gz#environment"
cd "$RUN"
env -u PYTHONPATH PYSPARK_PYTHON=./environment/bin/python \
  "$WORK/venv/bin/arrowipc-etl" --rows "$ROWS" --files 4 --master "local-cluster[2,1,1024]" \
  --conf "spark.archives=$WORK/env.tar.gz#environment" \
  --conf spark.executor.memory=1g | tee "$WORK/etl.log"
cd "$ROOT"

where="$(grep '^workers import arrowipc from:' "$WORK/etl.log" | cut -d: -f2-)"
case "$where" in
  *"$ROOT"*) echo "spark_wheel: workers imported arrowipc from the checkout:$where" >&2; exit 1 ;;
  *environment/lib/python*/site-packages/arrowipc*) ;;
  *) echo "spark_wheel: workers did not import arrowipc from the shipped environment:$where" >&2
     exit 1 ;;
esac
grep -q '^ETL OK$' "$WORK/etl.log"
if command -v javac >/dev/null 2>&1; then
  # the jar Spark ran is the wheel's: local_session puts the installed package's jar_path() on
  # spark.jars, and the report says which source format("arrowipc") resolved to
  grep -q '^arrowipc source used  : JVM$' "$WORK/etl.log" \
    || { echo "spark_wheel: Spark did not use the JVM source from the wheel's jar" >&2; exit 1; }
  jars="$(grep '^spark.jars            : ' "$WORK/etl.log" | cut -d: -f2- | tr -d ' ')"
  case "$jars" in
    "$WORK/venv/"*"/site-packages/$JAR_IN_WHEEL") ;;
    *) echo "spark_wheel: spark.jars is not the installed wheel's jar: $jars" >&2; exit 1 ;;
  esac
  step "OK: Spark used the JVM data source from the wheel's jar"
fi
step "OK: executors imported arrowipc from the shipped wheel"
