"""The matrix as Markdown (spec/matrix.md), static HTML and JSON.

A matrix is a list of columns (one per release, then the reference), each
the judged run of tools/report.py: {name, release, version, implementation,
records, rows, totals, seconds, same_as}. Cells are the verdict of a clause's
row in that column; the page look and filters are tools/report.py's.
"""
import datetime
import html
import json
import os

from tools import report, report_sources
from tools.matrix import profiles

# One letter per verdict in the Markdown table.
LETTER = {"PASS": "P", "FAIL": "F", "NONSTRICT": "N", "SKIP": "S", "CRASH": "C", "TIMEOUT": "T",
          "KNOWN": "K", "LATER": "L"}
LEGEND = ("P pass · F FAIL (a MUST clause broken) · N NONSTRICT (a SHOULD clause broken) · "
          "S skipped · C crash · T timeout · K known deviation (spec/deviations.md records it for "
          "this release) · L a later clause broken: its \"(since X)\" is after the release, so it is "
          "listed but not counted · p a later clause that passes (not counted) · - no test ran")


def cell(column, clause):
    row = column["by_clause"].get(clause)
    if row is None:
        return "-"
    if row.get("later") and row["verdict"] == "PASS":
        return "p"
    return LETTER[row["verdict"]]


def index(columns):
    """Adds by_clause ({clause: row}) to each column; returns every clause
    (with its text, level, area) any column ran, in clause order."""
    seen = {}
    for col in columns:
        col["by_clause"] = {row["clause"]: row for row in col["rows"] if row["clause"]}
        for cid, row in col["by_clause"].items():
            seen.setdefault(cid, row)
    return [seen[c] for c in sorted(seen)]


def count(t, level):
    return f"{t[level]['passed']}/{t[level]['total']}"


def totals_table(columns):
    head = "| | " + " | ".join(c["name"] for c in columns) + " |"
    lines = [head, "|---|" + "---|" * len(columns)]
    rows = [("TVMFFIGetVersion", lambda c: c["version"] or "?"),
            ("MUST passed", lambda c: count(c["totals"], "MUST")),
            ("SHOULD passed", lambda c: count(c["totals"], "SHOULD")),
            ("later clauses broken (L)", lambda c: str(c["totals"]["later"])),
            ("known deviations (K)", lambda c: str(c["totals"]["known"])),
            ("unexpected (F N C T)", lambda c: str(c["totals"]["unexpected"])),
            ("skipped test cases", lambda c: str(c["totals"]["skipped"])),
            ("CPU of the run", lambda c: f"as {c['same_as']} (same library)" if c.get("same_as")
             else f"{c['cpu']:.0f} s" if c.get("cpu") else "?")]
    for label, value in rows:
        lines.append(f"| {label} | " + " | ".join(value(c) for c in columns) + " |")
    return lines


WHAT = {"later": "it fails on releases the annotation covers",
        "earlier": "it holds before the annotated release",
        "missing": "no annotation",
        "nowhere": "it holds on no release: (since none)",
        "holds": "annotated none, but it holds from a release"}


def since_table(profile):
    wrong = [p for p in profile if p["verdict"] in profiles.WRONG]
    unknown = [p for p in profile if p["verdict"] == "unknown"]
    kept = [p for p in profile if p["verdict"] == "kept"]
    lines = [f"{len(profile)} clauses ran on the releases: {sum(p['verdict'] == 'ok' for p in profile)} "
             f"annotations agree with the results, {len(wrong)} do not, {len(kept)} are kept as written, "
             f"{len(unknown)} cannot be told from them.", ""]
    if wrong:
        lines += ["| clause | annotated | the results say | |", "|---|---|---|---|"]
        for p in wrong:
            lines.append(f"| {p['clause']} | {p['annotated'] or '-'} | {profiles.holds_from(p)} | "
                         f"{WHAT[p['verdict']]} |")
        lines.append("")
    if kept:
        lines.append("Kept as written, though the tests pass before it (the old layout reads the same; the "
                     "annotation says what changed): " + ", ".join(
                         f"{p['clause']} ({p['annotated']}; passes from {p['derived']})" for p in kept) + ".")
        lines.append("")
    if unknown:
        lines.append("Cannot be told: " + "; ".join(f"{p['clause']} ({p['why']})" for p in unknown) + ".")
        lines.append("")
    return lines


def profile_summary(profile):
    """Clauses grouped by the release they hold from, beyond the first; then
    those that hold on none."""
    by_since = {}
    for p in profile:
        since = p["annotated"] if p["verdict"] in ("ok", "kept") else p["derived"]
        if since and since != profiles.NONE:
            by_since.setdefault(since, []).append(p["clause"])
    lines = []
    for since in sorted(by_since, key=report.version_key)[1:]:
        lines.append(f"- from {since}: " + ", ".join(by_since[since]))
    nowhere = [p["clause"] for p in profile if p["derived"] == profiles.NONE]
    if nowhere:
        lines.append(f"- on no release ({len(nowhere)}; since none): " + ", ".join(nowhere))
    return lines


def markdown(columns, profile, found, generated):
    clauses = index(columns)
    names = [c["name"] for c in columns]
    derived = {p["clause"]: profiles.holds_from(p) for p in profile}
    md = ["# The conformance matrix: every release, clause by clause", "",
          f"Generated by `bazel run //tools:matrix -- --releases all --md spec/matrix.md` ({generated}); "
          "do not edit by hand. Each column is "
          "the conformance suite run against one `apache-tvm-ffi` release's `libtvm_ffi.so` (a Bazel "
          "test per release, `//tools/matrix:suite_<release>`) or the bundled reference, judged by "
          "`tools/report.py` as that release: by the clauses whose `(since X)` is at or before it, "
          "with the later clauses it breaks listed apart (L). The reference is judged by every "
          "clause. The same as HTML and JSON: `matrix-report/matrix.{html,json}`.", "",
          "Legend: " + LEGEND + ".", "", "## Totals", ""]
    md += totals_table(columns)
    md += ["", "## What it found", ""] + found + [""]
    md += ["## Since annotations against the results", "",
           "A clause's since, derived from these runs, is the oldest release from which it holds on "
           "every later release; a failure that spec/deviations.md records for that release or a "
           "later one counts against the release, not the clause; a clause that holds on no release "
           "has none, `(since none)` (tools/matrix/profiles.py). The table's \"holds from\" column is "
           "that derived since (`<=X`: no older release could test it; `?`: the results cannot "
           "tell); `//spec:since_test` checks the spec's annotations against it.", ""]
    md += since_table(profile)
    md += ["Clauses by the release they hold from (all others: from the first release):", ""]
    md += (profile_summary(profile) or ["- none"]) + [""]
    md += ["## Clauses", "", "| clause | level | since | holds from | " + " | ".join(names) + " |",
           "|---|---|---|---|" + "---|" * len(names)]
    for row in clauses:
        md.append(f"| {row['clause']} | {row['level']} | {row_since(row)} | {derived.get(row['clause'], '-')} | "
                  + " | ".join(cell(c, row["clause"]) for c in columns) + " |")
    return "\n".join(md) + "\n"


def row_since(row):
    m = report.SINCE.search(row["text"])
    return m.group(1) if m else profiles.NONE if report.NO_SINCE.search(row["text"]) else "-"


def write_json(path, columns, profile, generated):
    clauses = index(columns)
    data = {"generated": generated, "legend": LEGEND,
            "columns": [{k: c.get(k) for k in ("name", "release", "version", "implementation",
                                              "seconds", "cpu", "same_as")} |
                        {"totals": c["totals"], "summary": report.summary_line(c["totals"], c["load_errors"]),
                         "load_errors": c["load_errors"]} for c in columns],
            "since": profile,
            "clauses": [{"clause": row["clause"], "level": row["level"], "area": row["area"],
                         "since": row_since(row), "text": row["text"],
                         "verdicts": {c["name"]: details(c, row["clause"]) for c in columns}}
                        for row in clauses]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)


def details(column, clause):
    row = column["by_clause"].get(clause)
    if row is None:
        return {"verdict": None}
    out = {"verdict": row["verdict"], "later": bool(row.get("later"))}
    bad = [{"test": f"{r['target']} {r['test']}", "verdict": r["verdict"],
            "expected": r.get("expected", ""), "actual": r.get("actual", ""), "message": r["message"]}
           for r in row["tests"] if r["verdict"] != "PASS"]
    if bad:
        out["tests"] = bad
    return out


def tooltip(column, clause):
    row = column["by_clause"].get(clause)
    if row is None:
        return "no test ran"
    parts = [f"{column['name']}: {row['verdict']}" + (" (later clause)" if row.get("later") else "")]
    for r in row["tests"]:
        if r["verdict"] == "SKIP":
            parts.append(f"{r['test']}: skipped: {r['message']}")
        elif r["verdict"] != "PASS":
            parts.append(f"{r['test']}: expected {report.one_line(r.get('expected', ''), 200)}; "
                         f"actual {report.one_line(r.get('actual', ''), 200)}")
    return "\n".join(parts)


def headline(columns):
    """(text, bad): what a reader must see first: the columns with unexpected
    results (the reference's are a defect; an old release's are its
    departures from the spec), else that there are none."""
    bad = [c for c in columns if c["totals"]["unexpected"] or c["load_errors"]]
    if not bad:
        return "no unexpected result in any of the " + f"{len(columns)} columns", False
    return (f"unexpected results in {len(bad)} of {len(columns)} columns: " +
            ", ".join(f"{c['name']} {c['totals']['unexpected']}" for c in bad), True)


def write_html(path, columns, profile, found, generated, workspace=""):
    """The page, with copies of the spec files it links beside it (tools/report_sources.py)."""
    clauses = index(columns)
    esc = html.escape
    links = report_sources.Links(os.path.dirname(os.path.abspath(path)), workspace,
                                 os.environ.get("CONFORMANCE_SOURCE_URL", ""))
    text, bad = headline(columns)
    musts = " · ".join(f"{c['name']} MUST {count(c['totals'], 'MUST')}" for c in columns)
    out = report.html_head("TVM-FFI conformance matrix", text, bad, [f"generated {generated}", musts, LEGEND],
                           "td.c{text-align:center;font-family:monospace;font-weight:700;padding:2px 3px}"
                           "th.r{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:600}"
                           ".legend dt{float:left;clear:left;width:8em}.legend dd{margin-left:9em}")
    out.append(report.html_legend())
    out.append("<ul>" + "".join(f"<li>{esc(line.lstrip('- '))}</li>" for line in found) + "</ul>")
    out.append("<h2 id='since'>Since annotations against the results</h2>" +
               "".join(f"<p>{esc(line)}</p>" for line in since_table(profile) if line and not line.startswith("|")))
    wrong = [p for p in profile if p["verdict"] in profiles.WRONG]
    if wrong:
        out.append("<table style='width:auto'><tr><th>clause</th><th>annotated</th><th>the results say</th>"
                   "<th></th></tr>" + "".join(
                       f"<tr><td class='id'>{esc(p['clause'])}</td><td>{esc(p['annotated'] or '-')}</td>"
                       f"<td>{esc(profiles.holds_from(p))}</td><td>{esc(WHAT[p['verdict']])}</td></tr>"
                       for p in wrong) + "</table>")
    out.append(report.html_filters(sorted({row["area"] for row in clauses})))
    head = "".join(f"<th class='r'>{esc(c['name'])}</th>" for c in columns)
    out.append(f"<table><thead><tr><th>clause</th><th>level</th><th>since</th>{head}"
               "<th>requirement</th></tr>")
    for label, key in (("MUST", "MUST"), ("SHOULD", "SHOULD")):
        out.append(f"<tr><th colspan='3'>{label} passed</th>" + "".join(
            f"<th>{count(c['totals'], key)}</th>" for c in columns) + "<th></th></tr>")
    out.append("</thead><tbody>")
    for row in clauses:
        verdicts = {c["by_clause"][row["clause"]]["verdict"] for c in columns if row["clause"] in c["by_clause"]}
        cells = []
        for c in columns:
            r = c["by_clause"].get(row["clause"])
            colour = report.COLOURS[r["verdict"]] if r else "#fff"
            cells.append(f"<td class='c' style='background:{colour}' title='{esc(tooltip(c, row['clause']))}'>"
                         f"{cell(c, row['clause'])}</td>")
        place = report.clause_place(row)
        out.append(f"<tr data-area='{esc(row['area'])}' data-level='{esc(row['level'])}' "
                   f"data-verdict='{' '.join(sorted(verdicts))}'><td class='id'>"
                   f"{report.spec_link(place, links)}</td><td>{esc(row['level'])}</td>"
                   f"<td>{esc(row_since(row))}</td>{''.join(cells)}<td>{esc(row['text'])}</td></tr>")
    out.append("</tbody></table>" + report.HTML_FILTER_SCRIPT)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    links.write()


def now():
    return f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}"
