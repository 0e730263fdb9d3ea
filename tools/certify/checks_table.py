"""checks.def read from Python, and the README's table of checks written from it.

  checks_table.py --write README.md    rewrite the table in place
  checks_table.py --check README.md    exit 1, saying how, when it differs

checks_test runs the check; e2e_test judges every finding it sees by the rows.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ("name", "id", "stage", "clauses", "crash_clause", "crash_verdict", "summary", "pass")
TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([A-Za-z_]\w*)|([(),]))')
HEADER = ("| check | stage | clause | a call that dies | what it looks at |\n"
          "|---|---|---|---|---|\n")


def _unquote(literal):
    return re.sub(r"\\(.)", r"\1", literal[1:-1])


def read_rows(path=os.path.join(HERE, "checks.def")):
    """The rows as dicts of COLUMNS, in file order."""
    text = re.sub(r"/\*.*?\*/", "", open(path, encoding="utf-8").read(), flags=re.S)
    rows, pos = [], 0
    while True:
        start = text.find("CERT_CHECK(", pos)
        if start < 0:
            return rows
        pos, fields, current = start + len("CERT_CHECK("), [], None
        while True:
            m = TOKEN.match(text, pos)
            if m is None:
                raise ValueError(f"{path}: cannot read the row at offset {start}")
            pos = m.end()
            literal, word, punct = m.groups()
            if literal is not None:
                current = (current or "") + _unquote(literal)
            elif word is not None:
                current = word
            elif punct in ",)":
                fields.append(current)
                current = None
                if punct == ")":
                    break
        if len(fields) != len(COLUMNS):
            raise ValueError(f"{path}: row {fields[:2]} has {len(fields)} columns, not {len(COLUMNS)}")
        rows.append(dict(zip(COLUMNS, fields)))


def allowed_clauses(row):
    """The clauses a finding of this check may name ("" always)."""
    allowed = {""} | {c.strip() for c in row["clauses"].split(",") if c.strip()}
    if row["crash_clause"]:
        allowed |= {row["crash_clause"], "CDY-001"}  # a call dying at an undefined symbol
    return allowed


def _cell(text):
    return text.replace("|", "\\|")


def render(rows):
    lines = []
    for r in rows:
        crash = f"{r['crash_verdict'][len('CERT_'):]} {r['crash_clause']}" if r["crash_clause"] else ""
        lines.append(f"| `{r['id']}` | {_cell(r['stage'])} | {r['clauses']} | {crash} | {_cell(r['summary'])} |\n")
    return HEADER + "".join(lines)


def split_readme(text):
    """(before, table, after) of the README around the table of checks."""
    start = text.find(HEADER.splitlines()[0])
    if start < 0:
        raise ValueError("README.md has no table of checks (its header line is missing)")
    end = text.find("\n\n", start)
    end = len(text) if end < 0 else end + 1
    return text[:start], text[start:end], text[end:]


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--write", "--check"):
        print(__doc__)
        return 2
    readme = argv[2]
    before, table, after = split_readme(open(readme, encoding="utf-8").read())
    want = render(read_rows())
    if argv[1] == "--write":
        with open(readme, "w", encoding="utf-8") as f:
            f.write(before + want + after)
        return 0
    if table == want:
        return 0
    have_lines, want_lines = table.splitlines(), want.splitlines()
    for line in sorted(set(have_lines) ^ set(want_lines)):
        print(("README only:   " if line in have_lines else "checks.def only: ") + line)
    print("run: python3 tools/certify/checks_table.py --write tools/certify/README.md")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
