#!/usr/bin/env bash
# Prove the format/*.fbs files parse: compile them with flatc into a throwaway
# directory (nothing generated is kept). Needs flatc (Debian: flatbuffers-compiler).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The files were checked with this version; newer ones should work too.
tested_version="2.0.8"
command -v flatc >/dev/null || { echo "flatc not found (apt-get install -y flatbuffers-compiler)" >&2; exit 2; }
echo "flatc: $(flatc --version) (tested with ${tested_version})"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# --gen-all so the included Tensor/SparseTensor files are compiled as well.
# flatc's lowercase-naming warnings are expected: the names are the spec's.
log="$out/flatc.log"
if ! flatc --python --gen-all -o "$out" \
    "$here/Schema.fbs" "$here/Message.fbs" "$here/File.fbs" >"$log" 2>&1; then
  cat "$log" >&2
  echo "FAIL: flatc rejected the schemas" >&2
  exit 1
fi
grep -v -e 'should be lowercase snake_case' -e '^warning:$' -e '^[[:space:]]*$' "$log" || true
for name in Schema Field Type Message MessageHeader RecordBatch DictionaryBatch BodyCompression Footer Block Tensor SparseTensor; do
  [ -f "$out/org/apache/arrow/flatbuf/$name.py" ] || { echo "missing generated $name" >&2; exit 1; }
done
echo "OK: Schema.fbs, Message.fbs, File.fbs (+ Tensor.fbs, SparseTensor.fbs) parse"
