"""Links from a report page to the spec and the test sources that work
wherever the page is opened.

A report is read on other machines (a CI artifact, a mail attachment), so it
never links into the checkout that made it. By default the files it links
go beside it as HTML, `sources/<path>.html`, each line with an anchor
(`#L-12`) and each spec clause with one of its own (`#ANY-020`), and the
links are relative. With a base URL (a repository browser such as
`https://github.com/ORG/REPO/blob/COMMIT`) the links point there instead
(`BASE/conformance/any_test.c#L12`) and nothing is copied.
"""
import html
import os
import re

COPY_DIR = "sources"
CLAUSE_ID = re.compile(r"^([A-Z]{2,5}-\d{3}) \[")
PAGE_STYLE = ("body{font:13px/1.45 monospace;margin:1em}pre{white-space:pre-wrap;margin:0}"
              "a.n{color:#999;text-decoration:none}a.n:target{background:#ffef9e;color:#000}"
              "a:target+b{background:#ffef9e}.h{font-weight:700;color:#036}h1{font:600 15px system-ui}")


class Links:
    """Hands out hrefs for spec clauses and test sources, remembering which
    files they name so that write() can put the copies beside the page."""

    def __init__(self, page_dir, root, base_url=""):
        self.page_dir, self.root = page_dir, root
        self.base_url = base_url.rstrip("/")
        self.files = set()

    def _href(self, rel, line, anchor=""):
        if self.base_url:
            return f"{self.base_url}/{rel}" + (f"#L{line}" if line else "")
        self.files.add(rel)
        return f"{COPY_DIR}/{rel}.html" + (f"#{anchor}" if anchor else f"#L-{line}" if line else "")

    def clause(self, clause):
        """href of a clause ({id, file, line} as tools/report.read_clauses gives)."""
        return self._href(clause["file"], clause.get("line"), clause["id"])

    def source(self, where):
        """href of 'path:line' (tools/report.find_test_sources)."""
        path, _, line = where.partition(":")
        return self._href(path, int(line) if line.isdigit() else 0)

    def write(self):
        """Writes the HTML copy of every file handed out (none with a base URL)."""
        for rel in sorted(self.files):
            src = os.path.join(self.root, rel)
            if not os.path.isfile(src):
                continue
            dest = os.path.join(self.page_dir, COPY_DIR, rel + ".html")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(src, encoding="utf-8", errors="replace") as f:
                text = f.read()
            with open(dest, "w", encoding="utf-8") as f:
                f.write(page(rel, text))


def page(rel, text):
    """One file as a page: its lines as they are, numbered, an anchor per
    line (L-12) and, in a spec file, one per clause (ANY-020) with the ID in
    bold; Markdown headings stand out. Plain text on purpose: a report's
    copies are written on every run, and this costs next to nothing."""
    lines = []
    for n, line in enumerate(text.splitlines(), 1):
        m = CLAUSE_ID.match(line)
        body = html.escape(line)
        if m:
            body = f'<a id="{m.group(1)}"></a><b>{m.group(1)}</b>{html.escape(line[len(m.group(1)):])}'
        elif line.startswith("#"):
            body = f"<span class='h'>{body}</span>"
        lines.append(f'<a id="L-{n}" href="#L-{n}" class="n">{n:5}</a> {body}')
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(rel)}</title>"
            f"<style>{PAGE_STYLE}</style></head><body><h1>{html.escape(rel)}</h1><pre>"
            + "\n".join(lines) + "</pre></body></html>")
