"""The ABI across releases: what each release's own C headers declare
(tools/layouts/discover.py: every struct's size, alignment, field offsets,
field sizes and field types, every enumerator, every integer macro of the
ABI, every C API signature and typedef), the facts of
conformance/layout_facts.inc, and the TVMFFI* symbols each release's
libtvm_ffi.so exports; every change flagged at the release where it happened.

    python3 tools/layouts/layouts.py [--releases all|0.1.0,0.1.8.post2,...]
        [--json spec/layouts.json] [--md spec/layouts.md]
        [--inc conformance/layout_releases.inc] [--no-reference]
    python3 tools/layouts/layouts.py --from spec/layouts.json --md ... --inc ...
    python3 tools/layouts/layouts.py --from spec/layouts.json --between 0.1.3 0.1.15.post2

The first form fetches the releases (tools/releases, cached) and measures
them; --from rewrites the outputs from a recorded JSON alone, offline.
Every change is labelled breaking, source-breaking only or compatible
(classify.py, with the reason); --between A B lists what breaks a binary
built against A and run on B. --cert-inc writes the per-release layout
table certify reads raised errors with (tools/certify/release_layouts.inc).
spec/layouts.json is the record; spec/layouts.md (for people) and
conformance/layout_releases.inc (the table the conformance suite's layout
guard links, see conformance/layout_guard.h) are made from it, and
//tools/layouts:layouts_test fails when either is not. Progress goes to
stderr, one line per release.
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
sys.path.insert(0, HERE)
import releases  # noqa: E402
import classify  # noqa: E402

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


def kind_of(label):
    """The change-table kind of a fact, from how its label is written."""
    if label.startswith(("sizeof(", "_Alignof(", "offsetof(")):
        return "layout"
    if label.startswith("signature of "):
        return "signature"
    if label.startswith(("type of ", "typedef ")):
        return "type"
    if label.startswith(("TVM_FFI_", "DLPACK_")):
        return "macro"
    return "enum"


def measure(include_dirs):
    """[(label, value)] in header order: what the headers declare, measured,
    then the facts of layout_facts.inc they do not already cover. A fact
    the headers cannot express is left out."""
    import discover  # only here: tools that just evaluate() need no clang
    numeric, typed = discover.discover(include_dirs)
    names = list(numeric) + [f for f in read_facts() if f not in numeric]
    values = evaluate(names, include_dirs)
    out = [(n, values[n]) for n in names if values[n] is not ABSENT]
    # Types sit after the layout facts of their struct, signatures last.
    return out + list(typed.items())


def exported_functions(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True).stdout
    return sorted({parts[-1] for parts in (l.split() for l in out.splitlines())
                   if parts and parts[-1].startswith("TVMFFI")})


def release_column(version):
    root = os.path.join(releases.fetch(version), "tvm_ffi")
    facts = measure([os.path.join(root, "include")])
    return facts, exported_functions(os.path.join(root, "lib", "libtvm_ffi.so"))


def reference_column():
    """The reference headers, with the pinned release's dlpack.h beside them."""
    pinned = releases.fetch(pinned_version())
    return measure([os.path.join(ROOT, "reference", "include"),
                    os.path.join(pinned, "tvm_ffi", "include")])


def pinned_version():
    with open(os.path.join(ROOT, "tools", "requirements.txt")) as f:
        for line in f:
            m = re.match(r"apache-tvm-ffi==(\S+)", line)
            if m:
                return m.group(1)
    raise RuntimeError("tools/requirements.txt pins no apache-tvm-ffi")


# ---- the record: facts as runs over the releases -------------------------

def merge_order(orders):
    """One order of labels from several releases' orders: each label first
    seen in an older release goes right after its predecessor there, so a
    field that was renamed stays beside its struct."""
    merged = []
    for order in orders:
        prev = None
        for label in order:
            if label not in merged:
                merged.insert(merged.index(prev) + 1 if prev is not None else 0, label)
            prev = label
    return merged


def runs_of(values_by_release, order):
    """[[first release, value], ...]: a new run wherever the value changes."""
    runs = []
    for v in order:
        val = values_by_release.get(v, ABSENT)
        if not runs or runs[-1][1] != val:
            runs.append([v, val])
    return runs


def expand(runs, order):
    """{release: value} from runs_of()'s form."""
    starts = {first: val for first, val in runs}
    out, val = {}, ABSENT
    for v in order:
        val = starts.get(v, val)
        out[v] = val
    return out


def build_record(columns, order, reported, ref, pinned):
    """columns: {release: ([(label, value)], symbols)}; pinned: the release
    whose headers the suite is built with (the guard table's struct list)."""
    labels = merge_order([[l for l, _ in columns[v][0]] for v in reversed(order)])
    by_release = {v: dict(columns[v][0]) for v in order}
    facts = [[l, runs_of({v: by_release[v].get(l, ABSENT) for v in order}, order)] for l in labels]
    every = sorted({s for v in order for s in columns[v][1]})
    symbols = [[s, runs_of({v: (True if s in columns[v][1] else ABSENT) for v in order}, order)]
               for s in every]
    rec = {"generated_by": "tools/layouts/layouts.py", "releases": order, "pinned": pinned,
           "reported": reported, "facts": facts, "symbols": symbols}
    if ref is not None:
        rec["reference"] = {l: v for l, v in ref if l in set(labels)}
    return rec


def dump_record(rec):
    """JSON with one fact per line, so a regenerated record diffs well."""
    lines = ["{"]
    keys = list(rec)
    for i, k in enumerate(keys):
        end = "," if i + 1 < len(keys) else ""
        v = rec[k]
        if k in ("facts", "symbols"):
            rows = [json.dumps(r, ensure_ascii=False) for r in v]
            lines.append(" %s: [\n  %s\n ]%s" % (json.dumps(k), ",\n  ".join(rows), end))
        else:
            lines.append(" %s: %s%s" % (json.dumps(k), json.dumps(v, ensure_ascii=False), end))
    return "\n".join(lines) + "\n}\n"


def changes(rec):
    """[(release, kind, name, old, new)] in release order: every fact whose
    value differs from the previous release's, every symbol exported or no
    longer exported (a rename shows as both)."""
    order = rec["releases"]
    found = []
    for label, runs in rec["facts"]:
        for i, (v, val) in enumerate(runs):
            if i > 0:
                found.append((v, kind_of(label), label, runs[i - 1][1], val))
    for name, runs in rec["symbols"]:
        for i in range(1, len(runs)):
            found.append((runs[i][0], "symbol", name, "exported" if runs[i - 1][1] else "-",
                          "exported" if runs[i][1] else "-"))
    rank = {v: i for i, v in enumerate(order)}
    kinds = ["layout", "type", "enum", "macro", "signature", "symbol"]
    found.sort(key=lambda c: (rank[c[0]], kinds.index(c[1])))
    return found


# ---- outputs ------------------------------------------------------------

def _cell(x):
    if x is ABSENT:
        return "-"
    if isinstance(x, str):
        return "`%s`" % x
    return str(x)


def _history(runs, order, show=_cell):
    """'56 (0.1.0–0.1.7); 72 (0.1.8.post0–)'; one value alone when it never changed."""
    if len(runs) == 1:
        return show(runs[0][1])
    parts = []
    for i, (first, val) in enumerate(runs):
        if i + 1 < len(runs):
            last = order[order.index(runs[i + 1][0]) - 1]
            span = first if last == first else "%s–%s" % (first, last)
        else:
            span = first if first == order[-1] else "%s–" % first
        parts.append("%s (%s)" % (show(val), span))
    return "; ".join(parts)


def render_md(rec):
    order = rec["releases"]
    ref = rec.get("reference")
    ch = changes(rec)
    out = ["# The ABI across releases", "",
           "Generated by `python3 tools/layouts/layouts.py --json spec/layouts.json --md spec/layouts.md "
           "--inc conformance/layout_releases.inc` from each release's own C headers (`tvm/ffi/c_api.h`, "
           "`tvm/ffi/extra/c_env_api.h` and the `dlpack/dlpack.h` they include, read as C by the "
           "compiler) and `libtvm_ffi.so` (the wheels on PyPI); do not edit by hand. "
           "A `-` is something the release's headers do not declare, or a function its library "
           "does not export. Layout: sizes, alignments, field offsets and field sizes in bytes "
           "(`sizeof(((S*)0)->f)` is field f's size); type: a field's declared type or a typedef; "
           "signature: a declared C API function.", "",
           "Releases: " + ", ".join(order) + ".", "",
           "TVMFFIGetVersion reports: " + ", ".join(
               "%s → %s" % (v, rec["reported"][v]) for v in order) + ".", "",
           "## What breaks a binary built before, by release", "",
           "A binary (a kernel library, a host) built against an older release's headers and run "
           "on this release's runtime meets these changes; `layouts.py --between A B` lists them "
           "for any pair, either way round.", "",
           "| release | breaking changes |", "|---|---|"]
    labelled = classify.labelled(rec, ch)
    for v in order:
        names = []
        for c in labelled:
            if c[0] == v and c[5] == classify.BREAKING and c[1] in ("layout", "enum", "symbol", "signature", "macro"):
                short = c[2] if c[1] != "signature" else c[2][len("signature of "):]
                if short not in names:
                    names.append(short)
        if names:
            out.append("| %s | %s |" % (v, ", ".join("`%s`" % n for n in names)))
    out += ["", "## Every change, at the release where it happened", "",
            "Label: **breaking** (a binary built against the older headers misbehaves on this "
            "release: a size or offset changed, an enumerator value now means something else, a "
            "declared function changed or went away), **source-breaking only** (a rename with the "
            "same value, offset and size: rebuilding needs an edit, binaries are unaffected) or "
            "**compatible** (an addition binaries built before never meet); why says which "
            "(tools/layouts/classify.py).", "",
            "| release | kind | name | before | after | label | why |", "|---|---|---|---|---|---|---|"]
    for v, kind, name, old, new, lab, why in labelled:
        if kind == "symbol":
            out.append("| %s | %s | `%s` | %s | %s | %s | %s |" % (v, kind, name, old, new, lab, why))
        else:
            out.append("| %s | %s | `%s` | %s | %s | %s | %s |" % (v, kind, name, _cell(old), _cell(new),
                                                                 lab, why))
    if not ch:
        out.append("| | | no change | | | | |")
    out += ["", "## Every fact, by release", "",
            "| fact | value by release | reference |" if ref is not None else "| fact | value by release |",
            "|---|---|---|" if ref is not None else "|---|---|"]
    for label, runs in rec["facts"]:
        row = "| `%s` | %s |" % (label, _history(runs, order))
        if ref is not None:
            row += " %s |" % _cell(ref.get(label, ABSENT))
        out.append(row)
    out += ["", "## Exported TVMFFI* functions, by release", "", "| function | exported by |", "|---|---|"]
    yes_no = lambda x: "yes" if x else "no"  # noqa: E731
    for name, runs in rec["symbols"]:
        out.append("| `%s` | %s |" % (name, "all" if len(runs) == 1 else _history(runs, order, yes_no)))
    return "\n".join(out) + "\n"


# The guard's table: every struct the headers the suite is built with
# declare (those of the pinned release), with the name messages use.
DISPLAY = {
    "TVMFFIAny": "any", "TVMFFIObject": "object header", "TVMFFIByteArray": "string/bytes cell",
    "TVMFFIShapeCell": "shape cell", "TVMFFISeqCell": "sequence cell", "TVMFFIErrorCell": "error cell",
    "TVMFFIFunctionCell": "function cell", "TVMFFIOpaqueObjectCell": "opaque object cell",
    "DLTensor": "tensor cell (DLTensor)", "TVMFFITypeInfo": "type info", "TVMFFIFieldInfo": "field info",
    "TVMFFIMethodInfo": "method info", "TVMFFITypeMetadata": "type metadata",
    "TVMFFITypeAttrColumn": "type attribute column", "TVMFFIObjectAllocHeader": "allocation header",
    "TVMFFICustomAllocator": "custom allocator", "TVMFFIVersion": "version record",
}
GUARD_ABSENT, GUARD_AMBIGUOUS = -1, -2


def guard_parts(rec):
    """[(struct, [(field or '', 'SIZE'|'OFFSET', expression)])] for every
    struct the pinned release declares."""
    pinned = rec["pinned"]
    now = {l: expand(runs, rec["releases"])[pinned] for l, runs in rec["facts"]}
    parts = []
    for label, _ in rec["facts"]:
        m = re.match(r"sizeof\(([A-Za-z_][\w ]*)\)$", label)
        if not m or now[label] is ABSENT:
            continue
        struct = m.group(1)
        facts = [("", "SIZE", label)]
        for l, _ in rec["facts"]:
            f = re.match(r"offsetof\(%s, (.+)\)$" % re.escape(struct), l)
            if f and now[l] is not ABSENT:
                facts.append((f.group(1), "OFFSET", l))
                width = "sizeof(((%s*)0)->%s)" % (struct, f.group(1))
                if now.get(width) is not ABSENT and width in now:
                    facts.append((f.group(1), "SIZE", width))
        parts.append((struct, facts))
    return parts


def guard_rows(rec, parts):
    """[(reported version, [wheels], [value per fact])]: a value the wheels
    that report the same version disagree on is GUARD_AMBIGUOUS."""
    order = rec["releases"]
    values = {l: expand(runs, order) for l, runs in rec["facts"]}
    by_reported = {}
    for v in order:
        by_reported.setdefault(rec["reported"][v], []).append(v)
    pinned = rec["pinned"]

    def at(label, struct, field, wheel):
        """A field absent under its pinned name is looked for under an old
        one: a field of the wheel's struct the pinned headers lack, with
        the same offset and size (a rename is not a layout change)."""
        val = values.get(label, {}).get(wheel, ABSENT)
        if val is not ABSENT or not field:
            return val
        off = "offsetof(%s, %s)" % (struct, field)
        width = "sizeof(((%s*)0)->%s)" % (struct, field)
        want = (values[off][pinned], values.get(width, {}).get(pinned))
        for l, _ in rec["facts"]:
            m = re.match(r"offsetof\(%s, (.+)\)$" % re.escape(struct), l)
            if not m or values[l][pinned] is not ABSENT:
                continue
            old_width = "sizeof(((%s*)0)->%s)" % (struct, m.group(1))
            if (values[l][wheel], values.get(old_width, {}).get(wheel)) == want:
                return values[old_width][wheel] if label == width else values[l][wheel]
        return ABSENT

    rows = []
    for rep in sorted(by_reported, key=releases.version_key):
        wheels = by_reported[rep]
        row = []
        for struct, facts in parts:
            for field, _, label in facts:
                seen = {at(label, struct, field, w) for w in wheels}
                val = seen.pop() if len(seen) == 1 else GUARD_AMBIGUOUS
                row.append(GUARD_ABSENT if val is ABSENT else val)
        rows.append((rep, wheels, row))
    return rows


def render_inc(rec):
    parts = guard_parts(rec)
    out = ["/*",
           " * Generated by tools/layouts/layouts.py from spec/layouts.json; do not edit.",
           " * The layout of every ABI struct, release by release, for the conformance",
           " * suite's layout guard (layout_guard.h). Each section is read by defining",
           " * its macro before including this file:",
           " *   CONF_LAYOUT_PART(struct, \"name in messages\")",
           " *   CONF_LAYOUT_FACT(struct, \"field\" or \"\" for the struct, SIZE|OFFSET, expression)",
           " *   CONF_LAYOUT_RELEASE(\"version TVMFFIGetVersion reports\", \"the wheels reporting it\",",
           " *                       one value per FACT line in order (%d: absent, %d: the wheels"
           % (GUARD_ABSENT, GUARD_AMBIGUOUS),
           " *                       disagree), then the number of FACT lines)",
           " * A field a release has under an older name, at the same offset and size,",
           " * counts as the same field.",
           " */", "#ifdef CONF_LAYOUT_PART"]
    for struct, _ in parts:
        out.append("CONF_LAYOUT_PART(%s, \"%s\")" % (struct, DISPLAY.get(struct, struct)))
    out += ["#endif", "#ifdef CONF_LAYOUT_FACT"]
    for struct, facts in parts:
        for field, measure_, expr in facts:
            out.append("CONF_LAYOUT_FACT(%s, \"%s\", %s, %s)" % (struct, field, measure_, expr))
    out += ["#endif", "#ifdef CONF_LAYOUT_RELEASE"]
    for rep, wheels, row in guard_rows(rec, parts):
        out.append("CONF_LAYOUT_RELEASE(\"%s\", \"%s\", %s)" % (rep, ", ".join(wheels),
                                                             ",".join(str(x) for x in row + [len(row)])))
    out.append("#endif")
    return "\n".join(out) + "\n"


def _test_bodies(path):
    """{test name: body} of a conformance test file (TEST(suite, name) { ... })."""
    with open(path) as f:
        text = f.read()
    heads = list(re.finditer(r"^TEST\(\w+, (\w+)[^)]*\) \{$", text, re.M))
    return {m.group(1): text[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(text)]
            for i, m in enumerate(heads)}


def audit(rec, test_dir):
    """[(struct, field, test file, test, guarded)]: every test that names a
    struct, or a field, whose layout some recorded release has differently,
    and whether it calls the guard for that struct. A reading aid for
    deciding where a guard goes: a name match, not proof of a read (helpers
    that read a struct for a test are not followed)."""
    parts = guard_parts(rec)
    rows = guard_rows(rec, parts)
    flat = [(struct, field) for struct, facts in parts for field, _, _ in facts]
    pinned_row = [r for rep, _, r in rows if rep == rec["reported"][rec["pinned"]]][0]
    moved = sorted({flat[i] for _, _, r in rows for i in range(len(r)) if r[i] != pinned_row[i]})
    # A field is looked for by name only when no other struct has one so
    # named (`cause_chain`, not `size`); otherwise the struct's name is.
    owners = {}
    for struct, field in set(flat):
        owners.setdefault(field, set()).add(struct)
    moved = sorted({(s_, f if f and len(owners[f]) == 1 else "") for s_, f in moved})
    found = []
    for name in sorted(os.listdir(test_dir)):
        if not name.endswith("_test.c"):
            continue
        for test, body in _test_bodies(os.path.join(test_dir, name)).items():
            for struct, field in moved:
                pattern = r"\b%s\b" % re.escape(struct) if not field else \
                    r"(->|\.)%s\b" % re.escape(field)
                if re.search(pattern, body):
                    guarded = "conformance_layout_guard(CONF_LAYOUT_%s" % struct in body
                    found.append((struct, field, name, test, guarded))
    return found


# What certify needs to read a raised error the way a host built against
# a given release does (tools/certify/probe_readback.c).
CERT_FACTS = ["sizeof(TVMFFIErrorCell)", "offsetof(TVMFFIErrorCell, cause_chain)",
              "offsetof(TVMFFIErrorCell, extra_context)"]


def render_cert_inc(rec):
    order = rec["releases"]
    values = {l: expand(runs, order) for l, runs in rec["facts"]}

    def row(get):
        return ", ".join("-1" if get(f) is ABSENT else str(get(f)) for f in CERT_FACTS)

    out = ["/*",
           " * Generated by tools/layouts/layouts.py from spec/layouts.json; do not edit.",
           " * How each release's headers lay out what certify reads back from a raised",
           " * error (probe_readback.c), read by defining the macro before including:",
           " *   CERT_LAYOUT_WHEEL(\"wheel version\", \"version TVMFFIGetVersion reports\",",
           " *                     %s)" % ", ".join(CERT_FACTS),
           " *   CERT_LAYOUT_REFERENCE(the same facts of the reference runtime's headers)",
           " * -1: the release does not declare it.",
           " */", "#ifdef CERT_LAYOUT_WHEEL"]
    for v in order:
        out.append("CERT_LAYOUT_WHEEL(\"%s\", \"%s\", %s)" % (
            v, rec["reported"][v], row(lambda f: values.get(f, {}).get(v, ABSENT))))
    out += ["#endif", "#ifdef CERT_LAYOUT_REFERENCE"]
    ref = rec.get("reference") or {}
    out.append("CERT_LAYOUT_REFERENCE(%s)" % row(lambda f: ref.get(f, ABSENT)))
    out.append("#endif")
    return "\n".join(out) + "\n"


def print_between(rec, built, run):
    order = rec["releases"]
    for v in (built, run):
        if v not in order:
            raise SystemExit("layouts: %s is not a recorded release (%s)" % (v, ", ".join(order)))
    found = classify.between(rec, built, run, changes(rec))
    newer = order.index(run) > order.index(built)
    print("built against %s, run on %s (%s runtime): %d change%s that matter%s" % (
        built, run, "a newer" if newer else ("an older" if run != built else "the same"), len(found),
        "" if len(found) == 1 else "s", "s" if len(found) == 1 else ""))
    for v, kind, name, old, new, lab, why in found:
        shown = (old, new) if kind == "symbol" else (_cell(old), _cell(new))
        print("  %-12s %-21s %-9s %s: %s -> %s: %s" % (v, lab, kind, name, shown[0], shown[1], why))
    return found


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--releases", default="all")
    ap.add_argument("--from", dest="source", help="a recorded JSON instead of measuring")
    ap.add_argument("--md")
    ap.add_argument("--json")
    ap.add_argument("--inc")
    ap.add_argument("--cert-inc", help="certify's per-release error cell table")
    ap.add_argument("--between", nargs=2, metavar=("BUILT", "RUN"),
                    help="what breaks a binary built against BUILT and run on RUN (with --from)")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--audit", action="store_true",
                    help="list the conformance tests that read a struct or field some release lays out "
                         "differently, and whether each calls the layout guard")
    args = ap.parse_args(argv)
    if args.between and not args.source:
        args.source = os.path.join(ROOT, "spec", "layouts.json")
    if args.source:
        with open(args.source) as f:
            rec = json.load(f)
    else:
        order = releases.select(args.releases)
        columns, reported = {}, {}
        for i, v in enumerate(order):
            print("layouts: [%d/%d] %s" % (i + 1, len(order), v), file=sys.stderr, flush=True)
            columns[v] = release_column(v)
            facts = dict(columns[v][0])
            reported[v] = "%s.%s.%s" % tuple(facts.get("TVM_FFI_VERSION_" + p, "?")
                                             for p in ("MAJOR", "MINOR", "PATCH"))
        ref = None if args.no_reference else reference_column()
        rec = build_record(columns, order, reported, ref, pinned_version())
    if args.between:
        print_between(rec, *args.between)
        return 0
    order = rec["releases"]
    ch = changes(rec)
    for v, kind, name, old, new in ch:
        print("%-14s %-9s %-60s %s -> %s" % (v, kind, name, old if kind == "symbol" else _cell(old),
                                              new if kind == "symbol" else _cell(new)))
    if rec.get("reference") is not None:
        last = {l: expand(runs, order)[order[-1]] for l, runs in rec["facts"]}
        diff = [l for l in last if rec["reference"].get(l, ABSENT) != last[l]]
        print("reference vs %s: %s" % (order[-1], "identical" if not diff else
                                        "differs in " + ", ".join(diff)))
    if args.json:
        _write(args.json, dump_record(rec))
    if args.md:
        _write(args.md, render_md(rec))
    if args.inc:
        _write(args.inc, render_inc(rec))
    if args.cert_inc:
        _write(args.cert_inc, render_cert_inc(rec))
    if args.audit:
        for struct, field, name, test, guarded in audit(rec, os.path.join(ROOT, "conformance")):
            print("audit: %-8s %s.%s %s" % ("guarded" if guarded else "UNGUARDED", name[:-2], test,
                                             struct + ("." + field if field else "")))
    print("layouts: %d releases, %d changes" % (len(order), len(ch)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
