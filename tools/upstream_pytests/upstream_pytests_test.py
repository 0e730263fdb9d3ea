"""The bounded run of //tools/upstream_pytests in `bazel test //...`.

Runs upstream's own Python tests of the files scope.txt marks `ci` on the
bundled reference runtime (and on upstream, for its results to compare
against), in a cache of the test's own, and fails unless every one of them
runs as on upstream with no crash. Without the release's source archive
(no network on the first run, @tvm_ffi_sdist says why) it SKIPs, saying so.
Also checks the tool's own bookkeeping: how pytest's reports become
outcomes, and how a run is compared with upstream's.
"""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import upstream_pytests  # noqa: E402


def runfile(path):
    base = os.environ.get("RUNFILES_DIR") or os.path.join(os.environ.get("TEST_SRCDIR", ""))
    return os.path.join(base, path)


class Bookkeeping(unittest.TestCase):
    def test_reports_become_outcomes(self):
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "log.jsonl")
            events = [
                {"event": "start", "nodeid": "t::a"},
                {"event": "report", "nodeid": "t::a", "when": "setup", "outcome": "passed"},
                {"event": "report", "nodeid": "t::a", "when": "call", "outcome": "passed"},
                {"event": "report", "nodeid": "t::a", "when": "teardown", "outcome": "passed"},
                {"event": "report", "nodeid": "t::b", "when": "setup", "outcome": "failed"},
                {"event": "report", "nodeid": "t::c", "when": "call", "outcome": "skipped",
                 "xfail": True},
                {"event": "report", "nodeid": "t::d", "when": "call", "outcome": "failed"},
                {"event": "collect_error", "nodeid": "t.py", "message": "boom"},
                {"event": "start", "nodeid": "t::e"},
            ]
            with open(log, "w") as f:
                f.write("\n".join(json.dumps(e) for e in events) + "\n{\"cut")
            tests, order, errors, running, maps = upstream_pytests.parse_log(log)
        self.assertEqual(tests["t::a"], "passed")
        self.assertEqual(tests["t::b"], "errors")
        self.assertEqual(tests["t::c"], "skipped")
        self.assertEqual(tests["t::d"], "failed")
        self.assertEqual(len(errors), 1)
        self.assertEqual(running, "t::e", "the test running when the log ends is the crash site")
        self.assertIsNone(maps, "no session end recorded")

    def test_one_process_crash_takes_the_files_not_reached(self):
        # a.py finished, b.py died in its second test, c.py never started.
        def passed(nodeid):
            return [{"event": "start", "nodeid": nodeid}] + [
                {"event": "report", "nodeid": nodeid, "when": w, "outcome": "passed"}
                for w in ("setup", "call", "teardown")]
        events = passed("tests/python/a.py::t1") + passed("tests/python/b.py::t1") + [
            {"event": "start", "nodeid": "tests/python/b.py::t2"}]

        def died(python, source, names, env, k, timeout, log):
            self.assertEqual(names, ["a.py", "b.py", "c.py"], "one process runs every file")
            with open(log, "w") as f:
                f.write("\n".join(json.dumps(e) for e in events) + "\n")
            return -11, "SIGSEGV", 3.0, "output"

        real = upstream_pytests.launch
        upstream_pytests.launch = died
        try:
            with tempfile.TemporaryDirectory() as d:
                got = upstream_pytests.run_in_one_process("python", "src", ["a.py", "b.py", "c.py"],
                                                          {}, None, 10, d)
        finally:
            upstream_pytests.launch = real
        self.assertIsNone(got["a.py"]["crashed"])
        self.assertEqual(got["a.py"]["tests"], {"tests/python/a.py::t1": "passed"})
        self.assertEqual(got["b.py"]["crashed"], "SIGSEGV in tests/python/b.py::t2")
        self.assertEqual(got["b.py"]["tests"]["tests/python/b.py::t2"], "incomplete")
        self.assertEqual(got["c.py"]["crashed"], "not reached: SIGSEGV in tests/python/b.py::t2")
        self.assertEqual(upstream_pytests.compare(got["c.py"], {"tests": {}, "crashed": None})[0],
                         "CRASH")

    def test_compare_with_upstream(self):
        base = {"tests": {"a": "passed", "b": "skipped"}, "crashed": None}
        same = {"tests": {"a": "passed", "b": "skipped"}, "crashed": None, "collect_errors": []}
        diff = {"tests": {"a": "failed", "b": "skipped"}, "crashed": None, "collect_errors": []}
        crash = {"tests": {}, "crashed": "SIGSEGV in a", "collect_errors": []}
        self.assertEqual(upstream_pytests.compare(same, base)[0], "SAME")
        verdict, differences = upstream_pytests.compare(diff, base)
        self.assertEqual(verdict, "DIFF")
        self.assertEqual(differences, [{"test": "a", "outcome": "failed", "upstream": "passed"}])
        self.assertEqual(upstream_pytests.compare(crash, base)[0], "CRASH")

    def test_scope_lists_every_file_with_a_reason(self):
        scope = upstream_pytests.read_scope(os.path.join(HERE, "scope.txt"))
        self.assertGreater(len(scope), 40)
        for name, (where, reason, tags) in scope.items():
            self.assertIn(where, ("in", "out"), name)
            self.assertNotIn(reason, ("", "?"), name)
            if tags:
                self.assertEqual(where, "in", name)
        build = sorted(n for n, (_, _, tags) in scope.items() if "build" in tags)
        self.assertIn("test_build.py", build)


class BoundedRun(unittest.TestCase):
    def test_ci_files_run_as_on_upstream(self):
        status = open(runfile("tvm_ffi_sdist/status.txt")).read().strip()
        if not status.startswith("available"):
            self.skipTest("upstream's source archive is not available here: " + status)
        archive = runfile("tvm_ffi_sdist/sdist.tar.gz")
        runtime = runfile("tvm_ffi_conformance/reference/libtvm_ffi.so")
        out = os.path.join(os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR", tempfile.mkdtemp()),
                           "upstream_pytests.json")
        os.environ["TVMFFI_CONFORMANCE_CACHE"] = os.environ.get("TEST_TMPDIR", tempfile.mkdtemp())
        rc = upstream_pytests.main(["--runtime", runtime, "--scope", "ci", "--sdist", archive,
                                    "--json", out, "--jobs", "2"])
        self.assertEqual(rc, 0, "the ci files did not all run as on upstream (table above)")
        with open(out) as f:
            result = json.load(f)
        self.assertGreaterEqual(len(result["files"]), 3)
        self.assertTrue(all(r["proved"] for r in result["files"]),
                        "a file ran without proof of what it ran on")


if __name__ == "__main__":
    unittest.main(verbosity=2)
