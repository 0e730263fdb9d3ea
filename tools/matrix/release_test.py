"""One column of the cross-release matrix: every conformance area run against
one release's libtvm_ffi.so (or the bundled reference).

Arguments: RELEASE ("reference" or a version such as 0.1.8.post2), the
library's runfiles path, then the area binaries. The outcomes of every test
case go to the test's XML (XML_OUTPUT_FILE, kept by Bazel as
bazel-testlogs/tools/matrix/suite_RELEASE/test.xml) with the implementation
and the release as properties, each area's own XML and log to the undeclared
outputs. They are not judged here: tools/matrix judges them against the spec
as it is when the matrix is made, so editing a clause never invalidates
Bazel's cached runs. The target fails only when nothing was recorded; old
releases breaking clauses is what the matrix is for, not a failure of it.
"""
import concurrent.futures
import os
import resource
import sys
import tempfile

from conformance import suite_test
from tools import report


def run_areas(areas, outdir):
    jobs = int(os.environ.get("CONFORMANCE_JOBS", "1"))
    # The run's properties (the library and the release), for the commands
    # that rerun one test (tools/report.py).
    props = suite_test.run_properties()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda p: suite_test.run_one(p, outdir, props), areas))
    return [case for cases in results for case in cases]


def main(argv):
    if len(argv) < 3:
        print("usage: release_test.py RELEASE LIB AREA...", file=sys.stderr)
        return 2
    release, lib = argv[0], argv[1]
    # //conformance:areas also lists the Python area's sources; its launcher
    # is the file without the suffix.
    areas = [a for a in argv[2:] if not a.endswith(".py")]
    if release == "reference":
        os.environ["TVMFFI_IMPL"] = "reference"
        os.environ.pop("TVMFFI_RELEASE", None)
    else:
        os.environ["TVMFFI_IMPL"] = os.path.abspath(lib)
        os.environ["TVMFFI_RELEASE"] = release
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or tempfile.mkdtemp()
    os.makedirs(outdir, exist_ok=True)
    raw = run_areas(areas, outdir)
    # Judged with no clauses: only to carry the raw outcomes (raw_status) and
    # the implementation's properties into one XML file.
    records = report.judge(raw, {}, [])
    # The CPU time of every area binary and its test processes: what the run
    # costs, whatever else the machine is doing (tools/matrix adds it up).
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = f"{used.ru_utime + used.ru_stime:.1f}"
    for r in records:
        if r.get("impl"):
            r["impl"]["cpu_seconds"] = cpu
    counts = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    impl = next((r["impl"] for r in records if r.get("impl")), {})
    print(f"matrix: {release}: {impl.get('implementation', lib)} "
          f"(TVMFFIGetVersion {impl.get('version') or '?'}): {len(records)} test cases, "
          + ", ".join(f"{n} {s.lower()}" for s, n in sorted(counts.items())) + f"; {cpu} s of CPU")
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        report.write_junit(xml, records, f"matrix {release}")
    if not records:
        print(f"matrix: no test case of {release} was recorded", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
