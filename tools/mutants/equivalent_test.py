"""Every entry of equivalent.txt still names a line of its source file.

An entry whose original line has been edited away can match no mutant any
more; it would sit in the list as a claim nobody checks."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))


def entries(path):
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if line.strip() and not line.startswith("#"):
                yield number, line.rstrip("\n").split("\t")


class EquivalentList(unittest.TestCase):
    def test_entries_name_current_lines(self):
        root = os.environ.get("TEST_SRCDIR")
        base = os.path.join(root, os.environ["TEST_WORKSPACE"]) if root else os.path.dirname(os.path.dirname(HERE))
        listing = os.path.join(base, "tools", "mutants", "equivalent.txt")
        sources = {}
        stale = []
        for number, parts in entries(listing):
            self.assertEqual(len(parts), 4, "line %d: want file:line, original, mutated, why" % number)
            path = parts[0].rsplit(":", 1)[0]
            if path not in sources:
                with open(os.path.join(base, path)) as f:
                    sources[path] = {l.strip() for l in f.read().splitlines()}
            if parts[1].strip() not in sources[path]:
                stale.append("line %d: %s no longer has: %s" % (number, path, parts[1].strip()))
            self.assertTrue(parts[3].strip(), "line %d: no reason given" % number)
        self.assertEqual(stale, [], "\n".join(stale))


if __name__ == "__main__":
    sys.exit(unittest.main())
