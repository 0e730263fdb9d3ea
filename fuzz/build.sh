#!/bin/bash -eu
# Builds every fuzz harness with plain compiler commands, the way OSS-Fuzz
# and ClusterFuzz build a project (no Bazel needed):
#
#   CC=clang-14 CFLAGS="-fsanitize=address,undefined" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/fuzzout fuzz/build.sh
#
# Inputs, as OSS-Fuzz sets them:
#   CC                  the C compiler (clang)
#   CFLAGS              sanitizer and coverage flags; when LIB_FUZZING_ENGINE
#                       is libFuzzer and CFLAGS carries no coverage flag,
#                       -fsanitize=fuzzer-no-link is added so that the
#                       runtime under test is instrumented
#   LIB_FUZZING_ENGINE  what links the fuzzing engine (-fsanitize=fuzzer, or
#                       a library path such as /usr/lib/libFuzzingEngine.a)
#   OUT                 where binaries, dictionaries and seed corpora go
#   DLPACK_INCLUDE      (optional) directory holding dlpack/dlpack.h; by
#                       default the one shipped in the pip apache-tvm-ffi
#                       package of the python3 on PATH
#
# Output, per harness NAME (library_bin, args, dtype, dlpack, elf_symbol):
#   $OUT/NAME                  the fuzzer binary
#   $OUT/NAME.dict             its dictionary, where it has one
#   $OUT/NAME_seed_corpus.zip  the committed corpus fuzz/corpus/NAME
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-clang}
CFLAGS=${CFLAGS:-}
LIB_FUZZING_ENGINE=${LIB_FUZZING_ENGINE:--fsanitize=fuzzer}
OUT=${OUT:?set OUT to the output directory}

if [ -z "${DLPACK_INCLUDE:-}" ]; then
  DLPACK_INCLUDE=$(python3 -c 'import os, tvm_ffi; print(os.path.join(os.path.dirname(tvm_ffi.__file__), "include"))')
fi
if [ ! -f "$DLPACK_INCLUDE/dlpack/dlpack.h" ]; then
  echo "build.sh: no dlpack/dlpack.h under $DLPACK_INCLUDE (set DLPACK_INCLUDE)" >&2
  exit 1
fi

# Coverage instrumentation for the engine, unless the caller chose it.
case "$LIB_FUZZING_ENGINE $CFLAGS" in
  *fuzzer-no-link*|*sanitize-coverage*) ;;
  *-fsanitize=fuzzer*) CFLAGS="$CFLAGS -fsanitize=fuzzer-no-link" ;;
esac

mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

COMMON=(-std=c17 -g -O1 -fno-omit-frame-pointer -D_GNU_SOURCE
        -I"$ROOT" -I"$ROOT/reference/include" -I"$DLPACK_INCLUDE")

# The reference runtime as one static archive.
objs=()
for src in "$ROOT"/reference/*.c; do
  case "$src" in *_test.c) continue ;; esac
  obj="$WORK/$(basename "${src%.c}").o"
  # shellcheck disable=SC2086  # CFLAGS is a list of flags
  $CC $CFLAGS "${COMMON[@]}" -fvisibility=hidden -c "$src" -o "$obj"
  objs+=("$obj")
done
ar rcs "$WORK/libtffi_reference.a" "${objs[@]}"

# Extra code under test compiled into a harness.
extra_srcs() {
  case "$1" in
    args) echo "$ROOT/kernels/scale_cpu.c $ROOT/kernels/scale_cpu_x86.c" ;;
    elf_symbol) echo "$ROOT/tools/libbin/elf_symbol.c" ;;
    library_bin) echo "$ROOT/tools/libbin/pack.c $ROOT/tools/libbin/tree.c" ;;
  esac
}

for harness_src in "$ROOT"/fuzz/*_fuzz.c; do
  name=$(basename "${harness_src%_fuzz.c}")
  # shellcheck disable=SC2086,SC2046
  $CC $CFLAGS "${COMMON[@]}" "$harness_src" $(extra_srcs "$name") \
    -Wl,--whole-archive "$WORK/libtffi_reference.a" -Wl,--no-whole-archive \
    $LIB_FUZZING_ENGINE -ldl -lpthread -lm -o "$OUT/$name"
  if [ -f "$ROOT/fuzz/dict/$name.dict" ]; then
    cp "$ROOT/fuzz/dict/$name.dict" "$OUT/$name.dict"
  fi
  if [ -d "$ROOT/fuzz/corpus/$name" ]; then
    python3 - "$ROOT/fuzz/corpus/$name" "$OUT/${name}_seed_corpus.zip" <<'EOF'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w") as z:
    for f in sorted(os.listdir(src)):
        z.write(os.path.join(src, f), f)
EOF
  fi
  echo "build.sh: $OUT/$name"
done
