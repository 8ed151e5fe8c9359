#!/usr/bin/env bash
# The package check: build the sdist from a clean copy of the tracked files, then the wheel from
# that sdist (python -m build); `twine check --strict` both; look inside the wheel (no tests, no
# sources or build leftovers, stripped extensions); install the wheel alone (no dependencies) into
# a fresh venv and measure its installed size (with the .pyc files pip compiles) and the time of
# `import arrowipc` (printed, never judged: a busy machine would fail it); check that the import
# loads none of the heavy dependencies; run the installed `arrowipc` script on a gold file.
# Prints a summary and writes it to OUT_DIR/summary.json; exits non-zero when a check fails.
#
#   bash ci/wheel_check.sh [OUT_DIR]     (OUT_DIR keeps dist/ and the venv; default: a temp dir)
#
# Limits (override through the environment): ARROWIPC_MAX_INSTALLED_BYTES (12 MiB),
# ARROWIPC_MAX_WHEEL_BYTES (3 MiB): wide margins, so the check catches a packaging mistake
# (tests or build leftovers shipped), not ordinary growth.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${ARROWIPC_USE_CURRENT_PYTHON:-}" ]; then
  # shellcheck source=ci/env.sh
  source "$ROOT/ci/env.sh"
fi
PY="${PYTHON:-python}"
cd "$ROOT"
OUT="${1:-$(mktemp -d -t arrowipc-wheel-XXXXXX)}"
mkdir -p "$OUT"
SRC="$OUT/src"
rm -rf "$SRC" "$OUT/dist" "$OUT/venv"
mkdir -p "$SRC"

# 1. a clean tree: only what git tracks (what a fresh clone has)
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$ROOT" ls-files -z --cached --others --exclude-standard \
    | tar cf - --null -T - --ignore-failed-read 2>/dev/null | tar xf - -C "$SRC"
else
  tar cf - --exclude=.venv --exclude=build --exclude=dist --exclude='*.so' . | tar xf - -C "$SRC"
fi

# 2. sdist, then the wheel built from the sdist (proves the sdist builds)
start=$(date +%s)
"$PY" -m build --no-isolation --outdir "$OUT/dist" "$SRC" >"$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log" >&2; echo "wheel_check: python -m build failed" >&2; exit 1; }
build_seconds=$(( $(date +%s) - start ))
"$PY" -m twine check --strict "$OUT"/dist/*

# 3. inside the wheel, then a bare install of it
"$PY" -m venv "$OUT/venv"
"$OUT/venv/bin/python" -m pip install --quiet --no-deps --no-index "$OUT"/dist/*.whl

GOLD="${ARROWIPC_TESTING_DIR:-$ROOT/tests/data/arrow-testing}/data/arrow-ipc-stream/integration/1.0.0-littleendian/generated_primitive.arrow_file"
"$PY" - "$OUT" "$build_seconds" "$GOLD" <<'EOF'
import glob, json, os, statistics, subprocess, sys, zipfile

out, build_seconds, gold = sys.argv[1], int(sys.argv[2]), sys.argv[3]
max_installed = int(os.environ.get("ARROWIPC_MAX_INSTALLED_BYTES", 12 << 20))
max_wheel = int(os.environ.get("ARROWIPC_MAX_WHEEL_BYTES", 3 << 20))
failures = []

wheel = glob.glob(os.path.join(out, "dist", "*.whl"))[0]
sdist = glob.glob(os.path.join(out, "dist", "*.tar.gz"))[0]
names = zipfile.ZipFile(wheel).namelist()
leftovers = [n for n in names if n.startswith(("tests/", "bench/", "ci/", "build/", "docs/"))
             or n.endswith((".c", ".pyx", ".pxd", ".o", ".pyc", ".part", ".h"))
             or "__pycache__" in n or ".egg-info" in n]
if leftovers:
    failures.append(f"the wheel holds files it should not: {leftovers[:5]}")
if not any(n.endswith(".so") for n in names):
    failures.append("the wheel has no compiled extensions")
if "arrowipc/py.typed" not in names:
    failures.append("the wheel lacks arrowipc/py.typed")

venv_py = os.path.join(out, "venv", "bin", "python")
site = subprocess.run([venv_py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                      capture_output=True, text=True, check=True).stdout.strip()


def tree_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


installed = tree_bytes(os.path.join(site, "arrowipc")) + sum(
    tree_bytes(p) for p in glob.glob(os.path.join(site, "arrowipc-*.dist-info")))


def has_symbol_table(so):
    data = open(so, "rb").read()
    return b".symtab" in data


unstripped = [os.path.basename(p) for p in glob.glob(os.path.join(site, "arrowipc", "*", "*.so"))
              if has_symbol_table(p)]
if unstripped:
    failures.append(f"extensions with a symbol table (not stripped): {unstripped}")

# import time in fresh interpreters, outside the source tree, with no dependency installed
probe = ("import sys, time; t = time.perf_counter(); import arrowipc; "
         "ms = (time.perf_counter() - t) * 1e3; "
         "heavy = sorted({m.split('.')[0] for m in sys.modules} & "
         "{'numpy', 'flatbuffers', 'lz4', 'zstandard', 'pyarrow'}); print(ms, ','.join(heavy))")
times, heavy = [], ""
env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
for _ in range(7):
    r = subprocess.run([venv_py, "-c", probe], capture_output=True, text=True, check=True,
                       cwd=out, env=env)
    ms, heavy = r.stdout.split(" ", 1)
    times.append(float(ms))
heavy = heavy.strip()
best, median = min(times), statistics.median(times)
if heavy:
    failures.append(f"import arrowipc loaded {heavy}")
if installed > max_installed:
    failures.append(f"installed size {installed:,} bytes exceeds {max_installed:,}")
if os.path.getsize(wheel) > max_wheel:
    failures.append(f"wheel size {os.path.getsize(wheel):,} bytes exceeds {max_wheel:,}")

cli = os.path.join(out, "venv", "bin", "arrowipc")
r = subprocess.run([cli, "inspect", gold], capture_output=True, text=True, cwd=out, env=env)
if r.returncode != 0 or "record batches" not in r.stdout:
    failures.append(f"installed `arrowipc inspect` failed ({r.returncode}): {r.stderr.strip()}")
    inspect_line = "FAILED"
else:
    inspect_line = "ok, with none of numpy/flatbuffers/lz4/zstandard installed"
r = subprocess.run([cli, "--version"], capture_output=True, text=True, cwd=out, env=env)
if r.returncode != 0:
    failures.append(f"installed `arrowipc --version` failed: {r.stderr.strip()}")

print(f"wheel           {os.path.basename(wheel)}: {os.path.getsize(wheel):,} bytes")
print(f"sdist           {os.path.basename(sdist)}: {os.path.getsize(sdist):,} bytes")
print(f"build           {build_seconds} s (sdist, then the wheel from it)")
print("twine check     --strict passed on both")
print(f"installed size  {installed:,} bytes ({installed / 2**20:.2f} MiB: arrowipc/ and its dist-info)")
print(f"import arrowipc best {best:.1f} ms, median {median:.1f} ms (7 fresh interpreters; "
      f"loads none of numpy, flatbuffers, lz4, zstandard)" if not heavy else
      f"import arrowipc best {best:.1f} ms, median {median:.1f} ms; loads {heavy}")
print(f"installed CLI   arrowipc inspect: {inspect_line}")
with open(os.path.join(out, "summary.json"), "w") as f:
    json.dump({"wheel_bytes": os.path.getsize(wheel), "sdist_bytes": os.path.getsize(sdist),
               "installed_bytes": installed, "import_ms_best": round(best, 1),
               "import_ms_median": round(median, 1), "import_loads": heavy,
               "failures": failures}, f, indent=2)
for f in failures:
    print(f"FAILED: {f}", file=sys.stderr)
sys.exit(1 if failures else 0)
EOF
