#!/usr/bin/env bash
# Runs the GPU clauses of the scale kernel (KER-041..043, DEV-001, 002, 005,
# 007 in kernels/scale_cuda_test.c, plus everything else in //kernels) on a
# machine with an NVIDIA GPU, against the reference runtime and against
# upstream. Without a GPU those tests SKIP; here a SKIP is a failure, since
# the point of this script is that they run.
#
# Where there is no Bazel, the GPU bundle does the same from one tarball:
# bazel build //kernels:gpu_bundle elsewhere, then gpu_bundle/run_gpu_tests.sh
# (kernels/bundle/README.md), with --memcheck for compute-sanitizer.
#
# Usage: kernels/run_gpu_checks.sh            (from anywhere in the tree)
# Env:   BAZEL_OUTPUT_BASE (default ~/.cache/bazel-gpu-checks)
set -euo pipefail

cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "run_gpu_checks: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 2
fi

output_base="${BAZEL_OUTPUT_BASE:-$HOME/.cache/bazel-gpu-checks}"
bazel=(bazel "--output_base=$output_base")
targets=(//kernels:all)
logs="$("${bazel[@]}" info bazel-testlogs 2>/dev/null)"

status=0
for impl in reference upstream; do
  echo "=== //kernels against the $impl runtime"
  if ! "${bazel[@]}" test "${targets[@]}" --test_env="TVMFFI_IMPL=$impl" \
      --cache_test_results=no --test_output=errors; then
    status=1
  fi
  # The GPU tests must have run, not skipped.
  for t in scale_cuda_test scale_devices_test; do
    log="$logs/kernels/$t/test.log"
    grep -E '^\[(PASS|FAIL|SKIP)' "$log" | sed "s/^/  [$impl] /" || true
    if grep -q '^\[SKIP\]' "$log"; then
      echo "run_gpu_checks: $t skipped tests on a GPU machine ($impl)" >&2
      status=1
    fi
  done
done
exit "$status"
