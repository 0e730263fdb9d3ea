"""The conformance suite as one Bazel test: runs every area binary (and the
Python error-kind tests) against the implementation under test, then judges
the run clause by clause with tools/report.py.

Why one test that runs the others: a Bazel test cannot read the results of
other test targets, and Bazel 4.2.3 shows a test's output only through
--test_output. So `bazel test //conformance:all` runs this single target
(the area binaries are `manual` targets it depends on), and its log, which
.bazelrc's `test --test_output=all` prints, ends with the summary: the
implementation line and the summary line. The target fails only on an
unexpected verdict: a failure recorded in spec/deviations.md for this
implementation and release is KNOWN, not red.

It is also the wrapper that makes a relative TVMFFI_IMPL mean something:
`bazel test` runs tests in a directory of its own and does not say where
the user ran it, so a relative path is taken from the workspace root when
the file is there, and otherwise the run stops saying to pass an absolute
path.

Under the plain configuration, against the bundled reference or the pinned
upstream, the run also checks README.md's sample summary of that
implementation against its own (tools/readme_sample.py), so the sample
cannot go stale.

Arguments: --bazel-flag=FLAG (the configuration, for the rerun commands;
conformance/BUILD passes them), then runfiles paths of the test
executables. Each one's JUnit XML and log go to the test's undeclared
outputs (bazel-testlogs/conformance/suite_test/test.outputs/outputs.zip),
with report.json, report.xml and report.html.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

from tools import readme_sample, report

PER_BINARY_TIMEOUT_S = 600
SRCDIR = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))


def run_under():
    """The wrapper --config=valgrind names (CONFORMANCE_RUN_UNDER, a runfiles
    path): Bazel's --run_under wraps this Python process only, and valgrind
    does not follow it into the binaries it starts."""
    wrapper = os.environ.get("CONFORMANCE_RUN_UNDER", "")
    if not wrapper:
        return []
    return ["bash", os.path.join(SRCDIR, wrapper)]


def run_properties(flags=()):
    """What a rerun of one test needs to know about this run (report.rerun_command)."""
    flags = list(flags)
    if os.environ.get("CONFORMANCE_RUN_UNDER"):
        flags.append("--config=valgrind")
    which = os.environ.get("TVMFFI_IMPL", "")
    if which == "upstream":
        flags.append("--config=upstream")
    return {"tvmffi_impl": which, "tvmffi_release": os.environ.get("TVMFFI_RELEASE", ""),
            "bazel_flags": " ".join(flags)}


def run_one(path, outdir, props=None):
    """Runs one test executable; returns the raw case records of its XML,
    each with the run's properties (props) added to its impl."""
    name = os.path.basename(path)
    target = f"//conformance:{name}"
    xml = os.path.join(outdir, name + ".xml")
    log = os.path.join(outdir, name + ".log")
    env = dict(os.environ, XML_OUTPUT_FILE=xml)
    if os.path.exists(xml):
        os.remove(xml)
    with open(log, "w", encoding="utf-8") as f:
        try:
            # Scripts (the pytest launcher) are not wrapped: valgrind would
            # check the Python interpreter.
            with open(path, "rb") as exe:
                wrapper = [] if exe.read(2) == b"#!" else run_under()
            rc = subprocess.call(wrapper + [os.path.abspath(path)], env=env, stdout=f,
                                 stderr=subprocess.STDOUT, timeout=PER_BINARY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            cases = [{"target": target, "suite": "", "name": name, "status": "TIMEOUT", "impl": {},
                      "message": f"did not finish within {PER_BINARY_TIMEOUT_S} s", "detail": ""}]
            return with_properties(cases, props)
    if os.path.exists(xml) and os.path.getsize(xml) > 0:
        return with_properties(list(report.raw_cases(target, xml)), props)
    with open(log, encoding="utf-8", errors="replace") as f:
        tail = f.read()[-1500:]
    return with_properties([{"target": target, "suite": "", "name": name, "status": "CRASHED", "impl": {},
                             "message": f"exited with status {rc} without writing its XML", "detail": tail}],
                           props)


def with_properties(cases, props):
    if props:
        for case in cases:
            case["impl"] = dict(case.get("impl") or {}, **props)
    return cases


def workspace_root():
    """The checkout this test was built from (its spec files are links into it)."""
    spec = os.path.realpath(os.path.join(SRCDIR, "spec", "any.md"))
    return os.path.dirname(os.path.dirname(spec)) if os.path.isfile(spec) else ""


def resolve_impl():
    """Makes a relative TVMFFI_IMPL absolute for the area binaries. Returns
    (ok, the line to print about it)."""
    want = os.environ.get("TVMFFI_IMPL", "")
    if not want or want in ("reference", "upstream") or os.path.isabs(want):
        return True, ""
    root = workspace_root()
    candidate = os.path.join(root, want) if root else ""
    if candidate and os.path.exists(candidate):
        os.environ["TVMFFI_IMPL"] = candidate
        return True, (f"conformance: TVMFFI_IMPL={want} is relative: taken from the workspace root, "
                      f"{candidate} (bazel test does not tell a test the directory you ran it from; "
                      "an absolute path is surer)")
    return False, (f"TVMFFI_IMPL={want} is a relative path, and the workspace root ({root or '?'}) has no "
                   "such file: bazel test runs each test in a directory of its own and does not say where you "
                   f"ran it. Pass an absolute path, e.g. --test_env=TVMFFI_IMPL=$PWD/{want}")


# ------------------------------------------------------------- main

def main(argv):
    flags = [a.split("=", 1)[1] for a in argv if a.startswith("--bazel-flag=")]
    paths = [a for a in argv if not a.startswith("--")]
    ok, note = resolve_impl()
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or tempfile.mkdtemp()
    os.makedirs(outdir, exist_ok=True)
    props = run_properties(flags)
    # One small binary first: a library that does not load stops the run
    # there (every other binary would say the same).
    probe = next((p for p in paths if os.path.basename(p) == "version_test"), paths[0])
    if ok:
        if note:
            print(note)
        raw = run_one(probe, outdir, props)
        if not any(case["status"] == "LOAD_FAILED" for case in raw):
            jobs = int(os.environ.get("CONFORMANCE_JOBS", "2"))
            with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
                results = list(pool.map(lambda p: run_one(p, outdir, props), [p for p in paths if p != probe]))
            raw += [case for cases in results for case in cases]
    else:
        # Nothing can run: the same one CRASH as a library that does not load.
        impl = dict(props, implementation=os.environ.get("TVMFFI_IMPL", ""))
        raw = [{"target": f"//conformance:{os.path.basename(probe)}", "suite": "", "name": "implementation_loads",
                "status": "LOAD_FAILED", "message": note, "detail": "", "impl": impl}]
    records, rows, totals = report.build(raw, os.path.join(SRCDIR, "spec"))
    print("== conformance: the unexpected in full, the rest as counts (every clause: bazel run //tools:report) ==")
    args = report.argparse.Namespace(problems_only=True, label="", json=os.path.join(outdir, "report.json"),
                                     junit=os.environ.get("XML_OUTPUT_FILE"),
                                     html=os.path.join(outdir, "report.html"), source_url="")
    where = ("report.html, .json, .xml in bazel-testlogs/conformance/suite_test/test.outputs/outputs.zip; "
             "or bazel run //tools:report for conformance-report/report.html")
    rc = report.emit(records, rows, totals, args, SRCDIR, where=where)
    stale = readme_sample.check(os.path.join(SRCDIR, "README.md"), records, totals)
    if stale:
        print(stale)
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
