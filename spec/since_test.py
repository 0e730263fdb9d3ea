"""Every clause says since which release it holds, names a real one, and
agrees with the last full matrix run recorded in the tree.

A run against release R is judged by the clauses whose "(since X)" is at or
before R (tools/report.py), so a clause without one, or with a version no
release has (a guess, or what a library reports rather than the package's
name), would be judged wrongly. "(since none)" says no release is known to
meet the clause. The releases are those of spec/releases.md. spec/matrix.md
records, per clause, the since its run of every release derived ("holds
from"); an annotation that contradicts it fails here.
`bazel run //tools:matrix -- --releases all --md spec/matrix.md --fix-since`
sets the annotations from the results of every release.
"""
import os
import re
import unittest

from tools import report
from tools.matrix import profiles

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
               if c["level"] != "WITHDRAWN" and c["since"] not in self.releases and not c["no_since"]]
        self.assertEqual(bad, [], "clauses whose since names no release of spec/releases.md:\n" + "\n".join(bad))

    def test_one_annotation_each(self):
        bad = [f"{c['file']}:{c['line']}: {cid}" for cid, c in sorted(self.clauses.items())
               if len(re.findall(r"\((?:since|as of) (?:\d|none)", c["text"])) > 1 or "(as of " in c["text"]]
        self.assertEqual(bad, [], "clauses with an '(as of X)' or more than one since:\n" + "\n".join(bad))


def recorded_matrix(path):
    """(release columns, {clause: holds-from cell}) of spec/matrix.md's clause table."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n## Clauses\n", 1)[-1].splitlines()
    head = next(line for line in lines if line.startswith("| clause |"))
    names = [c.strip() for c in head.strip("|").split("|")]
    if "holds from" not in names:
        return [], {}
    at = names.index("holds from")
    releases = [n for n in names[at + 1:] if n != "reference"]
    cells = {}
    for line in lines:
        parts = [c.strip() for c in line.strip("|").split("|")]
        if re.match(r"^[A-Z]{2,5}-\d{3}$", parts[0]):
            cells[parts[0]] = parts[at]
    return releases, cells


class AgainstTheMatrix(unittest.TestCase):
    """The annotations against spec/matrix.md, the last full run recorded."""

    def setUp(self):
        self.releases = [r for r, _ in report.read_releases(SPEC)]
        self.clauses = report.read_clauses(SPEC)
        self.ran, self.derived = recorded_matrix(os.path.join(SPEC, "matrix.md"))

    def test_the_record_is_a_full_run(self):
        self.assertTrue(self.derived, "spec/matrix.md has no \"holds from\" column: regenerate it with "
                        "bazel run //tools:matrix -- --releases all --md spec/matrix.md")
        self.assertEqual(self.ran, self.releases, "spec/matrix.md is not a run of every release of "
                         "spec/releases.md: the since annotations cannot be checked against it")

    def test_annotations_agree_with_the_derived_since(self):
        bad = []
        for cid, cell in sorted(self.derived.items()):
            clause = self.clauses.get(cid)
            if clause is None or clause["level"] == "WITHDRAWN":
                continue
            derived, floor = profiles.parse_holds_from(cell)
            said, _ = profiles.judge_annotation(clause, derived, floor)
            if said in profiles.WRONG:
                bad.append(f"{clause['file']}:{clause['line']}: {cid}: annotated "
                           f"{profiles.annotation_of(clause) or '(nothing)'}, the matrix says {cell}: "
                           f"{said}")
        self.assertEqual(bad, [], "since annotations that spec/matrix.md contradicts (fix them, or run "
                         "bazel run //tools:matrix -- --releases all --md spec/matrix.md --fix-since):\n"
                         + "\n".join(bad))


if __name__ == "__main__":
    unittest.main()
