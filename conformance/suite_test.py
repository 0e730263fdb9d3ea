"""The conformance suite as one Bazel test: runs every area binary (and the
Python error-kind tests) against the implementation under test, then judges
the run clause by clause with tools/report.py.

Why one test that runs the others: a Bazel test cannot read the results of
other test targets, and Bazel 4.2.3 shows a test's output only through
--test_output. So `bazel test //conformance:all` runs this single target
(the area binaries are `manual` targets it depends on), and its log, which
.bazelrc's `test --test_output=all` prints, ends with the clause summary.
The target fails only on an unexpected verdict: a failure recorded in
spec/deviations.md for this implementation and release is KNOWN, not red.

Arguments: runfiles paths of the test executables. Each one's JUnit XML and
log go to the test's undeclared outputs (bazel-testlogs/conformance/
suite_test/test.outputs/), with report.json, report.xml and report.html.
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile

from tools import report

PER_BINARY_TIMEOUT_S = 600


def run_under():
    """The wrapper --config=valgrind names (CONFORMANCE_RUN_UNDER, a runfiles
    path): Bazel's --run_under wraps this Python process only, and valgrind
    does not follow it into the binaries it starts."""
    wrapper = os.environ.get("CONFORMANCE_RUN_UNDER", "")
    if not wrapper:
        return []
    srcdir = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))
    return ["bash", os.path.join(srcdir, wrapper)]


def run_one(path, outdir):
    """Runs one test executable; returns the raw case records of its XML."""
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
            return [{"target": target, "suite": "", "name": name, "status": "TIMEOUT", "impl": {},
                     "message": f"did not finish within {PER_BINARY_TIMEOUT_S} s", "detail": ""}]
    if os.path.exists(xml) and os.path.getsize(xml) > 0:
        return list(report.raw_cases(target, xml))
    with open(log, encoding="utf-8", errors="replace") as f:
        tail = f.read()[-1500:]
    return [{"target": target, "suite": "", "name": name, "status": "CRASHED", "impl": {},
             "message": f"exited with status {rc} without writing its XML", "detail": tail}]


def main(paths):
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or tempfile.mkdtemp()
    os.makedirs(outdir, exist_ok=True)
    jobs = int(os.environ.get("CONFORMANCE_JOBS", "2"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda p: run_one(p, outdir), paths))
    raw = [case for cases in results for case in cases]
    srcdir = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))
    records, rows, totals = report.build(raw, os.path.join(srcdir, "spec"))
    print("== conformance: clauses that did not pass (full table: bazel run //tools:report) ==")
    args = report.argparse.Namespace(problems_only=True, label="", json=os.path.join(outdir, "report.json"),
                                     junit=os.environ.get("XML_OUTPUT_FILE"),
                                     html=os.path.join(outdir, "report.html"))
    return report.emit(records, rows, totals, args, srcdir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
