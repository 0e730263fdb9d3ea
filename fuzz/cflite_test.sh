#!/bin/bash
# The ClusterFuzzLite build, run here: .clusterfuzzlite/build.sh with the
# environment OSS-Fuzz gives it simulated (CC, CXX, CFLAGS with
# -fsanitize=address,fuzzer-no-link, LIB_FUZZING_ENGINE, SRC, OUT, WORK),
# then every fuzzer it produced for a few thousand executions on its seed
# corpus zip, with the options file beside it; then the kernel fuzzer, from
# an empty corpus and a fixed seed, on each fixture it must find unaided:
#   bad_writes_past_end   a write past the output's last element (CDY-005)
#   bad_reads_past_args   a read past the argument array (CDY-003)
#   bad_aborts            abort() on an unsupported dtype
# The fixtures are built here as their BUILD builds them (-O1, hidden
# visibility), with no sanitizer and no coverage: the kernel fuzzer works
# them blind, guided by the outcomes of its calls alone.
#
# Arguments: dlpack/dlpack.h, then the three fixtures' sources.
set -uo pipefail

ROOT=$PWD
RUNS=${CFLITE_RUNS:-3000}
KERNEL_RUNS=${CFLITE_KERNEL_RUNS:-300000}
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cflite.XXXXXX")
export SRC=$tmp/src OUT=$tmp/out WORK=$tmp/work
mkdir -p "$SRC" "$OUT" "$WORK"
# The checkout, where the Dockerfile puts it.
ln -s "$ROOT" "$SRC/tvm-ffi-conformance"
export CC=clang-14 CXX=clang++-14
# -O0: this checks the build and the binaries, not their speed.
export CFLAGS="-O0 -fsanitize=address -fsanitize=fuzzer-no-link"
export CXXFLAGS=$CFLAGS
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
DLPACK_INCLUDE=$ROOT/$(dirname "$(dirname "$1")")
export DLPACK_INCLUDE
shift
fixtures=("$@")

failed=0
fail() { echo "FAIL: $*"; failed=1; }

started=$(date +%s)
if ! bash "$SRC/tvm-ffi-conformance/.clusterfuzzlite/build.sh" > "$tmp/build.log" 2>&1; then
  tail -40 "$tmp/build.log"
  echo "FAIL: .clusterfuzzlite/build.sh failed"
  exit 1
fi
echo "build.sh: $(( $(date +%s) - started )) s; $(grep -c '^build.sh: /' "$tmp/build.log") fuzzers"

# libFuzzer flags from NAME.options ("key = value" under [libfuzzer]); a
# dictionary is named relative to the fuzzer, as ClusterFuzz reads it.
options() {
  [ -f "$OUT/$1.options" ] || return 0
  sed -n -e "s|^dict *= *\(.*\)\$|-dict=$OUT/\1|p" \
         -e '/^dict /!s/^\([a-z_]*\) *= *\(.*\)$/-\1=\2/p' "$OUT/$1.options"
}

fuzzers=()
for f in "$OUT"/*; do
  [ -f "$f" ] && [ -x "$f" ] && fuzzers+=("$(basename "$f")")
done
[ "${#fuzzers[@]}" -ge 11 ] || fail "expected at least 11 fuzzers in \$OUT, found ${#fuzzers[*]}: ${fuzzers[*]}"

for name in "${fuzzers[@]}"; do
  zip="$OUT/${name}_seed_corpus.zip"
  [ -f "$zip" ] || { fail "$name has no seed corpus zip"; continue; }
  [ -f "$OUT/$name.options" ] || fail "$name has no options file"
  corpus="$tmp/corpus/$name"
  mkdir -p "$corpus"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$corpus"
  mapfile -t opts < <(options "$name")
  # Run from elsewhere: the fuzzer must find its libraries through $ORIGIN.
  log="$tmp/$name.log"
  (cd "$tmp" && "$OUT/$name" "${opts[@]}" -runs="$RUNS" -seed=1 "$corpus") > "$log" 2>&1
  rc=$?
  done_line=$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)
  if [ "$rc" -ne 0 ] || [ -z "$done_line" ]; then
    tail -25 "$log"
    fail "$name exited $rc on its seed corpus"
  else
    echo "ok: $name: $(find "$corpus" -mindepth 1 -maxdepth 1 | wc -l) seeds, ${opts[*]}: $done_line"
  fi
done

# The kernel fuzzer, unaided, on the three fixtures.
expect_for() {
  case "$1" in
    *bad_writes_past_end*) echo "CDY-005: the kernel touched memory past the last element" ;;
    *bad_reads_past_args*) echo "CDY-003: the kernel read past the end of the argument array" ;;
    *bad_aborts*) echo "deadly signal" ;;
  esac
}
for src in "${fixtures[@]}"; do
  want=$(expect_for "$src")
  name=lib$(basename "$src" .c).so
  so="$tmp/$name"
  if ! "$CC" -O1 -fPIC -shared -fvisibility=hidden -I"$ROOT" -I"$ROOT/reference/include" \
      -I"$DLPACK_INCLUDE" "$ROOT/$src" -o "$so"; then
    fail "cannot build $src"
    continue
  fi
  mkdir -p "$tmp/kernel_$name"
  log="$tmp/kernel_$name.log"
  t0=$(date +%s)
  (cd "$tmp/kernel_$name" && "$OUT/kernel" "$so" -seed=1 -runs="$KERNEL_RUNS" -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix="$tmp/kernel_$name/" "$tmp/kernel_$name") > "$log" 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && grep -q "$want" "$log" && ls "$tmp/kernel_$name"/crash-* > /dev/null 2>&1; then
    execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' "$log" | tail -1)
    echo "ok: kernel found $name unaided in $(( $(date +%s) - t0 )) s (${execs:-?} executions): $want"
  else
    tail -20 "$log"
    fail "kernel did not find the defect of $name within $KERNEL_RUNS executions (wanted: $want)"
  fi
done

echo "cflite_test: $(( $(date +%s) - started )) s"
[ "$failed" -eq 0 ] && echo "PASS" || echo "FAILED"
exit "$failed"
