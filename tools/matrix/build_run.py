"""Build-against x run-on: which pairs of releases work together.

Our CPU scale kernel (plain C, c_api.h only) and the C++ drop-in kernel
(upstream's C++ headers and TVM_FFI_DLL_EXPORT_TYPED_FUNC, so header-level
changes show too) are compiled once against each release's own headers, then
loaded and called by each release's runtime and by the reference runtime
(tools/matrix/call_kernel.c, the host, compiled against the headers of the
runtime it runs on: a valid call checked exactly, two refused calls whose
raised errors are read through that release's error cell). A cell is "ok", or says how the pair
fails: the library does not load (the missing symbol), a wrong result or
error kind, or the signal the process died of.

    bazel run //tools/matrix:build_run -- [--releases all|0.1.0,0.1.8.post2,...]
        [--md spec/build_run.md] [--json FILE] [--jobs N]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "releases"))
import releases  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools", "layouts"))
import classify  # noqa: E402
import layouts  # noqa: E402

# Enough releases to span every layout change in spec/layouts.md, and both
# sides of the error cell's growth at 0.1.8.post0 (the release TileLang's
# 0.1.3-built kernels crash on).
DEFAULT_RELEASES = ("0.1.0,0.1.3,0.1.4,0.1.7,0.1.8.post0,0.1.8.post2,0.1.9,0.1.12,0.1.13.post3,"
                    "0.1.14.post1,0.1.15.post2")

KERNELS = {
    # name: (sources, compiler and flags, exported function)
    "scale_cpu (C)": (["kernels/scale_cpu.c", "kernels/scale_cpu_x86.c"],
                      ["cc", "-std=c17", "-include", os.path.join(HERE, "c_compat.h")], "scale"),
    "scale_dropin (C++)": (["kernels/dropin/scale_dropin.cc"], ["c++", "-std=c++17"], "scale_dropin"),
}


def runfile(path):
    """A file of the py_binary's runfiles (this script sits in them, three
    levels below the workspace's folder there)."""
    base = os.environ.get("RUNFILES_DIR")
    if base:
        return os.path.join(base, "tvm_ffi_conformance", path)
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), path)


def build_kernel(kernel, include, out):
    sources, cc, _ = KERNELS[kernel]
    cmd = cc + ["-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-w",
                "-Werror=implicit-function-declaration", "-I" + include,
                "-iquote", ROOT, "-iquote", os.path.join(ROOT, "kernels"),
                "-o", out] + [os.path.join(ROOT, src) for src in sources]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        errors = [l for l in res.stderr.splitlines() if "error" in l]
        return (errors[0] if errors else res.stderr.strip()[-200:]).replace(ROOT + "/", "")
    return None


def build_host(includes, out):
    """call_kernel as a host built against these headers would read errors."""
    fact = "offsetof(TVMFFIErrorCell, cause_chain)"
    has_cause = layouts.evaluate([fact], includes)[fact] is not None
    cmd = ["cc", "-std=c17", "-O1", "-D_GNU_SOURCE", "-DMK_CELL_HAS_CAUSE_CHAIN=%d" % has_cause,
           os.path.join(HERE, "call_kernel.c"), "-o", out, "-ldl"] + ["-I" + d for d in includes]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return out


def run_pair(call_kernel, runtime, lib, function):
    try:
        res = subprocess.run([call_kernel, runtime, lib, function], capture_output=True,
                             text=True, errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return "TIMEOUT"
    lines = [l for l in res.stdout.splitlines() if l.strip()]
    bad = [l for l in lines if not l.startswith("ok ")]
    if res.returncode == 0 and not bad:
        return "ok"
    return "; ".join(bad) if bad else "exit %d" % res.returncode


def short(cell):
    """The table's cell: the verdict word and the gist."""
    if cell == "ok":
        return "ok"
    if cell.startswith("LOAD kernel: "):
        sym = cell.split("undefined symbol: ")[-1] if "undefined symbol" in cell else cell[13:]
        return "LOAD: undefined %s" % sym[:60] if "undefined symbol" in cell else "LOAD: " + sym[:60]
    if "the error cell is shorter" in cell:
        return "FAIL: kernel's error cell shorter than the host's"
    return cell[:80]


def cause(rec, built, run, cell):
    """(cause, remedy) of a failing pair: the recorded change between the
    two releases that explains it (tools/layouts/classify.py), or None."""
    order = rec["releases"]
    run_as = rec["pinned"] if run == "reference" else run
    if built not in order or run_as not in order:
        return None
    found = [c for c in classify.between(rec, built, run_as, layouts.changes(rec))
             if c[5] in (classify.BREAKING, classify.IF_USED)]
    if "error cell" in cell:
        found = [c for c in found if c[2] == "sizeof(TVMFFIErrorCell)"] or found
    if not found:
        return None
    release, _, name, old, new, _, why = found[0]
    before = order[order.index(release) - 1]
    if order.index(run_as) > order.index(built):
        remedy = "rebuild against >= %s, or pin the runtime <= %s" % (release, before)
    else:
        remedy = "rebuild against <= %s, or run on >= %s" % (before, release)
    return "%s %s -> %s at %s: %s" % (name, old, new, release, why), remedy


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", default=DEFAULT_RELEASES)
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    order = releases.select(args.releases)
    cwd = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
    reference = runfile("reference/libtvm_ffi.so")
    roots = {}
    for i, v in enumerate(order):
        print("build_run: fetching [%d/%d] %s" % (i + 1, len(order), v), file=sys.stderr, flush=True)
        roots[v] = os.path.join(releases.fetch(v), "tvm_ffi")
    runtimes = [(v, os.path.join(roots[v], "lib", "libtvm_ffi.so")) for v in order] + [("reference", reference)]

    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        pinned = os.path.join(releases.fetch(layouts.pinned_version()), "tvm_ffi", "include")
        host_includes = {v: [os.path.join(roots[v], "include")] for v in order}
        host_includes["reference"] = [os.path.join(ROOT, "reference", "include"), pinned]
        hosts = {r: build_host(inc, os.path.join(tmp, "call_kernel-%s" % r))
                 for r, inc in host_includes.items()}
        builds = {}
        jobs = {}
        for kernel in KERNELS:
            for v in order:
                out = os.path.join(tmp, "%s-%s.so" % (KERNELS[kernel][2], v))
                jobs[(kernel, v)] = (ex.submit(build_kernel, kernel, os.path.join(roots[v], "include"), out), out)
        for (kernel, v), (fut, out) in jobs.items():
            err = fut.result()
            builds[(kernel, v)] = (None, err) if err else (out, None)
            print("build_run: built %s against %s: %s" % (kernel, v, "ok" if not err else err),
                  file=sys.stderr, flush=True)
        cells = {}
        pending = {}
        for kernel in KERNELS:
            for v in order:
                lib, err = builds[(kernel, v)]
                for r, rt in runtimes:
                    if lib is None:
                        cells[(kernel, v, r)] = "BUILD: " + err
                    else:
                        pending[(kernel, v, r)] = ex.submit(run_pair, hosts[r], rt, lib, KERNELS[kernel][2])
        for n, (key, fut) in enumerate(pending.items()):
            cells[key] = fut.result()
            if (n + 1) % 20 == 0 or n + 1 == len(pending):
                print("build_run: ran %d/%d pairs" % (n + 1, len(pending)), file=sys.stderr, flush=True)

    with open(os.path.join(ROOT, "spec", "layouts.json")) as f:
        rec = json.load(f)
    cols = [r for r, _ in runtimes]
    md = ["# Build-against x run-on", "",
          "Generated by `bazel run //tools/matrix:build_run -- --md spec/build_run.md`; do not "
          "edit by hand. Rows: the release whose headers a kernel was compiled against. "
          "Columns: the runtime that loaded and called it, from a host built against that "
          "runtime's headers. `ok`: a valid call gave exact results and two refused calls "
          "raised TypeError, read through the host's error cell; otherwise how the pair "
          "failed (see tools/matrix/call_kernel.c), and the remedy the recorded change between "
          "the two releases gives (`tools/layouts/layouts.py --between BUILT RUN`; the reference "
          "counts as the pinned release). The causes, in full, follow the tables.", ""]
    for kernel in KERNELS:
        md += ["## %s" % kernel, "", "| built against \\ run on | " + " | ".join(cols) + " |",
               "|---|" + "---|" * len(cols)]
        for v in order:
            row = []
            for r in cols:
                c = cells[(kernel, v, r)]
                why = cause(rec, v, r, c) if c != "ok" else None
                row.append(short(c) + (" (%s)" % why[1] if why else ""))
            md.append("| %s | %s |" % (v, " | ".join(row)))
        md.append("")
    failures = sorted({(k, v, r, c) for (k, v, r), c in cells.items() if c != "ok"},
                      key=lambda f: (f[0], releases.version_key(f[1]), f[2]))
    md += ["## Every failing pair, in full", ""]
    for k, v, r, c in failures:
        why = cause(rec, v, r, c)
        md.append("- %s built against %s, run on %s: %s%s" % (
            k, v, r, c, ". Cause: %s. Remedy: %s" % why if why else ". No recorded change explains it"))
    if not failures:
        md.append("None.")
    text = "\n".join(md) + "\n"
    print(text)
    if args.md:
        with open(os.path.join(cwd, args.md) if not os.path.isabs(args.md) else args.md, "w") as f:
            f.write(text)
    if args.json:
        with open(os.path.join(cwd, args.json), "w") as f:
            json.dump({"releases": order, "runtimes": cols,
                       "cells": [{"kernel": k, "built_against": v, "run_on": r, "result": c}
                                 for (k, v, r), c in sorted(cells.items())]}, f, indent=1)
    ok = sum(1 for c in cells.values() if c == "ok")
    print("build_run: %d pairs, %d ok, %d failing" % (len(cells), ok, len(cells) - ok))
    return 0


if __name__ == "__main__":
    sys.exit(main())
