#!/bin/bash
# Builds upstream's libtvm_ffi.so from its PyPI source archive, instrumented
# for fuzzing: clang-14 with -fsanitize=fuzzer-no-link,address,undefined, so
# that a harness loading it (TVMFFI_IMPL=<the path printed>) gets libFuzzer
# coverage from upstream's own code and ASan/UBSan reports from inside it.
#
#   fuzz/build_upstream.sh [--release X] [--jobs N] [--print-path]
#   bazel run //fuzz:build_upstream -- --release X
#
# The archive and the build are cached under
#   ${TVMFFI_CONFORMANCE_CACHE:-~/.cache/tvm-ffi-conformance}/upstream-fuzz/X/
# and never committed; a second run prints the cached path at once. The
# release defaults to the pinned one (tools/requirements.txt).
#
# How it differs from upstream's own (CMake) build, and why:
#   - TVM_FFI_USE_LIBBACKTRACE=0: libbacktrace is a vendored autotools
#     library; errors still carry upstream's backtrace text without it.
#   - TVM_FFI_BACKTRACE_ON_SEGFAULT=0: upstream's SIGSEGV handler would
#     replace the sanitizers' and libFuzzer's, which must see the crash.
#   - -fno-sanitize=vptr: the vptr check compares type_info across objects,
#     and upstream hides its classes' (-fvisibility=hidden): false reports.
#   - UBSan's checks stay recoverable (clang's default), so that a run can
#     suppress what fuzz/upstream_ubsan.supp lists and halt on the rest
#     (UBSAN_OPTIONS=halt_on_error=1:suppressions=...; ASan always halts).
# The host program must link the C++ sanitizer runtimes (the harnesses do:
# -fsanitize-link-c++-runtime, or a link with clang++).
# Every other flag, define and source file is upstream's (the sources are
# the ones its CMakeLists.txt lists, so each release builds what it ships).
set -euo pipefail

ROOT=${BUILD_WORKSPACE_DIRECTORY:-$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)}
release=""
jobs=1
print_path=0
while [ $# -gt 0 ]; do
  case "$1" in
    --release) release=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --print-path) print_path=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "build_upstream: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$release" ]; then
  release=$(sed -n 's/^apache-tvm-ffi==\([^ ;]*\).*/\1/p' "$ROOT/tools/requirements.txt" | head -1)
fi
[ -n "$release" ] || { echo "build_upstream: no --release and no pin in tools/requirements.txt" >&2; exit 2; }

CXX=${FUZZ_UPSTREAM_CXX:-clang++-14}
SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr"
FLAGS="-std=c++17 -fPIC -O1 -g -fno-omit-frame-pointer -fvisibility=hidden -fvisibility-inlines-hidden"
DEFS="-DTVM_FFI_USE_LIBBACKTRACE=0 -DTVM_FFI_BACKTRACE_ON_SEGFAULT=0 -DTVM_FFI_CMAKE_LITTLE_ENDIAN=1"

cache=${TVMFFI_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tvm-ffi-conformance}
dir="$cache/upstream-fuzz/$release"
# The flags are part of the key: a change rebuilds.
key=$(printf '%s\n' "$CXX" "$SAN" "$FLAGS" "$DEFS" | sha1sum | cut -c1-12)
lib="$dir/$key/lib/libtvm_ffi.so"
if [ -f "$lib" ]; then
  [ "$print_path" = 1 ] || echo "build_upstream: cached: $lib" >&2
  echo "$lib"
  exit 0
fi

mkdir -p "$dir/sdist"
archive=$(find "$dir/sdist" -maxdepth 1 -name "apache_tvm_ffi-$release.tar.gz" | head -1)
if [ -z "$archive" ]; then
  python=${PYTHON:-$ROOT/.venv/bin/python3}
  [ -x "$python" ] || python=python3
  echo "build_upstream: fetching the source archive of apache-tvm-ffi==$release (pip download)" >&2
  "$python" -m pip download --quiet --no-deps --no-binary apache-tvm-ffi \
      "apache-tvm-ffi==$release" -d "$dir/sdist" >&2
  archive=$(find "$dir/sdist" -maxdepth 1 -name 'apache_tvm_ffi-*.tar.gz' | head -1)
fi

build=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$build"' EXIT
tar -xzf "$archive" -C "$build"
src=$(find "$build" -mindepth 1 -maxdepth 1 -type d -name 'apache_tvm_ffi-*' | head -1)

# The library's sources as its CMakeLists.txt names them (never testing/).
# shellcheck disable=SC2016  # ${CMAKE_CURRENT_SOURCE_DIR} is CMake's, matched as text
mapfile -t sources < <(grep -o '"${CMAKE_CURRENT_SOURCE_DIR}/src/ffi/[^"]*\.cc"' "$src/CMakeLists.txt" \
                       | tr -d '"' | sed "s|\${CMAKE_CURRENT_SOURCE_DIR}/||" | grep -v '/testing/' | sort -u)
[ "${#sources[@]}" -gt 0 ] || { echo "build_upstream: no sources found in CMakeLists.txt" >&2; exit 1; }
echo "build_upstream: compiling ${#sources[@]} sources of $release with $CXX ($SAN), $jobs at a time" >&2

compile() {
  local s=$1 obj
  obj="$build/obj/$(echo "$s" | tr '/' '_').o"
  # shellcheck disable=SC2086
  $CXX $FLAGS $SAN $DEFS -I"$src/include" -I"$src/3rdparty/dlpack/include" -c "$src/$s" -o "$obj"
  echo "  $s" >&2
}
export -f compile
export CXX FLAGS SAN DEFS src build
mkdir -p "$build/obj"
printf '%s\n' "${sources[@]}" | xargs -P "$jobs" -I{} bash -c 'compile "$@"' _ {}

mkdir -p "$dir/$key/lib"
# shellcheck disable=SC2086
$CXX -shared $SAN -o "$lib.tmp" "$build"/obj/*.o -ldl -lpthread
mv "$lib.tmp" "$lib"
printf 'release %s\nflags %s %s %s\nsources %s\n' "$release" "$FLAGS" "$SAN" "$DEFS" "${sources[*]}" \
  > "$dir/$key/BUILD_INFO"
echo "build_upstream: built $lib" >&2
echo "$lib"
