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
releases in which the clause holds or deviates, provided it holds on one of
them. A clause that holds on no release (each that has what it tests
deviates, or none could test it) has no since: "none", and its spec line
says `(since none)`. A clause the newest release breaks, or lacks, cannot be
dated from the results (the annotation stays as written).

A since is judged only from a run that covers the releases that decide it:
every release from the one before the earlier of the annotation and the
derived since up to the newest (all of them when either is "none"). A run of
a subset of releases judges the clauses whose releases it covers, and says
of the others that it cannot tell.
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


NONE = "none"


def derive(per_release, order):
    """(derived since, "none", or "" when the results cannot date it; why;
    floor) from one clause's states, releases oldest first. floor: no
    release before the derived one was tested, so the results cannot tell
    an earlier since from it."""
    run, floor = [], True
    for release in reversed(order):
        state = per_release.get(release, "untested")
        if state == "untested":
            continue
        if state not in ("holds", "deviates"):
            if not run:
                if not any(per_release.get(r) == "holds" for r in order):
                    return NONE, f"holds on no release ({state} on {release}, the newest that tested it)", False
                return "", f"{state} on {release}, the newest release that tested it", False
            floor = False
            break
        run.append(release)
    if not run:
        return NONE, "no release tested it", False
    if not any(per_release[r] == "holds" for r in run):
        # The releases that have what it tests fail it as recorded: it
        # holds on none of them.
        return NONE, "holds on no release: each that has it fails as spec/deviations.md records", False
    why = "" if floor else "fails on the release before"
    if floor and run[-1] != order[0]:
        why = f"not tested before {run[-1]}"
    # From the first release on, there is nothing earlier to tell apart.
    return run[-1], why, floor and run[-1] != order[0]


def verdict(annotated, derived, floor=False):
    """What the results say of an annotation ("none": holds on no release):
    ok, later, earlier, missing, nowhere (it holds on no release), holds
    (annotated none, it holds from a release) or unknown."""
    if not derived:
        return "unknown"
    if not annotated:
        return "missing"
    if derived == NONE or annotated == NONE:
        return "ok" if derived == annotated else "nowhere" if derived == NONE else "holds"
    a, d = report.version_key(annotated), report.version_key(derived)
    if a == d or (floor and a < d):
        return "ok"
    return "later" if d > a else "earlier"


WRONG = ("later", "earlier", "missing", "nowhere", "holds")


def covered(annotated, derived, order, every):
    """Does the run (releases `order`) cover the releases that decide this
    clause's since, of `every` release there is (oldest first)?"""
    if not every or set(every) <= set(order):
        return True
    dated = [v for v in (annotated, derived) if v and v != NONE]
    if len(dated) < 2 or any(v not in every for v in dated):
        return False
    first = min(every.index(v) for v in dated)
    return set(every[max(first - 1, 0):]) <= set(order)


def annotation_of(clause):
    return NONE if clause.get("no_since") else clause.get("since", "")


def judge_annotation(clause, derived, floor=False):
    """(verdict, why) of a clause's current annotation against a derived since."""
    said = verdict(annotation_of(clause), derived, floor)
    if said == "earlier" and re.search(r"\(since [0-9][^;)]*;", clause["text"]):
        # "(since 0.1.9; before it, ...)": a change the clause explains,
        # which the tests cannot see on the older releases (the old
        # layout reads the same): the annotation stays.
        return "kept", "the annotation records a change the tests cannot see"
    return said, ""


def profile(clauses, columns, deviations, every=None):
    """[{clause, level, annotated, derived, verdict, why, floor, states}] for
    every clause the matrix ran, in clause order. every: all releases there
    are, oldest first (spec/releases.md), to tell what a subset cannot judge."""
    order = [release for release, _ in columns]
    found = states(columns, deviations)
    rows = []
    for cid in sorted(found):
        clause = clauses.get(cid)
        if not clause:
            continue
        derived, why, floor = derive(found[cid], order)
        said, because = judge_annotation(clause, derived, floor)
        if not covered(annotation_of(clause), derived, order, every):
            said, because = "unknown", (f"this run covers {len(order)} of the {len(every)} releases, "
                                        "not all that decide it")
        rows.append({"clause": cid, "level": clause["level"], "annotated": annotation_of(clause),
                     "derived": derived, "verdict": said, "why": because or why, "floor": floor,
                     "states": found[cid]})
    return rows


def holds_from(p):
    """The derived since as the matrix's table shows it: a release, "<=X"
    (nothing older could be tested), "none", or "?" (the results cannot tell)."""
    if not p["derived"]:
        return "?"
    return ("<=" if p.get("floor") and p["derived"] != NONE else "") + p["derived"]


def parse_holds_from(cell):
    """(derived, floor) from holds_from's text."""
    if cell in ("?", "-", ""):
        return "", False
    return (cell[2:], True) if cell.startswith("<=") else (cell, False)


ANNOTATION = re.compile(r"\((?:since|as of) (?:[0-9][^;)]*|none\b)")


def fix_line(line, since):
    """The clause line with its since annotation set to `since` (a release or
    "none"; the rest of the parenthesis, such as "; before it, ...", kept)."""
    if ANNOTATION.search(line):
        return ANNOTATION.sub(f"(since {since}", line, count=1)
    return line.rstrip("\n") + f" (since {since})" + ("\n" if line.endswith("\n") else "")


def fix_spec(spec_dir, rows, clauses):
    """Rewrites the annotation of every clause whose derived since differs
    from it; returns [(clause, before, after)]."""
    wanted = {r["clause"]: r["derived"] for r in rows if r["verdict"] in WRONG}
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
