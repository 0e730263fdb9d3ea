"""Driver of abi_bench: the ABI operations of bench_ops.c, reference vs upstream.

For each runtime (the reference and upstream's pip library) and operation:
  - instructions per operation: `abi_bench_core --op OP --iters N` under
    `valgrind --tool=callgrind` for N and 2N; (I(2N) - I(N)) / N, since
    loading and setup are the same in both runs;
  - for the module loads, the peak heap of one load: `valgrind --tool=massif`
    with 0 and 1 iterations, the difference of the two peaks;
  - wall-clock ns per operation: one native run with both runtimes loaded,
    median, min and max over timed batches.
Every figure is reported gross (as measured) and net: minus the op
"baseline", the benchmark loop around an empty callee, measured in the same
run the same way (callgrind 2N - N, and wall clock). The ratios and targets
use the net figures, so that the loop's own instructions, the same for both
runtimes, do not pull the ratios of small operations towards 1.
Targets: every op at or under upstream's net instructions (required); for
an op with a floor (the C library's share of it, no runtime call), net
instructions at most 1.3x the floor's (the aim); peak heap of a load at or
under upstream's (required). The table gives each op's ratio to upstream
beside its ratio to its floor and says which target it meets.
Prints a line per measurement as it goes (and at least one every 10 s),
then the table, says in words where an op's floor alone costs more than
upstream's whole op, and writes JSON (--json PATH, default abi_bench.json in the
directory `bazel run` was started from). `--check` only runs every operation
a few times against both runtimes (the smoke test; no timing).

Usage: bazel run //tools/bench:abi_bench -- [--n N] [--ms T] [--batches K] [--json PATH]
       [--reference LIB]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from tools import progress

# Operation -> callgrind iterations N. Every operation but the baseline and
# the floors has the same required target (issue 32): net instructions at or
# under upstream's, measured in the same run. The baseline is what the
# others are net of; a floor is the C library's share of an op (below).
OPS = {
    "baseline": 20000,
    "call0_self": 20000, "call0": 20000, "call1_int": 20000, "call3_int": 20000,
    "call8_int": 20000, "call1_tensor": 20000, "call3_tensor": 20000, "call8_tensor": 20000,
    "module_call": 20000, "stream": 20000, "raise": 5000, "owned_short": 20000,
    "owned_long": 20000, "incref_decref": 20000, "dlpack_4d": 20000,
    "load_1": 20, "load_100": 10, "load_10000": 2,
    "floor_owned_long": 20000, "floor_dlpack_4d": 20000, "floor_load_1": 20,
}
NOT_JUDGED = {"baseline", "floor_owned_long", "floor_dlpack_4d", "floor_load_1"}
UPSTREAM_TARGET = 1.0  # net reference / net upstream, required
FLOOR_AIM = 1.3        # net reference / net floor, the aim where an op has a floor
# Op -> its floor: the C library work no runtime can skip (bench_ops.c),
# measured in the reference's process.
FLOORS = {"owned_long": "floor_owned_long", "dlpack_4d": "floor_dlpack_4d",
          "load_1": "floor_load_1"}
# What each floor does, in words (bench_ops.c).
FLOOR_WORK = {"floor_owned_long": "strlen, malloc, memcpy and free of the string",
              "floor_dlpack_4d": "malloc of the object, the DLTensor and its strides, free and the deleter",
              "floor_load_1": "dlopen, dlsym of the two symbols and dlclose"}
LOADS = {"load_1": 1, "load_100": 100, "load_10000": 10000}


def runfile(rel: str) -> str:
    """Absolute path of a runfile, whether run by `bazel run`, `bazel test` or directly."""
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [os.environ.get("RUNFILES_DIR", ""), os.environ.get("TEST_SRCDIR", ""),
             here + "/../..", here + "/../../.."]
    for root in roots:
        for cand in (os.path.join(root, "tvm_ffi_conformance", rel), os.path.join(root, rel)):
            if root and os.path.exists(cand):
                return os.path.abspath(cand)
    raise SystemExit(f"abi_bench: runfile {rel} not found")


class Core:
    def __init__(self, reference=None):
        self.path = runfile("tools/bench/abi_bench_core")
        self.mods = [runfile(f"tools/bench/bench_lib_{n}.so") for n in (1, 100, 10000)]
        self.libs = {"reference": reference or runfile("reference/libtvm_ffi.so"),
                     "upstream": runfile("../tvm_ffi_upstream/lib/libtvm_ffi.so")}

    def cmd(self, *args):
        return [self.path, "--mods", ",".join(self.mods), *args]

    def both(self):
        out = []
        for name, lib in self.libs.items():
            out += ["--lib", f"{name}={lib}"]
        return out


def valgrind(core: Core, tool: str, lib: str, op: str, iters: int, out: str):
    cmd = ["valgrind", f"--tool={tool}", f"--{tool}-out-file={out}"]
    if tool == "massif":
        cmd += ["--peak-inaccuracy=0.0", "--detailed-freq=1000000"]
    cmd += core.cmd("--lib", lib, "--op", op, "--iters", str(iters))
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"abi_bench: {' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    with open(out) as f:
        return f.read()


def instructions(core, lib, op, n, tmp):
    totals = []
    for iters in (n, 2 * n):
        text = valgrind(core, "callgrind", lib, op, iters, os.path.join(tmp, "cg.out"))
        m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
        if not m:
            raise SystemExit("abi_bench: no instruction total in callgrind output")
        totals.append(int(m.group(1)))
    return (totals[1] - totals[0]) / n


def peak_heap(core, lib, op, tmp):
    peaks = []
    for iters in (0, 1):
        text = valgrind(core, "massif", lib, op, iters, os.path.join(tmp, "massif.out"))
        heap = [int(a) + int(b) for a, b in
                re.findall(r"mem_heap_B=(\d+)\nmem_heap_extra_B=(\d+)", text)]
        peaks.append(max(heap) if heap else 0)
    return peaks[1] - peaks[0]


def ratio(a, b):
    return a / b if a is not None and b else None


def net_ns(w, base, op):
    """Median ns minus the baseline's median (the baseline itself stays gross);
    None when the op's median is not above the loop's own: noise decides it."""
    if w is None or base is None:
        return None
    if op == "baseline":
        return w["median"]
    return w["median"] - base if w["median"] > base else None


def fmt(x, spec):
    """x formatted, or "-" padded to the same width."""
    if x is not None:
        return format(x, spec)
    width = spec.split(".")[0]
    return format("-", ">" + width) if width.isdigit() else "-"


def say(text):
    print(f"abi_bench: {text}", file=sys.stderr, flush=True)


def measure(core: Core, args) -> dict:
    instr = {name: {} for name in core.libs}
    heap = {name: {} for name in core.libs}
    steps, doing = len(core.libs) * len(OPS), ["starting"]
    with progress.Heartbeat(lambda: doing[0], say) as beat, tempfile.TemporaryDirectory() as tmp:
        for name, lib in core.libs.items():
            for op, n in OPS.items():
                step = len(instr["reference"]) + len(instr["upstream"]) + 1
                doing[0] = f"[{step:2}/{steps}] {name} {op}: callgrind" + (", massif" if op in LOADS else "")
                started = time.time()
                instr[name][op] = instructions(core, lib, op, max(1, n * args.n // 20000), tmp)
                if op in LOADS:
                    heap[name][op] = peak_heap(core, lib, op, tmp)
                say(f"[{step:2}/{steps}] {name:9} {op:16} {instr[name][op]:12.1f} instructions per op "
                    f"({time.time() - started:.0f} s)")
                beat.touch()
        doing[0] = f"wall clock of every op, both runtimes ({args.batches} batches of {args.ms:g} ms)"
        say(doing[0])
        timing = ("--wall", "--ms", str(args.ms), "--batches", str(args.batches))
        wall = subprocess.run(core.cmd(*timing, *core.both()), check=True,
                              capture_output=True, text=True).stdout
    wall = json.loads(wall)
    base_i = {name: instr[name]["baseline"] for name in core.libs}
    base_w = {name: (wall[name]["baseline"] or {}).get("median") for name in core.libs}
    rows = []
    for op in OPS:
        ri, ui = instr["reference"][op], instr["upstream"][op]
        rw, uw = wall["reference"][op], wall["upstream"][op]
        rn, un = ri - base_i["reference"], ui - base_i["upstream"]
        if op == "baseline":
            rn, un = ri, ui
        judged = op not in NOT_JUDGED
        row = {"op": op, "target_ratio": UPSTREAM_TARGET if judged else None,
               "instructions": {"reference": ri, "upstream": ui, "ratio": ratio(ri, ui),
                                "net_reference": rn, "net_upstream": un,
                                "net_ratio": ratio(rn, un)},
               "ns": {"reference": rw, "upstream": uw,
                      "ratio": ratio(rw and rw["median"], uw and uw["median"]),
                      "net_reference": net_ns(rw, base_w["reference"], op),
                      "net_upstream": net_ns(uw, base_w["upstream"], op)}}
        row["ns"]["net_ratio"] = ratio(row["ns"]["net_reference"], row["ns"]["net_upstream"])
        row["met"] = None if not judged else rn <= UPSTREAM_TARGET * un
        if op in FLOORS:
            floor_net = instr["reference"][FLOORS[op]] - base_i["reference"]
            to_floor = ratio(rn, floor_net)
            row["floor"] = {"op": FLOORS[op], "net_instructions": floor_net,
                            "net_ratio_to_upstream": ratio(floor_net, un),
                            "reference_ratio": to_floor, "aim": FLOOR_AIM,
                            "aim_met": rn <= FLOOR_AIM * floor_net}
        if op in LOADS:
            blob = os.path.getsize(core.mods[list(LOADS).index(op)])
            h = {"reference": heap["reference"][op], "upstream": heap["upstream"][op],
                 "library_file": blob}
            h["ratio"] = ratio(h["reference"], h["upstream"])
            h["met"] = h["reference"] <= h["upstream"]
            row["peak_heap_bytes"] = h
        rows.append(row)
    return {"libraries": core.libs, "targets": {
        "upstream": f"net instructions at most {UPSTREAM_TARGET}x upstream's (required)",
        "floor": f"net instructions at most {FLOOR_AIM}x the op's floor (the aim)",
        "peak_heap": "peak heap of one load at most upstream's (required)"}, "paths": rows}


def targets_met(r):
    """What the op meets, in words: the required target, then the floor aim."""
    if r["met"] is None:
        return "-"
    words = ["upstream: " + ("yes" if r["met"] else "NO")]
    if "floor" in r:
        words.append(f"floor {FLOOR_AIM}x: " + ("yes" if r["floor"]["aim_met"] else "no"))
    if "peak_heap_bytes" in r:
        words.append("heap: " + ("yes" if r["peak_heap_bytes"]["met"] else "NO"))
    return ", ".join(words)


def print_table(result):
    print("instructions per op: gross (as measured) and net (minus the baseline loop); "
          "ratios and targets on net")
    print(f"targets: every op at or under upstream's net instructions (required); "
          f"at most {FLOOR_AIM}x its floor where it has one (the aim); peak heap of a load "
          "at or under upstream's (required)")
    print("op              ref gross    up gross     ref net      up net  ratio   floor  /floor"
          "   ref ns (min-max)        up ns (min-max)         net ns ratio  targets met")
    for r in result["paths"]:
        i, w = r["instructions"], r["ns"]
        span = lambda x: "-" if x is None else (
            f"{x['median']:.1f} ({x['min']:.1f}-{x['max']:.1f})")
        f = r.get("floor")
        print(f"{r['op']:14} {fmt(i['reference'], '11.1f')} {fmt(i['upstream'], '11.1f')} "
              f"{fmt(i['net_reference'], '11.1f')} {fmt(i['net_upstream'], '11.1f')} "
              f"{fmt(i['net_ratio'], '6.3f')} {fmt(f and f['net_instructions'], '7.1f')} "
              f"{fmt(f and f['reference_ratio'], '6.3f')}   "
              f"{span(w['reference']):23} {span(w['upstream']):23} "
              f"{fmt(w['net_ratio'], '6.3f')}  {targets_met(r)}")
    for r in result["paths"]:
        if "floor" in r:
            f = r["floor"]
            print(f"{r['op']:14} floor ({f['op']}: {FLOOR_WORK[f['op']]}): "
                  f"{f['net_instructions']:.1f} net instructions, "
                  f"{fmt(f['net_ratio_to_upstream'], '.3f')} of upstream's net")
            why = floor_limited(r)
            if why:
                print(f"{'':14} {why}")
    for r in result["paths"]:
        if "peak_heap_bytes" in r:
            h = r["peak_heap_bytes"]
            print(f"{r['op']:14} peak heap of one load: reference {h['reference']} B, "
                  f"upstream {h['upstream']} B, ratio {fmt(h['ratio'], '.3f')} "
                  f"({'met' if h['met'] else 'NOT met'}; library file {h['library_file']} B)")
    judged = [r for r in result["paths"] if r["met"] is not None]
    missed = [r["op"] for r in judged if not r["met"]]
    heap_missed = [r["op"] for r in judged if "peak_heap_bytes" in r
                   and not r["peak_heap_bytes"]["met"]]
    print(f"at or under upstream: {len(judged) - len(missed)} of {len(judged)} ops"
          + (f" (not: {', '.join(missed)})" if missed else "")
          + "; peak heap at or under upstream: "
          + ("every load size" if not heap_missed else f"not {', '.join(heap_missed)}"))


def floor_limited(r):
    """In words, why a missed target cannot be met: the work no runtime can
    skip already costs more than the target allows. "" when that is not so."""
    f, target = r.get("floor"), r["target_ratio"]
    if not f or target is None or f["net_ratio_to_upstream"] is None or f["net_ratio_to_upstream"] <= target:
        return ""
    mine = r["instructions"]["net_ratio"]
    return (f"the target (at most {target:g} of upstream's instructions) is out of reach for any runtime: "
            f"{FLOOR_WORK.get(f['op'], f['op'])}, which every runtime must do, alone costs "
            f"{f['net_ratio_to_upstream']:.2f} of upstream's; the reference's {fmt(mine, '.2f')} is "
            f"{fmt(None if mine is None else mine - f['net_ratio_to_upstream'], '.2f')} above that floor")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000, help="callgrind iterations of a call")
    ap.add_argument("--ms", type=float, default=50, help="milliseconds per timed batch")
    ap.add_argument("--batches", type=int, default=11,
                    help="timed batches per op and runtime (the ns figures are their median)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--check", action="store_true", help="run each op a few times, no timing")
    ap.add_argument("--reference", default=None, metavar="LIB",
                    help="measure this build of the reference's libtvm_ffi.so instead of the "
                         "tree's (another commit's, for a before/after in one session)")
    args = ap.parse_args()
    reference = args.reference and os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", "."),
                                                args.reference)
    core = Core(reference)
    if args.check:
        return subprocess.run(core.cmd("--check", *core.both())).returncode
    if shutil.which("valgrind") is None:
        raise SystemExit("abi_bench: valgrind is not installed (tools/bootstrap.sh)")
    result = measure(core, args)
    print_table(result)
    # A relative --json is taken from where `bazel run` was started, not
    # from the runfiles directory the driver runs in.
    path = os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", "."),
                        args.json or "abi_bench.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(f"JSON written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
