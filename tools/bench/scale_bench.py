"""scale_bench: the scale kernel's bandwidth against the limits and a peer.

CPU (float32, 1 KiB to 256 MiB per array, one process, the same buffers):
  kernel    libscale_cpu.so's __tvm_ffi_scale, called from C (scale_bench_core)
  stream    the kernel's work as a loop of non-temporal stores: the limit
  cached    the same loop with ordinary stores (the kernel below its threshold)
  numpy     numpy.multiply(x, 1.5, out=y), called from Python: the peer
  memcpy    glibc memcpy of the same bytes
GB/s counts one read and one write per element (2 * bytes / time). Each
method is timed in rounds, interleaved so that drift in machine load hits
all alike; a round repeats the call until it lasts about 2 ms. The table
shows the best round (the least disturbed) and the spread: median / best - 1
over the rounds, the noise of this run.

The crossover is the smallest size from which the streaming loop beats the
cached loop at every larger size: where streaming stores start to pay.

GPU (when there is one): the CUDA kernel against cudaMemcpyAsync device to
device on the same 1 GiB buffers, CUDA events, 3 warm-up rounds, median of
--gpu-reps (>= 10). Without a GPU it says why and measures the CPU only.

Usage: bazel run //tools/bench:scale_bench -- [--rounds N] [--max-mib M]
       [--json PATH] [--no-gpu]
Exits 0 whatever the ratios; the verdicts are in the output.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np

KERNEL_TARGET = 0.90  # of the streaming loop, for large tensors
LARGE = 64 << 20  # "large": at least this many bytes per array
GPU_TARGET = 0.95  # of cudaMemcpyAsync D2D, float32 and float16
METHODS = ["kernel", "stream", "cached", "numpy", "memcpy"]
CORE_CODE = {"kernel": 0, "stream": 1, "cached": 2, "memcpy": 3}


def runfile(rel: str) -> str:
    """Absolute path of a runfile, whether run by `bazel run` or directly."""
    here = os.path.dirname(os.path.abspath(__file__))
    roots = [os.environ.get("RUNFILES_DIR", ""), here + "/../..", here + "/../../.."]
    for root in roots:
        for cand in (os.path.join(root, "tvm_ffi_conformance", rel), os.path.join(root, rel)):
            if root and os.path.exists(cand):
                return os.path.abspath(cand)
    raise SystemExit(f"scale_bench: runfile {rel} not found")


def load_core():
    core = ctypes.CDLL(runfile("tools/bench/libscale_bench_core.so"))
    core.sb_load.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    core.sb_time.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                             ctypes.c_int]
    core.sb_time.restype = ctypes.c_double
    core.sb_cpu_features.restype = ctypes.c_char_p
    core.sb_stream_threshold.restype = ctypes.c_int64
    core.sb_gpu.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_char_p,
                            ctypes.c_size_t]
    err = ctypes.create_string_buffer(1024)
    if core.sb_load(runfile("reference/libtvm_ffi.so").encode(),
                    runfile("kernels/libscale_cpu.so").encode(), err, len(err)) != 0:
        raise SystemExit(f"scale_bench: {err.value.decode()}")
    return core


def timer(core, method, x, y):
    """A function of `inner` that returns seconds for inner calls."""
    n = x.size
    if method == "numpy":
        def run(inner):
            t0 = time.perf_counter()
            for _ in range(inner):
                np.multiply(x, 1.5, out=y)
            return time.perf_counter() - t0
        return run
    code, px, py = CORE_CODE[method], x.ctypes.data, y.ctypes.data

    def run(inner):
        t = core.sb_time(code, py, px, n, inner)
        if t < 0:
            raise SystemExit("scale_bench: the kernel refused the call")
        return t
    return run


def measure_size(core, nbytes, rounds):
    n = nbytes // 4
    x = (np.arange(n, dtype=np.float32) % 1024).astype(np.float32)
    y = np.zeros(n, dtype=np.float32)  # faults every page in before timing
    runs = {m: timer(core, m, x, y) for m in METHODS}
    inner = {}
    for m, run in runs.items():  # warm up, and size each round to about 2 ms
        run(1)
        once = max(run(1), 1e-7)
        inner[m] = max(1, min(100000, int(2e-3 / once)))
    best = {m: float("inf") for m in METHODS}
    per_round = {m: [] for m in METHODS}
    for _ in range(rounds):
        for m, run in runs.items():
            t = run(inner[m]) / inner[m]
            per_round[m].append(t)
            best[m] = min(best[m], t)
    np.multiply(x, 1.5, out=y)
    want = (np.arange(n, dtype=np.float32) % 1024).astype(np.float32) * np.float32(1.5)
    runs["kernel"](1)
    if not np.array_equal(y, want):
        raise SystemExit(f"scale_bench: the kernel's result is wrong at {nbytes} bytes")
    row = {"bytes": nbytes}
    for m in METHODS:
        row[m + "_gbps"] = 2 * nbytes / best[m] / 1e9
        row[m + "_spread"] = statistics.median(per_round[m]) / best[m] - 1
    # The same ratios paired round by round (both measured back to back, so
    # a load change between rounds hits both): the median over rounds.
    for peer in ("stream", "numpy"):
        row[f"paired_kernel_vs_{peer}"] = statistics.median(
            p / k for p, k in zip(per_round[peer], per_round["kernel"]))
    row["kernel_vs_stream"] = best["stream"] / best["kernel"]
    row["kernel_vs_numpy"] = best["numpy"] / best["kernel"]
    row["kernel_vs_memcpy"] = best["memcpy"] / best["kernel"]
    return row


def human(nbytes):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def crossover(rows):
    """Smallest size from which stream beats cached at every larger size."""
    found = None
    for row in reversed(rows):
        if row["stream_gbps"] > row["cached_gbps"]:
            found = row["bytes"]
        else:
            break
    return found


def cpu_report(core, rows):
    print(f"scale_bench CPU: float32, best of the rounds, GB/s = 2 * bytes / time; "
          f"CPU features: {core.sb_cpu_features().decode()}; "
          f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    head = f"{'size':>9} " + " ".join(f"{m:>8}" for m in METHODS)
    print(head + f" {'k/strm':>7} {'k/numpy':>7} {'k/mcpy':>7} {'noise':>6}"
          f" {'paired k/strm':>13} {'k/numpy':>7}")
    for r in rows:
        noise = max(r[m + "_spread"] for m in METHODS)
        print(f"{human(r['bytes']):>9} " + " ".join(f"{r[m + '_gbps']:8.2f}" for m in METHODS) +
              f" {r['kernel_vs_stream']:7.3f} {r['kernel_vs_numpy']:7.3f}"
              f" {r['kernel_vs_memcpy']:7.3f} {100 * noise:5.0f}%"
              f" {r['paired_kernel_vs_stream']:13.3f} {r['paired_kernel_vs_numpy']:7.3f}")
    large = [r for r in rows if r["bytes"] >= LARGE]
    worst_large = min((r["kernel_vs_stream"] for r in large), default=None)
    worst_numpy = min(r["kernel_vs_numpy"] for r in rows)
    cross = crossover(rows)
    threshold = int(os.environ.get("KERN_SCALE_CPU_STREAM_BYTES", core.sb_stream_threshold()))
    print(f"streaming beats cached stores from: {human(cross) if cross else 'no size measured'}"
          f" (the kernel streams from {human(threshold)}, kernels/scale_cpu.h)")
    if worst_large is not None:
        print(f"kernel / streaming limit, sizes >= {human(LARGE)}: worst {worst_large:.3f} "
              f"(target >= {KERNEL_TARGET}: {'MET' if worst_large >= KERNEL_TARGET else 'NOT MET'})")
    print(f"kernel / numpy, every size: worst {worst_numpy:.3f} "
          f"(target >= 1.0: {'MET' if worst_numpy >= 1.0 else 'NOT MET'})")
    paired_large = min((r["paired_kernel_vs_stream"] for r in large), default=None)
    if paired_large is not None:
        print(f"paired (median over rounds of the per-round ratio), sizes >= {human(LARGE)}: "
              f"kernel / streaming limit worst {paired_large:.3f}")
    print("ratios are of best-of-rounds times; noise: the largest median/best - 1 of the methods "
          "at that size (a shared, busy machine makes it large)")
    return {"crossover_bytes": cross, "kernel_stream_threshold": threshold,
            "worst_paired_kernel_vs_stream_large": paired_large, "worst_kernel_vs_stream_large": worst_large,
            "worst_kernel_vs_numpy": worst_numpy}


def gpu_report(core, gib, reps):
    buf = ctypes.create_string_buffer(8192)
    rc = core.sb_gpu(runfile("kernels/libscale_cuda.so").encode(), gib << 30, reps, buf,
                     len(buf))
    text = buf.value.decode()
    if rc != 0:
        print(f"scale_bench GPU: not measured: {text}")
        return {"gpu": None, "why": text}
    rows = [json.loads(line) for line in text.splitlines() if line]
    print(f"scale_bench GPU: {gib} GiB per array, CUDA events, median of {reps} after 3 warm-up")
    print(f"{'dtype':>9} {'kernel GB/s':>12} {'D2D copy GB/s':>14} {'ratio':>7}")
    for r in rows:
        print(f"{r['dtype']:>9} {r['kernel_gbps']:12.1f} {r['copy_gbps']:14.1f} {r['ratio']:7.3f}")
    for name in ("float32", "float16"):
        r = next(x for x in rows if x["dtype"] == name)
        print(f"{name}: kernel / copy {r['ratio']:.3f} (target >= {GPU_TARGET}: "
              f"{'MET' if r['ratio'] >= GPU_TARGET else 'NOT MET'})")
    return {"gpu": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--max-mib", type=int, default=256)
    ap.add_argument("--gpu-gib", type=int, default=1)
    ap.add_argument("--gpu-reps", type=int, default=20)
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.rounds < 1 or not 1 <= a.max_mib <= 4096 or a.gpu_reps < 10:
        raise SystemExit("scale_bench: --rounds >= 1, --max-mib 1..4096, --gpu-reps >= 10")
    core = load_core()
    sizes, s = [], 1 << 10
    while s <= a.max_mib << 20:
        sizes.append(s)
        s <<= 1
    rows = [measure_size(core, s, a.rounds) for s in sizes]
    summary = cpu_report(core, rows)
    gpu = {"gpu": None, "why": "--no-gpu"} if a.no_gpu else gpu_report(core, a.gpu_gib, a.gpu_reps)
    result = {"cpu": rows, **summary, **gpu}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
