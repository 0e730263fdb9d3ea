"""certify end to end: the real binary on real libraries.

Every fixture in kernels/fixtures is flagged for exactly its own defect and
nothing else; our scale kernels (CPU, CUDA) and the C++ drop-in certify
clean under both runtimes; the two third-party libraries run to completion
with the findings they really deserve; the three reports parse; the exit
bits match the findings; garbage input is a one-line tool error.

Run by `bazel test //tools/certify:e2e_test`.
"""

import html.parser
import json
import os
import shlex
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

WORKSPACE = os.environ.get("TEST_WORKSPACE", "tvm_ffi_conformance")
RUNFILES = os.environ.get("TEST_SRCDIR", "")
TOOL_ERROR, USAGE, MUST, NONSTRICT = 1, 2, 4, 8
PROBLEMS = ("FAIL", "NONSTRICT", "WARN")


def runfile(path):
    return os.path.join(RUNFILES, WORKSPACE, path)


CERTIFY = runfile("tools/certify/certify")
FIXTURES = runfile("kernels/fixtures")
JAX_SO = runfile("../jax_tvm_ffi/wheel/jax_tvm_ffi/jax_tvm_ffi.so")
JAX_STATUS = runfile("../jax_tvm_ffi/status.txt")
TESTING_SO = runfile("../tvm_ffi_upstream/lib/libtvm_ffi_testing.so")

# Every kernel library built here links no runtime on purpose (the host's
# runtime provides TVMFFI*, kernels/BUILD): certify rightly warns about that,
# and the warning is part of every expectation below.
NO_RUNTIME_NEEDED = ("static.runtime-needed", "WARN")

# Each fixture's defect (named at the top of its bad_*.c): the checks that
# must flag it (with verdict), the clause the first one names, and a piece
# of text its finding must show (reason, evidence or replay). Nothing else
# may be flagged. The fixtures are probed with their manifest
# (kernels/fixtures/*.manifest.json), as a vendor would certify them.
FIXTURE_DEFECTS = {
    "bad_aborts": ({("probe.tensor-forms", "FAIL"), ("manifest.errors", "FAIL")}, "CDY-004",
                   "signal 6"),
    "bad_ignores_stream": ({("static.cuda-stream", "WARN")}, "DEV-005",
                           "does not import TVMFFIEnvGetStream"),
    "bad_leaks_reference": ({("probe.refcounts", "FAIL")}, "CDY-011", "leaks a reference"),
    "bad_no_raise": ({("probe.error-hygiene", "FAIL")}, "CDY-008", "no error raised"),
    "bad_null_data": ({("manifest.errors", "FAIL")}, "CDY-002", "data=null"),
    "bad_raise_returns_zero": ({("probe.error-hygiene", "FAIL")}, "CDY-009",
                               "Returned 0 but left an error raised"),
    "bad_reads_past_args": ({("probe.args-bounds", "FAIL")}, "CDY-003",
                            "Read past the end of the argument array"),
    "bad_sets_result": ({("manifest.returns", "FAIL")}, "CDY-022", "result slot must stay None"),
    "bad_symbol_prefix": ({("static.exports", "FAIL")}, "CST-001", "tvm_ffi_scale"),
    "bad_unnamed_argument": ({("manifest.errors", "FAIL")}, "CDY-024", "does not name the argument"),
    "bad_writes_past_end": ({("probe.tensor-bounds", "FAIL")}, "CDY-005",
                            "past the last element"),
    "bad_wrong_kind": ({("manifest.errors", "FAIL")}, "CDY-023",
                       "RuntimeError instead of the documented ValueError"),
}

FIXTURE_MANIFEST = {"bad_ignores_stream": "kernels/fixtures/scale_cuda_f32.manifest.json"}


class Run:
    """One certify run: exit status, output and the parsed JSON report."""

    def __init__(self, lib, *args, cwd=None, env=None, reports=("json",)):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        # No fixture hangs: a generous probe time limit keeps a loaded CI
        # machine from turning a slow call into a finding.
        cmd = [CERTIFY, lib, "--quiet", "--jobs", "2", "--timeout", "30"] + list(args)
        for kind in reports:
            cmd += ["--" + kind, os.path.join(self.dir, "report." + kind)]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env,
                              timeout=600, errors="replace")
        self.cmd = " ".join(shlex.quote(c) for c in cmd)
        self.rc, self.stdout, self.stderr = proc.returncode, proc.stdout, proc.stderr
        self.report = None
        path = os.path.join(self.dir, "report.json")
        if "json" in reports and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                self.report = json.load(f)

    def path(self, kind):
        return os.path.join(self.dir, "report." + kind)

    def findings(self, *verdicts):
        return [x for x in self.report["findings"] if not verdicts or x["verdict"] in verdicts]

    def flagged(self):
        """{(check, verdict)} of every finding that is a problem."""
        return {(x["check"], x["verdict"]) for x in self.findings(*PROBLEMS)}

    def explain(self):
        return "%s\nexit %d\n%s\n%s" % (self.cmd, self.rc, self.stdout[-6000:], self.stderr[-2000:])


def expected_bits(report):
    counts = report["counts"]
    return (MUST if counts["FAIL"] else 0) | (NONSTRICT if counts["NONSTRICT"] else 0)


def fixture_path(name):
    return os.path.join(FIXTURES, "lib%s.so" % name)


def test_every_fixture_has_an_expectation():
    built = sorted(f[3:-3] for f in os.listdir(FIXTURES) if f.startswith("libbad_") and f.endswith(".so"))
    assert built == sorted(FIXTURE_DEFECTS)


def fixture_manifest(name):
    return runfile(FIXTURE_MANIFEST.get(name, "kernels/fixtures/scale_f32.manifest.json"))


@pytest.mark.parametrize("name", sorted(FIXTURE_DEFECTS))
def test_fixture_is_flagged_for_exactly_its_defect(name):
    checks, clause, hint = FIXTURE_DEFECTS[name]
    run = Run(fixture_path(name), "--manifest", fixture_manifest(name))
    assert run.report is not None, run.explain()
    assert run.report["runtimes"] == ["reference", "upstream"]
    flagged = run.flagged()
    assert flagged == checks | {NO_RUNTIME_NEEDED}, run.explain()
    mine = [x for x in run.findings(*PROBLEMS) if (x["check"], x["verdict"]) in checks]
    assert any(hint in x["reason"] + x["evidence"] + x["replay"] for x in mine), run.explain()
    assert clause in {x["clause"] for x in mine}, run.explain()
    for x in mine:
        assert x["reason"], x
        if not x["check"].startswith("static."):
            # A dynamic finding is seen under both runtimes and can be replayed.
            assert x["replay"], x
    if any(c.startswith(("probe.", "manifest.")) for c, _ in checks):
        assert {x["runtime"] for x in mine} == {"reference", "upstream"}, run.explain()
    assert run.rc == expected_bits(run.report) == run.report["exit_status"], run.explain()
    assert run.report["summary"] in run.stdout


def clean_run(lib, manifest):
    run = Run(runfile(lib), "--manifest", runfile(manifest))
    assert run.report is not None, run.explain()
    assert run.rc == 0, run.explain()
    assert run.report["verdict"] == "CERTIFIED"
    assert run.report["runtimes"] == ["reference", "upstream"]
    assert not run.findings("FAIL", "NONSTRICT"), run.explain()
    probed = {x["runtime"] for x in run.findings("PASS") if x["check"].startswith("probe.")}
    assert probed == {"reference", "upstream"}, run.explain()
    return run


def test_scale_cpu_certifies_clean_under_both_runtimes():
    run = clean_run("kernels/libscale_cpu.so", "kernels/scale_cpu.manifest.json")
    assert run.report["functions"] == ["scale"]
    assert run.flagged() == {NO_RUNTIME_NEEDED}, run.explain()
    assert not run.findings("SKIP"), run.explain()
    # The manifest's valid calls ran and matched the reference expression.
    assert {x["runtime"] for x in run.findings("PASS") if x["check"] == "manifest.valid-calls"} == {
        "reference", "upstream"}, run.explain()


def test_scale_cuda_certifies_clean_its_valid_calls_skip_without_a_gpu():
    run = clean_run("kernels/libscale_cuda.so", "kernels/scale_cuda.manifest.json")
    assert run.report["functions"] == ["scale"]
    assert run.flagged() == {NO_RUNTIME_NEEDED}, run.explain()
    if os.path.exists("/dev/nvidia0"):
        return
    skips = run.findings("SKIP")
    assert {(x["check"], x["runtime"]) for x in skips} == {
        ("manifest.valid-calls", "reference"), ("manifest.valid-calls", "upstream")}, run.explain()
    for x in skips:
        assert "cudaError" in x["evidence"] + x["reason"], x


def test_dropin_certifies_clean_under_both_runtimes():
    run = clean_run("kernels/libscale_dropin.so", "kernels/dropin/scale_dropin.manifest.json")
    assert run.report["functions"] == ["scale_dropin"]
    # Upstream's C++ helpers do not check data pointers: a non-empty tensor
    # with NULL data crashes it (a WARN: such a tensor breaks DLPack itself).
    # Built here with GCC 12, it needs GLIBCXX_3.4.26: beyond manylinux_2_28 (CST-030).
    assert run.flagged() == {NO_RUNTIME_NEEDED, ("probe.invalid-tensors", "WARN"),
                             ("static.manylinux", "WARN")}, run.explain()


def jax_status():
    try:
        with open(JAX_STATUS) as f:
            return f.read().strip()
    except OSError as e:
        return "unavailable: %s" % e


def test_jax_tvm_ffi_runs_to_completion_with_its_findings():
    status = jax_status()
    if not status.startswith("available"):
        pytest.skip("jax-tvm-ffi wheel %s" % status)
    run = Run(JAX_SO)
    assert run.report is not None and not run.rc & TOOL_ERROR, run.explain()
    assert run.report["n_functions"] == 3, run.explain()
    # It needs libtvm_ffi.so and carries no RUNPATH to find it.
    assert run.flagged() == {("static.runtime-findable", "WARN")}, run.explain()
    assert run.rc == expected_bits(run.report), run.explain()


def defined_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_libtvm_ffi_testing_runs_to_completion_with_its_findings():
    run = Run(TESTING_SO)
    assert run.report is not None and not run.rc & TOOL_ERROR, run.explain()
    assert run.rc == expected_bits(run.report), run.explain()
    imported = {line.split()[-1] for line in subprocess.run(
        ["nm", "-D", "--undefined-only", TESTING_SO], capture_output=True, text=True,
        check=True).stdout.splitlines() if "TVMFFI" in line}
    missing = sorted(imported - defined_symbols(runfile("reference/libtvm_ffi.so")))
    by_runtime = {}
    for x in run.findings("FAIL"):
        if x["check"] == "static.runtime-imports":
            by_runtime[x["runtime"]] = x
    if missing:
        # The reference runtime lacks some of what it imports: reported by
        # name, under the reference only, and certify still finishes.
        assert set(by_runtime) == {"reference"}, run.explain()
        assert sorted(by_runtime["reference"]["evidence"].replace(",", " ").split()) == missing
        # ... and the reports say where the two runtimes differ.
        assert {"function": "", "check": "static.runtime-imports",
                "verdicts": {"reference": "FAIL", "upstream": "PASS"}} in run.report["differences"]
        assert "runtimes differ: reference FAIL, upstream PASS" in run.stdout
        assert {x["runtime"] for x in run.findings("FAIL") if x["check"] == "probe.load"} == {
            "reference"}, run.explain()
    else:
        assert by_runtime == {}, run.explain()


# --- the reports


class StrictHTML(html.parser.HTMLParser):
    """Checks that every element that is opened is closed in order."""

    VOID = {"meta", "input", "br", "hr", "img", "link"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.text = [], [], []
        self.rows = 0

    def handle_starttag(self, tag, attrs):
        if tag == "tr" and self.stack and self.stack[-1] == "tbody":
            self.rows += 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes %s" % (tag, self.stack[-1:] or "nothing"))
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse_html(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    parser = StrictHTML()
    parser.feed(page)
    parser.close()
    assert parser.errors == [] and parser.stack == [], (parser.errors, parser.stack)
    return page, parser


def junit_cells(report):
    return {(x["function"], x["check"], x["runtime"]) for x in report["findings"]}


def test_reports_parse_and_agree():
    run = Run(fixture_path("bad_wrong_kind"), "--manifest", fixture_manifest("bad_wrong_kind"),
              reports=("json", "junit", "html"))
    assert run.report is not None, run.explain()
    suites = ET.parse(run.path("junit")).getroot()
    assert suites.tag == "testsuites"
    cases = suites.findall("./testsuite/testcase")
    assert len(cases) == len(junit_cells(run.report)) == int(suites.get("tests"))
    failures = [c for c in cases if c.find("failure") is not None]
    assert len(failures) == int(suites.get("failures")) >= 1
    for c in failures:
        assert c.find("failure").get("type") in ("FAIL", "NONSTRICT")
        assert c.find("failure").get("message")
    page, parser = parse_html(run.path("html"))
    assert parser.rows == len(run.report["findings"])
    assert run.report["summary"] in "".join(parser.text)
    assert run.report["summary"].startswith("certify: libbad_wrong_kind.so: NOT CERTIFIED: ")
    assert run.rc == run.report["exit_status"] == expected_bits(run.report)
    assert run.report["summary"] in run.stdout


def test_hostile_strings_stay_inert_in_every_report():
    run = Run(runfile("tools/certify/libhostile.so"), reports=("json", "junit", "html"))
    assert run.report is not None, run.explain()
    evidence = " ".join(x["evidence"] + x["reason"] for x in run.report["findings"])
    assert "<script>alert('x')</script>" in evidence, "the message reached the report"
    assert "\\x1b[2J" in evidence and "\\xff\\xfe" in evidence
    ET.parse(run.path("junit"))
    page, parser = parse_html(run.path("html"))
    assert "<script>alert" not in page
    assert page.count("<script>") == 1  # the filter script, nothing else
    assert "\x1b" not in run.stdout and "\x1b" not in page


def test_replay_line_reproduces_a_finding():
    manifest = fixture_manifest("bad_wrong_kind")
    run = Run(fixture_path("bad_wrong_kind"), "--manifest", manifest)
    fails = [x for x in run.findings("FAIL") if x["replay"]]
    assert fails, run.explain()
    x = fails[0]
    replay = Run(fixture_path("bad_wrong_kind"), "--manifest", manifest, "--replay", x["replay"])
    assert replay.report["runtimes"] == [x["runtime"]], "the line names its runtime"
    assert replay.rc & MUST, replay.explain()
    assert x["check"] in {y["check"] for y in replay.findings("FAIL")}, replay.explain()


def test_paths_are_relative_to_where_the_user_ran_bazel():
    user_dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    os.symlink(runfile("kernels/libscale_cpu.so"), os.path.join(user_dir, "mine.so"))
    env = dict(os.environ, BUILD_WORKING_DIRECTORY=user_dir)
    proc = subprocess.run([CERTIFY, "mine.so", "--quiet", "--json", "out.json"], cwd="/",
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(os.path.join(user_dir, "out.json")) as f:
        assert json.load(f)["library"] == "mine.so"


# --- garbage in: a tool error with a one-line reason, never a crash


def garbage(tmp):
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as f:
        f.write("this is not a library\n")
    empty = os.path.join(tmp, "empty.so")
    open(empty, "w").close()
    with open(runfile("kernels/libscale_cpu.so"), "rb") as f:
        image = f.read()
    short = os.path.join(tmp, "truncated.so")
    with open(short, "wb") as f:
        f.write(image[:200])
    return {
        "text": (text, "not an ELF file"),
        "empty": (empty, "not an ELF file"),
        "truncated": (short, "truncated ELF file"),
        "directory": (tmp, "is a directory"),
        "missing": (os.path.join(tmp, "nope.so"), "No such file or directory"),
    }


@pytest.mark.parametrize("kind", ["text", "empty", "truncated", "directory", "missing"])
def test_garbage_input_is_a_one_line_tool_error(kind):
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    path, reason = garbage(tmp)[kind]
    proc = subprocess.run([CERTIFY, path, "--quiet"], capture_output=True, text=True, timeout=120)
    assert proc.returncode >= 0, "killed by signal %d" % -proc.returncode
    assert proc.returncode & TOOL_ERROR, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("certify: "), proc.stderr
    assert reason in lines[0] and path in lines[0], lines[0]


def test_usage_errors_set_bits_1_and_2():
    for args in ([], ["a.so", "b.so"], ["a.so", "--jobs", "0"], ["a.so", "--bogus"]):
        proc = subprocess.run([CERTIFY] + args, capture_output=True, text=True, timeout=60)
        assert proc.returncode == TOOL_ERROR | USAGE, (args, proc.stderr)
        assert proc.stderr.startswith("certify: ") and "usage: certify" in proc.stderr


if __name__ == "__main__":
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):  # one JUnit case per test for Bazel
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
