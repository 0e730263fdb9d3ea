#!/usr/bin/env bash
# The GPU checks as one prepared run on a lent GPU machine that has no Bazel
# and no network (kernels/GPU_RESULTS.md records what they gave).
#
#   kernels/bundle/device_checks.sh prepare   here: builds and fills .gpu/
#   bash .gpu/device_checks.sh run            there, with .gpu carried
#
# prepare puts in .gpu/ (git-ignored through .git/info/exclude): the GPU
# bundle, certify and scale_bench with their runfiles, the two shared
# libraries certify needs beyond glibc (libelf, jansson), the kernels'
# manifests, and the pinned apache-tvm-ffi wheel for Python 3.12 (the GPU
# image's Python) so that the PyTorch client test runs instead of skipping.
# run writes its logs and reports to $OUT (or ./device-out): the bundle
# strict and under --memcheck, scale_bench with the GPU, certify of
# libscale_cuda.so with its manifest. Exit status 1 if any step failed.
set -uo pipefail

prepare() {
  local root dir
  root=$(cd "$(dirname "$0")/../.." && pwd)
  dir=$root/.gpu
  cd "$root" || exit 1
  mkdir -p .git/info
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo /.gpu/ >>.git/info/exclude
  bazel build //kernels:gpu_bundle //tools:certify //tools/bench:scale_bench || exit 1
  rm -rf "$dir" && mkdir -p "$dir/libs" "$dir/whl"
  cp -L bazel-bin/kernels/gpu_bundle.tar.gz bazel-bin/tools/certify/certify "$dir/"
  cp -rL bazel-bin/tools/certify/certify.runfiles bazel-bin/tools/bench/scale_bench.runfiles "$dir/"
  ldd bazel-bin/tools/certify/certify | awk '/libelf|libjansson/ {print $3}' |
    xargs -r cp -L -t "$dir/libs/"
  cp kernels/scale_cuda.manifest.json kernels/scale_cpu.manifest.json "$0" "$dir/"
  local pin
  pin=$(sed -n 's/^apache-tvm-ffi==//p' tools/requirements.txt)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    -d "$dir/whl" "apache-tvm-ffi==${pin:?no apache-tvm-ffi pin in tools/requirements.txt}" || exit 1
  du -sh "$dir"
  echo "device_checks: ready; on the GPU machine: bash .gpu/device_checks.sh run (carry .gpu)"
}

run() {
  local g b out=${OUT:-$PWD/device-out} status=0 t0
  g=$(cd "$(dirname "$0")" && pwd)
  b=/tmp/device_checks/gpu_bundle
  mkdir -p "$out"
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -1; compute-sanitizer --version | tail -1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/device_checks/site "$g"/whl/*.whl && export PYTHONPATH=/tmp/device_checks/site
  python3 -c 'import tvm_ffi, torch; print("tvm_ffi", tvm_ffi.__version__, "torch", torch.__version__)'
  rm -rf "$b" && mkdir -p /tmp/device_checks && tar xzf "$g/gpu_bundle.tar.gz" -C /tmp/device_checks
  step() { # step NAME LOG TIMEOUT CMD...: runs one check, its tail on stdout
    local name=$1 log=$2 limit=$3; shift 3
    t0=$SECONDS
    timeout "$limit" "$@" >"$out/$log" 2>&1
    local rc=$?
    echo "=== $name: exit $rc ($((SECONDS - t0)) s)"; tail -n 14 "$out/$log"
    [ $rc -eq 0 ] || status=1
  }
  step "GPU bundle, strict" bundle.log 150 "$b/run_gpu_tests.sh"
  step "GPU bundle, memcheck" memcheck.log 240 "$b/run_gpu_tests.sh" --memcheck
  LD_LIBRARY_PATH=$b/lib/cuda RUNFILES_DIR=$g/scale_bench.runfiles \
    step "scale_bench" scale_bench.log 120 python3 \
    "$g/scale_bench.runfiles/tvm_ffi_conformance/tools/bench/scale_bench.py" --rounds 5 \
    --json "$out/scale_bench.json"
  cp "$b/runfiles/tvm_ffi_conformance/kernels/libscale_cuda.so" /tmp/device_checks/
  LD_LIBRARY_PATH=$g/libs:$b/lib/cuda step "certify libscale_cuda.so" certify.log 120 \
    "$g/certify" /tmp/device_checks/libscale_cuda.so --manifest "$g/scale_cuda.manifest.json" \
    --json "$out/certify.json" --html "$out/certify.html"
  return $status
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) sed -n '2,16p' "$0"; exit 2 ;;
esac
