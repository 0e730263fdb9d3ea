"""The parts of mutants.py that need no compiler: gates, the shared caches'
publishing, and the seeded draw."""
import os
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import mutants  # noqa: E402


class FakeMutant:
    def __init__(self, n):
        self.src, self.line, self.key = "reference/x.c", n, "k%d" % n
        self.status = self.detail = ""


class Gates(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.root, "reference"))
        for name in ("b.c", "a.c", "a_test.c", "a.h"):
            open(os.path.join(self.root, "reference", name), "w").close()

    def test_a_gate_names_its_files(self):
        self.assertEqual(mutants.parse_gate(["boundary", "100", "reference/a.c"], self.root),
                         ("boundary", 100.0, ["reference/a.c"]))

    def test_no_files_or_all_means_every_runtime_source(self):
        every = ["reference/a.c", "reference/b.c"]
        self.assertEqual(mutants.parse_gate(["runtime", "90"], self.root)[2], every)
        self.assertEqual(mutants.parse_gate(["runtime", "90", "all"], self.root)[2], every)

    def test_a_score_that_is_no_number_is_refused(self):
        with self.assertRaises(SystemExit) as cm:
            mutants.parse_gate(["runtime", "ninety"], self.root)
        self.assertIn("'ninety' is not a number", str(cm.exception))
        with self.assertRaises(SystemExit):
            mutants.parse_gate(["runtime"], self.root)


class Publish(unittest.TestCase):
    def test_a_file_and_a_folder_arrive_whole(self):
        tmp = tempfile.mkdtemp()
        src = os.path.join(tmp, "obj.o")
        with open(src, "w") as f:
            f.write("code")
        mutants.publish(src, os.path.join(tmp, "cached.o"))
        with open(os.path.join(tmp, "cached.o")) as f:
            self.assertEqual(f.read(), "code")
        folder = os.path.join(tmp, "made")
        os.makedirs(folder)
        open(os.path.join(folder, "x.mutant.0.c"), "w").close()
        mutants.publish(folder, os.path.join(tmp, "shared"))
        self.assertEqual(os.listdir(os.path.join(tmp, "shared")), ["x.mutant.0.c"])
        self.assertEqual(sorted(os.listdir(tmp)), ["cached.o", "made", "obj.o", "shared"])

    def test_a_folder_published_first_by_another_process_stays(self):
        tmp = tempfile.mkdtemp()
        for name in ("first", "second"):
            os.makedirs(os.path.join(tmp, name))
            open(os.path.join(tmp, name, name), "w").close()
        mutants.publish(os.path.join(tmp, "first"), os.path.join(tmp, "shared"))
        mutants.publish(os.path.join(tmp, "second"), os.path.join(tmp, "shared"))
        self.assertEqual(os.listdir(os.path.join(tmp, "shared")), ["first"])
        self.assertFalse([n for n in os.listdir(tmp) if n.endswith(".tmp")])

    def test_headers_are_listed_in_a_fixed_order(self):
        tmp = tempfile.mkdtemp()
        for rel in ("reference/z.h", "reference/a.h", "reference/a.c", "reference/include/k.h",
                    "dlpack/dlpack.h"):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            open(os.path.join(tmp, rel), "w").close()
        got = [os.path.relpath(p, tmp) for p in mutants.header_files(tmp, os.path.join(tmp, "dlpack"))]
        self.assertEqual(got, ["reference/a.h", "reference/z.h", "reference/include/k.h",
                               "dlpack/dlpack.h"])


class Draw(unittest.TestCase):
    def setUp(self):
        self.judged = []
        self.saved = mutants.judge

        def fake(suite, builder, m, kills, seen):
            self.judged.append(m.line)
            return ("build-broken", "") if m.line % 3 == 0 else ("killed", "t: x")
        mutants.judge = fake

    def tearDown(self):
        mutants.judge = self.saved

    def test_the_sample_counts_only_mutants_that_compile(self):
        pool = [FakeMutant(n) for n in range(1, 40)]
        chosen = mutants.draw_and_judge(None, None, pool, 2026, 10, 1, ({}, {}))
        self.assertEqual(sum(m.status == "killed" for m in chosen), 10)
        self.assertEqual(len(chosen), len(self.judged))
        self.assertTrue(all(m.status == "build-broken" for m in chosen if m.line % 3 == 0))

    def test_one_seed_draws_the_same_mutants(self):
        pool = [FakeMutant(n) for n in range(1, 40)]
        first = [m.line for m in mutants.draw_and_judge(None, None, pool, 7, 5, 1, ({}, {}))]
        second = [m.line for m in mutants.draw_and_judge(None, None, pool, 7, 5, 1, ({}, {}))]
        other = [m.line for m in mutants.draw_and_judge(None, None, pool, 8, 5, 1, ({}, {}))]
        self.assertEqual(first, second)
        self.assertNotEqual(first, other)


class Timeouts(unittest.TestCase):
    def test_a_timeout_kills_the_whole_process_group(self):
        # A mutant's endless loop may run in a child of the test binary.
        with tempfile.TemporaryDirectory() as d:
            pid_file = os.path.join(d, "pid")
            script = "sleep 300 & echo $! > %s; wait" % pid_file
            self.assertIsNone(mutants.run_in_group(["sh", "-c", script], None, 1))
            child = int(open(pid_file).read())
            time.sleep(0.2)
            try:
                with open("/proc/%d/status" % child) as f:
                    self.assertIn("\nState:\tZ", f.read(), "the grandchild still runs")
            except FileNotFoundError:
                pass

    def test_a_run_in_time_gives_its_output(self):
        res = mutants.run_in_group(["sh", "-c", "echo out; echo err >&2; exit 3"], None, 10)
        self.assertEqual((res.returncode, res.stdout, res.stderr), (3, "out\n", "err\n"))


class MutantText(unittest.TestCase):
    def test_a_mutant_is_read_when_first_asked_not_when_pooled(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "x.mutant.1.c")
        m = mutants.Mutant("reference/x.c", path, ["int a;", "return 0;", "}"])
        with open(path, "w") as f:  # written after pooling: the pool never read it
            f.write("int a;\nreturn 1;\n}\n")
        self.assertEqual((m.line, m.before, m.after), (2, "return 0;", "return 1;"))
        self.assertEqual(m.key, "reference/x.c\treturn 0;\treturn 1;")
        self.assertIn("-return 0;\n+return 1;\n", m.diff)


if __name__ == "__main__":
    sys.exit(unittest.main())
