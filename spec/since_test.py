"""Every clause says since which release it holds, and names a real one.

A run against release R is judged by the clauses whose "(since X)" is at or
before R (tools/report.py), so a clause without one, or with a version no
release has (a guess, or what a library reports rather than the package's
name), would be judged wrongly. The releases are those of spec/releases.md;
`bazel run //tools:matrix -- --fix-since` sets the annotations from the
results of every release.
"""
import os
import re
import unittest

from tools import report

SPEC = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""), "spec")


class Since(unittest.TestCase):
    def setUp(self):
        self.releases = [r for r, _ in report.read_releases(SPEC)]
        self.clauses = report.read_clauses(SPEC)

    def test_releases_are_listed(self):
        self.assertGreaterEqual(len(self.releases), 1, "spec/releases.md lists no release")
        self.assertIn("0.1.0", self.releases)

    def test_every_clause_names_a_release(self):
        bad = [f"{c['file']}:{c['line']}: {cid}: {'(since ' + c['since'] + ')' if c['since'] else 'no (since X)'}"
               for cid, c in sorted(self.clauses.items())
               if c["level"] != "WITHDRAWN" and c["since"] not in self.releases]
        self.assertEqual(bad, [], "clauses whose since names no release of spec/releases.md:\n" + "\n".join(bad))

    def test_one_annotation_each(self):
        bad = [f"{c['file']}:{c['line']}: {cid}" for cid, c in sorted(self.clauses.items())
               if len(re.findall(r"\((?:since|as of) \d", c["text"])) > 1 or "(as of " in c["text"]]
        self.assertEqual(bad, [], "clauses with an '(as of X)' or more than one since:\n" + "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
