"""Tests of the conformance report and of what the harness tells it.

Each test here would have caught one of the defects of issue 15: skip
reasons and failure text lost on the way to the report, a library that does
not load shown as one crash per test, recorded deviations turning Bazel
targets red or hiding a failure of another release, DT-014 passing on an
implementation that accepts every string, VER-002 judged against the pinned
header instead of the library's own exports, FN-028 passing by chance. The
classes RerunAndSummary, LoadFailure, Pages and Harness's stand-in tests
are issue 30's: what a vendor meets after a red run.
"""
import html
import io
import os
import re
import subprocess
import sys
import tempfile
import unittest

from tools import readme_sample, report

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
                         "MUST 1/2, SHOULD 0/1 clauses passed; test cases: 1 passed, 1 skipped, "
                         "1 known deviations, 0 unexpected")

    def test_load_failure_is_one_unexpected(self):
        records = self.judge(*[dict(raw("implementation_loads", "LOAD_FAILED", "cannot load /n.so: nope"),
                                    target=f"//conformance:{i}") for i in range(5)])
        t = report.totals(records, report.clause_rows(records))
        self.assertEqual(t["unexpected"], 1)
        self.assertIn("the library did not load", report.summary_line(t, report.load_failures(records)))

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

    def test_a_missing_function_is_a_skip_naming_it_never_a_crash(self):
        # BIG-009 and ERR-061 called conf_api entries unchecked: on a library
        # without the function the suite crashed and blamed the library.
        cases, _ = run_binary("bigint_test", FAKE, "--filter=bigint/BIG_009*")
        self.assertEqual(cases["BIG_009_allocation_failure"]["status"], "SKIPPED")
        self.assertIn("does not export TVMFFIBigIntFromByteArray", cases["BIG_009_allocation_failure"]["message"])
        cases, _ = run_binary("oom_test", FAKE, "--filter=err_oom/ERR_061*")
        self.assertEqual(cases["ERR_061_update_backtrace_allocation_fails"]["status"], "SKIPPED")
        self.assertIn("does not export TVMFFIErrorCreate",
                      cases["ERR_061_update_backtrace_allocation_fails"]["message"])

    def test_the_xml_says_how_much_of_the_api_the_library_exports(self):
        cases, _ = run_binary("version_test", FAKE)
        impl = next(iter(cases.values()))["impl"]
        self.assertEqual((impl["api_exported"], impl["api_total"], impl["api_release"]), ("5", "50", "0.1.15.post2"))
        self.assertIn("TVMFFIStringFromByteArray", impl["api_missing"].split(","))
        cases, _ = run_binary("version_test", "/lib/x86_64-linux-gnu/libc.so.6")
        impl = next(iter(cases.values()))["impl"]
        self.assertEqual(impl["api_exported"], "0")
        line = report.implementation_line(report.judge(list(cases.values()), {}, []))
        self.assertIn("TVMFFIGetVersion not exported, exports 0 of the 50 TVMFFI* functions of "
                      "apache-tvm-ffi 0.1.15.post2: not a TVM-FFI runtime", line)

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
        self.assertTrue(report.summary_line(t, []).endswith("judged as 0.1.8.post2: 2 later clauses broken"))

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


def run_props(impl="", flags="", release=""):
    return {"implementation": "/x.so", "version": "0.1.16", "bundled_reference": "0",
            "tvmffi_impl": impl, "bazel_flags": flags, "tvmffi_release": release}


class RerunAndSummary(unittest.TestCase):
    """Every failing test carries the command that reruns it alone, against
    the same library, under the same configuration."""

    def setUp(self):
        self.clauses = report.read_clauses(SPEC)

    def one(self, rec):
        (r,) = report.judge([rec], self.clauses, [])
        return r

    def failing(self, **props):
        return dict(raw("DT_001_canonical_names_parse", "FAILED", "x"), target="//conformance:dtype_test",
                    impl=run_props(**props))

    def test_the_command_names_library_config_release_and_test(self):
        rerun = self.one(self.failing(impl="/opt/my lib.so", flags="--config=asan", release="0.1.9"))["rerun"]
        self.assertEqual(rerun, "bazel test //conformance:dtype_test --config=asan "
                         "'--test_env=TVMFFI_IMPL=/opt/my lib.so' --test_env=TVMFFI_RELEASE=0.1.9 "
                         "--test_arg=--filter=dtype/DT_001_canonical_names_parse")
        self.assertEqual(self.one(self.failing(impl="upstream", flags="--config=upstream"))["rerun"],
                         "bazel test //conformance:dtype_test --config=upstream "
                         "--test_arg=--filter=dtype/DT_001_canonical_names_parse")
        ref = self.failing()
        ref["impl"]["bundled_reference"] = "1"
        self.assertEqual(self.one(ref)["rerun"], "bazel test //conformance:dtype_test "
                         "--test_arg=--filter=dtype/DT_001_canonical_names_parse")
        py = dict(raw("test_ERR_041_runtime_error", "FAILED", "x", suite="pytest"),
                  target="//conformance:error_kinds_test", impl=run_props(impl="upstream", flags="--config=upstream"))
        self.assertTrue(self.one(py)["rerun"].endswith("--test_arg=-k --test_arg=test_ERR_041_runtime_error"))

    def test_the_command_reaches_the_text_the_xml_and_the_page(self):
        records = report.judge([self.failing(impl="/opt/lib.so")], self.clauses, [])
        rows = report.clause_rows(records)
        t = report.totals(records, rows)
        out = io.StringIO()
        report.print_report(records, rows, t, out=out, only_problems=True)
        rerun = records[0]["rerun"]
        self.assertIn("Rerun:    " + rerun, out.getvalue())
        folder = tempfile.mkdtemp()
        report.write_junit(os.path.join(folder, "r.xml"), records)
        self.assertIn(rerun, open(os.path.join(folder, "r.xml")).read())
        report.write_html(os.path.join(folder, "r.html"), records, rows, t, {}, RUNFILES, "")
        self.assertIn(rerun, open(os.path.join(folder, "r.html")).read())
        again = report.judge(list(report.raw_cases("//conformance:suite_test", os.path.join(folder, "r.xml"))),
                             self.clauses, [])
        self.assertEqual(again[0]["rerun"], rerun)

    def test_the_terminal_gives_known_and_skips_as_counts(self):
        deviations = [("0.1.16", "upstream", {"dtype::DT_014_error_quotes_input"})]
        records = report.judge([raw("DT_014_error_quotes_input", "FAILED", "x"),
                                raw("DT_001_canonical_names_parse", "SKIPPED", "/x.so does not export F")] +
                               [raw(f"DT_002_x{i}", "SKIPPED", "/x.so does not export G") for i in range(3)],
                               self.clauses, deviations)
        rows = report.clause_rows(records)
        t = report.totals(records, rows)
        out = io.StringIO()
        report.print_report(records, rows, t, out=out, only_problems=True, where="r.html")
        text = out.getvalue()
        self.assertNotIn("DT_014_error_quotes_input", text)
        self.assertIn("known deviations: 1 test cases (1 clauses) fail as spec/deviations.md records", text)
        self.assertIn("skipped: 4 test cases, for 2 reasons:\n       3  /x.so does not export G\n", text)
        self.assertEqual(text.splitlines()[-3], "report: r.html")

    def test_summary_and_chips_count_the_same_things(self):
        records = report.judge([raw("DT_001_canonical_names_parse", "PASSED"), raw("DT_002_x", "PASSED"),
                                raw("DT_002_y", "SKIPPED", "no"), raw("DT_012_null_arguments_refused", "FAILED")],
                               self.clauses, [])
        rows = report.clause_rows(records)
        t = report.totals(records, rows)
        self.assertEqual((t["cases"]["PASS"], t["cases"]["SKIP"], t["cases"]["NONSTRICT"]), (2, 1, 1))
        # DT-002 has a test that passed and one skipped: the row is SKIP.
        self.assertEqual((t["clauses"]["PASS"], t["clauses"]["SKIP"], t["clauses"]["NONSTRICT"]), (1, 1, 1))
        self.assertIn("MUST 1/2, SHOULD 0/1 clauses passed; test cases: 2 passed, 1 skipped, 0 known "
                      "deviations, 1 unexpected", report.summary_line(t))


class LoadFailure(unittest.TestCase):
    """A library that does not load: one CRASH, stated once, counts that agree."""

    def test_one_crash_stated_once(self):
        raws = []
        for name in ("dtype_test", "version_test"):
            cases, _ = run_binary(name, "/nonexistent.so")
            raws += [dict(c, impl=dict(c["impl"], tvmffi_impl="/nonexistent.so")) for c in cases.values()]
        raws.append(dict(raw("test_ERR_040_x", "SKIPPED", "not that library", suite="pytest"),
                         target="//conformance:error_kinds_test", impl={"tvmffi_impl": "/nonexistent.so"}))
        records = report.judge(raws, report.read_clauses(SPEC), [])
        rows = report.clause_rows(records)
        t = report.totals(records, rows)
        self.assertEqual([r["verdict"] for r in records], ["CRASH"])
        self.assertEqual((t["clauses"]["CRASH"], t["cases"]["CRASH"], t["unexpected"], t["skipped"],
                          t["passed"]), (1, 1, 1, 0, 0))
        out = io.StringIO()
        report.print_report(records, rows, t, out=out, only_problems=True)
        self.assertEqual(out.getvalue().count("cannot open shared object file"), 1, out.getvalue())
        self.assertIn("implementation: /nonexistent.so: did not load", out.getvalue())
        self.assertNotIn("--filter", records[0]["rerun"])


class Pages(unittest.TestCase):
    """The HTML report works wherever it is copied."""

    def setUp(self):
        clauses = report.read_clauses(SPEC)
        self.records = report.judge([raw("DT_001_canonical_names_parse", "FAILED", "x"),
                                     raw("DT_002_canonical_names_round_trip", "PASSED")], clauses, [])
        self.rows = report.clause_rows(self.records)
        self.t = report.totals(self.records, self.rows)
        self.sources = report.find_test_sources(RUNFILES)
        self.folder = tempfile.mkdtemp()

    def page(self, base_url=""):
        path = os.path.join(self.folder, "report.html")
        report.write_html(path, self.records, self.rows, self.t, self.sources, RUNFILES, "", base_url)
        return open(path, encoding="utf-8").read()

    def test_links_are_relative_into_copies_with_anchors(self):
        text = self.page()
        self.assertNotIn("file://", text)
        self.assertNotIn(RUNFILES, text)
        spec = re.search(r"href='(sources/spec/dtype\.md\.html#DT-001)'", text)
        self.assertTrue(spec, "no relative link to the clause's anchor")
        copy = open(os.path.join(self.folder, "sources", "spec", "dtype.md.html"), encoding="utf-8").read()
        self.assertIn('id="DT-001"', copy)
        test = re.search(r"href='sources/(conformance/dtype_test\.c)\.html#L-(\d+)'", text)
        self.assertTrue(test, "no relative link to the test's line")
        source = open(os.path.join(self.folder, "sources", test.group(1) + ".html"), encoding="utf-8").read()
        self.assertIn(f'id="L-{test.group(2)}"', source)

    def test_a_base_url_instead_of_copies(self):
        text = self.page("https://example.org/repo/blob/abc")
        self.assertRegex(text, r"href='https://example.org/repo/blob/abc/spec/dtype\.md#L\d+'")
        self.assertRegex(text, r"href='https://example.org/repo/blob/abc/conformance/dtype_test\.c#L\d+'")
        self.assertFalse(os.path.exists(os.path.join(self.folder, "sources")))

    def test_legend_chips_and_empty_filter(self):
        text = self.page()
        for verdict in ("LATER", "KNOWN"):
            self.assertIn(f">{verdict}</span></dt><dd>{html.escape(report.MEANING[verdict])}", text)
        self.assertIn("clauses (a row each, its worst verdict): ", text)
        self.assertIn("test cases (the summary&#x27;s counts): ", text)
        self.assertIn("No row matches these filters.", text)
        self.assertIn("document.getElementById('none').style.display=n?'none':''", text)


class ReadmeSample(unittest.TestCase):
    def test_a_stale_sample_is_caught_and_rewritten(self):
        rec = raw("DT_001_canonical_names_parse", "PASSED", reference="1")
        rec["impl"].update(bazel_flags="", tvmffi_impl="")
        records = report.judge([rec], report.read_clauses(SPEC), [])
        t = report.totals(records, report.clause_rows(records))
        path = os.path.join(tempfile.mkdtemp(), "README.md")
        with open(path, "w") as f:
            f.write("x\n<!-- sample summary: reference -->\n    MUST 229/232, SHOULD 7/58\n"
                    "<!-- end of sample summary -->\ny\n")
        self.assertIn("is stale", readme_sample.check(path, records, t))
        self.assertEqual(readme_sample.write(path, records, t), "reference")
        self.assertEqual(readme_sample.check(path, records, t), "")
        text = open(path).read()
        self.assertTrue(text.startswith("x\n") and text.endswith("y\n"))
        rec["impl"]["bazel_flags"] = "--config=asan"
        self.assertEqual(readme_sample.check(path, report.judge([rec], {}, []), t), "")


if __name__ == "__main__":
    unittest.main(testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
