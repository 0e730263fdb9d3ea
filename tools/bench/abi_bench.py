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
Prints a line per measurement as it goes (and at least one every 10 s),
then a table, says in words why a target its floor puts out of reach is
missed, and writes JSON (--json PATH, default abi_bench.json in the
directory `bazel run` was started from). `--check` only runs every operation
a few times against both runtimes (the smoke test; no timing).

Usage: bazel run //tools/bench:abi_bench -- [--n N] [--ms T] [--json PATH]
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

# Operation -> (callgrind iterations N, target ratio reference/upstream).
# Calls must cost no more than upstream; everything else at most half.
# The baseline has no target: it is what the others are net of.
OPS = {
    "baseline": (20000, None),
    "call0_self": (20000, 1.0), "call0": (20000, 1.0), "call1_int": (20000, 1.0),
    "call3_int": (20000, 1.0), "call8_int": (20000, 1.0), "call1_tensor": (20000, 1.0),
    "call3_tensor": (20000, 1.0), "call8_tensor": (20000, 1.0), "module_call": (20000, 1.0),
    "stream": (20000, 0.5), "raise": (5000, 0.5), "owned_short": (20000, 0.5),
    "owned_long": (20000, 0.5), "incref_decref": (20000, 0.5), "dlpack_4d": (20000, 0.5),
    "load_1": (20, 0.5), "load_100": (10, 0.5), "load_10000": (2, 0.5),
    "floor_owned_long": (20000, None), "floor_dlpack_4d": (20000, None), "floor_load_1": (20, None),
}
# Op -> its floor: the C library work no runtime can skip (bench_ops.c). The
# floor's net cost over upstream's net cost of the op is the lowest ratio
# any runtime could reach; above the target, the target is out of reach.
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
    def __init__(self):
        self.path = runfile("tools/bench/abi_bench_core")
        self.mods = [runfile(f"tools/bench/bench_lib_{n}.so") for n in (1, 100, 10000)]
        self.libs = {"reference": runfile("reference/libtvm_ffi.so"),
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
    """Median ns minus the baseline's median (the baseline itself stays gross)."""
    if w is None or base is None:
        return None
    return w["median"] if op == "baseline" else w["median"] - base


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def say(text):
    print(f"abi_bench: {text}", file=sys.stderr, flush=True)


def measure(core: Core, args) -> dict:
    instr = {name: {} for name in core.libs}
    heap = {name: {} for name in core.libs}
    steps, doing = len(core.libs) * len(OPS), ["starting"]
    with progress.Heartbeat(lambda: doing[0], say) as beat, tempfile.TemporaryDirectory() as tmp:
        for name, lib in core.libs.items():
            for op, (n, _) in OPS.items():
                step = len(instr["reference"]) + len(instr["upstream"]) + 1
                doing[0] = f"[{step:2}/{steps}] {name} {op}: callgrind" + (", massif" if op in LOADS else "")
                started = time.time()
                instr[name][op] = instructions(core, lib, op, max(1, n * args.n // 20000), tmp)
                if op in LOADS:
                    heap[name][op] = peak_heap(core, lib, op, tmp)
                say(f"[{step:2}/{steps}] {name:9} {op:16} {instr[name][op]:12.1f} instructions per op "
                    f"({time.time() - started:.0f} s)")
                beat.touch()
        doing[0] = f"wall clock of every op, both runtimes ({args.ms:g} ms batches)"
        say(doing[0])
        wall = subprocess.run(core.cmd("--wall", "--ms", str(args.ms), *core.both()), check=True,
                              capture_output=True, text=True).stdout
    wall = json.loads(wall)
    base_i = {name: instr[name]["baseline"] for name in core.libs}
    base_w = {name: (wall[name]["baseline"] or {}).get("median") for name in core.libs}
    rows = []
    for op, (_, target) in OPS.items():
        ri, ui = instr["reference"][op], instr["upstream"][op]
        rw, uw = wall["reference"][op], wall["upstream"][op]
        rn, un = ri - base_i["reference"], ui - base_i["upstream"]
        if op == "baseline":
            rn, un = ri, ui
        row = {"op": op, "target_ratio": target,
               "instructions": {"reference": ri, "upstream": ui, "ratio": ratio(ri, ui),
                                "net_reference": rn, "net_upstream": un,
                                "net_ratio": ratio(rn, un)},
               "ns": {"reference": rw, "upstream": uw,
                      "ratio": ratio(rw and rw["median"], uw and uw["median"]),
                      "net_reference": net_ns(rw, base_w["reference"], op),
                      "net_upstream": net_ns(uw, base_w["upstream"], op)}}
        row["ns"]["net_ratio"] = ratio(row["ns"]["net_reference"], row["ns"]["net_upstream"])
        net = row["instructions"]["net_ratio"]
        row["met"] = None if target is None else (net is not None and net <= target + 0.005)
        if op in FLOORS:
            floor_net = instr["reference"][FLOORS[op]] - base_i["reference"]
            row["floor"] = {"op": FLOORS[op], "net_instructions": floor_net,
                            "net_ratio_to_upstream": ratio(floor_net, un)}
        if op in LOADS:
            blob = os.path.getsize(core.mods[list(LOADS).index(op)])
            row["peak_heap_bytes"] = {"reference": heap["reference"][op],
                                      "upstream": heap["upstream"][op], "library_file": blob}
        rows.append(row)
    return {"libraries": core.libs, "paths": rows}


def print_table(result):
    print("instructions per op: gross (as measured) and net (minus the baseline loop); "
          "ratios and targets on net")
    print("op              ref gross    up gross  ratio     ref net      up net  ratio target"
          "   ref ns (min-max)        up ns (min-max)         net ns ratio met")
    for r in result["paths"]:
        i, w = r["instructions"], r["ns"]
        span = lambda x: "-" if x is None else (
            f"{x['median']:.1f} ({x['min']:.1f}-{x['max']:.1f})")
        target = "-" if r["target_ratio"] is None else "<=" + format(r["target_ratio"], ".1f")
        met = "-" if r["met"] is None else ("yes" if r["met"] else "NO")
        print(f"{r['op']:14} {fmt(i['reference'], '11.1f')} {fmt(i['upstream'], '11.1f')} "
              f"{fmt(i['ratio'], '6.3f')} {fmt(i['net_reference'], '11.1f')} "
              f"{fmt(i['net_upstream'], '11.1f')} {fmt(i['net_ratio'], '6.3f')} {target:>6}   "
              f"{span(w['reference']):23} {span(w['upstream']):23} "
              f"{fmt(w['net_ratio'], '6.3f')}  {met}")
    for r in result["paths"]:
        if "floor" in r:
            f = r["floor"]
            print(f"{r['op']:14} floor ({f['op']}): {f['net_instructions']:.1f} net instructions, "
                  f"{fmt(f['net_ratio_to_upstream'], '.3f')} of upstream's net")
            why = floor_limited(r)
            if why:
                print(f"{'':14} {why}")
    for r in result["paths"]:
        if "peak_heap_bytes" in r:
            h = r["peak_heap_bytes"]
            print(f"{r['op']:14} peak heap of one load: reference {h['reference']} B, "
                  f"upstream {h['upstream']} B (library file {h['library_file']} B)")


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
    ap.add_argument("--json", default=None)
    ap.add_argument("--check", action="store_true", help="run each op a few times, no timing")
    args = ap.parse_args()
    core = Core()
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
