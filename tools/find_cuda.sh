#!/bin/sh
# Finds the CUDA toolkit the build uses, in the order users expect:
#   1. $CUDA_HOME, then $CUDA_PATH
#   2. nvcc on PATH
#   3. /usr/local/cuda
#   4. NVIDIA's toolkit wheels in the project venv (.venv/lib/python3*/
#      site-packages/nvidia/cu13), which tools/bootstrap.sh installs when
#      1-3 find nothing.
# The one place this is decided: tools/bootstrap.sh and the Bazel
# repository @cuda (tools/bazel/cuda.bzl) both ask this script.
#
# Usage: tools/find_cuda.sh [--system]   (--system: skip step 4)
# Prints key=value lines (found_by, nvcc, include, lib, cudart) and exits 0,
# or prints "none: <what was looked at>" and exits 1.
#
# The wheels ship only a versioned libcudart.so.13, so the link flag names
# the file then (-l:libcudart.so.13); a toolkit install has libcudart.so.
checkout=$(cd "$(dirname "$0")/.." && pwd)

# ROOT BY: prints the toolkit at ROOT and exits, if ROOT has bin/nvcc.
try_root() {
  [ -x "$1/bin/nvcc" ] || return 0
  lib=""
  cudart=-lcudart
  for d in "$1/lib64" "$1/lib" "$1/targets/x86_64-linux/lib"; do
    if [ -e "$d/libcudart.so" ]; then
      lib=$d
      break
    fi
    versioned=$(printf '%s\n' "$d"/libcudart.so.[0-9]* | sort | head -n 1)
    [ -e "$versioned" ] || versioned=
    if [ -n "$versioned" ]; then
      lib=$d
      cudart=-l:$(basename "$versioned")
      break
    fi
  done
  echo "found_by=$2"
  echo "nvcc=$1/bin/nvcc"
  echo "include=$1/include"
  # Empty: libcudart is where the linker looks anyway (a distribution package).
  echo "lib=$lib"
  echo "cudart=$cudart"
  exit 0
}

# The second argument is the variable's name, printed as found_by.
# shellcheck disable=SC2016
[ -n "${CUDA_HOME:-}" ] && try_root "$CUDA_HOME" '$CUDA_HOME'
# shellcheck disable=SC2016
[ -n "${CUDA_PATH:-}" ] && try_root "$CUDA_PATH" '$CUDA_PATH'
on_path=$(command -v nvcc 2>/dev/null)
if [ -n "$on_path" ]; then
  try_root "$(dirname "$(dirname "$(readlink -f "$on_path")")")" "nvcc on PATH"
  # A distribution's /usr/bin/nvcc wrapper: headers and libraries are in
  # the default search paths.
  echo "found_by=nvcc on PATH"
  echo "nvcc=$on_path"
  echo "include="
  echo "lib="
  echo "cudart=-lcudart"
  exit 0
fi
try_root /usr/local/cuda /usr/local/cuda
if [ "${1:-}" != "--system" ]; then
  for root in "$checkout"/.venv/lib/python3*/site-packages/nvidia/cu13; do
    try_root "$root" "the project venv's NVIDIA wheels"
  done
fi
where="\$CUDA_HOME (${CUDA_HOME:-unset}), \$CUDA_PATH (${CUDA_PATH:-unset}), PATH, /usr/local/cuda"
if [ "${1:-}" != "--system" ]; then
  where="$where, $checkout/.venv (tools/bootstrap.sh installs NVIDIA's wheels there)"
fi
echo "none: no bin/nvcc in $where"
exit 1
