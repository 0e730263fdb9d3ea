"""The layout tool: its change detection on made-up releases, its discovery
and compile path on the two headers the build already has (the reference's
and the pinned release's), which must agree with each other and with the
pinned release's column of spec/layouts.json; and spec/layouts.md and
conformance/layout_releases.inc, which must be exactly what the tool makes
from that record."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import classify  # noqa: E402
import layouts  # noqa: E402

RUNFILES = layouts.ROOT
# External repositories sit beside the main one in the runfiles tree.
PINNED_INCLUDE = os.path.join(os.path.dirname(RUNFILES), "tvm_ffi_upstream", "include")
REFERENCE_INCLUDE = os.path.join(RUNFILES, "reference", "include")
RECORD = os.path.join(RUNFILES, "spec", "layouts.json")
MD = os.path.join(RUNFILES, "spec", "layouts.md")
INC = os.path.join(RUNFILES, "conformance", "layout_releases.inc")
CERT_INC = os.path.join(RUNFILES, "tools", "certify", "release_layouts.inc")
REGENERATE = ("rerun: .venv/bin/python3 tools/layouts/layouts.py --json spec/layouts.json "
              "--md spec/layouts.md --inc conformance/layout_releases.inc "
              "--cert-inc tools/certify/release_layouts.inc")


def load_record():
    import json
    with open(RECORD) as f:
        return json.load(f)


def made_up_record():
    cols = {"0.1.7": ([("sizeof(E)", 56), ("offsetof(E, k)", 0), ("signature of F", "int (void)")], ["A"]),
            "0.1.8": ([("sizeof(E)", 72), ("offsetof(E, k)", 0), ("offsetof(E, c)", 56),
                       ("signature of F", "int (int)")], ["A", "B"]),
            "0.1.9": ([("sizeof(E)", 72), ("offsetof(E, k)", 0), ("offsetof(E, c)", 56),
                       ("signature of F", "int (int)")], ["B"])}
    order = ["0.1.7", "0.1.8", "0.1.9"]
    rep = {"0.1.7": "0.1.7", "0.1.8": "0.1.9", "0.1.9": "0.1.9"}
    return layouts.build_record(cols, order, rep, None, "0.1.9")


class Changes(unittest.TestCase):
    def test_every_change_at_the_release_where_it_happened(self):
        self.assertEqual(layouts.changes(made_up_record()), [
            ("0.1.8", "layout", "sizeof(E)", 56, 72),
            ("0.1.8", "layout", "offsetof(E, c)", None, 56),
            ("0.1.8", "signature", "signature of F", "int (void)", "int (int)"),
            ("0.1.8", "symbol", "B", "-", "exported"),
            ("0.1.9", "symbol", "A", "exported", "-")])

    def test_history_is_written_as_runs(self):
        order = ["a", "b", "c"]
        h = layouts._history
        self.assertEqual(h(layouts.runs_of({"a": 56, "b": 72, "c": 72}, order), order), "56 (a); 72 (b–)")
        self.assertEqual(h(layouts.runs_of({"a": 8, "b": 8, "c": 8}, order), order), "8")
        self.assertEqual(h(layouts.runs_of({"a": None, "b": None, "c": 3}, order), order), "- (a–b); 3 (c)")
        self.assertEqual(layouts.expand([["a", None], ["c", 3]], order), {"a": None, "b": None, "c": 3})

    def test_a_renamed_field_stays_beside_its_struct(self):
        merged = layouts.merge_order([["sizeof(S)", "offsetof(S, new)", "sizeof(T)"],
                                      ["sizeof(S)", "offsetof(S, old)", "sizeof(T)"]])
        self.assertEqual(merged, ["sizeof(S)", "offsetof(S, old)", "offsetof(S, new)", "sizeof(T)"])

    def test_guard_rows_merge_the_releases_reporting_one_version(self):
        rec = made_up_record()
        parts = layouts.guard_parts(rec)
        self.assertEqual(parts, [("E", [("", "SIZE", "sizeof(E)"), ("k", "OFFSET", "offsetof(E, k)"),
                                        ("c", "OFFSET", "offsetof(E, c)")])])
        self.assertEqual(layouts.guard_rows(rec, parts),
                         [("0.1.7", ["0.1.7"], [56, 0, -1]),
                          ("0.1.9", ["0.1.8", "0.1.9"], [72, 0, 56])])


class Labels(unittest.TestCase):
    """Every recorded change between consecutive releases gets its label."""

    @classmethod
    def setUpClass(cls):
        cls.rec = load_record()
        cls.labels = {(c[0], c[2]): (c[5], c[6]) for c in classify.labelled(cls.rec, layouts.changes(cls.rec))}

    def test_made_up_changes_are_labelled(self):
        rec = made_up_record()
        got = {(c[0], c[2]): c[5] for c in classify.labelled(rec, layouts.changes(rec))}
        self.assertEqual(got, {("0.1.8", "sizeof(E)"): classify.BREAKING,
                               ("0.1.8", "offsetof(E, c)"): classify.BREAKING,
                               ("0.1.8", "signature of F"): classify.BREAKING,
                               ("0.1.8", "B"): classify.COMPATIBLE,
                               ("0.1.9", "A"): classify.BREAKING})

    def test_every_change_has_a_label_and_a_reason(self):
        self.assertEqual(len(self.labels), len(layouts.changes(self.rec)))
        for key, (lab, why) in self.labels.items():
            self.assertIn(lab, (classify.BREAKING, classify.SOURCE, classify.COMPATIBLE), key)
            self.assertTrue(why, key)

    def test_the_error_cell_growth_breaks_binaries_built_before(self):
        lab, why = self.labels[("0.1.8.post0", "sizeof(TVMFFIErrorCell)")]
        self.assertEqual(lab, classify.BREAKING)
        self.assertIn("56 -> 72", why)
        lab, why = self.labels[("0.1.8.post0", "offsetof(TVMFFIErrorCell, cause_chain)")]
        self.assertEqual((lab, "ends at byte 56" in why), (classify.BREAKING, True))

    def test_bit_4_of_the_field_flags_changed_meaning_twice(self):
        for release, name in (("0.1.12", "kTVMFFIFieldFlagBitMaskSEqHashDefRecursive"),
                              ("0.1.12", "kTVMFFIFieldFlagBitMaskSEqHashDef"),
                              ("0.1.14.post0", "kTVMFFIFieldFlagBitMaskSEqHashDefPattern"),
                              ("0.1.14.post0", "kTVMFFIFieldFlagBitMaskSEqHashDefRecursive")):
            self.assertEqual(self.labels[(release, name)][0], classify.BREAKING, name)
        self.assertIn("1 << 4", self.labels[("0.1.14.post0", "kTVMFFIFieldFlagBitMaskSEqHashDefPattern")][1])

    def test_def_region_kinds_reassigned_at_0_1_14_post0(self):
        for name in ("kTVMFFIDefRegionKindPattern", "kTVMFFIDefRegionKindSimple",
                     "kTVMFFIDefRegionKindRecursive", "kTVMFFIDefRegionKindNonRecursive"):
            self.assertEqual(self.labels[("0.1.14.post0", name)][0], classify.BREAKING, name)

    def test_renames_with_the_same_layout_are_source_breaking_only(self):
        for name in ("offsetof(TVMFFIFieldInfo, default_value_or_factory)",
                     "offsetof(TVMFFIFieldInfo, default_value)"):
            self.assertEqual(self.labels[("0.1.9", name)][0], classify.SOURCE, name)
        self.assertEqual(self.labels[("0.1.10", "type of TVMFFIFieldInfo.setter")][0], classify.SOURCE)

    def test_additions_are_compatible(self):
        self.assertEqual(self.labels[("0.1.9", "kTVMFFIList")][0], classify.COMPATIBLE)
        self.assertEqual(self.labels[("0.1.9", "sizeof(TVMFFISeqCell)")][0], classify.COMPATIBLE)
        self.assertEqual(self.labels[("0.1.8.post0", "TVMFFIErrorCreateWithCauseAndExtraContext")][0],
                         classify.COMPATIBLE)

    def test_between_lists_what_breaks_a_pair(self):
        ch = layouts.changes(self.rec)
        forward = classify.between(self.rec, "0.1.3", "0.1.15.post2", ch)
        names = {c[2] for c in forward if c[5] == classify.BREAKING}
        self.assertIn("sizeof(TVMFFIErrorCell)", names)
        self.assertIn("kTVMFFIDefRegionKindPattern", names)
        self.assertNotIn("kTVMFFIList", {c[2] for c in forward})
        self.assertEqual(classify.between(self.rec, "0.1.8.post0", "0.1.8.post2", ch), [])
        # Built against 0.1.3 and run on 0.1.7: nothing in between matters.
        self.assertEqual(classify.between(self.rec, "0.1.3", "0.1.7", ch), [])
        backward = classify.between(self.rec, "0.1.8.post2", "0.1.7", ch)
        self.assertEqual({c[5] for c in backward}, {classify.IF_USED})
        self.assertIn("TVMFFIErrorCreateWithCauseAndExtraContext", {c[2] for c in backward})


class Record(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = load_record()
        cls.pinned = dict(layouts.measure([PINNED_INCLUDE]))
        cls.reference = dict(layouts.measure([REFERENCE_INCLUDE, PINNED_INCLUDE]))

    def test_the_record_holds_the_pinned_release(self):
        order = self.rec["releases"]
        self.assertIn(self.rec["pinned"], order)
        self.assertEqual(self.rec["reported"][self.rec["pinned"]], "%d.%d.%d" % tuple(
            self.pinned["TVM_FFI_VERSION_" + p] for p in ("MAJOR", "MINOR", "PATCH")))
        recorded = {l: layouts.expand(runs, order)[self.rec["pinned"]] for l, runs in self.rec["facts"]}
        recorded = {l: v for l, v in recorded.items() if v is not None}
        self.assertEqual(recorded, self.pinned, "spec/layouts.json is stale: " + REGENERATE)
        self.assertEqual(self.pinned["sizeof(TVMFFIErrorCell)"], 72)
        self.assertEqual(self.pinned["sizeof(TVMFFIAny)"], 16)

    def test_the_record_shows_the_error_cell_change(self):
        ch = layouts.changes(self.rec)
        self.assertIn(("0.1.8.post0", "layout", "sizeof(TVMFFIErrorCell)", 56, 72), ch)

    def test_reference_headers_match_the_pinned_release(self):
        # Except that the reference prototypes two functions upstream's C
        # header declares with empty parentheses: the same ABI.
        def same(a, b):
            return a == b or (isinstance(a, str) and a.replace("(void)", "()") == b)
        diff = {l: (self.reference.get(l), v) for l, v in self.pinned.items()
                if not same(self.reference.get(l), v)}
        self.assertEqual(diff, {})

    def test_md_and_inc_are_made_from_the_record(self):
        with open(MD) as f:
            self.assertEqual(f.read(), layouts.render_md(self.rec), "spec/layouts.md is stale: " + REGENERATE)
        with open(INC) as f:
            self.assertEqual(f.read(), layouts.render_inc(self.rec),
                             "conformance/layout_releases.inc is stale: " + REGENERATE)
        with open(CERT_INC) as f:
            self.assertEqual(f.read(), layouts.render_cert_inc(self.rec),
                             "tools/certify/release_layouts.inc is stale: " + REGENERATE)


if __name__ == "__main__":
    unittest.main()
