#!/usr/bin/env python3
"""The conformance report: verdicts per clause from the JUnit XML of a test run.

One tool for every place a run is summarised: `bazel run //tools:report`
(after any `bazel test`), the suite test //conformance:suite_test (which
calls `judge` on the area binaries it ran) and .ci/run.

Verdicts of a test case:
  PASS       the test passed
  FAIL       a MUST clause broken (or a test that names no clause failed)
  NONSTRICT  a SHOULD clause broken
  SKIP       the test did not run; the reason is kept
  CRASH      the test process died (signal, exit) or the library did not load
  TIMEOUT    the test process hung
  KNOWN      FAIL/NONSTRICT/CRASH/TIMEOUT of a test that spec/deviations.md
             records for this implementation and release
  LATER      FAIL/NONSTRICT/CRASH/TIMEOUT of a clause that came after the
             release under test (its "(since X)" is later): listed, not
             counted in the MUST/SHOULD totals, not unexpected
Unexpected = FAIL, NONSTRICT, CRASH, TIMEOUT. Exit status 1 when any.
A library that does not load is one CRASH, and nothing else is judged.

Every test that did not pass or skip carries `rerun`: the `bazel test`
command that runs that one test again against the same implementation,
under the same configuration (the run's properties tvmffi_impl,
tvmffi_release and bazel_flags, set by conformance/suite_test.py).

The release a run is judged as: TVMFFI_RELEASE when set (the matrix sets
it), else the latest release of spec/releases.md that reports the library's
TVMFFIGetVersion; the bundled reference, and a version that table does not
know, are judged by every clause.

.ci/run sums its steps' JSON with `report.py --ci-totals DIR`.
"""
import argparse
import datetime
import html
import json
import os
import re
import shlex
import sys
import xml.etree.ElementTree as ET

try:
    from tools import report_sources
except ImportError:  # run as a script: tools/ is the script's folder
    import report_sources

SUITE = "//conformance:suite_test"
UNEXPECTED = ("FAIL", "NONSTRICT", "CRASH", "TIMEOUT")
# Worst first: the verdict of a clause is the worst verdict of its tests.
SEVERITY = ["CRASH", "TIMEOUT", "FAIL", "NONSTRICT", "KNOWN", "LATER", "SKIP", "PASS"]
# Row colours of the HTML pages (this report and tools/matrix's).
COLOURS = {"PASS": "#d8f0d8", "FAIL": "#f6c6c6", "NONSTRICT": "#fde2b8", "SKIP": "#e4e4e4",
           "CRASH": "#e8a0a0", "TIMEOUT": "#e8b0d8", "KNOWN": "#cfe0f7", "LATER": "#ece0f4"}
# What each verdict means: the HTML legend and the terminal's counts.
MEANING = {
    "PASS": "the test passed",
    "FAIL": "a MUST clause broken",
    "NONSTRICT": "a SHOULD clause broken",
    "CRASH": "the test process died, or the library did not load",
    "TIMEOUT": "the test process hung",
    "KNOWN": "a failure spec/deviations.md records for this implementation's release: "
             "listed, not unexpected (never for the bundled reference)",
    "LATER": "a failure of a clause newer than the release under test (its \"(since X)\" is later): "
             "listed, not counted in MUST/SHOULD, not unexpected",
    "SKIP": "the test did not run; the reason says why (a function the library does not export, no GPU, ...)",
}
SINCE = re.compile(r"\(since (\d+\.\d+\.\d+(?:\.post\d+)?)\b")
# "(since none)": no release is known to meet the clause (spec/README.md);
# every release is judged by it.
NO_SINCE = re.compile(r"\(since none\b")
CLAUSE_LINE = re.compile(r"^([A-Z]{2,5}-\d{3}) \[(MUST|SHOULD|WITHDRAWN)\] (.*)$")
CLAUSE_IN_NAME = re.compile(r"(?:^|test_)([A-Z]{2,5})_(\d{3})(?:_|$)")
TEST_DEF = re.compile(r"\b(?:Test|TEST|ParameterizedTest)\(\s*([a-z_0-9]+)\s*,\s*([A-Za-z_0-9]+)")
PY_DEF = re.compile(r"^def (test_[A-Za-z0-9_]+)", re.M)
EXPECTED_GOT = re.compile(r"^(?:(?P<what>.*?):\s*)?expected (?P<exp>.+?),\s*(?:got|but got|but) (?P<act>.+)$",
                          re.I | re.S)


# ---------------------------------------------------------------- the spec

def read_clauses(spec_dir):
    """{ID: {id, level, text, area, file, line}} from spec/*.md."""
    clauses = {}
    for name in sorted(os.listdir(spec_dir)):
        if not name.endswith(".md") or name in ("README.md", "deviations.md"):
            continue
        with open(os.path.join(spec_dir, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = CLAUSE_LINE.match(line.rstrip("\n"))
                if m:
                    since = SINCE.search(m.group(3))
                    clauses[m.group(1)] = {"id": m.group(1), "level": m.group(2), "text": m.group(3),
                                           "area": name[:-3], "file": "spec/" + name, "line": number,
                                           "since": since.group(1) if since else "",
                                           "no_since": bool(NO_SINCE.search(m.group(3)))}
    return clauses


def version_key(v):
    """0.1.8.post2 sorts after 0.1.8.post1 and before 0.1.9 (as in tools/releases)."""
    nums = [int(x) for x in re.findall(r"\d+", v)]
    return nums + [-1] * (5 - len(nums))


def read_releases(spec_dir):
    """[(release, reported version)] from spec/releases.md, oldest first."""
    path = os.path.join(spec_dir, "releases.md")
    found = []
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^\| (\d[^ |]*) \| (\d[^ |]*) \|", line)
                if m:
                    found.append((m.group(1), m.group(2)))
    return sorted(found, key=lambda r: version_key(r[0]))


def release_of(impl, releases):
    """The release a run is judged as ("" = by every clause)."""
    if not impl or impl.get("bundled_reference") == "1":
        return ""
    if impl.get("release"):
        return impl["release"]
    if os.environ.get("TVMFFI_RELEASE"):
        return os.environ["TVMFFI_RELEASE"]
    reporting = [r for r, reported in releases or [] if reported == impl.get("version")]
    return reporting[-1] if reporting else ""


def is_later(clause, release):
    """Did the clause come after the release?"""
    return bool(release and clause.get("since")) and version_key(clause["since"]) > version_key(release)


def read_deviations(path):
    """[(reported version, set of test names)], one per '## ... (reports X)' section."""
    sections = []
    if not path or not os.path.exists(path):
        return sections
    current = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                m = re.search(r"reports (\d+\.\d+\.\d+)", line)
                current = (m.group(1) if m else None, line[3:].strip(), set())
                sections.append(current)
            elif current and line.strip().startswith("Failing tests:"):
                current[2].update(re.findall(r"`([^`]+)`", line))
    return sections


def recorded_for(sections, impl):
    """Test names recorded as failing for this implementation and release.
    Never any for the bundled reference runtime."""
    if not impl or impl.get("bundled_reference") == "1" or not impl.get("version"):
        return set(), ""
    for version, title, names in sections:
        if version == impl["version"]:
            return names, title
    return set(), ""


def find_test_sources(root):
    """{test name: 'path:line'} for Criterion and pytest tests under root."""
    where = {}
    for folder in ("conformance", "kernels", "fuzz", "tools", "reference"):
        base = os.path.join(root, folder)
        for dirpath, _dirs, files in os.walk(base):
            for name in files:
                if not name.endswith(("_test.c", "_test.py")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                try:
                    text = open(path, encoding="utf-8", errors="replace").read()
                except OSError:
                    continue
                pattern = PY_DEF if name.endswith(".py") else TEST_DEF
                for m in pattern.finditer(text):
                    test = m.group(m.lastindex)
                    where.setdefault(test, f"{rel}:{text.count(chr(10), 0, m.start()) + 1}")
    return where


# ------------------------------------------------------------ reading XML

def target_of(testlogs, folder):
    rel = os.path.relpath(folder, testlogs).replace(os.sep, "/")
    package, _, name = rel.rpartition("/")
    return f"//{package}:{name}"


def read_testlogs(testlogs, targets=None):
    """Yields (target, xml path, log path) for every test.xml under testlogs."""
    for root, _dirs, files in os.walk(testlogs):
        if "test.xml" not in files:
            continue
        target = target_of(testlogs, root)
        if targets and target not in targets:
            continue
        yield target, os.path.join(root, "test.xml"), os.path.join(root, "test.log")


def properties_of(node):
    props = {}
    for p in node.iter("property"):
        props[p.get("name", "")] = p.get("value", "")
    return props


def log_says_timeout(log):
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4000))
            return "Test timed out" in f.read()
    except OSError:
        return False


def raw_cases(target, xml_path, log_path=None):
    """Yields dicts {target, suite, name, status, message, detail, impl} from one XML file.
    status: PASSED FAILED SKIPPED CRASHED TIMEOUT LOAD_FAILED."""
    try:
        tree = ET.parse(xml_path)
    except (ET.ParseError, OSError) as exc:
        yield {"target": target, "suite": "", "name": "(test.xml)", "status": "CRASHED",
               "message": f"unreadable test.xml: {exc}", "detail": "", "impl": {}}
        return
    top = tree.getroot().find("properties")
    top_impl = properties_of(top) if top is not None else {}
    for suite in tree.iter("testsuite"):
        suite_name = suite.get("name", "")
        props = suite.find("properties")
        impl = (properties_of(props) if props is not None else {}) or top_impl
        for case in suite.findall("testcase"):
            if case.get("verdict"):
                # Already judged (the suite test's merged XML): the area
                # target and the suite::name are in the case.
                suite_part, _, name = case.get("name", "").rpartition("::")
                rec = case_record(case.get("classname", target), suite_part, case, None)
                rec["name"] = name
                yield dict(rec, impl=impl)
            else:
                yield dict(case_record(target, suite_name, case, log_path), impl=impl)


def case_record(target, suite_name, case, log_path):
    name = case.get("name", "")
    status = (case.get("status") or "").upper()
    # Bazel's own XML (a test that writes none) names the suite after the target.
    if suite_name.startswith("/") or "/" in suite_name or suite_name == target:
        suite_name = ""
    rec = {"target": target, "suite": suite_name, "name": name, "message": "", "detail": ""}
    skipped, failure, error = case.find("skipped"), case.find("failure"), case.find("error")
    if status == "LOAD_FAILED":
        rec.update(status="LOAD_FAILED", message=(error.get("message") if error is not None else ""))
    elif error is not None and error.get("type") == "timeout" or status == "TIMEOUT":
        rec.update(status="TIMEOUT", message=(error.get("message") if error is not None else "timed out"))
    elif error is not None or status == "CRASHED":
        node = error if error is not None else case
        rec.update(status="CRASHED", message=node.get("message") or "", detail=(node.text or "").strip())
    elif failure is not None or status == "FAILED":
        node = failure if failure is not None else case
        rec.update(status="FAILED", message=node.get("message") or "", detail=(node.text or "").strip())
    elif skipped is not None or status == "SKIPPED":
        reason = (skipped.get("message") or skipped.text or "") if skipped is not None else ""
        rec.update(status="SKIPPED", message=reason.strip() or "skipped (no reason given)")
    else:
        rec["status"] = "PASSED"
    if case.get("raw_status"):
        # Written by an earlier judge (the suite test's merged XML): the
        # outcome as the test binary reported it, before judging.
        rec.update(status=case.get("raw_status"), message=case.get("raw_message", ""),
                   detail=case.get("raw_detail", ""))
    if rec["status"] in ("FAILED", "CRASHED") and not suite_name and log_path and log_says_timeout(log_path):
        rec.update(status="TIMEOUT", message="Bazel's test timeout killed the test")
    return rec


# ------------------------------------------------------------- verdicts

def clause_of(name):
    m = CLAUSE_IN_NAME.search(name)
    return f"{m.group(1)}-{m.group(2)}" if m else ""


def expected_actual(message, detail, requirement):
    """h2spec-style Expected/Actual from an assertion message."""
    first = (detail.splitlines()[0] if detail else message) or message
    text = re.sub(r"^[^:\s]+:\d+: ", "", first)
    m = EXPECTED_GOT.match(text)
    if m:
        what = (m.group("what") + ": ") if m.group("what") else ""
        return what + m.group("exp"), m.group("act")
    return requirement or "the test's assertions hold", text or message


def rerun_command(rec):
    """The `bazel test` command that runs this one test again against the
    same implementation under the same configuration."""
    impl = rec.get("impl") or {}
    cmd = ["bazel", "test", rec["target"]] + impl.get("bazel_flags", "").split()
    which = impl.get("tvmffi_impl", "")
    if not which and impl.get("bundled_reference") != "1":
        which = impl.get("implementation", "")  # the matrix: a release's library in the cache
    if which and which not in ("reference", "upstream") and "--config=upstream" not in cmd:
        cmd.append(f"--test_env=TVMFFI_IMPL={which}")
    release = impl.get("tvmffi_release") or ("" if "tvmffi_impl" in impl else impl.get("release", ""))
    if release:
        cmd.append(f"--test_env=TVMFFI_RELEASE={release}")
    if rec["suite"] == "pytest":
        cmd += ["--test_arg=-k", f"--test_arg={rec['name']}"]
    elif rec["suite"]:
        cmd.append(f"--test_arg=--filter={rec['suite']}/{rec['name']}")
    return " ".join(shlex.quote(part) for part in cmd)


def judge(cases, clauses, deviations, releases=None):
    """Adds verdict, clause, level, text, expected/actual, note, release and
    later to each case."""
    out = []
    for rec in cases:
        rec = dict(rec)
        release = release_of(rec.get("impl"), releases)
        if release:
            rec["impl"] = dict(rec["impl"], release=release)
        full = f"{rec['suite']}::{rec['name']}" if rec["suite"] else rec["name"]
        rec["test"] = full
        cid = clause_of(rec["name"])
        clause = clauses.get(cid, {})
        rec.update(clause=cid, level=clause.get("level", ""), text=clause.get("text", ""),
                   clause_file=clause.get("file", ""), clause_line=clause.get("line", 0),
                   area=clause.get("area", rec["target"].split(":")[0].lstrip("/")))
        recorded, section = recorded_for(deviations, rec.get("impl"))
        status = rec["status"]
        rec["note"] = ""
        rec["release"], rec["later"] = release, is_later(clause, release)
        if status == "PASSED":
            rec["verdict"] = "PASS"
            if full in recorded:
                rec["note"] = (f"recorded as failing in spec/deviations.md ({section}) but passes: "
                               "retire the entry if this release no longer deviates")
        elif status == "SKIPPED":
            rec["verdict"] = "SKIP"
        else:
            if status == "LOAD_FAILED":
                verdict = "CRASH"
            elif status == "CRASHED":
                verdict = "CRASH"
            elif status == "TIMEOUT":
                verdict = "TIMEOUT"
            else:
                verdict = "NONSTRICT" if rec["level"] == "SHOULD" else "FAIL"
            if full in recorded:
                rec["note"] = f"recorded in spec/deviations.md ({section}) as {verdict}"
                verdict = "KNOWN"
            if rec["later"] and status != "LOAD_FAILED":
                rec["note"] = (f"{cid} is since {clause['since']}, later than {release}: "
                               f"{verdict} not counted")
                verdict = "LATER"
            rec["verdict"] = verdict
            rec["expected"], rec["actual"] = expected_actual(rec["message"], rec["detail"], rec["text"])
            rec["rerun"] = rerun_command(rec)
        out.append(rec)
    return one_load_failure(out)


def one_load_failure(records):
    """A library that does not load: every binary of the suite said so, and
    what else ran (the Python tests skip for any library but upstream's)
    judged nothing. One CRASH per library stands for its run; records of
    other tests (a CI report of every target) stay."""
    failed = {}
    for r in records:
        if r["status"] == "LOAD_FAILED":
            failed.setdefault(r["message"], r)
    if not failed:
        return records
    gone = {(r.get("impl") or {}).get("implementation") for r in failed.values()}
    kept = [r for r in records if r["status"] != "LOAD_FAILED" and not r["target"].startswith("//conformance:")
            and (r.get("impl") or {}).get("implementation") not in gone]
    for r in failed.values():
        # Any one binary reruns it: each stops at the load.
        row = dict(r, clause="", level="", text="the library under test loads", area="load", suite="",
                   name="implementation_loads", test="the library loads", expected="the library loads",
                   actual=r["message"])
        kept.append(dict(row, rerun=rerun_command(row)))
    return kept


def load_failures(records):
    """The distinct 'cannot load' messages (a library that does not load)."""
    return sorted({r["message"] for r in records if r["status"] == "LOAD_FAILED"})


def clause_rows(records):
    """One row per clause (worst verdict of its tests); tests naming no clause
    (and a library that did not load) get a row each."""
    rows = {}
    for r in records:
        key = r["clause"] or f"{r['target']} {r['test']}"
        row = rows.setdefault(key, {"clause": r["clause"], "level": r["level"], "text": r["text"],
                                    "area": r["area"], "verdict": "PASS", "tests": [],
                                    "later": r.get("later", False)})
        row["tests"].append(r)
        if SEVERITY.index(r["verdict"]) < SEVERITY.index(row["verdict"]):
            row["verdict"] = r["verdict"]
    return [rows[k] for k in sorted(rows)]


def totals(records, rows):
    """Counts of test cases (passed, skipped, known, failed = unexpected, and
    `cases` by verdict) and of clauses (MUST, SHOULD, later, and `clauses`
    by verdict): the summary line says which is which."""
    cases = {v: sum(r["verdict"] == v for r in records) for v in SEVERITY}
    t = {"passed": cases["PASS"], "skipped": cases["SKIP"], "known": cases["KNOWN"],
         "failed": sum(cases[v] for v in UNEXPECTED), "cases": cases,
         "clauses": {v: sum(row["verdict"] == v for row in rows) for v in SEVERITY}}
    # A release is judged by the clauses that existed at it; the later
    # clauses it breaks are counted apart.
    for level in ("MUST", "SHOULD"):
        mine = [row for row in rows if row["level"] == level and not row.get("later")]
        t[level] = {"passed": sum(row["verdict"] == "PASS" for row in mine), "total": len(mine)}
    t["later"] = t["clauses"]["LATER"]
    t["release"] = next((r["release"] for r in records if r.get("release")), "")
    t["unexpected"] = t["failed"]
    return t


def summary_line(t, load_errors=()):
    """The run in one line: clauses for MUST and SHOULD, test cases for the rest."""
    line = (f"MUST {t['MUST']['passed']}/{t['MUST']['total']}, "
            f"SHOULD {t['SHOULD']['passed']}/{t['SHOULD']['total']} clauses passed; "
            f"test cases: {t['passed']} passed, {t['skipped']} skipped, {t['known']} known deviations, "
            f"{t['unexpected']} unexpected")
    if t.get("release"):
        line += f"; judged as {t['release']}: {t.get('later', 0)} later clauses broken"
    if load_errors:
        line += " (the library did not load: nothing was checked)"
    return line


def implementation_of(records):
    return next((r["impl"] for r in records if (r.get("impl") or {}).get("implementation")), {})


def implementation_name(impl):
    if impl.get("bundled_reference") == "1":
        return "the bundled reference runtime"
    if impl.get("tvmffi_impl") == "upstream":
        return "the pinned upstream library (--config=upstream)"
    return impl.get("implementation", "?")


def implementation_line(records):
    """What was checked: the library, its version, and how much of the C
    API it exports (the first line of the summary)."""
    impl = implementation_of(records)
    if not impl:
        return ""
    name = implementation_name(impl)
    if load_failures(records):
        return f"implementation: {name}: did not load (the CRASH above)"
    line = f"implementation: {name}, TVMFFIGetVersion {impl.get('version') or 'not exported'}"
    if impl.get("api_total"):
        exported = int(impl.get("api_exported") or 0)
        line += (f", exports {exported} of the {impl['api_total']} TVMFFI* functions of apache-tvm-ffi "
                 f"{impl.get('api_release', '')}".rstrip())
        if exported == 0:
            line += ": not a TVM-FFI runtime"
        elif impl.get("api_missing"):
            missing = impl["api_missing"].split(",")
            line += f" (lacks {', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''})"
    return line


# ------------------------------------------------------------- printing

def print_test(r, out):
    print(f"    {r['verdict']:<9} {r['target']} {r['test']}", file=out)
    if r["verdict"] == "SKIP":
        print(f"        Reason:   {r['message']}", file=out)
    elif r["verdict"] != "PASS":
        print(f"        Expected: {one_line(r['expected'])}", file=out)
        print(f"        Actual:   {one_line(r['actual'])}", file=out)
        print(f"        Rerun:    {r['rerun']}", file=out)
    if r["note"]:
        print(f"        Note:     {r['note']}", file=out)


def print_row(row, width, out):
    name = row["clause"] or ("(load)" if row["area"] == "load" else
                             row["tests"][0]["target"] + " " + row["tests"][0]["test"])
    print(f"{row['verdict']:<9} {name:<{width}} {row['level'] or '-':<6} {row['text'][:110]}", file=out)
    for r in row["tests"]:
        if r["verdict"] != "PASS" or r["note"]:
            print_test(r, out)


def print_counts(records, rows, t, out, skip_reasons=5):
    """The short form of what is not unexpected: known deviations, later
    clauses and skips as counts (each one is in the report)."""
    clauses = t["clauses"]
    if t["known"]:
        print(f"known deviations: {t['known']} test cases ({clauses['KNOWN']} clauses) fail as "
              "spec/deviations.md records for this release: not unexpected; the report lists each", file=out)
    if t["later"]:
        print(f"later clauses: {t['later']} clauses newer than {t['release']} fail (LATER: not counted, "
              "not unexpected); the report lists each", file=out)
    reasons = {}
    for r in records:
        if r["verdict"] == "SKIP":
            reasons[r["message"]] = reasons.get(r["message"], 0) + 1
    if reasons:
        print(f"skipped: {t['skipped']} test cases, for {len(reasons)} "
              f"{'reason' if len(reasons) == 1 else 'reasons'}:", file=out)
        ranked = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        for reason, n in ranked[:skip_reasons]:
            print(f"    {n:4}  {one_line(reason, 160)}", file=out)
        if len(ranked) > skip_reasons:
            print(f"    ...   {len(ranked) - skip_reasons} more reasons, each in the report", file=out)


def print_report(records, rows, t, out=sys.stdout, only_problems=False, label="", where=""):
    """The table (every clause, or with only_problems the unexpected ones in
    full and the rest as counts), then the summary: the implementation line
    and the summary line, last."""
    width = max([len(row["clause"]) for row in rows] + [9])
    for row in rows:
        if only_problems and row["verdict"] not in UNEXPECTED:
            continue
        print_row(row, width, out)
    if only_problems:
        print_counts(records, rows, t, out)
    if where:
        print(f"report: {where}", file=out)
    if label:
        print(f"{label}: {t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped, "
              f"{t['known']} known deviations", file=out)
    impl = implementation_line(records)
    if impl:
        print(impl, file=out)
    print(summary_line(t, load_failures(records)), file=out)


def one_line(text, limit=300):
    text = " | ".join(s.strip() for s in (text or "").splitlines() if s.strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------- writing

def write_json(path, records, rows, t, label):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"label": label, "implementation": implementation_line(records),
                   "summary": summary_line(t, load_failures(records)), "totals": t,
                   "load_errors": load_failures(records),
                   "clauses": [{k: v for k, v in row.items() if k != "tests"} |
                               {"tests": [f"{r['target']} {r['test']}" for r in row["tests"]]}
                               for row in rows],
                   "cases": records}, f, indent=1)


def write_junit(path, records, label="conformance"):
    """Merged JUnit XML. KNOWN cases carry no <failure> (they do not fail a
    run); their outcome is in attributes and <system-out>."""
    suites = ET.Element("testsuites", name=label)
    impl = implementation_of(records) or next((r["impl"] for r in records if r.get("impl")), {})
    if impl:
        props = ET.SubElement(suites, "properties")
        for k, v in impl.items():
            ET.SubElement(props, "property", name=k, value=v)
    by_target = {}
    for r in records:
        by_target.setdefault(r["target"], []).append(r)
    for target in sorted(by_target):
        s = ET.SubElement(suites, "testsuite", name=target, tests=str(len(by_target[target])))
        for r in by_target[target]:
            e = ET.SubElement(s, "testcase", name=r["test"], classname=target, verdict=r["verdict"],
                              clause=r["clause"], level=r["level"])
            body = (f"Requirement: {r['clause']} [{r['level']}] {r['text']}\n" if r["clause"] else "")
            if r["verdict"] not in ("PASS", "SKIP"):
                e.set("rerun", r["rerun"])
                body += f"Expected: {r['expected']}\nActual: {r['actual']}\nRerun: {r['rerun']}\n{r['detail']}"
            if r["status"] != "PASSED":
                e.set("raw_status", r["status"])
                e.set("raw_message", r["message"][:2000])
                e.set("raw_detail", r["detail"][:4000])
            if r["verdict"] == "SKIP":
                ET.SubElement(e, "skipped", message=r["message"])
            elif r["verdict"] in ("KNOWN", "LATER"):
                ET.SubElement(e, "system-out").text = body + f"\n{r['note']}"
            elif r["verdict"] in ("CRASH", "TIMEOUT"):
                ET.SubElement(e, "error", message=r["message"][:2000], type=r["verdict"].lower()).text = body
                if r["status"] == "LOAD_FAILED":
                    e.set("status", "LOAD_FAILED")
            elif r["verdict"] in ("FAIL", "NONSTRICT"):
                ET.SubElement(e, "failure", message=r["message"][:2000], type=r["verdict"]).text = body
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


# The HTML pages (this report and tools/matrix's) share their look and filters.
PAGE_STYLE = ("body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
              "h1{font-size:20px;margin:0 0 .3em}.sum{font-size:17px;font-weight:600;margin:.4em 0}"
              ".meta{color:#555}table{border-collapse:collapse;width:100%;margin-top:.8em}"
              "th,td{border-bottom:1px solid #ccc;padding:4px 6px;text-align:left;vertical-align:top}"
              "th{background:#333;color:#fff;position:sticky;top:0}td.v{font-weight:700;white-space:nowrap}"
              "td.id{white-space:nowrap;font-family:monospace}.t{font-family:monospace;font-size:12px;color:#333}"
              ".why{font-family:monospace;font-size:12px;white-space:pre-wrap;color:#600}"
              ".load{background:#e8a0a0;padding:.5em;font-weight:600}"
              "select,input{margin-right:1em;font-size:14px}.chip{display:inline-block;padding:1px 8px;"
              "margin-right:6px;border-radius:3px}")


def html_head(title, summary, bad, meta, extra_style=""):
    """The page up to its body's first lines: title, summary line (red when bad), meta lines."""
    esc = html.escape
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
           f"<style>{PAGE_STYLE}{extra_style}</style></head><body>",
           f"<h1>{esc(title)}</h1><div class='sum' style='color:{'#a00' if bad else '#060'}'>"
           f"{esc(summary)}</div>"]
    out += [f"<div class='meta'>{esc(m)}</div>" for m in meta]
    return out


def html_chips(label, counts):
    return (f"<div style='margin-top:.6em'>{html.escape(label)}: " + "".join(
        f"<span class='chip' style='background:{COLOURS[v]}'>{v} {n}</span>" for v, n in counts.items())
        + "</div>")


def html_legend(verdicts=None):
    """What each verdict means (LATER and KNOWN above all, which no other tool has)."""
    return ("<details class='legend'><summary>What the verdicts mean</summary><dl>" + "".join(
        f"<dt><span class='chip' style='background:{COLOURS[v]}'>{v}</span></dt><dd>{html.escape(MEANING[v])}</dd>"
        for v in (verdicts or COLOURS)) + "</dl><p>Unexpected: FAIL, NONSTRICT, CRASH, TIMEOUT; the run "
        "fails only on those.</p></details>")


def html_filters(areas):
    """Area, level, verdict and text filters over the rows of the page's table
    (rows carry data-area, data-level and data-verdict: space-separated words)."""
    esc = html.escape
    return ("<p>Area <select id='area'><option value=''>all</option>" +
            "".join(f"<option>{esc(a)}</option>" for a in areas) + "</select>"
            "Level <select id='level'><option value=''>all</option><option>MUST</option>"
            "<option>SHOULD</option></select>Verdict <select id='verdict'><option value=''>all</option>" +
            "".join(f"<option>{v}</option>" for v in COLOURS) + "</select>"
            "Text <input id='q' size='24' placeholder='clause or words'> "
            "<span id='count'></span></p>"
            "<p id='none' style='display:none;font-weight:600'>No row matches these filters.</p>")


HTML_FILTER_SCRIPT = (
    "<script>"
    "const f=['area','level','verdict'].map(i=>document.getElementById(i)),"
    "q=document.getElementById('q');"
    "function apply(){let n=0;const s=q.value.toLowerCase();"
    "for(const tr of document.querySelectorAll('tbody tr')){"
    "const ok=f.every(e=>!e.value||(' '+tr.dataset[e.id]+' ').includes(' '+e.value+' '))&&"
    "(!s||tr.textContent.toLowerCase().includes(s));tr.style.display=ok?'':'none';n+=ok}"
    "document.getElementById('count').textContent=n+' of '+"
    "document.querySelectorAll('tbody tr').length+' rows';"
    "document.getElementById('none').style.display=n?'none':''}"
    "f.concat([q]).forEach(e=>e.addEventListener('input',apply));"
    "for(const kv of location.hash.slice(1).split('&')){const [k,v]=kv.split('=');"
    "const e=document.getElementById(k);if(e&&v)e.value=decodeURIComponent(v)}apply();"
    "</script></body></html>")


def spec_link(clause, links):
    """The clause ID, linking its text in the spec (links: report_sources.Links)."""
    if not clause or not clause.get("id"):
        return "&mdash;"
    return f"<a href='{html.escape(links.clause(clause))}'>{html.escape(clause['id'])}</a>"


def clause_place(row):
    """{id, file, line} of a row's clause, from any of its judged tests."""
    r = row["tests"][0]
    return {"id": row["clause"], "file": r.get("clause_file", f"spec/{row['area']}.md"),
            "line": r.get("clause_line", 0)}


def html_test(r, sources, links):
    esc = html.escape
    src = sources.get(r["name"], "")
    link = f"<a href='{esc(links.source(src))}'>{esc(src)}</a>" if src else ""
    line = (f"<div class='t'><b>{r['verdict']}</b> {esc(r['target'])} {esc(r['test'])}"
            f" {('&middot; ' + link) if link else ''}</div>")
    if r["verdict"] == "SKIP":
        line += f"<div class='why'>Reason: {esc(r['message'])}</div>"
    elif r["verdict"] != "PASS":
        expected = ("the requirement above" if r["expected"] == r["text"] else one_line(r["expected"], 400))
        line += (f"<div class='why'>Expected: {esc(expected)}\n"
                 f"Actual:   {esc(one_line(r['actual'], 400))}</div>"
                 f"<div class='rerun'>Rerun: <code>{esc(r['rerun'])}</code></div>")
    if r["note"]:
        line += f"<div class='why' style='color:#035'>{esc(r['note'])}</div>"
    return line


def write_html(path, records, rows, t, sources, workspace, label, base_url=""):
    """The page, and beside it (report_sources) the spec and test sources it
    links, unless base_url names where they are."""
    links = report_sources.Links(os.path.dirname(os.path.abspath(path)), workspace, base_url)
    areas = sorted({row["area"] for row in rows})
    esc = html.escape
    impl = implementation_line(records)
    out = html_head("TVM-FFI conformance report", summary_line(t, load_failures(records)), t["unexpected"],
                    ([impl] if impl else []) + [f"{label or 'conformance run'} \u00b7 generated "
                                                f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}"],
                    ".rerun{font-size:12px}.rerun code{background:#f4f4f4;padding:1px 4px;user-select:all}"
                    ".legend dt{float:left;clear:left;width:8em}.legend dd{margin-left:9em}")
    out.append(html_chips("clauses (a row each, its worst verdict)", t["clauses"]))
    out.append(html_chips("test cases (the summary's counts)", t["cases"]))
    out.append(html_legend())
    out.append(html_filters(areas))
    out.append("<table><thead><tr><th>verdict</th><th>clause</th><th>level</th><th>area</th>"
               "<th>requirement and tests</th></tr></thead><tbody>")
    # Worst first: what a vendor has to act on is at the top.
    for row in sorted(rows, key=lambda r: (SEVERITY.index(r["verdict"]), r["clause"] or "~")):
        tests = "".join(html_test(r, sources, links) for r in row["tests"])
        out.append(f"<tr data-area='{esc(row['area'])}' data-level='{esc(row['level'])}' "
                   f"data-verdict='{row['verdict']}' style='background:{COLOURS[row['verdict']]}'>"
                   f"<td class='v'>{row['verdict']}</td><td class='id'>"
                   f"{spec_link(clause_place(row) if row['clause'] else None, links)}</td>"
                   f"<td>{esc(row['level'] or '-')}</td><td>{esc(row['area'])}</td>"
                   f"<td>{esc(row['text'])}{tests}</td></tr>")
    out.append("</tbody></table>" + HTML_FILTER_SCRIPT)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    links.write()


# ------------------------------------------------------------- main

def build(records_raw, spec_dir):
    clauses = read_clauses(spec_dir)
    deviations = read_deviations(os.path.join(spec_dir, "deviations.md"))
    records = judge(records_raw, clauses, deviations, read_releases(spec_dir))
    rows = clause_rows(records)
    return records, rows, totals(records, rows)


def collect(testlogs, targets=None):
    records = []
    for target, xml_path, log_path in read_testlogs(testlogs, targets):
        records.extend(raw_cases(target, xml_path, log_path))
    return records


def emit(records, rows, t, args, workspace, out=sys.stdout, where=""):
    """Writes the reports asked for, then prints the table and the summary
    (`where`: what to say of the report's whereabouts; default its path)."""
    if args.json:
        write_json(args.json, records, rows, t, args.label)
    if args.junit:
        write_junit(args.junit, records, args.label or "conformance")
    if args.html:
        sources = find_test_sources(workspace) if workspace else {}
        write_html(args.html, records, rows, t, sources, workspace, args.label,
                   getattr(args, "source_url", "") or os.environ.get("CONFORMANCE_SOURCE_URL", ""))
    print_report(records, rows, t, out=out, only_problems=args.problems_only, label=args.label,
                 where=where or args.html or "")
    return 1 if t["unexpected"] or not records else 0


def ci_totals(folder):
    """.ci/run's summary: one line per step's JSON, then "passed failed skipped known"."""
    total = {"passed": 0, "failed": 0, "skipped": 0, "known": 0}
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            data = json.load(f)
        t = data["totals"]
        print(f"  {name[:-5]:10} {t['passed']:5} passed {t['failed']:4} failed {t['skipped']:4} skipped "
              f"{t['known']:4} known deviations | {data['summary']}")
        for k in total:
            total[k] += t[k]
    print(" ".join(str(total[k]) for k in ("passed", "failed", "skipped", "known")))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--ci-totals"] and len(argv) == 2:
        return ci_totals(argv[1])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("testlogs", nargs="?", help="bazel-testlogs folder (default: the workspace's)")
    ap.add_argument("--spec", help="the spec folder (default: the workspace's spec/)")
    ap.add_argument("--label", default="")
    ap.add_argument("--targets", default="", help="comma-separated labels: report exactly these")
    ap.add_argument("--out", help="folder for report.json, report.xml, report.html")
    ap.add_argument("--json")
    ap.add_argument("--junit")
    ap.add_argument("--html")
    ap.add_argument("--all", action="store_true", help="every test.xml under testlogs, not only the suite's")
    ap.add_argument("--problems-only", action="store_true",
                    help="list the unexpected clauses in full and the rest as counts")
    ap.add_argument("--readme", action="store_true",
                    help="write this run's summary into README.md's sample (tools/readme_sample.py)")
    ap.add_argument("--source-url", default="",
                    help="link the spec and sources under this URL (e.g. a repository browser at a commit) "
                         "instead of copies beside the HTML page (also CONFORMANCE_SOURCE_URL)")
    args = ap.parse_args(argv)

    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.getcwd()
    testlogs = args.testlogs or os.path.join(workspace, "bazel-testlogs")
    spec = args.spec or os.path.join(workspace, "spec")
    if os.environ.get("BUILD_WORKSPACE_DIRECTORY") and not args.out and not (args.json or args.junit or args.html):
        args.out = os.path.join(workspace, "conformance-report")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        args.json = args.json or os.path.join(args.out, "report.json")
        args.junit = args.junit or os.path.join(args.out, "report.xml")
        args.html = args.html or os.path.join(args.out, "report.html")
    if not os.path.isdir(testlogs):
        print(f"report: no test logs at {testlogs}: run `bazel test //conformance:all` first")
        return 2
    targets = {t for t in args.targets.split(",") if t}
    if not targets and not args.all:
        # The conformance suite's own result, not whatever older logs of
        # other targets the folder still holds.
        targets = {SUITE}
    records, rows, t = build(collect(testlogs, targets), spec)
    if not records:
        print(f"report: no test results under {testlogs}")
        return 2
    where = f"{args.out}/report.html (with report.json, report.xml)" if args.out else ""
    rc = emit(records, rows, t, args, workspace, where=where)
    if args.readme:
        from tools import readme_sample
        key = readme_sample.write(os.path.join(workspace, "README.md"), records, t)
        print(f"report: README.md's sample summary of the {key} written" if key else
              "report: this run has no README sample (only the reference and --config=upstream, "
              "under the plain configuration)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
