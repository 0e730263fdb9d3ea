"""Tests of what the matrix tool writes and says (issue 30): it writes no
tracked file unless asked, --fix-since needs every release, its headline
shows unexpected results, and it points at no section that is not there."""
import os
import tempfile
import unittest

from tools import progress
from tools.matrix import matrix, render


def col(name, unexpected, must=(1, 1)):
    return {"name": name, "release": name, "version": name, "totals": {
        "unexpected": unexpected, "MUST": {"passed": must[0], "total": must[1]},
        "SHOULD": {"passed": 0, "total": 0}, "later": 0, "known": 0, "skipped": 0, "passed": 0, "release": ""},
        "load_errors": [], "rows": [], "records": [], "same_as": "", "cpu": 0.0}


class Arguments(unittest.TestCase):
    def test_no_tracked_file_by_default(self):
        args, _ = matrix.parse(["--releases", "0.1.0,0.1.15.post2"])
        self.assertEqual(args.md, "")

    def test_fix_since_needs_every_release(self):
        with self.assertRaises(SystemExit):
            matrix.parse(["--releases", "0.1.0,0.1.15.post2", "--fix-since"])
        args, _ = matrix.parse(["--fix-since", "--md", "spec/matrix.md"])
        self.assertTrue(args.fix_since)

    def test_outputs_without_md_leave_the_spec_alone(self):
        out = tempfile.mkdtemp()
        args, _ = matrix.parse(["--out", out])
        before = {name: os.path.getmtime(os.path.join(matrix.SPEC, name)) for name in os.listdir(matrix.SPEC)}
        matrix.write_outputs([col("0.1.0", 3), col("reference", 0)], [], {}, [], args)
        self.assertEqual(sorted(os.listdir(out)), ["matrix.html", "matrix.json"])
        self.assertEqual(before, {name: os.path.getmtime(os.path.join(matrix.SPEC, name))
                                  for name in os.listdir(matrix.SPEC)})


class Headline(unittest.TestCase):
    def test_unexpected_results_make_it_red(self):
        text, bad = render.headline([col("0.1.0", 156), col("0.1.15.post2", 0), col("reference", 0)])
        self.assertTrue(bad)
        self.assertEqual(text, "unexpected results in 1 of 3 columns: 0.1.0 156")
        self.assertEqual(render.headline([col("reference", 0)]), ("no unexpected result in any of the 1 columns",
                                                                 False))

    def test_no_dangling_below(self):
        profile = [{"clause": "AAA-001", "level": "MUST", "annotated": "0.1.0", "derived": "0.1.4",
                    "verdict": "later", "why": "", "floor": False, "states": {}}]
        found = matrix.findings([col("0.1.0", 0), col("reference", 0)], profile, {}, [])
        self.assertFalse([line for line in found if "(below)" in line], found)
        path = os.path.join(tempfile.mkdtemp(), "m.html")
        render.write_html(path, [col("0.1.0", 0)], profile, found, "now")
        page = open(path, encoding="utf-8").read()
        self.assertIn("Since annotations against the results", page)
        self.assertIn("<td class='id'>AAA-001</td>", page)


class Heartbeat(unittest.TestCase):
    def test_a_line_while_nothing_else_is_said(self):
        lines = []
        with progress.Heartbeat(lambda: "building", lines.append, every=0.2):
            import time
            time.sleep(1.3)
        self.assertGreaterEqual(len(lines), 3)
        self.assertTrue(lines[0].startswith("... building ("), lines)


if __name__ == "__main__":
    unittest.main()
