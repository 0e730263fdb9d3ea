"""Driver of abi_bench: instructions per operation (callgrind) and ns per operation.

For each runtime (the reference and upstream's pip library) and each hot
path, runs `abi_bench_core --lib PATH --op OP --iters N` under
`valgrind --tool=callgrind` for N and 2N iterations; the difference of the
two instruction totals divided by N is the cost of one operation, since
loading and setup are the same in both runs. Then runs abi_bench_core once
natively with both runtimes loaded for wall-clock ns per operation.
Prints a table and writes JSON (--json PATH, default abi_bench.json in the
working directory of `bazel run`).

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

OPS = ["call", "call_direct", "stream", "raise"]

# What each path should cost relative to upstream (reference / upstream).
TARGETS = {"call": 1.0, "call_direct": 1.0, "stream": 0.5, "raise": 0.25}

DESCRIPTION = {
    "call": "TVMFFIFunctionCall, 0 args, C callback with self",
    "call_direct": "TVMFFIFunctionCall, 0 args, self NULL",
    "stream": "TVMFFIEnvGetStream(kDLCUDA, 0)",
    "raise": "SetRaisedFromCStr + MoveFromRaised + DecRef",
}


def runfile(rel: str) -> str:
    """Absolute path of a runfile, whether run by `bazel run` or directly."""
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [os.environ.get("RUNFILES_DIR", ""), here + "/../..", here + "/../../.."]
    for root in roots:
        for cand in (os.path.join(root, "tvm_ffi_conformance", rel), os.path.join(root, rel)):
            if root and os.path.exists(cand):
                return os.path.abspath(cand)
    raise SystemExit(f"abi_bench: runfile {rel} not found")


def instructions(core: str, lib: str, op: str, iters: int, tmp: str) -> int:
    out = os.path.join(tmp, f"cg.{op}.{iters}.{abs(hash(lib))}")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", core,
           "--lib", lib, "--op", op, "--iters", str(iters)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode == 3:
        return -1  # the runtime lacks this path
    if proc.returncode != 0:
        raise SystemExit(f"abi_bench: {' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    with open(out) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise SystemExit(f"abi_bench: no instruction total in {out}")


def per_op(core: str, lib: str, op: str, n: int, tmp: str):
    one = instructions(core, lib, op, n, tmp)
    if one < 0:
        return None
    two = instructions(core, lib, op, 2 * n, tmp)
    return (two - one) / n


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000, help="iterations of the smaller callgrind run")
    ap.add_argument("--ms", type=float, default=100, help="milliseconds per timed batch")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("abi_bench: valgrind is not installed (tools/bootstrap.sh)")

    core = runfile("tools/bench/abi_bench_core")
    libs = {
        "reference": runfile("reference/libtvm_ffi.so"),
        "upstream": runfile("../tvm_ffi_upstream/lib/libtvm_ffi.so"),
    }

    instr = {name: {} for name in libs}
    with tempfile.TemporaryDirectory() as tmp:
        for name, lib in libs.items():
            for op in OPS:
                instr[name][op] = per_op(core, lib, op, args.n, tmp)

    wall_cmd = [core, "--wall", "--ms", str(args.ms)]
    for name, lib in libs.items():
        wall_cmd += ["--lib", f"{name}={lib}"]
    wall = json.loads(subprocess.run(wall_cmd, check=True, capture_output=True, text=True).stdout)

    rows = []
    for op in OPS:
        ri, ui = instr["reference"][op], instr["upstream"][op]
        rw, uw = wall["reference"].get(op), wall["upstream"].get(op)
        ratio = ri / ui if ri is not None and ui else None
        rows.append({
            "op": op,
            "what": DESCRIPTION[op],
            "instructions": {"reference": ri, "upstream": ui, "ratio": ratio},
            "ns": {"reference": rw, "upstream": uw,
                   "ratio": rw / uw if rw is not None and uw else None},
            "target_ratio": TARGETS[op],
            "met": None if ratio is None else ratio <= TARGETS[op] + 0.05,
        })

    print(f"abi_bench: instructions per operation (callgrind, ({args.n * 2} - {args.n}) "
          f"iterations / {args.n}) and wall-clock ns per operation (best of 7)")
    print(f"{'path':12} {'ref instr':>10} {'up instr':>10} {'ratio':>7} {'target':>7} "
          f"{'ref ns':>8} {'up ns':>8} {'ratio':>7}  met")
    for r in rows:
        i, w = r["instructions"], r["ns"]
        print(f"{r['op']:12} {fmt(i['reference'], '10.1f')} {fmt(i['upstream'], '10.1f')} "
              f"{fmt(i['ratio'], '7.3f')} {'<=' + format(r['target_ratio'], '.2f'):>7} "
              f"{fmt(w['reference'], '8.2f')} {fmt(w['upstream'], '8.2f')} "
              f"{fmt(w['ratio'], '7.3f')}  {'-' if r['met'] is None else ('yes' if r['met'] else 'NO')}")
    print("(each figure includes the benchmark loop's own few instructions, the same for both)")
    result = {"n": args.n, "libraries": libs, "paths": rows}
    path = args.json or os.path.join(os.environ.get("BUILD_WORKING_DIRECTORY", "."),
                                     "abi_bench.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps(result))
    print(f"JSON written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
