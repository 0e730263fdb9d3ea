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
TOOL_ERROR, USAGE, MUST, NONSTRICT, UNTESTED = 1, 2, 4, 8, 16
PROBLEMS = ("FAIL", "NONSTRICT", "WARN")


def runfile(path):
    return os.path.join(RUNFILES, WORKSPACE, path)


CERTIFY = runfile("tools/certify/certify")
FIXTURES = runfile("kernels/fixtures")
TESTDATA = runfile("tools/certify/testdata")
DRIVER_STUB = runfile("../cuda/stubs/libcuda.so")
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
    # Its manifest describes a scale it does not export: said too.
    "bad_symbol_prefix": ({("static.exports", "FAIL"), ("manifest.functions", "WARN")}, "CST-001",
                          "tvm_ffi_scale"),
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


def nothing_called(report):
    """A library-level probe.valid-call SKIP: no call reached the library."""
    return any(x["function"] == "" and x["check"] == "probe.valid-call" and x["verdict"] == "SKIP"
               for x in report["findings"])


def expected_bits(report):
    counts = report["counts"]
    return ((MUST if counts["FAIL"] else 0) | (NONSTRICT if counts["NONSTRICT"] else 0) |
            (UNTESTED if nothing_called(report) else 0))


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
        if not x["check"].startswith(("static.", "manifest.functions")):
            # A probe's finding is seen under both runtimes and can be replayed.
            assert x["replay"], x
    if any(c.startswith(("probe.", "manifest.")) for c, _ in checks):
        assert {x["runtime"] for x in mine if not x["check"].startswith("static.")} == {
            "reference", "upstream"}, run.explain()
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
    # register_tvm_ffi_handler refuses every call certify can guess: no
    # probe of it is a PASS (each says it reached nothing), and it is named.
    handler = [x for x in run.findings() if x["function"] == "register_tvm_ffi_handler"]
    assert handler and not [x for x in handler if x["verdict"] == "PASS"], run.explain()
    assert {(x["check"], x["runtime"]) for x in handler if x["check"] == "probe.valid-call"} == {
        ("probe.valid-call", "reference"), ("probe.valid-call", "upstream")}, run.explain()
    # The other two are called (they take no arguments): the library is.
    assert not nothing_called(run.report), run.explain()


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


def test_usage_errors_exit_2():
    for args in ([], ["a.so", "b.so"], ["a.so", "--jobs", "0"], ["a.so", "--bogus"]):
        proc = subprocess.run([CERTIFY] + args, capture_output=True, text=True, timeout=60)
        assert proc.returncode == USAGE, (args, proc.stderr)
        assert proc.stderr.startswith("certify: ") and "usage: certify" in proc.stderr
    proc = subprocess.run([CERTIFY], capture_output=True, text=True, timeout=60)
    assert proc.stderr.startswith("certify: no library given"), proc.stderr


def test_a_runtime_that_is_not_one_is_a_tool_error():
    """Never blamed on the library: exit 1, one line saying what --runtime takes."""
    lib = runfile("kernels/libscale_cpu.so")
    for runtime, says in (("bogus", "No such file or directory"),
                          ("/etc/passwd", "is not a TVM-FFI runtime"),
                          ("/lib/x86_64-linux-gnu/libc.so.6", "does not export TVMFFIErrorMoveFromRaised")):
        if runtime.startswith("/") and not os.path.exists(runtime):
            continue
        proc = subprocess.run([CERTIFY, lib, "--quiet", "--runtime", runtime], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == TOOL_ERROR, (runtime, proc.returncode, proc.stdout, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and says in lines[0], (runtime, proc.stderr)
        assert "reference, upstream, or the path of a libtvm_ffi.so" in lines[0], lines[0]
        assert "MUST" not in proc.stdout, proc.stdout


def test_an_unwritable_report_is_found_before_the_run():
    tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    for path, says in ((os.path.join(tmp, "no", "such", "dir", "r.json"), "No such file or directory"),
                       (tmp, "is a directory")):
        proc = subprocess.run([CERTIFY, runfile("kernels/libscale_cpu.so"), "--quiet", "--json", path],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == TOOL_ERROR, proc.stdout + proc.stderr
        assert proc.stderr.startswith("certify: cannot write the JSON report ") and says in proc.stderr, proc.stderr
        assert "probe." not in proc.stdout, "the probes did not run: " + proc.stdout


# --- libraries shaped like the real ones (tools/certify/testdata, issue 27)


def data_path(name):
    return os.path.join(TESTDATA, name)


def by(run, function, check=None):
    return [x for x in run.findings() if x["function"] == function and (check is None or x["check"] == check)]


def test_CDY_002_a_kernel_nothing_reaches_is_not_certified():
    """Eight parameters: every guessed call is refused by the arity check.
    No probe of it is a PASS, and the library is not certified."""
    run = Run(data_path("libcert_takes8.so"))
    assert run.report["verdict"] == "NOT CERTIFIED", run.explain()
    assert run.rc == UNTESTED, run.explain()
    assert "nothing could be called" in run.report["summary"], run.explain()
    gemm = by(run, "gemm8")
    assert gemm and not [x for x in gemm if x["verdict"] == "PASS"], run.explain()
    forms = by(run, "gemm8", "probe.tensor-forms")
    assert forms and all("Not reached" in x["reason"] for x in forms), run.explain()
    assert any("Expected 8 but got" in x["evidence"] for x in by(run, "gemm8", "probe.valid-call")), run.explain()
    # With a manifest that writes the signature down, it is probed in full.
    run = Run(data_path("libcert_takes8.so"), "--manifest", data_path("takes8.manifest.json"))
    assert run.rc == 0 and run.report["verdict"] == "CERTIFIED", run.explain()
    assert {x["runtime"] for x in by(run, "gemm8", "manifest.valid-calls") if x["verdict"] == "PASS"} == {
        "reference", "upstream"}, run.explain()


def test_CDY_006_a_cuda_only_kernel_without_a_driver():
    """Needs libcuda.so.1, takes only CUDA tensors, crashes on legacy NULL
    strides: no driver is this machine's gap (never a MUST failure); with
    the toolkit's stub it loads, the probes reach it through CUDA tensors
    and find the crash; the replay line gives the same verdict."""
    if os.path.exists("/dev/nvidiactl"):
        pytest.skip("this machine has an NVIDIA driver")
    run = Run(data_path("libcert_cuda_dsl.so"))
    assert not run.findings("FAIL"), run.explain()
    driver = by(run, "", "static.driver")
    assert driver and all(x["verdict"] == "SKIP" for x in driver), run.explain()
    if not os.path.exists(DRIVER_STUB):
        assert run.rc == UNTESTED and "no driver stub" in driver[0]["reason"], run.explain()
        return
    assert "against the CUDA toolkit's driver stub" in driver[0]["reason"], run.explain()
    legacy = by(run, "add_one", "probe.legacy-forms")
    assert {x["verdict"] for x in legacy} == {"NONSTRICT"}, run.explain()
    assert "NULL strides" in legacy[0]["reason"], run.explain()
    assert run.rc == NONSTRICT, run.explain()
    replay = Run(data_path("libcert_cuda_dsl.so"), "--replay", legacy[0]["replay"])
    assert replay.rc == NONSTRICT, replay.explain()
    assert [(x["check"], x["verdict"], x["clause"]) for x in replay.findings("NONSTRICT", "FAIL")] == [
        ("probe.legacy-forms", "NONSTRICT", "CDY-006")], replay.explain()
    # Valid calls with a manifest fail only for want of a GPU: SKIP.
    run = Run(data_path("libcert_cuda_dsl.so"), "--manifest", data_path("cuda_dsl.manifest.json"))
    valid = by(run, "add_one", "manifest.valid-calls")
    assert valid and all(x["verdict"] == "SKIP" for x in valid), run.explain()
    assert "CUDA_ERROR_STUB_LIBRARY" in valid[0]["evidence"] or "no usable GPU" in valid[0]["reason"], run.explain()


def test_CDY_020_dsl_signatures_with_tuples_streams_pointers_and_divisible_extents():
    manifest = data_path("dsl.manifest.json")
    run = Run(data_path("libcert_dsl.so"), "--manifest", manifest)
    assert run.rc == 0 and run.report["verdict"] == "CERTIFIED", run.explain()
    for fn in ("add_one_checked", "scale_tuple", "copy_ptr"):
        assert {x["runtime"] for x in by(run, fn, "manifest.valid-calls") if x["verdict"] == "PASS"} == {
            "reference", "upstream"}, (fn, run.explain())
    # Without "divisible" its valid calls include extents it may refuse:
    # written down, they are not (the six false MUST failures of issue 27).
    with open(manifest) as f:
        loose = json.load(f)
    del loose["functions"]["add_one_checked"]["divisible"]
    del loose["functions"]["add_one_checked"]["errors"]["divisibility"]
    path = os.path.join(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR")), "loose.json")
    with open(path, "w") as f:
        json.dump(loose, f)
    run = Run(data_path("libcert_dsl.so"), "--manifest", path)
    refused = by(run, "add_one_checked", "manifest.valid-calls")
    assert refused and all(x["verdict"] == "FAIL" for x in refused), run.explain()
    assert "expected to be divisible by 16" in refused[0]["evidence"], run.explain()


def test_CST_001_a_library_that_registers_at_load():
    run = Run(data_path("libcert_registers.so"))
    assert run.rc == UNTESTED and run.report["verdict"] == "NOT CERTIFIED", run.explain()
    assert not run.findings("FAIL"), "lacking exports is not a failure: " + run.explain()
    assert [x["verdict"] for x in by(run, "", "static.exports")] == ["SKIP"], run.explain()
    upstream = [x for x in by(run, "", "probe.valid-call") if x["runtime"] == "upstream"]
    assert upstream, run.explain()
    for name in ("cert_registers.compile_grammar", "cert_registers.match", "cert_registers.Grammar"):
        assert name in upstream[0]["reason"], run.explain()
    loads = by(run, "", "probe.load")
    assert {x["verdict"] for x in loads} == {"PASS"}, run.explain()


def test_CST_008_a_library_built_on_upstreams_cxx_api():
    run = Run(data_path("libcert_cxx_api.so"))
    assert run.rc == 0, run.explain()
    api = {x["runtime"]: x["verdict"] for x in by(run, "", "static.cxx-api")}
    assert api == {"reference": "SKIP", "upstream": "WARN"}, run.explain()
    calls = [x for x in by(run, "copy_value") if x["runtime"] == "reference" and x["verdict"] == "SKIP"]
    assert any("_ZN3tvm3ffi8DeepCopy" in x["reason"] for x in calls), run.explain()
    assert {x["verdict"] for x in by(run, "copy_value") if x["runtime"] == "upstream"} == {"PASS"}, run.explain()


def test_CST_007_a_missing_needed_library_is_one_finding_and_ld_preload_is_honoured():
    lib = runfile("tools/certify/testdata/libcst_needs_absent.so")
    run = Run(lib)
    needed = by(run, "", "static.needed-found")
    assert [x["verdict"] for x in needed] == ["FAIL"], run.explain()
    assert {x["verdict"] for x in by(run, "", "static.undefined")} == {"SKIP"}, run.explain()
    assert {x["verdict"] for x in by(run, "", "probe.load")} == {"SKIP"}, run.explain()
    assert run.rc == MUST | UNTESTED, run.explain()
    # What LD_PRELOAD loads, both stages see: nothing says it is missing.
    # (A sanitizer's runtime must come first in LD_PRELOAD, when certify
    # was built with one.)
    preload = [runfile("tools/certify/testdata/absent/libcert_absent.so")]
    ldd = subprocess.run(["ldd", CERTIFY], capture_output=True, text=True).stdout
    preload[:0] = [w for line in ldd.splitlines() if "libasan" in line for w in line.split() if w.startswith("/")]
    env = dict(os.environ, LD_PRELOAD=" ".join(preload))
    run = Run(lib, env=env)
    assert [x["verdict"] for x in by(run, "", "static.needed-found")] == ["PASS"], run.explain()
    assert {x["verdict"] for x in by(run, "", "probe.load")} == {"PASS"}, run.explain()
    # The call reaches the TVMFFI* function no runtime defines: named.
    died = [x for x in by(run, "go") if x["verdict"] == "FAIL"]
    assert died and all("TVMFFINoSuchFunction" in x["reason"] for x in died), run.explain()


def test_many_exports_are_certified_in_one_run():
    run = Run(data_path("libcert_many_200.so"))
    assert run.rc == 0 and run.report["n_functions"] == 200, run.explain()
    assert len(run.report["functions"]) == 200, run.explain()
    print("libcert_many_200.so: %s" % run.report["summary"])


if __name__ == "__main__":
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):  # one JUnit case per test for Bazel
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
