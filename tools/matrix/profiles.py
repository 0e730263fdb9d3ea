"""Version profiles: the release from which each clause holds, read off the
matrix instead of guessed.

A clause's state on one release, from the raw outcomes of its tests:
  holds     every test passed (skips aside), at least one ran
  deviates  a test failed, but each failing test is recorded in
            spec/deviations.md for this release or a later one: the
            recorded departure of that release, not a sign the clause is
            newer than it (upstream deviates, and did before)
  breaks    a test failed that no such entry records
  absent    nothing ran because the library lacks what the test needs (a
            skip saying it "does not export" a function or "does not
            register" a global)
  untested  nothing ran for another reason (the Python tests run upstream's
            own package, so they skip on every other release): no evidence
            either way, passed over

The derived since is the oldest release of the longest run of newest
releases in which the clause holds or deviates (a clause every release
deviates from applies from the first release that has what it tests); a
clause the newest release breaks, or lacks, gets none (the annotation stays
as written).
"""
import re

from tools import report

FAILING = ("FAILED", "CRASHED", "TIMEOUT", "LOAD_FAILED")


def recorded_from(deviations):
    """{test name: newest reported version whose section records it}."""
    newest = {}
    for version, _title, names in deviations:
        if not version:
            continue
        for name in names:
            if name not in newest or report.version_key(version) > report.version_key(newest[name]):
                newest[name] = version
    return newest


def clause_state(tests, reported, recorded):
    """holds, deviates, breaks or absent for one clause's test records on one release."""
    failing = [r for r in tests if r["status"] in FAILING]
    if failing:
        for r in failing:
            full = f"{r['suite']}::{r['name']}" if r["suite"] else r["name"]
            until = recorded.get(full)
            if not until or not reported or report.version_key(until) < report.version_key(reported):
                return "breaks"
        return "deviates"
    if any(r["status"] == "PASSED" for r in tests):
        return "holds"
    lacking = ("does not export", "does not register")
    if any(r["status"] == "SKIPPED" and not any(w in r["message"] for w in lacking) for r in tests):
        return "untested"
    return "absent"


def states(columns, deviations):
    """{clause: {release: state}} over the release columns (not the reference).
    columns: [(release, raw records)], oldest first."""
    recorded = recorded_from(deviations)
    out = {}
    for release, raw in columns:
        by_clause = {}
        reported = ""
        for r in raw:
            reported = reported or (r.get("impl") or {}).get("version", "")
            cid = report.clause_of(r["name"])
            if cid:
                by_clause.setdefault(cid, []).append(r)
        for cid, tests in by_clause.items():
            out.setdefault(cid, {})[release] = clause_state(tests, reported, recorded)
    return out


def derive(per_release, order):
    """(derived since or "", why, floor) from one clause's states, releases
    oldest first. floor: no release before the derived one was tested, so
    the results cannot tell an earlier since from it."""
    run, floor = [], True
    for release in reversed(order):
        state = per_release.get(release, "untested")
        if state == "untested":
            continue
        if state not in ("holds", "deviates"):
            if not run:
                return "", f"{state} on {release}, the newest release that tested it", False
            floor = False
            break
        run.append(release)
    if not run:
        return "", "no release tested it", False
    why = "" if floor else "fails on the release before"
    if floor and run[-1] != order[0]:
        why = f"not tested before {run[-1]}"
    if not any(per_release[r] == "holds" for r in run):
        # The function is there and fails only as recorded: the clause
        # applies (and upstream departs from it) from the first such release.
        why = "no release meets it: each deviates as spec/deviations.md records"
    return run[-1], why, floor


def verdict(annotated, derived, floor=False):
    """What the results say of an annotation: ok, later, earlier, missing or unknown."""
    if not derived:
        return "unknown"
    if not annotated:
        return "missing"
    a, d = report.version_key(annotated), report.version_key(derived)
    if a == d or (floor and a < d):
        return "ok"
    return "later" if d > a else "earlier"


def profile(clauses, columns, deviations):
    """[{clause, level, annotated, derived, verdict, why, states}] for every
    clause the matrix ran, in clause order."""
    order = [release for release, _ in columns]
    found = states(columns, deviations)
    rows = []
    for cid in sorted(found):
        clause = clauses.get(cid)
        if not clause:
            continue
        derived, why, floor = derive(found[cid], order)
        said = verdict(clause.get("since", ""), derived, floor)
        if said == "earlier" and re.search(r"\(since [0-9][^;)]*;", clause["text"]):
            # "(since 0.1.9; before it, ...)": a change the clause explains,
            # which the tests cannot see on the older releases (the old
            # layout reads the same): the annotation stays.
            said, why = "kept", "the annotation records a change the tests cannot see"
        rows.append({"clause": cid, "level": clause["level"], "annotated": clause.get("since", ""),
                     "derived": derived, "verdict": said,
                     "why": why, "states": found[cid]})
    return rows


ANNOTATION = re.compile(r"\((?:since|as of) [0-9][^;)]*")


def fix_line(line, since):
    """The clause line with its since annotation set to `since` (the rest of
    the parenthesis, such as "; before it, ...", kept)."""
    if ANNOTATION.search(line):
        return ANNOTATION.sub(f"(since {since}", line, count=1)
    return line.rstrip("\n") + f" (since {since})" + ("\n" if line.endswith("\n") else "")


def fix_spec(spec_dir, rows, clauses):
    """Rewrites the annotation of every clause whose derived since differs
    from it; returns [(clause, before, after)]."""
    wanted = {r["clause"]: r["derived"] for r in rows if r["verdict"] in ("later", "earlier", "missing")}
    changed = []
    by_file = {}
    for cid, since in wanted.items():
        by_file.setdefault(clauses[cid]["file"], []).append(cid)
    for rel, ids in sorted(by_file.items()):
        path = f"{spec_dir}/{rel.split('/', 1)[1]}"
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        for cid in ids:
            number = clauses[cid]["line"] - 1
            if not lines[number].startswith(cid + " "):
                continue  # the file changed since it was read
            lines[number] = fix_line(lines[number], wanted[cid])
            changed.append((cid, clauses[cid].get("since", ""), wanted[cid]))
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines)
    return sorted(changed)
