"""checks.def is the one list of certify's checks: the README's table is
written from it, every check id a certify source names is one of its rows,
and every clause a row names is a clause of spec/.

Run by `bazel test //tools/certify:checks_test`.
"""
import glob
import os
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks_table  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "spec")
# A check id in a source: "static.x", "probe.x", "manifest.x" (not a file name).
CHECK_LITERAL = re.compile(r'"((?:static|probe|manifest)\.[a-z][a-z-]*)"')
ROWS = checks_table.read_rows()


def sources():
    paths = []
    for ext in ("c", "h", "py"):
        paths += glob.glob(os.path.join(HERE, "*." + ext))
        paths += glob.glob(os.path.join(HERE, "testdata", "*." + ext))
    return sorted(p for p in paths if not p.endswith("checks_test.py"))


def test_rows_are_unique_and_whole():
    ids = [r["id"] for r in ROWS]
    names = [r["name"] for r in ROWS]
    assert len(ids) == len(set(ids)) and len(names) == len(set(names))
    for r in ROWS:
        assert r["crash_verdict"] in ("CERT_PASS", "CERT_WARN", "CERT_NONSTRICT", "CERT_FAIL"), r
        assert (r["crash_verdict"] == "CERT_PASS") == (r["crash_clause"] == ""), r
        assert r["summary"] and r["stage"].split(",")[0] in ("static", "dynamic"), r


def test_readme_table_is_the_rows():
    text = open(os.path.join(HERE, "README.md"), encoding="utf-8").read()
    _, table, _ = checks_table.split_readme(text)
    assert table == checks_table.render(ROWS), (
        "README.md's table of checks differs from checks.def: "
        "python3 tools/certify/checks_table.py --write tools/certify/README.md")


def named_checks(line):
    """The check ids a source line names (an #include names a file)."""
    return [] if line.lstrip().startswith("#include") else CHECK_LITERAL.findall(line)


def test_every_check_a_source_names_is_a_row():
    ids = {r["id"] for r in ROWS}
    strays = []
    for path in sources():
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            strays += [f"{os.path.basename(path)}:{n}: {c}" for c in named_checks(line) if c not in ids]
    assert not strays, "check ids that are not rows of checks.def:\n" + "\n".join(strays)


def test_a_check_that_is_no_row_is_seen():
    assert named_checks('add(f, "scale", "probe.legacy-strides", "CDY-020", "")') == ["probe.legacy-strides"]
    assert named_checks('#include "probe.h"') == named_checks('"manifest." "probe_" x') == []


def test_every_clause_is_in_spec():
    spec = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(SPEC, "*.md")))
    clauses = set(re.findall(r"^([A-Z]{2,4}-\d{3}) \[", spec, re.M))
    assert len(clauses) > 100
    for r in ROWS:
        for c in checks_table.allowed_clauses(r) - {""}:
            assert c in clauses, f"{r['id']} names {c}, which spec/ does not define"


def test_a_crash_is_as_hard_as_its_clause():
    # A MUST clause crashes to FAIL, a SHOULD one to NONSTRICT or WARN.
    spec = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(SPEC, "*.md")))
    for r in ROWS:
        if r["crash_clause"]:
            level = re.search(r"^%s \[(MUST|SHOULD)\]" % r["crash_clause"], spec, re.M).group(1)
            assert (r["crash_verdict"] == "CERT_FAIL") == (level == "MUST"), r


if __name__ == "__main__":
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
