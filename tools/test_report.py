#!/usr/bin/env python3
"""Summarise a `bazel test` run from the JUnit XML files Bazel leaves behind.

Reads every test.xml under a testlogs folder and prints a table (one row per
test target: passed / failed / skipped cases), then totals. With
--deviations, failures of tests that spec/deviations.md lists on a
"Failing tests:" line are allowed (reported, not counted as failures), and
listed tests that now pass are reported so their entry can be retired.
--json writes the same facts as JSON; --junit merges all cases into one
JUnit XML file.

Exit status: 0 when no unexpected failure, 1 otherwise.
"""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def read_cases(testlogs):
    """Yields (target, case_name, verdict, message) for every test case."""
    for root, _dirs, files in os.walk(testlogs):
        if "test.xml" not in files:
            continue
        target = "//" + os.path.relpath(root, testlogs).replace(os.sep, "/")
        target = target[: target.rfind("/")] + ":" + target[target.rfind("/") + 1 :]
        try:
            tree = ET.parse(os.path.join(root, "test.xml"))
        except ET.ParseError as exc:
            yield target, "(unreadable test.xml)", "failed", str(exc)
            continue
        for suite in tree.iter("testsuite"):
            suite_name = suite.get("name", "")
            for case in suite.iter("testcase"):
                name = case.get("name", "")
                # Criterion names cases suite::test; Bazel's own XML names the target.
                full = f"{suite_name}::{name}" if suite_name and not suite_name.startswith(("/", "//")) and "/" not in suite_name else name
                verdict, message = verdict_of(case)
                yield target, full, verdict, message


def verdict_of(case):
    status = (case.get("status") or "").upper()
    for tag in ("failure", "error"):
        node = case.find(tag)
        if node is not None:
            return "failed", (node.get("message") or node.text or "").strip()
    if case.find("skipped") is not None or status == "SKIPPED":
        node = case.find("skipped")
        return "skipped", ((node.get("message") if node is not None else "") or "").strip()
    if status in ("FAILED", "ERRORED", "CRASHED"):
        return "failed", status
    return "passed", ""


def allowed_failures(path):
    """Test names listed on 'Failing tests:' lines of deviations.md."""
    allowed = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip().startswith("Failing tests:"):
                allowed.update(re.findall(r"`([^`]+)`", line))
    return allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("testlogs")
    ap.add_argument("--label", default="tests")
    ap.add_argument("--deviations")
    ap.add_argument("--only", default="", help="comma-separated target prefixes to count")
    ap.add_argument("--targets", default="", help="comma-separated labels: count exactly these")
    ap.add_argument("--json")
    ap.add_argument("--junit")
    args = ap.parse_args()

    prefixes = [p for p in args.only.split(",") if p]
    exact = {t for t in args.targets.split(",") if t}
    allowed = allowed_failures(args.deviations) if args.deviations else set()
    rows = {}
    cases = []
    for target, name, verdict, message in read_cases(args.testlogs):
        if prefixes and not any(target.startswith(p) for p in prefixes):
            continue
        if exact and target not in exact:
            continue
        if verdict == "failed" and name in allowed:
            verdict = "deviation"
        cases.append({"target": target, "case": name, "verdict": verdict, "message": message})
        counts = rows.setdefault(target, {"passed": 0, "failed": 0, "skipped": 0, "deviation": 0})
        counts[verdict] += 1

    width = max([len(t) for t in rows] + [6])
    print(f"== {args.label} ==")
    print(f"{'target':<{width}}  passed  failed  skipped  deviation")
    for target in sorted(rows):
        c = rows[target]
        print(f"{target:<{width}}  {c['passed']:6}  {c['failed']:6}  {c['skipped']:7}  {c['deviation']:9}")
    total = {k: sum(r[k] for r in rows.values()) for k in ("passed", "failed", "skipped", "deviation")}
    for case in cases:
        if case["verdict"] == "failed":
            print(f"FAILED     {case['target']} {case['case']}: {case['message'][:300]}")
        elif case["verdict"] == "deviation":
            print(f"DEVIATION  {case['target']} {case['case']} (recorded in spec/deviations.md)")
    seen_passing = {c["case"] for c in cases if c["verdict"] == "passed"}
    for name in sorted(allowed & seen_passing):
        print(f"NOW PASSES {name}: listed in spec/deviations.md; retire the entry")
    print(f"{args.label}: {total['passed']} passed, {total['failed']} failed, "
          f"{total['skipped']} skipped, {total['deviation']} recorded deviations")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"label": args.label, "totals": total, "targets": rows, "cases": cases}, f, indent=1)
    if args.junit:
        suites = ET.Element("testsuites", name=args.label)
        for target in sorted(rows):
            s = ET.SubElement(suites, "testsuite", name=target)
            for case in (c for c in cases if c["target"] == target):
                e = ET.SubElement(s, "testcase", name=case["case"], classname=target)
                if case["verdict"] == "failed":
                    ET.SubElement(e, "failure", message=case["message"][:1000])
                elif case["verdict"] in ("skipped", "deviation"):
                    ET.SubElement(e, "skipped", message=case["verdict"])
        ET.ElementTree(suites).write(args.junit, encoding="utf-8", xml_declaration=True)
    return 1 if total["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
