#!/bin/bash -eu
# Builds every fuzz harness with plain compiler commands, the way OSS-Fuzz
# and ClusterFuzzLite build a project (.clusterfuzzlite/build.sh runs this;
# no Bazel needed):
#
#   CC=clang-14 CXX=clang++-14 CFLAGS="-fsanitize=address,fuzzer-no-link" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/fuzzout fuzz/build.sh
#
# Inputs, as OSS-Fuzz sets them:
#   CC, CXX             the compilers (clang); harnesses are C, linked with
#                       $CXX as OSS-Fuzz asks (the engine may be C++)
#   CFLAGS, CXXFLAGS    sanitizer and coverage flags; when LIB_FUZZING_ENGINE
#                       is libFuzzer and CFLAGS carries no coverage flag,
#                       -fsanitize=fuzzer-no-link is added, so that the
#                       runtime under test is instrumented
#   LIB_FUZZING_ENGINE  what links the fuzzing engine (-fsanitize=fuzzer, or
#                       a library path such as /usr/lib/libFuzzingEngine.a)
#   OUT                 where binaries, dictionaries, options and seed
#                       corpora go; run-time libraries go to $OUT/lib
#   WORK                (optional) scratch space for objects
# And this project's:
#   DLPACK_INCLUDE      directory holding dlpack/dlpack.h; by default the one
#                       shipped in the pip apache-tvm-ffi of the python3 on PATH
#   RUNTIME_SO          (optional) a libtvm_ffi.so to fuzz instead of the
#                       reference runtime: installed as $OUT/lib/libtvm_ffi.so,
#                       which the runtime-facing harnesses load (build it
#                       with $CC $CFLAGS for coverage from it)
#   KERNEL_SO           (optional) a kernel library for the `kernel` fuzzer:
#                       installed as $OUT/lib/libkernel_under_test.so (the
#                       default is the CPU scale kernel)
#   JOBS                compiler processes at once (default 2)
#
# Output, per harness NAME:
#   $OUT/NAME                  the fuzzer binary
#   $OUT/NAME.dict             its dictionary, where it has one
#   $OUT/NAME.options          libFuzzer options: memory limits, timeout
#   $OUT/NAME_seed_corpus.zip  the committed corpus fuzz/corpus/NAME
set -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CC=${CC:-clang}
CXX=${CXX:-clang++}
CFLAGS=${CFLAGS:-}
CXXFLAGS=${CXXFLAGS:-$CFLAGS}
LIB_FUZZING_ENGINE=${LIB_FUZZING_ENGINE:--fsanitize=fuzzer}
OUT=${OUT:?set OUT to the output directory}
JOBS=${JOBS:-2}

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

mkdir -p "$OUT/lib"
if [ -n "${WORK:-}" ]; then
  obj="$WORK/tvm-ffi-fuzz-objs"
  rm -rf "$obj"
else
  obj=$(mktemp -d)
  trap 'rm -rf "$obj"' EXIT
fi
mkdir -p "$obj"

COMMON="-std=c17 -g -fno-omit-frame-pointer -D_GNU_SOURCE -fPIC -I$ROOT -I$ROOT/reference/include -I$DLPACK_INCLUDE"

# One object: $obj/<set>/<source's name>.o.
compile_one() {
  # shellcheck disable=SC2086
  $CC $CFLAGS $COMMON -fvisibility=hidden -c "$2" -o "$obj/$1/$(basename "$2" .c).o"
}
export -f compile_one
export CC CFLAGS COMMON obj

# Compiles sources, $JOBS at once, into $obj/<set>/; prints the objects.
compile() {
  local set=$1 src; shift
  mkdir -p "$obj/$set"
  printf '%s\n' "$@" | xargs -P "$JOBS" -I{} bash -c 'compile_one "$@"' _ "$set" {}
  for src in "$@"; do echo "$obj/$set/$(basename "$src" .c).o"; done
}

# ---- the code under test

runtime_srcs=()
for src in "$ROOT"/reference/*.c; do
  case "$src" in *_test.c) ;; *) runtime_srcs+=("$src") ;; esac
done
mapfile -t runtime_objs < <(compile runtime "${runtime_srcs[@]}")
ar rcs "$obj/libtffi_reference.a" "${runtime_objs[@]}"

# The runtime the runtime-facing harnesses load (lib/ beside them).
if [ -n "${RUNTIME_SO:-}" ]; then
  cp "$RUNTIME_SO" "$OUT/lib/libtvm_ffi.so"
else
  # shellcheck disable=SC2086
  $CC $CFLAGS -shared -Wl,-soname,libtvm_ffi.so -Wl,-z,nodelete -o "$OUT/lib/libtvm_ffi.so" \
    "${runtime_objs[@]}" -ldl -lpthread -lm
fi

# Libraries loaded at run time: the CPU scale kernel (args; the kernel
# fuzzer's default) and module_load's blob carrier and import target.
shared() {
  local name=$1; shift
  # shellcheck disable=SC2086
  $CC $CFLAGS $COMMON -fvisibility=hidden -shared -o "$OUT/lib/$name" "$@"
}
shared libscale_cpu.so "$ROOT/kernels/scale_cpu.c" "$ROOT/kernels/scale_cpu_x86.c"
shared libfuzz_module_load_blob.so "$ROOT/fuzz/module_load_blob.c"
shared libmod_other.so "$ROOT/conformance/testlibs/mod_other.c"
if [ -n "${KERNEL_SO:-}" ]; then
  cp "$KERNEL_SO" "$OUT/lib/libkernel_under_test.so"
fi

mapfile -t loader_objs < <(compile loader "$ROOT/conformance/impl_load.c" "$ROOT/fuzz/impl_api.c")
compile libbin "$ROOT"/tools/libbin/{pack,tree,elf_symbol}.c > /dev/null
# certify's library, every source but its main and tests, as an archive: a
# harness links only the objects it needs.
cert_srcs=()
for src in "$ROOT"/tools/certify/*.c; do
  case "$src" in *_test.c|*/main.c|*/cert_test_util.c) ;; *) cert_srcs+=("$src") ;; esac
done
mapfile -t cert_objs < <(compile certify "${cert_srcs[@]}")
ar rcs "$obj/libcert.a" "${cert_objs[@]}"

# ---- the harnesses

# NAME: how it is linked. "runtime" harnesses load the runtime at run time;
# the others link the reference's internals (static archive).
harnesses=(library_bin elf_symbol certify_elf certify_manifest
           args dlpack dtype module_load stream error kernel)

link_for() {
  case "$1" in
    library_bin) echo "$obj/libbin/pack.o $obj/libbin/tree.o -Wl,--whole-archive $obj/libtffi_reference.a -Wl,--no-whole-archive" ;;
    elf_symbol) echo "$obj/libbin/elf_symbol.o -Wl,--whole-archive $obj/libtffi_reference.a -Wl,--no-whole-archive" ;;
    certify_elf | certify_manifest) echo "$obj/libcert.a $obj/libtffi_reference.a -lelf -ljansson" ;;
    kernel) echo "${loader_objs[*]} $obj/libcert.a $obj/libtffi_reference.a -lelf -ljansson" ;;
    *) echo "${loader_objs[*]} -lelf" ;;
  esac
}

dict_for() {
  case "$1" in
    module_load) echo library_bin ;;
    certify_elf) echo elf ;;
    elf_symbol) echo elf ;;
    *) echo "$1" ;;
  esac
}

for name in "${harnesses[@]}"; do
  kernel_default=()
  if [ "$name" = kernel ] && [ -n "${KERNEL_SO:-}" ]; then
    kernel_default=(-DFUZZ_KERNEL_DEFAULT='"libkernel_under_test.so"')
  fi
  # shellcheck disable=SC2086,SC2046
  $CC $CFLAGS $COMMON "${kernel_default[@]}" -c "$ROOT/fuzz/${name}_fuzz.c" -o "$obj/${name}_fuzz.o"
  # shellcheck disable=SC2086,SC2046,SC2016  # $ORIGIN is the loader's, not the shell's
  $CXX $CXXFLAGS "$obj/${name}_fuzz.o" $(link_for "$name") $LIB_FUZZING_ENGINE \
    -ldl -lpthread -lm -Wl,-rpath,'$ORIGIN/lib' -o "$OUT/$name"
  dict="$ROOT/fuzz/dict/$(dict_for "$name").dict"
  options=("[libfuzzer]" "rss_limit_mb = 2048" "malloc_limit_mb = 1024" "timeout = 10" "max_len = 4096")
  if [ -f "$dict" ]; then
    cp "$dict" "$OUT/$name.dict"
    options+=("dict = $name.dict")
  fi
  printf '%s\n' "${options[@]}" > "$OUT/$name.options"
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

# The fuzzers run where only the C and C++ runtimes can be counted on
# (OSS-Fuzz's base-runner): the other shared libraries they need go to
# $OUT/lib, which their RUNPATH names.
for lib in libelf.so.1 libjansson.so.4; do
  path=$(ldd "$OUT/kernel" | awk -v l="$lib" '$1 == l { print $3 }')
  if [ -n "$path" ]; then cp -L "$path" "$OUT/lib/$lib"; fi
done
echo "build.sh: run-time libraries in $OUT/lib: $(find "$OUT/lib" -maxdepth 1 -type f -printf '%f ')"
