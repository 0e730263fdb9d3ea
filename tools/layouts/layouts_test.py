"""The layout tool: its change detection on made-up releases, and its
compile path on the two headers the build already has (the reference's and
the pinned release's), which must agree with each other and with the
pinned release's column recorded in spec/layouts.md."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layouts  # noqa: E402

RUNFILES = layouts.ROOT
# External repositories sit beside the main one in the runfiles tree.
PINNED_INCLUDE = os.path.join(os.path.dirname(RUNFILES), "tvm_ffi_upstream", "include")
REFERENCE_INCLUDE = os.path.join(RUNFILES, "reference", "include")
RECORD = os.path.join(RUNFILES, "spec", "layouts.md")


class Changes(unittest.TestCase):
    def test_a_fact_changes_at_the_release_where_it_differs(self):
        cols = {"0.1.7": ({"sizeof(E)": 56, "offsetof(E, c)": None}, ["A"]),
                "0.1.8": ({"sizeof(E)": 72, "offsetof(E, c)": 56}, ["A", "B"]),
                "0.1.9": ({"sizeof(E)": 72, "offsetof(E, c)": 56}, ["B"])}
        got = layouts.changes(cols, ["0.1.7", "0.1.8", "0.1.9"])
        self.assertEqual(got, [("0.1.8", "fact", "sizeof(E)", 56, 72),
                               ("0.1.8", "fact", "offsetof(E, c)", None, 56),
                               ("0.1.8", "symbol", "B", "-", "exported"),
                               ("0.1.9", "symbol", "A", "exported", "-")])

    def test_history_is_written_as_runs(self):
        order = ["a", "b", "c"]
        self.assertEqual(layouts._runs({"a": 56, "b": 72, "c": 72}, order), "56 (a), 72 (b–)")
        self.assertEqual(layouts._runs({"a": 8, "b": 8, "c": 8}, order), "8")
        self.assertEqual(layouts._runs({"a": None, "b": None, "c": 3}, order), "- (a–b), 3 (c–)")


class Compile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.facts = layouts.read_facts()
        cls.pinned = layouts.evaluate(cls.facts, [PINNED_INCLUDE])
        cls.reference = layouts.evaluate(cls.facts, [REFERENCE_INCLUDE, PINNED_INCLUDE])

    def test_every_fact_compiles_against_the_pinned_release(self):
        absent = [f for f, v in self.pinned.items() if v is None]
        self.assertEqual(absent, [])
        self.assertEqual(self.pinned["sizeof(TVMFFIErrorCell)"], 72)
        self.assertEqual(self.pinned["sizeof(TVMFFIAny)"], 16)

    def test_reference_headers_match_the_pinned_release(self):
        diff = {f: (self.reference[f], self.pinned[f]) for f in self.facts
                if self.reference[f] != self.pinned[f]}
        self.assertEqual(diff, {})

    def test_the_record_holds_the_pinned_release(self):
        # spec/layouts.md writes each fact's history as runs; its last run is
        # the newest release, which is the pinned one.
        with open(RECORD) as f:
            text = f.read()
        stale = []
        for f in self.facts:
            m = re.search(r"^\| `%s` \| (.*?) \|" % re.escape(f), text, re.M)
            if m is None:
                stale.append((f, "missing"))
                continue
            last = m.group(1).split(", ")[-1].split(" ")[0]
            if last != layouts._cell(self.pinned[f]):
                stale.append((f, last, self.pinned[f]))
        self.assertEqual(stale, [], "spec/layouts.md is stale: rerun tools/layouts/layouts.py --md spec/layouts.md")


if __name__ == "__main__":
    unittest.main()
