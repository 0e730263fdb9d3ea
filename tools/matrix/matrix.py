"""The cross-release matrix: the conformance suite against every apache-tvm-ffi
release and the bundled reference, clause by clause.

    bazel run //tools:matrix -- [--releases all|0.1.0,0.1.8.post2,...] [--jobs N]
        [--md spec/matrix.md] [--out matrix-report] [--no-run] [--fix-since]
        [-- EXTRA BAZEL FLAGS, e.g. --config=remote]

1. Fetches the releases (tools/releases: pip, once, into the cache; offline
   reruns use the cache).
2. Runs one Bazel test per distinct libtvm_ffi.so, //tools/matrix:suite_<release>,
   plus //tools/matrix:suite_reference, in one `bazel test`: the library is
   a declared input (@tvm_ffi_releases), so Bazel spreads the runs over
   --jobs local jobs or a remote-execution cluster alike, and caches them.
   A progress line per release as each finishes.
3. Judges each run with tools/report.py as that release (clauses since at
   or before it; later ones it breaks as LATER), derives each clause's
   since from the results (profiles.py; only where the run covers the
   releases that decide it), and writes matrix-report/matrix.{html,json}.
   It writes tracked files only when asked: --md PATH (spec/matrix.md is
   the record //spec:since_test checks, so write it from a run of every
   release) also adds new releases to spec/releases.md; --fix-since, only
   with every release, rewrites the annotations the results contradict.
A line at least every 10 s says what it is doing.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from tools import progress, report
from tools.matrix import profiles, render
from tools.releases import releases

ROOT = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()
SPEC = os.path.join(ROOT, "spec")


def say(text):
    print(f"matrix: {text}", flush=True)


def target(name):
    return f"//tools/matrix:suite_{name}"


# ---------------------------------------------------------------- fetching

def fetch_all(order):
    """({release: libtvm_ffi.so}, {release: why it cannot be had})."""
    libs, missing = {}, {}
    for v in order:
        try:
            libs[v] = os.path.join(releases.fetch(v), "tvm_ffi", "lib", "libtvm_ffi.so")
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            missing[v] = str(exc)
    return libs, missing


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dedupe(libs, order):
    """{release: the earlier release with the very same library}: a library
    is run once, whatever releases ship it."""
    first, same_as = {}, {}
    for v in order:
        if v not in libs:
            continue
        digest = sha256(libs[v])
        if digest in first:
            same_as[v] = first[digest]
        else:
            first[digest] = v
    return same_as


# ---------------------------------------------------------------- running

class Progress:
    """Reads Bazel's build event stream as it is written and prints a line
    per finished test."""

    def __init__(self, path, total, on_result):
        self.path, self.total, self.on_result = path, total, on_result
        self.done = threading.Event()
        self.results = {}
        self.thread = threading.Thread(target=self.follow, daemon=True)

    def follow(self):
        while not os.path.exists(self.path) and not self.done.is_set():
            time.sleep(0.2)
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8") as f:
            pending = ""
            while True:
                chunk = f.readline()
                if not chunk:
                    if self.done.is_set():
                        break
                    time.sleep(0.3)
                    continue
                pending += chunk
                if not pending.endswith("\n"):
                    continue
                self.event(pending)
                pending = ""

    def event(self, line):
        try:
            ev = json.loads(line)
        except ValueError:
            return
        test = ev.get("id", {}).get("testResult")
        if not test:
            return
        result = ev.get("testResult", {})
        files = {o.get("name"): o.get("uri", "") for o in result.get("testActionOutput", [])}
        xml = urllib.parse.urlparse(files.get("test.xml", "")).path
        cached = result.get("cachedLocally") or result.get("executionInfo", {}).get("cachedRemotely")
        seconds = 0.0 if cached else int(result.get("testAttemptDurationMillis", 0)) / 1000
        self.results[test["label"]] = (xml, seconds, result.get("status", ""))
        self.on_result(test["label"], xml, seconds, len(self.results), self.total)
        if getattr(self, "beat", None):
            self.beat.touch()


def run_bazel(targets, jobs, extra, log_path, on_result):
    """`bazel test` of the targets; returns ({label: (xml, seconds, status)}, exit status)."""
    bep = tempfile.mktemp(prefix="matrix-bep-", suffix=".json")
    stamp = ",".join(releases.cached_versions())
    cmd = ["bazel", "test", f"--jobs={jobs}", f"--local_test_jobs={jobs}", "--test_output=errors",
           f"--build_event_json_file={bep}", f"--repo_env=TVMFFI_RELEASES_STAMP={stamp}"] + extra + targets
    follow = Progress(bep, len(targets), on_result)

    def doing():
        return (f"{len(follow.results)} of {len(targets)} runs finished; bazel: "
                f"{last_line(log_path) or 'starting'}")

    with progress.Heartbeat(doing, say) as beat:
        follow.beat = beat
        follow.thread.start()
        with open(log_path, "w", encoding="utf-8") as log:
            rc = subprocess.call(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    follow.done.set()
    follow.thread.join()
    if os.path.exists(bep):
        os.remove(bep)
    return follow.results, rc


def last_line(path):
    """The last line Bazel wrote to its log ("[282 / 284] Testing ...")."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 400))
            lines = [line.strip() for line in f.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:120] if lines else ""


def testlog_xml(name):
    return os.path.join(ROOT, "bazel-testlogs", "tools", "matrix", f"suite_{name}", "test.xml")


# ---------------------------------------------------------------- judging

def raw_of(xml, name):
    if not xml or not os.path.exists(xml):
        return []
    return list(report.raw_cases(target(name), xml))


def as_release(raw, release):
    """The raw records of one library, recorded for another release with the same library."""
    return [dict(r, impl=dict(r.get("impl") or {}, release=release)) for r in raw]


def column(name, raw, seconds=None, same_as=""):
    records, rows, t = report.build(raw, SPEC)
    impl = next((r["impl"] for r in records if r.get("impl")), {})
    return {"name": name, "release": "" if name == "reference" else name, "raw": raw,
            "version": impl.get("version", ""), "implementation": impl.get("implementation", ""),
            "records": records, "rows": rows, "totals": t, "load_errors": report.load_failures(records),
            "seconds": seconds, "same_as": same_as,
            "cpu": 0.0 if same_as else float(impl.get("cpu_seconds") or 0)}


def progress_line(col, done, total):
    t = col["totals"]
    when = f"{col['seconds']:.0f} s" if col.get("seconds") else "cached"
    when += f" (CPU {col['cpu']:.0f} s)" if col.get("cpu") else ""
    if col.get("same_as"):
        when = f"same library as {col['same_as']}"
    load = f"  DID NOT LOAD: {col['load_errors'][0][:80]}" if col["load_errors"] else ""
    if not col["records"]:
        return f"[{done:2}/{total}] {col['name']:<13} no results recorded"
    if not load and col["records"] and not any(r["clause"] for r in col["records"]):
        # Bazel's own record of a run that never wrote its results.
        r = col["records"][0]
        return (f"[{done:2}/{total}] {col['name']:<13} the run itself failed: {r['verdict']}: "
                f"{report.one_line(r['message'], 100)}  {when}")
    return (f"[{done:2}/{total}] {col['name']:<13} reports {col['version'] or '?':<7} "
            f"MUST {t['MUST']['passed']:3}/{t['MUST']['total']:<3} "
            f"SHOULD {t['SHOULD']['passed']:2}/{t['SHOULD']['total']:<3} later broken {t['later']:2}  "
            f"known {t['known']:2}  unexpected {t['unexpected']:3}  {when}{load}")


# ---------------------------------------------------------------- findings

def listed(ids, limit=14):
    return ", ".join(ids[:limit]) + (", ..." if len(ids) > limit else "")


def broken_must(col, recorded):
    """(MUST clauses of its time the release breaks, those of them only as
    spec/deviations.md records for it or a later release)."""
    broken = [row for row in col["rows"] if row["level"] == "MUST" and not row.get("later")
              and row["verdict"] in ("FAIL", "CRASH", "TIMEOUT", "KNOWN")]
    persisting = [row["clause"] for row in broken
                  if profiles.clause_state(row["tests"], col["version"], recorded) == "deviates"]
    return [row["clause"] for row in broken if row["clause"] not in persisting], persisting


def findings(columns, profile, missing, deviations):
    rel = [c for c in columns if c["name"] != "reference"]
    ref = next((c for c in columns if c["name"] == "reference"), None)
    distinct = [c for c in rel if not c.get("same_as")]
    recorded = profiles.recorded_from(deviations)
    out = [f"- {len(rel)} releases ({len(distinct)} distinct libraries) and the reference; "
           f"{len(profile)} clauses of the suite ran on the releases."]
    for c in rel:
        if c.get("same_as"):
            out.append(f"- {c['name']} ships the very same libtvm_ffi.so as {c['same_as']} "
                       f"(sha256 equal): run once, judged as each.")
    full = [c["name"] for c in rel if c["totals"]["MUST"]["passed"] == c["totals"]["MUST"]["total"]
            and not c["load_errors"]]
    out.append("- Every MUST clause of its time holds on: " + (", ".join(full) or "none") + ".")
    # Consecutive releases that break the same clauses share a line.
    groups = []
    for c in rel:
        key = broken_must(c, recorded)
        if groups and groups[-1][0] == key:
            groups[-1][1].append(c["name"])
        else:
            groups.append((key, [c["name"]]))
    for (own, persisting), names in groups:
        if not own and not persisting:
            continue
        who = names[0] if len(names) == 1 else f"{names[0]} to {names[-1]} ({len(names)} releases)"
        line = f"- {who}: {len(own) + len(persisting)} MUST clauses of its time broken"
        line += f": {listed(own)}" if own else ""
        line += (f"{'; and' if own else ':'} {listed(persisting)}, as spec/deviations.md records for a "
                 "later release too" if persisting else "")
        out.append(line + ".")
    for c in rel:
        for message in c["load_errors"]:
            out.append(f"- {c['name']} does not load: {message}")
    for v, why in sorted(missing.items(), key=lambda kv: releases.version_key(kv[0])):
        out.append(f"- {v} could not be fetched: {why}")
    if ref:
        out.append(f"- The reference: {report.summary_line(ref['totals'], ref['load_errors'])}.")
    moved = [p for p in profile if p["verdict"] in profiles.WRONG]
    if moved:
        out.append(f"- {len(moved)} since annotations disagree with the results (see \"Since annotations "
                   "against the results\").")
    untold = [p for p in profile if p["verdict"] == "unknown" and p["why"].startswith("this run covers")]
    if untold:
        out.append(f"- This run covers {len(rel)} releases, not all there are: {len(untold)} since "
                   "annotations are not judged from it (--releases all judges every one).")
    return out


# ---------------------------------------------------------------- writing

def update_releases(columns):
    """Adds the releases this run saw to spec/releases.md (none is dropped)."""
    known = dict(report.read_releases(SPEC))
    seen = {c["name"]: c["version"] for c in columns if c["name"] != "reference" and c["version"]}
    if all(known.get(v) == r for v, r in seen.items()):
        return
    known.update(seen)
    path = os.path.join(SPEC, "releases.md")
    with open(path, encoding="utf-8") as f:
        head = f.read().split("| release | TVMFFIGetVersion |")[0]
    rows = [f"| {v} | {known[v]} |" for v in sorted(known, key=report.version_key)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "| release | TVMFFIGetVersion |\n|---|---|\n" + "\n".join(rows) + "\n")


def write_outputs(columns, profile, missing, deviations, args):
    generated = render.now()
    found = findings(columns, profile, missing, deviations)
    wrote = []
    if args.md:
        md_path = args.md if os.path.isabs(args.md) else os.path.join(ROOT, args.md)
        os.makedirs(os.path.dirname(md_path), exist_ok=True)
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(render.markdown(columns, profile, found, generated))
        update_releases(columns)
        wrote.append(os.path.relpath(md_path, ROOT))
    out = args.out if os.path.isabs(args.out) else os.path.join(ROOT, args.out)
    os.makedirs(out, exist_ok=True)
    render.write_json(os.path.join(out, "matrix.json"), columns, profile, generated)
    render.write_html(os.path.join(out, "matrix.html"), columns, profile, found, generated, ROOT)
    wrote += [f"{os.path.relpath(out, ROOT)}/matrix.html", "matrix.json"]
    for line in found:
        say(line[2:])
    text, _ = render.headline(columns)
    say(text)
    say("wrote " + ", ".join(wrote) + ("" if args.md else " (spec/matrix.md only with --md)"))


# ---------------------------------------------------------------- main

def parse(argv):
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--releases", default="all", help="all, or a comma-separated list of versions")
    ap.add_argument("--jobs", type=int, default=2, help="Bazel's --jobs and --local_test_jobs (default 2)")
    ap.add_argument("--md", default="", help="write the matrix as Markdown here (spec/matrix.md is the "
                    "record //spec:since_test checks) and add new releases to spec/releases.md")
    ap.add_argument("--out", default="matrix-report", help="folder for matrix.html and matrix.json")
    ap.add_argument("--no-run", action="store_true", help="judge the runs bazel-testlogs already holds")
    ap.add_argument("--fix-since", action="store_true",
                    help="rewrite the spec's (since X) where the results contradict it (every release only)")
    args = ap.parse_args(argv)
    if args.fix_since and args.releases not in ("", "all"):
        ap.error("--fix-since needs a run of every release (--releases all): a subset cannot date a clause")
    return args, extra


def main(argv=None):
    started = time.time()
    args, extra = parse(sys.argv[1:] if argv is None else argv)
    with progress.Heartbeat(lambda: "finding and fetching the releases (pip, once, into the cache)", say):
        order = releases.select(args.releases)
        libs, missing = fetch_all(order)
    order = [v for v in order if v in libs]
    same_as = dedupe(libs, order)
    say(f"{len(order)} releases fetched ({len(missing)} unavailable), "
        f"{len(order) - len(same_as)} distinct libraries; running the suite against each and the reference")
    names = [v for v in order if v not in same_as] + ["reference"]
    total = len(names) + len(same_as)
    done = {}

    def on_result(label, xml, seconds, n, _total):
        name = label.split(":suite_", 1)[-1]
        col = column(name, raw_of(xml, name), seconds)
        done[name] = col
        say(progress_line(col, len(done), total))
        for v in [v for v, src in same_as.items() if src == name]:
            done[v] = column(v, as_release(col["raw"], v), None, same_as=name)
            say(progress_line(done[v], len(done), total))

    rc = 0
    if not args.no_run:
        log = os.path.join(ROOT, args.out, "bazel.log") if not os.path.isabs(args.out) else \
            os.path.join(args.out, "bazel.log")
        os.makedirs(os.path.dirname(log), exist_ok=True)
        results, rc = run_bazel([target(n) for n in names], args.jobs, extra, log, on_result)
        if rc not in (0, 3):
            say(f"bazel test failed (exit {rc}); its output: {log}")
    for name in names:
        if name not in done:
            on_result(target(name), testlog_xml(name), None, 0, total)
    def ran(name):
        """Did the suite run (its test cases are recorded), not only Bazel's record of a failed run?"""
        return name in done and any(report.clause_of(r["name"]) for r in done[name]["raw"])

    columns = [done[v] for v in order if ran(v)] + [done["reference"]] * ran("reference")
    absent = [n for n in order + ["reference"] if not ran(n)]
    if absent:
        say("no results for: " + ", ".join(absent) + " (rerun them: the matrix reuses the runs Bazel cached)")
    clauses = report.read_clauses(SPEC)
    deviations = report.read_deviations(os.path.join(SPEC, "deviations.md"))
    every = [r for r, _ in report.read_releases(SPEC)]
    profile = profiles.profile(clauses, [(c["name"], c["raw"]) for c in columns if c["release"]], deviations,
                               every)
    if args.fix_since:
        for cid, before, after in profiles.fix_spec(SPEC, profile, clauses):
            say(f"since: {cid} {before or '(none)'} -> {after}")
        columns = [column(c["name"], c["raw"], c["seconds"], c["same_as"]) for c in columns]
        profile = profiles.profile(report.read_clauses(SPEC), [(c["name"], c["raw"]) for c in columns
                                                                if c["release"]], deviations, every)
    write_outputs(columns, profile, missing, deviations, args)
    say(f"{len(columns)} columns in {time.time() - started:.0f} s; the runs used "
        f"{sum(c['cpu'] for c in columns):.0f} s of CPU in all")
    return 0 if columns and not absent and rc in (0, 3) else 1


if __name__ == "__main__":
    sys.exit(main())
