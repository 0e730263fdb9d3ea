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
              ".linenos{color:#999;margin-right:1em}:target{background:#ffef9e}"
              "a[id]:target+a+span,a[id]:target{background:#ffef9e}h1{font:600 15px system-ui}")


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
    """One file as a page: highlighted where Pygments is at hand, an anchor
    per line, and for a spec file one per clause."""
    body = highlighted(rel, text) or plain(text)
    for number, line in enumerate(text.splitlines(), 1):
        m = CLAUSE_ID.match(line)
        if m:
            body = body.replace(f'<a id="L-{number}"', f'<a id="{m.group(1)}"></a><a id="L-{number}"', 1)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(rel)}</title>"
            f"<style>{PAGE_STYLE}{pygments_style()}</style></head><body><h1>{html.escape(rel)}</h1>"
            f"{body}</body></html>")


def plain(text):
    lines = [f'<a id="L-{n}" name="L-{n}"></a><a href="#L-{n}"><span class="linenos">{n:4}</span></a>'
             f"{html.escape(line)}" for n, line in enumerate(text.splitlines(), 1)]
    return "<pre>" + "\n".join(lines) + "</pre>"


def highlighted(rel, text):
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_for_filename
        from pygments.util import ClassNotFound
    except ImportError:
        return ""
    try:
        lexer = get_lexer_for_filename(rel, stripnl=False)
    except ClassNotFound:
        return ""
    return highlight(text, lexer, HtmlFormatter(lineanchors="L", linenos="inline", anchorlinenos=True))


def pygments_style():
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:
        return ""
    return HtmlFormatter().get_style_defs(".highlight")
