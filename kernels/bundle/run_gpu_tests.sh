#!/usr/bin/env bash
# Runs the kernel tests of this bundle against both runtimes (the reference
# runtime and the pinned upstream libtvm_ffi.so, both inside the bundle),
# then the PyTorch client test, and ends with "N passed, N failed".
#
# Usage: ./run_gpu_tests.sh [--no-strict] [--memcheck] [--impl reference|upstream]
#                           [--only NAME[,NAME...]] [--python PYTHON]
#   strict (the default): a SKIP counts as a failure, since on a GPU machine
#       every test must really run. --no-strict reports skips without
#       counting them (for machines without a GPU, such as CI).
#   --memcheck: the tests that load the CUDA kernel run under
#       compute-sanitizer --tool memcheck; any memory error is a failure.
#       A test binary that ends without initialising CUDA (all its calls
#       refused before the kernel reaches the CUDA runtime) is not an error
#       (--require-cuda-init no). CUDA API errors are not reported
#       (--report-api-errors no): several
#       tests make them on purpose (KER-040, KER-043: a device index that
#       does not exist) and every test asserts the result of each CUDA call
#       it makes itself, so an unexpected one already fails the test.
#   --only: test binaries by name (scale_cuda_test, ..., scale_torch_test).
# Exit status: 0 when nothing failed, 1 otherwise, 2 on a usage error.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
strict=1 memcheck=0 impls="reference upstream" only="" python=${PYTHON:-python3}
while [ $# -gt 0 ]; do
  case "$1" in
    --no-strict) strict=0 ;;
    --strict) strict=1 ;;
    --memcheck) memcheck=1 ;;
    --impl) impls=$2; shift ;;
    --only) only=",$2,"; shift ;;
    --python) python=$2; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run_gpu_tests: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

workspace=$(cat "$here/WORKSPACE_NAME")
export TEST_SRCDIR="$here/runfiles" RUNFILES_DIR="$here/runfiles" TEST_WORKSPACE="$workspace"
native_libs="$here/lib:$here/lib/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
logs=$(mktemp -d "${TMPDIR:-/tmp}/gpu_bundle_logs.XXXXXX")

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >"$logs/gpus" 2>&1; then
  echo "run_gpu_tests: GPUs:"; sed 's/^/  /' "$logs/gpus"
else
  echo "run_gpu_tests: no GPU visible (nvidia-smi -L failed or is absent): the GPU tests will SKIP"
fi
echo "run_gpu_tests: mode: $([ $strict = 1 ] && echo 'strict (a SKIP is a failure)' || echo 'non-strict (skips reported, not counted)')"
sanitizer=()
if [ $memcheck = 1 ]; then
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ ! -x "$cs" ]; then
    echo "run_gpu_tests: --memcheck: compute-sanitizer not found (PATH, /usr/local/cuda/bin)" >&2
    exit 2
  fi
  sanitizer=("$cs" --tool memcheck --target-processes all --require-cuda-init no
             --report-api-errors no --print-limit 50)
fi

passed=0 failed=0 skipped=0 memerrors=0
count() { # count NAME IMPL LOG RC: TAP lines of one run
  local name=$1 impl=$2 log=$3 rc=$4 p f s
  p=$(grep -cE '^ok - ' "$log" | tr -d ' ')
  s=$(grep -cE '^ok - .*# SKIP' "$log" | tr -d ' ')
  f=$(grep -cE '^not ok - ' "$log" | tr -d ' ')
  p=$((p - s))
  grep -E '^not ok - |# SKIP' "$log" | sed "s/^/  [$impl] /"
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "  [$impl] $name exited with status $rc without a failing test (crash?): see $log"
    f=1
  fi
  if [ $strict = 1 ]; then f=$((f + s)); else skipped=$((skipped + s)); fi
  passed=$((passed + p)) failed=$((failed + f))
  echo "$name [$impl]: $p passed, $f failed, $s skipped"
}

wanted() { [ -z "$only" ] || [[ "$only" == *",$(basename "${1%.py}"),"* ]]; }

while read -r t; do
  [ -n "$t" ] || continue
  wanted "$t" || continue
  name=$(basename "${t%.py}")
  case "$t" in
    *.py)
      log="$logs/$name.log"
      LD_LIBRARY_PATH="$here/lib/cuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        "$python" "$here/runfiles/$t" --tap \
        --lib "$here/runfiles/$workspace/kernels/libscale_cuda.so" >"$log" 2>&1
      count "$name" "pip tvm_ffi" "$log" $?
      ;;
    *)
      for impl in $impls; do
        log="$logs/$name.$impl.log"
        run=("$here/runfiles/$t" --tap)
        uses_cuda=0
        grep -q 'libscale_cuda\|libbad_ignores_stream' "$here/runfiles/$t" 2>/dev/null && uses_cuda=1
        if [ $memcheck = 1 ] && [ $uses_cuda = 1 ]; then run=("${sanitizer[@]}" "${run[@]}" --jobs 1); fi
        TVMFFI_IMPL=$impl LD_LIBRARY_PATH="$native_libs" "${run[@]}" >"$log" 2>&1
        rc=$?
        count "$name" "$impl" "$log" "$rc"
        if [ $memcheck = 1 ] && [ $uses_cuda = 1 ]; then
          n=$(grep -oE 'ERROR SUMMARY: [0-9]+ error' "$log" | awk '{s += $3} END {print s + 0}')
          echo "$name [$impl]: compute-sanitizer memcheck: $n memory errors"
          if [ "$n" -ne 0 ]; then
            grep -E '^========= ' "$log" | grep -v 'ERROR SUMMARY: 0' | head -40 | sed "s/^/  [$impl] /"
            memerrors=$((memerrors + n)) failed=$((failed + 1))
          fi
        fi
      done
      ;;
  esac
done <"$here/TESTS"

[ $memcheck = 1 ] && echo "memcheck: $memerrors memory errors in all"
[ $strict = 0 ] && [ $skipped -gt 0 ] && echo "$skipped skipped (not counted: non-strict mode)"
echo "logs: $logs"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
