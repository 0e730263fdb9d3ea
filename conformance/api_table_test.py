"""The C API table of conformance/impl_load.h is the one list of the functions
the suite calls. This test holds it to the libraries and the documents:

- it names exactly the TVMFFI* functions that the pinned upstream
  libtvm_ffi.so exports (nm -D --defined-only), and the reference exports
  the same set, so a function upstream adds or drops fails here first;
- every count of those functions in README.md and spec/README.md (only
  the README's generated sample lines give one) is the table's length.
"""
import os
import re
import subprocess
import sys
import unittest

RUNFILES = os.environ.get("TEST_SRCDIR", "")
WORKSPACE = os.environ.get("TEST_WORKSPACE", "tvm_ffi_conformance")


def runfile(rel, repo=None):
    return os.path.join(RUNFILES, repo or WORKSPACE, rel)


def api_table():
    """The names in CONF_API_FUNCTIONS, in table order."""
    text = open(runfile("conformance/impl_load.h"), encoding="utf-8").read()
    body = re.search(r"#define CONF_API_FUNCTIONS\(X\)(.*?)\n\n", text, re.S)
    if body is None:
        raise AssertionError("conformance/impl_load.h: no CONF_API_FUNCTIONS(X) table")
    return re.findall(r"X\((TVMFFI\w+)\)", body.group(1))


def exported_api(lib):
    """The defined dynamic TVMFFI* function symbols of a library."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines())
            if len(f) == 3 and f[1] in "TtWi" and f[2].startswith("TVMFFI")}


# "the 50 TVMFFI* functions", "all 50 `TVMFFI*` functions", "the C API's 50
# functions", "every one of the 50\n`TVMFFI*` functions", "the same 50 names"
COUNT_PHRASES = re.compile(
    r"(?:\b(\d+)\s+`?TVMFFI\*`?\s+functions|C API's\s+(\d+)\s+functions"
    r"|the same\s+(\d+)\s+names)")


class ApiTable(unittest.TestCase):
    def setUp(self):
        self.table = api_table()

    def test_table_has_no_duplicates(self):
        dups = sorted({n for n in self.table if self.table.count(n) > 1})
        self.assertEqual(dups, [], "conformance/impl_load.h lists these more than once")

    def test_table_is_upstreams_exports(self):
        upstream = exported_api(runfile("lib/libtvm_ffi.so", "tvm_ffi_upstream"))
        self.assertEqual(sorted(upstream - set(self.table)), [],
                         "upstream exports these; add them to CONF_API_FUNCTIONS (impl_load.h)")
        self.assertEqual(sorted(set(self.table) - upstream), [],
                         "CONF_API_FUNCTIONS lists these; the pinned upstream does not export them")

    def test_reference_exports_the_table(self):
        reference = exported_api(runfile("reference/libtvm_ffi.so"))
        self.assertEqual(sorted(set(self.table) - reference), [],
                         "the reference runtime lacks these C API functions")
        self.assertEqual(sorted(reference - set(self.table)), [],
                         "the reference exports TVMFFI* functions the C API does not have")

    def test_documents_count_the_table(self):
        # The prose names no count; the README's sample lines (written by
        # `bazel run //tools:report -- --readme`) do, and must be the table's.
        for doc, samples in (("README.md", True), ("spec/README.md", False)):
            text = open(runfile(doc), encoding="utf-8").read()
            counts = [int(next(g for g in m.groups() if g)) for m in COUNT_PHRASES.finditer(text)]
            if samples:
                self.assertTrue(counts, f"{doc}: its sample lines give no count of the C API")
            for n in counts:
                self.assertEqual(n, len(self.table),
                                 f"{doc} says {n} C API functions; CONF_API_FUNCTIONS has "
                                 f"{len(self.table)}")


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=2))
