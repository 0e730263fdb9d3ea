#!/usr/bin/env bash
# The GPU bundle, unpacked into a temporary directory and run on this
# machine, which has no GPU: it must hold both runtimes, the kernels and the
# libraries it promises; non-strict its runner must say that the GPU tests
# skipped, count nothing as failed and exit 0; strict (its default) it must
# count those skips as failures and exit non-zero.
set -uo pipefail

fail() { echo "gpu_bundle_test: FAIL: $*" >&2; exit 1; }

bundle=$(find -L "${TEST_SRCDIR:-.}" -name gpu_bundle.tar.gz | head -1)
[ -n "$bundle" ] || fail "gpu_bundle.tar.gz is not in the runfiles"
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/bundle.XXXXXX")
tar xzf "$bundle" -C "$tmp" || fail "cannot unpack $bundle"
b=$tmp/gpu_bundle
export TMPDIR=$tmp # the runner's logs

for f in run_gpu_tests.sh TESTS README.md lib/libcriterion.so.3 lib/cuda/libcudart.so.13 \
  runfiles/tvm_ffi_upstream/lib/libtvm_ffi.so; do
  [ -e "$b/$f" ] || fail "the bundle lacks $f"
done
ws=$(cat "$b/WORKSPACE_NAME")
for f in reference/libtvm_ffi.so kernels/libscale_cuda.so kernels/libscale_cpu.so \
  kernels/scale_cuda_test kernels/scale_torch_test.py kernels/fixtures/libbad_ignores_stream.so \
  kernels/fixtures/libbad_waits.so; do
  [ -e "$b/runfiles/$ws/$f" ] || fail "the bundle lacks runfiles/$ws/$f"
done
find "$b" -type l | grep -q . && fail "the bundle holds symbolic links: $(find "$b" -type l | head -3)"

# On a machine with a GPU (kernels/run_gpu_checks.sh runs this test there
# too) the strict run must pass outright.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  out=$("$b/run_gpu_tests.sh" --only scale_cuda_test 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] || fail "strict run on a GPU machine exited $rc"
  echo "$out" | tail -1 | grep -qE '^[1-9][0-9]* passed, 0 failed$' || fail "strict run on a GPU"
  echo "gpu_bundle_test: ok (GPU)"
  exit 0
fi

# Non-strict, the CUDA tests only (the rest is covered by bazel test).
out=$("$b/run_gpu_tests.sh" --no-strict --only scale_cuda_test,scale_torch_test 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "non-strict run exited $rc"
echo "$out" | grep -q '^run_gpu_tests: no GPU visible' || fail "the runner did not say there is no GPU"
echo "$out" | grep -qE '^[1-9][0-9]* skipped \(not counted: non-strict mode\)$' \
  || fail "the runner did not report the skips"
echo "$out" | grep -q 'scale_cuda_test \[reference\]: 2 passed, 0 failed, 10 skipped' \
  || fail "scale_cuda_test against the reference: not 2 passed and 10 skipped"
echo "$out" | grep -q 'scale_cuda_test \[upstream\]: 2 passed, 0 failed, 10 skipped' \
  || fail "scale_cuda_test against upstream: not 2 passed and 10 skipped"
last=$(echo "$out" | tail -1)
[ "$last" = "4 passed, 0 failed" ] || fail "non-strict last line: $last"

# Strict: the same skips are failures.
out=$("$b/run_gpu_tests.sh" --only scale_cuda_test 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "strict run exited 0 with skipped GPU tests"
last=$(echo "$out" | tail -1)
[ "$last" = "4 passed, 20 failed" ] || fail "strict last line: $last"
echo "gpu_bundle_test: ok"
