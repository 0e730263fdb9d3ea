#!/usr/bin/env bash
# The one-file build of the runtime (reference:libtvm_ffi_amalgamation.so)
# exports the same TVMFFI* functions as the usual build, and conformance
# areas pass against it.
# Arguments: the one-file build, the usual build, then conformance binaries.
set -euo pipefail
one=$1 usual=$2
shift 2
exports() { nm -D --defined-only "$1" | awk '$2 ~ /^[TtWi]$/ && $3 ~ /^TVMFFI/ {print $3}' | sort; }
diff <(exports "$usual") <(exports "$one") || { echo "FAIL: the exports differ (< usual, > one file)"; exit 1; }
n=$(exports "$one" | wc -l)
[ "$n" -gt 40 ] || { echo "FAIL: only $n TVMFFI* exports"; exit 1; }
echo "ok: $n TVMFFI* exports, the same as the usual build"
impl=$(realpath "$one")
for area in "$@"; do
  # Each area writes its own XML; this test's is Bazel's.
  if ! TVMFFI_IMPL=$impl XML_OUTPUT_FILE=$TEST_TMPDIR/$(basename "$area").xml "$area"; then
    echo "FAIL: $(basename "$area") against the one-file build"
    exit 1
  fi
  echo "ok: $(basename "$area") passes against the one-file build"
done
