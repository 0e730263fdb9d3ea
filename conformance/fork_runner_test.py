"""The forked-worker runner (fork_runner.c, used under valgrind) must report
every outcome as Criterion's own runner does: the same test cases, statuses
and failure texts, from one source compiled both ways."""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

CRITERION, FORKED, ENDLESS = sys.argv[1], sys.argv[2], sys.argv[3]

EXPECTED = {
    "passes": "PASSED",
    "expect_fails_and_goes_on": "FAILED",
    "assert_stops_the_test": "FAILED",
    "skips": "SKIPPED",
    "crashes": "CRASHED",
    "times_out": "TIMEOUT",
    "fixture_runs": "PASSED",
    "expected_signal": "PASSED",
    "expected_exit_code": "PASSED",
    "wrong_exit_code": "FAILED",
    "disabled": "SKIPPED",
}


def run(binary, *args):
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "out.xml")
        env = dict(os.environ, XML_OUTPUT_FILE=xml)
        proc = subprocess.run([binary, *args], env=env, capture_output=True, text=True,
                              timeout=120)
        cases = {}
        if os.path.exists(xml):
            for case in ET.parse(xml).getroot().iter("testcase"):
                texts = [e.get("message", "") + (e.text or "") for e in case]
                cases[case.get("name")] = (case.get("status"), " ".join(texts))
        return proc.returncode, cases, proc.stdout + proc.stderr


class ForkRunnerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.criterion = run(CRITERION)
        cls.forked = run(FORKED)

    def test_each_runner_reports_every_outcome(self):
        for rc, cases, _ in (self.criterion, self.forked):
            self.assertNotEqual(rc, 0)  # failing cases: the binary fails
            self.assertEqual({k: v[0] for k, v in cases.items()}, EXPECTED)

    def test_failure_texts_match(self):
        c, f = self.criterion[1], self.forked[1]
        for name in ("expect_fails_and_goes_on", "assert_stops_the_test", "skips"):
            self.assertEqual(c[name][1], f[name][1], name)
        text = f["expect_fails_and_goes_on"][1]
        self.assertIn("first expectation 7", text)
        self.assertIn("second expectation", text)
        self.assertIn("runner_cases.c:", text)
        self.assertIn("the assert", f["assert_stops_the_test"][1])
        self.assertNotIn("never reached", f["assert_stops_the_test"][1])
        self.assertIn("no device here (reason)", f["skips"][1])

    def test_crash_names_the_signal(self):
        for _, cases, _ in (self.criterion, self.forked):
            self.assertIn("signal 11", cases["crashes"][1])

    def test_console_lines_are_criterions(self):
        # tools/mutants reads these lines; failed assertions in source order.
        out = self.forked[2]
        first = out.index("runner_cases.c:18: Assertion Failed")
        second = out.index("runner_cases.c:19: Assertion Failed")
        self.assertLess(first, second)
        self.assertIn("[FAIL] cases::expect_fails_and_goes_on:", out)
        self.assertIn("[SKIP] cases::skips: no device here (reason)", out)
        self.assertIn("[PASS] cases::passes:", out)

    def test_fail_fast_stops_at_the_first_failure(self):
        rc, _, out = run(FORKED, "--fail-fast")
        self.assertNotEqual(rc, 0)
        self.assertIn("[FAIL] cases::assert_stops_the_test:", out)  # first by name
        self.assertNotIn("cases::passes", out)


def alive(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            return "\nState:\tZ" not in f.read()
    except FileNotFoundError:
        return False


class RunnerKilled(unittest.TestCase):
    def test_a_killed_runner_takes_its_test_with_it(self):
        # tools/mutants kills a runner that runs past its time; the forked
        # child running the test must not live on (Criterion's workers don't).
        with tempfile.TemporaryDirectory() as tmp:
            pid_file = os.path.join(tmp, "child.pid")
            env = dict(os.environ, RUNNER_CHILD_PID_FILE=pid_file,
                       XML_OUTPUT_FILE=os.path.join(tmp, "out.xml"))
            runner = subprocess.Popen([ENDLESS], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while not (os.path.exists(pid_file) and open(pid_file).read().endswith("\n")):
                self.assertLess(time.monotonic(), deadline, "the test never started")
                time.sleep(0.05)
            child = int(open(pid_file).read())
            self.assertNotEqual(child, runner.pid)
            self.assertTrue(alive(child))
            runner.send_signal(signal.SIGKILL)
            runner.wait()
            deadline = time.monotonic() + 10
            while alive(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            if alive(child):
                os.kill(child, signal.SIGKILL)
                self.fail("the test's process outlived its killed runner")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
