"""The ABI's layout across releases: every fact of conformance/layout_facts.inc
(struct sizes and field offsets, enum values, the header's version) compiled
against each release's own c_api.h, plus the TVMFFI* functions each release's
libtvm_ffi.so exports, with every change flagged at the release where it
happened.

    python3 tools/layouts/layouts.py [--releases all|0.1.0,0.1.8.post2,...]
        [--md spec/layouts.md] [--json FILE] [--no-reference]

A fact a release's header cannot express (a struct or enum it does not have
yet) is shown as "-". Progress goes to stderr, one line per release.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "releases"))
import releases  # noqa: E402

FACTS_FILE = os.path.join(ROOT, "conformance", "layout_facts.inc")
ABSENT = None


def read_facts():
    with open(FACTS_FILE) as f:
        return [m.group(1) for m in (re.match(r"\s*FACT\((.*)\)\s*$", line) for line in f) if m]


def _program(facts):
    lines = ["#include <stddef.h>", "#include <stdio.h>", "#include <tvm/ffi/c_api.h>",
             "int main(void) {"]
    first = len(lines) + 1
    for i, f in enumerate(facts):
        lines.append('  printf("%d\\t%%lld\\n", (long long)(%s));' % (i, f))
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n", first


def evaluate(facts, include_dirs, cc="cc"):
    """{fact: value or ABSENT}. Facts the header cannot compile are dropped one
    compile at a time from the lines the compiler names, so one missing
    struct costs a retry, not a compile per fact."""
    alive = list(range(len(facts)))
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "facts.c"), os.path.join(tmp, "facts")
        for _ in range(64):
            text, first = _program([facts[i] for i in alive])
            with open(src, "w") as f:
                f.write(text)
            cmd = [cc, "-std=c17", "-w", "-o", exe, src] + ["-I" + d for d in include_dirs]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode == 0:
                break
            bad = {int(n) - first for n in re.findall(r"facts\.c:(\d+):\d+: error", res.stderr)}
            bad = {b for b in bad if 0 <= b < len(alive)}
            if not bad:
                raise RuntimeError("facts do not compile against %s:\n%s" % (include_dirs, res.stderr[-2000:]))
            alive = [a for k, a in enumerate(alive) if k not in bad]
        else:
            raise RuntimeError("too many compile rounds against %s" % include_dirs)
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    values = {f: ABSENT for f in facts}
    for line in out.splitlines():
        k, v = line.split("\t")
        values[facts[alive[int(k)]]] = int(v)
    return values


def exported_functions(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
    return sorted({parts[-1] for parts in (l.split() for l in out.splitlines())
                   if parts and parts[-1].startswith("TVMFFI")})


def release_column(version):
    root = os.path.join(releases.fetch(version), "tvm_ffi")
    values = evaluate(read_facts(), [os.path.join(root, "include")])
    return values, exported_functions(os.path.join(root, "lib", "libtvm_ffi.so"))


def reference_column():
    """The reference headers, with the pinned release's dlpack.h beside them."""
    pinned = releases.fetch(pinned_version())
    values = evaluate(read_facts(), [os.path.join(ROOT, "reference", "include"),
                                     os.path.join(pinned, "tvm_ffi", "include")])
    return values, None


def pinned_version():
    with open(os.path.join(ROOT, "tools", "requirements.txt")) as f:
        for line in f:
            m = re.match(r"apache-tvm-ffi==(\S+)", line)
            if m:
                return m.group(1)
    raise RuntimeError("tools/requirements.txt pins no apache-tvm-ffi")


def changes(columns, order):
    """[(release, kind, name, old, new)] in release order: every fact whose
    value differs from the previous release's, every symbol added or removed."""
    found = []
    prev = None
    for v in order:
        values, symbols = columns[v]
        if prev is not None:
            pvalues, psymbols = columns[prev]
            for f, val in values.items():
                if val != pvalues.get(f):
                    found.append((v, "fact", f, pvalues.get(f), val))
            for s in sorted(set(symbols) - set(psymbols)):
                found.append((v, "symbol", s, "-", "exported"))
            for s in sorted(set(psymbols) - set(symbols)):
                found.append((v, "symbol", s, "exported", "-"))
        prev = v
    return found


def _cell(x):
    return "-" if x is ABSENT else str(x)


def _runs(values_by_release, order):
    """A fact's history as runs: '56 (0.1.0-0.1.7), 72 (0.1.8.post0-)'."""
    runs = []
    for v in order:
        val = values_by_release[v]
        if runs and runs[-1][0] == val:
            runs[-1][2] = v
        else:
            runs.append([val, v, v])
    parts = []
    for i, (val, a, b) in enumerate(runs):
        span = a if a == b else "%s–%s" % (a, b)
        if i == len(runs) - 1 and len(runs) > 1 and b == order[-1]:
            span = "%s–" % a
        parts.append("%s (%s)" % (_cell(val), span) if len(runs) > 1 else _cell(val))
    return ", ".join(parts)


def write_md(path, columns, order, ref):
    facts = read_facts()
    ch = changes(columns, order)
    out = ["# The ABI's layout across releases", "",
           "Generated by `python3 tools/layouts/layouts.py --md spec/layouts.md` from each "
           "release's own `tvm/ffi/c_api.h` and `libtvm_ffi.so` (the wheels on PyPI); "
           "do not edit by hand. A `-` is a fact the release's header cannot express, "
           "or a function its library does not export.", "",
           "Releases: " + ", ".join(order) + ".", "", "## Every change, at the release where it happened", "",
           "| release | what | name | before | after |", "|---|---|---|---|---|"]
    for v, kind, name, old, new in ch:
        out.append("| %s | %s | `%s` | %s | %s |" % (v, kind, name, _cell(old) if kind == "fact" else old,
                                                    _cell(new) if kind == "fact" else new))
    if not ch:
        out.append("| | | no change | | |")
    out += ["", "## Every fact, by release", "",
            "| fact | value by release | reference |" if ref else "| fact | value by release |",
            "|---|---|---|" if ref else "|---|---|"]
    for f in facts:
        hist = _runs({v: columns[v][0][f] for v in order}, order)
        row = "| `%s` | %s |" % (f, hist)
        if ref:
            row += " %s |" % _cell(ref[0][f])
        out.append(row)
    out += ["", "## Exported TVMFFI* functions, by release", "", "| function | exported by |", "|---|---|"]
    every = sorted({s for v in order for s in columns[v][1]})
    for s in every:
        have = {v: (1 if s in columns[v][1] else ABSENT) for v in order}
        hist = _runs(have, order).replace("1 (", "yes (").replace("- (", "no (")
        out.append("| `%s` | %s |" % (s, "all" if hist == "1" else hist))
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", default="all")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--no-reference", action="store_true")
    args = ap.parse_args(argv)
    order = releases.select(args.releases)
    columns = {}
    for i, v in enumerate(order):
        print("layouts: [%d/%d] %s" % (i + 1, len(order), v), file=sys.stderr, flush=True)
        columns[v] = release_column(v)
    ref = None if args.no_reference else reference_column()
    ch = changes(columns, order)
    for v, kind, name, old, new in ch:
        print("%-14s %-6s %-60s %s -> %s" % (v, kind, name, _cell(old) if kind == "fact" else old,
                                              _cell(new) if kind == "fact" else new))
    if ref:
        last = columns[order[-1]][0]
        diff = [f for f in read_facts() if ref[0][f] != last[f]]
        print("reference vs %s: %s" % (order[-1], "identical" if not diff else
                                        "differs in " + ", ".join(diff)))
    if args.md:
        write_md(args.md, columns, order, ref)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"releases": order,
                       "facts": {v: columns[v][0] for v in order},
                       "functions": {v: columns[v][1] for v in order},
                       "reference": ref[0] if ref else None,
                       "changes": [dict(zip(("release", "kind", "name", "before", "after"), c))
                                   for c in ch]},
                      f, indent=1)
    print("layouts: %d releases, %d changes" % (len(order), len(ch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
