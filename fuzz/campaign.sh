#!/bin/bash
# One fuzzing campaign: a harness against an implementation for a budget of
# CPU time (not wall time: on a shared machine a niced run gets what the
# others leave), in libFuzzer's -fork mode with one job, so that a crash is
# a finding and the run goes on.
#
#   bazel build --config=fuzz //fuzz:all
#   fuzz/campaign.sh HARNESS IMPL CPU_SECONDS [OUT]
#
# IMPL: reference, upstream (the pip library, fuzzed blind), upstream-fuzz
# (fuzz/build_upstream.sh's instrumented build), or a path. For a kernel
# campaign (HARNESS=kernel) set FUZZ_KERNEL (and FUZZ_KERNEL_MANIFEST).
# OUT (default ~/.cache/tvm-ffi-conformance/campaign/HARNESS-IMPL) gets the
# new corpus (corpus/), crash artifacts (artifacts/, and artifacts.cpu: the
# CPU seconds at which each appeared), libFuzzer's log and one line of
# results.tsv:
#   date harness impl cpu_s execs execs_per_cpu_s cov ft corpus crashes
#   ooms timeouts first_crash_cpu_s wall_s
# CAMPAIGN_NICE (default 19) is the niceness it runs at; CAMPAIGN_WALL
# (seconds) also stops it after that much wall time, whatever CPU time it
# got by then (on a busy shared machine): results.tsv has both.
# Against a library other than the reference, the clause checks and error
# kinds that spec/deviations.md tolerates for its release are tolerated
# (FUZZ_TOLERATE), as fuzz/replay_test.py does, and upstream's known UBSan
# reports are suppressed (fuzz/upstream_ubsan.supp).
set -uo pipefail

ROOT=${TVMFFI_CONFORMANCE_ROOT:-$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)}
harness=${1:?harness}
impl=${2:?impl}
budget=${3:?cpu seconds}
out=${4:-${TVMFFI_CONFORMANCE_CACHE:-$HOME/.cache/tvm-ffi-conformance}/campaign/$harness-$impl}

# --config=fuzz's output tree (bazel-bin follows whichever configuration
# built last), copied: a rebuild during the campaign must not change it.
built="$ROOT/bazel-out/k8-fastbuildfuzz/bin/fuzz/$harness"
[ -x "$built" ] || { echo "campaign: build it first: bazel build --config=fuzz //fuzz:$harness" >&2; exit 2; }
grep -q LLVMFuzzerRunDriver "$built" || { echo "campaign: $built is not a libFuzzer build" >&2; exit 2; }
rm -rf "${out:?}/bin"
mkdir -p "$out/bin"
cp -L "$built" "$out/bin/" && cp -rL "$built.runfiles" "$out/bin/" || exit 1
bin="$out/bin/$harness"
runfiles="$bin.runfiles/tvm_ffi_conformance"

case "$impl" in
  reference) export TVMFFI_IMPL=reference ;;
  upstream) export TVMFFI_IMPL=upstream ;;
  upstream-fuzz) TVMFFI_IMPL=$("$ROOT/fuzz/build_upstream.sh" --print-path) || exit 1; export TVMFFI_IMPL ;;
  *) export TVMFFI_IMPL=$impl ;;
esac

mkdir -p "$out/corpus" "$out/artifacts"
log="$out/log.txt"

# What the release tolerates (spec/deviations.md's "Fuzz tolerates:").
if [ "$impl" != reference ]; then
  version=$(cd "$runfiles" && "$bin" -runs=0 /dev/null 2>&1 | sed -n 's/.*TVMFFIGetVersion \([0-9.]*\).*/\1/p' | head -1)
  FUZZ_TOLERATE=$(awk -v v="$version" '
      /^## / { on = index($0, "reports " v ")") > 0 }
      on && /^Fuzz tolerates:/ { while (match($0, /`[^`]+`/)) { printf "%s%s", sep, substr($0, RSTART + 1, RLENGTH - 2); sep = ","; $0 = substr($0, RSTART + RLENGTH) } }
    ' "$ROOT/spec/deviations.md")
  export FUZZ_TOLERATE
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$ROOT/fuzz/upstream_ubsan.supp"
fi

flags=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -rss_limit_mb=2048
       -malloc_limit_mb=1024 -timeout=10 -max_len=4096 -max_total_time=86400
       -artifact_prefix="$out/artifacts/" -print_final_stats=1)
[ -f "$ROOT/fuzz/dict/$harness.dict" ] && flags+=(-dict="$ROOT/fuzz/dict/$harness.dict")

# CPU seconds of a process and everything below it (finished children
# included, through the parent's cutime/cstime).
tree_cpu() {
  local pid=$1 ticks
  ticks=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$pid/stat" 2>/dev/null || echo 0)
  for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
    ticks=$((ticks + $(tree_cpu "$child") ))
  done
  echo "$ticks"
}

kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$child"; done
  kill "$1" 2>/dev/null
}

hz=$(getconf CLK_TCK)
started=$(date -u +%Y-%m-%dT%H:%MZ)
t0=$(date +%s)
echo "campaign: $harness on $TVMFFI_IMPL for $budget CPU s -> $out" | tee "$log"
[ -n "${FUZZ_TOLERATE:-}" ] && echo "campaign: tolerated (spec/deviations.md): $FUZZ_TOLERATE" | tee -a "$log"
(cd "$runfiles" && exec nice -n "${CAMPAIGN_NICE:-19}" "$bin" "${flags[@]}" "$out/corpus" "fuzz/corpus/$harness") >> "$log" 2>&1 &
pid=$!
first_crash=""
# Artifacts of earlier campaigns in the same folder are not this one's.
ls "$out/artifacts" > "$out/artifacts.seen"
while kill -0 "$pid" 2>/dev/null; do
  sleep 10
  cpu=$(( $(tree_cpu "$pid") / hz ))
  # Each new artifact, with the CPU time it took to find (10 s resolution).
  for a in "$out"/artifacts/*; do
    [ -e "$a" ] || continue
    grep -qxF "$(basename "$a")" "$out/artifacts.seen" 2>/dev/null && continue
    basename "$a" >> "$out/artifacts.seen"
    echo "$cpu	$(basename "$a")" >> "$out/artifacts.cpu"
    [ -z "$first_crash" ] && first_crash=$cpu
  done
  wall=$(( $(date +%s) - t0 ))
  if [ "$cpu" -ge "$budget" ] || { [ -n "${CAMPAIGN_WALL:-}" ] && [ "$wall" -ge "$CAMPAIGN_WALL" ]; }; then
    kill -INT "$pid" 2>/dev/null
    sleep 5
    kill_tree "$pid"
    break
  fi
done
wait "$pid" 2>/dev/null
cpu=${cpu:-0}
wall=$(( $(date +%s) - t0 ))

# The last progress line of the fork-mode parent:
#   #N: cov: C ft: F corp: K exec/s: E oom/timeout/crash: O/T/X time: Ss job: J ...
last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<< "$last")
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
IFS=/ read -r ooms timeouts crashes <<< "$(sed -n 's|.*oom/timeout/crash: \([0-9/]*\).*|\1|p' <<< "$last")"
rate=$(( ${execs:-0} / (cpu > 0 ? cpu : 1) ))
line="$started	$harness	$impl	$cpu	${execs:-0}	$rate	${cov:-?}	${ft:-?}	${corp:-?}	${crashes:-0}	${ooms:-0}	${timeouts:-0}	${first_crash:--}	$wall"
echo "$line" >> "$out/results.tsv"
echo "campaign: done: cpu ${cpu}s (wall ${wall}s), ${execs:-0} execs (${rate}/cpu s), cov ${cov:-?}, corpus ${corp:-?}," \
     "crashes ${crashes:-0}, ooms ${ooms:-0}, timeouts ${timeouts:-0}, first crash at ${first_crash:--} cpu s" | tee -a "$log"
