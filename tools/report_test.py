"""Tests of the conformance report and of what the harness tells it.

Each test here would have caught one of the defects of issue 15: skip
reasons and failure text lost on the way to the report, a library that does
not load shown as one crash per test, recorded deviations turning Bazel
targets red or hiding a failure of another release, DT-014 passing on an
implementation that accepts every string, VER-002 judged against the pinned
header instead of the library's own exports, FN-028 passing by chance.
"""
import os
import subprocess
import sys
import tempfile
import unittest

from tools import report

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))
SPEC = os.path.join(RUNFILES, "spec")
FAKE = os.path.join(RUNFILES, "tools", "libfake_impl.so")
UPSTREAM = os.path.join(os.environ.get("TEST_SRCDIR", "."), "tvm_ffi_upstream", "lib", "libtvm_ffi.so")


def run_binary(name, impl, *args, cpu=None):
    """Runs conformance/NAME against impl; returns (raw case records by test name, output)."""
    out = tempfile.mkdtemp()
    xml = os.path.join(out, "test.xml")
    env = dict(os.environ, XML_OUTPUT_FILE=xml, TVMFFI_IMPL=impl)
    pre = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    proc = subprocess.run([os.path.join(RUNFILES, "conformance", name), *args], env=env,
                          capture_output=True, text=True, preexec_fn=pre, timeout=300)
    cases = {c["name"]: c for c in report.raw_cases("//conformance:" + name, xml)}
    return cases, proc.stderr + proc.stdout


def raw(name, status, message="", suite="dtype", version="0.1.16", reference="0"):
    return {"target": "//conformance:t", "suite": suite, "name": name, "status": status,
            "message": message, "detail": "",
            "impl": {"implementation": "/x.so", "version": version, "bundled_reference": reference}}


class Verdicts(unittest.TestCase):
    def setUp(self):
        self.clauses = report.read_clauses(SPEC)
        self.deviations = [("0.1.16", "upstream 0.1.16", {"dtype::DT_014_error_quotes_input"})]

    def judge(self, *records):
        return report.judge(list(records), self.clauses, self.deviations)

    def test_levels_and_known(self):
        must, should, known = self.judge(raw("DT_001_canonical_names_parse", "FAILED", "x"),
                                         raw("DT_012_null_arguments_refused", "FAILED", "x"),
                                         raw("DT_014_error_quotes_input", "CRASHED", "signal 11"))
        self.assertEqual((must["verdict"], must["level"]), ("FAIL", "MUST"))
        self.assertEqual((should["verdict"], should["level"]), ("NONSTRICT", "SHOULD"))
        self.assertEqual(known["verdict"], "KNOWN")
        self.assertIn("CRASH", known["note"])
        self.assertTrue(should["text"].startswith("NULL str, out or dtype"))

    def test_known_only_for_that_release_and_never_for_the_reference(self):
        other, ref = self.judge(raw("DT_014_error_quotes_input", "FAILED", version="0.1.8"),
                                raw("DT_014_error_quotes_input", "FAILED", reference="1"))
        self.assertEqual(other["verdict"], "NONSTRICT")
        self.assertEqual(ref["verdict"], "NONSTRICT")

    def test_recorded_test_that_passes_says_retire(self):
        (rec,) = self.judge(raw("DT_014_error_quotes_input", "PASSED"))
        self.assertEqual(rec["verdict"], "PASS")
        self.assertIn("retire the entry", rec["note"])

    def test_expected_actual(self):
        (rec,) = self.judge(raw("DT_001_canonical_names_parse", "FAILED",
                                "x.c:3: major: expected 0, got 7"))
        self.assertEqual((rec["expected"], rec["actual"]), ("major: 0", "7"))

    def test_summary_and_unexpected(self):
        records = self.judge(raw("DT_001_canonical_names_parse", "PASSED"),
                             raw("DT_014_error_quotes_input", "FAILED"),
                             raw("DT_002_canonical_names_round_trip", "SKIPPED", "does not export X"))
        rows = report.clause_rows(records)
        t = report.totals(records, rows)
        self.assertEqual(report.summary_line(t, []),
                         "MUST 1/2, SHOULD 0/1, skipped 1, known deviations 1, unexpected 0")

    def test_load_failure_is_one_unexpected(self):
        records = self.judge(*[dict(raw("implementation_loads", "LOAD_FAILED", "cannot load /n.so: nope"),
                                    target=f"//conformance:{i}") for i in range(5)])
        t = report.totals(records, report.clause_rows(records))
        self.assertEqual(t["unexpected"], 1)
        self.assertIn("cannot load /n.so: nope", report.summary_line(t, report.load_failures(records)))

    def test_merged_xml_round_trip_keeps_reasons_and_text(self):
        records = self.judge(raw("DT_002_canonical_names_round_trip", "SKIPPED", "lib.so does not export Y"),
                             dict(raw("DT_001_canonical_names_parse", "FAILED", "m"), detail="a.c:1: expected 1, got 2"),
                             raw("DT_014_error_quotes_input", "FAILED", "q"))
        path = os.path.join(tempfile.mkdtemp(), "m.xml")
        report.write_junit(path, records)
        again = self.judge(*report.raw_cases("//conformance:suite_test", path))
        by = {r["name"]: r for r in again}
        self.assertEqual(by["DT_002_canonical_names_round_trip"]["message"], "lib.so does not export Y")
        self.assertEqual(by["DT_001_canonical_names_parse"]["actual"], "2")
        self.assertEqual(by["DT_014_error_quotes_input"]["verdict"], "KNOWN")
        self.assertEqual(by["DT_001_canonical_names_parse"]["target"], "//conformance:t")


class Harness(unittest.TestCase):
    def test_library_that_does_not_load_is_one_line(self):
        cases, out = run_binary("dtype_test", "/nonexistent.so")
        self.assertEqual(list(cases), ["implementation_loads"])
        self.assertEqual(cases["implementation_loads"]["status"], "LOAD_FAILED")
        self.assertIn("/nonexistent.so: cannot open shared object file", cases["implementation_loads"]["message"])
        self.assertEqual(out.count("cannot load"), 1, out)

    def test_skip_reason_reaches_the_xml(self):
        cases, _ = run_binary("dtype_test", FAKE)
        skipped = cases["DT_002_canonical_names_round_trip"]
        self.assertEqual(skipped["status"], "SKIPPED")
        self.assertIn("does not export TVMFFIDataTypeToString", skipped["message"])

    def test_dt014_fails_when_every_string_is_accepted(self):
        cases, _ = run_binary("dtype_test", FAKE)
        self.assertEqual(cases["DT_014_error_quotes_input"]["status"], "FAILED")
        self.assertIn("expected -1 with a ValueError", cases["DT_014_error_quotes_input"]["detail"])

    def test_ver002_judges_the_library_not_the_pinned_header(self):
        cases, _ = run_binary("version_test", FAKE)
        self.assertEqual(cases["VER_002_version_matches_exports"]["status"], "FAILED")
        self.assertIn("TVMFFIHandleInitOnce", cases["VER_002_version_matches_exports"]["detail"])
        cases, _ = run_binary("version_test", UPSTREAM)
        self.assertEqual(cases["VER_002_version_matches_exports"]["status"], "PASSED")

    def test_fn028_fails_upstream_every_time_even_on_one_cpu(self):
        for _ in range(3):
            cases, _ = run_binary("registry_test", UPSTREAM, "--filter=registry/FN_028*", cpu=0)
            self.assertEqual(cases["FN_028_concurrent_register_and_lookup"]["status"], "FAILED")


def clause(cid, level, since):
    return {"id": cid, "level": level, "text": f"a requirement (since {since})", "area": "a",
            "file": "spec/a.md", "line": 1, "since": since}


def at(name, status, version, release="", reference="0"):
    rec = raw(name, status, "m", suite="a", version=version, reference=reference)
    if release:
        rec["impl"]["release"] = release
    return rec


class Releases(unittest.TestCase):
    """A run against release R is judged by the clauses since at or before R;
    the later ones it breaks are LATER, listed and not counted."""

    def setUp(self):
        os.environ.pop("TVMFFI_RELEASE", None)
        self.clauses = {"AAA-001": clause("AAA-001", "MUST", "0.1.0"),
                        "AAA-002": clause("AAA-002", "MUST", "0.1.9"),
                        "AAA-003": clause("AAA-003", "SHOULD", "0.1.9")}
        self.releases = [("0.1.8.post0", "0.1.9"), ("0.1.8.post2", "0.1.8"), ("0.1.9", "0.1.9")]

    def judged(self, *records):
        records = report.judge(list(records), self.clauses, [], self.releases)
        rows = report.clause_rows(records)
        return {r["clause"]: r for r in records}, report.totals(records, rows)

    def test_later_clause_is_listed_not_counted(self):
        by, t = self.judged(at("AAA_001_x", "FAILED", "0.1.8", "0.1.8.post2"),
                            at("AAA_002_x", "FAILED", "0.1.8", "0.1.8.post2"),
                            at("AAA_003_x", "CRASHED", "0.1.8", "0.1.8.post2"))
        self.assertEqual([by[c]["verdict"] for c in ("AAA-001", "AAA-002", "AAA-003")], ["FAIL", "LATER", "LATER"])
        self.assertIn("since 0.1.9, later than 0.1.8.post2", by["AAA-002"]["note"])
        self.assertEqual((t["MUST"], t["SHOULD"], t["later"], t["unexpected"]),
                         ({"passed": 0, "total": 1}, {"passed": 0, "total": 0}, 2, 1))
        self.assertTrue(report.summary_line(t, []).endswith("judged as 0.1.8.post2: later clauses broken 2"))

    def test_later_clause_that_passes_is_not_counted(self):
        by, t = self.judged(at("AAA_001_x", "PASSED", "0.1.8", "0.1.8.post2"),
                            at("AAA_002_x", "PASSED", "0.1.8", "0.1.8.post2"))
        self.assertEqual((by["AAA-002"]["verdict"], by["AAA-002"]["later"]), ("PASS", True))
        self.assertEqual((t["MUST"], t["later"]), ({"passed": 1, "total": 1}, 0))

    def test_release_from_the_reported_version_is_the_latest_that_reports_it(self):
        by, _ = self.judged(at("AAA_002_x", "FAILED", "0.1.9"))
        self.assertEqual((by["AAA-002"]["release"], by["AAA-002"]["verdict"]), ("0.1.9", "FAIL"))
        by, _ = self.judged(at("AAA_002_x", "FAILED", "0.1.8"))
        self.assertEqual((by["AAA-002"]["release"], by["AAA-002"]["verdict"]), ("0.1.8.post2", "LATER"))

    def test_release_named_by_the_environment(self):
        os.environ["TVMFFI_RELEASE"] = "0.1.8.post0"
        try:
            by, _ = self.judged(at("AAA_002_x", "FAILED", "0.1.9"))
        finally:
            del os.environ["TVMFFI_RELEASE"]
        self.assertEqual((by["AAA-002"]["release"], by["AAA-002"]["verdict"]), ("0.1.8.post0", "LATER"))

    def test_reference_and_unknown_versions_are_judged_by_every_clause(self):
        by, t = self.judged(at("AAA_002_x", "FAILED", "0.1.0", reference="1"))
        self.assertEqual((by["AAA-002"]["verdict"], t["release"]), ("FAIL", ""))
        by, _ = self.judged(at("AAA_002_x", "FAILED", "0.2.0"))
        self.assertEqual(by["AAA-002"]["verdict"], "FAIL")

    def test_release_survives_the_merged_xml(self):
        records = report.judge([at("AAA_002_x", "FAILED", "0.1.8", "0.1.8.post2")], self.clauses, [], self.releases)
        path = os.path.join(tempfile.mkdtemp(), "m.xml")
        report.write_junit(path, records)
        by, _ = self.judged(*report.raw_cases("//tools/matrix:suite_0.1.8.post2", path))
        self.assertEqual((by["AAA-002"]["release"], by["AAA-002"]["verdict"]), ("0.1.8.post2", "LATER"))

    def test_spec_clauses_carry_their_since(self):
        clauses = report.read_clauses(SPEC)
        self.assertEqual(clauses["ANY-001"]["since"], "0.1.0")
        self.assertIn(("0.1.8.post0", "0.1.9"), report.read_releases(SPEC))


if __name__ == "__main__":
    unittest.main(testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
