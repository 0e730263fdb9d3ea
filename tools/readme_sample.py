"""README.md's sample summaries, kept equal to a real run.

README.md shows what `bazel test //conformance:all` ends with, for the
bundled reference and for the pinned upstream (--config=upstream), between
marker lines:

    <!-- sample summary: reference -->
        implementation: ...
        MUST ..., SHOULD ... clauses passed; test cases: ...
    <!-- end of sample summary -->

//conformance:suite_test checks the sample of the implementation it ran
(under the plain configuration only: sanitizers and valgrind skip or
shorten tests) and fails, printing the lines, when they differ.
`bazel run //tools:report -- --readme` writes them from the last run.
"""
import os

from tools import report

BEGIN = "<!-- sample summary: {} -->"
END = "<!-- end of sample summary -->"


def key_of(records):
    """"reference", "upstream", or "" (another library or configuration: no sample)."""
    impl = report.implementation_of(records)
    if not impl or report.load_failures(records):
        return ""
    if impl.get("bazel_flags", "") not in ("", "--config=upstream"):
        return ""
    if impl.get("bundled_reference") == "1":
        return "reference"
    return "upstream" if impl.get("tvmffi_impl") == "upstream" else ""


def lines_of(records, t):
    return [report.implementation_line(records), report.summary_line(t, report.load_failures(records))]


def block(text, key):
    """(first, end) line indices of the sample for `key` in the text, or None."""
    lines = text.splitlines()
    begin = BEGIN.format(key)
    if begin not in lines or END not in lines[lines.index(begin):]:
        return None
    first = lines.index(begin) + 1
    return first, lines.index(END, first)


def check(readme, records, t):
    """"" when README.md's sample for this run's implementation shows its
    summary (or the run has no sample), else what differs and how to fix it."""
    key = key_of(records)
    if not key or not os.path.exists(readme):
        return ""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    where = block(text, key)
    if where is None:
        return f"README.md has no sample summary of the {key} (a line {BEGIN.format(key)!r})"
    have = [line.strip() for line in text.splitlines()[where[0]:where[1]] if line.strip()]
    want = lines_of(records, t)
    if have == want:
        return ""
    return ("README.md's sample summary of the " + key + " is stale. It says\n    " + "\n    ".join(have) +
            "\nthis run says\n    " + "\n    ".join(want) +
            "\nUpdate it after this run: bazel run //tools:report -- --readme")


def write(readme, records, t):
    """Writes this run's summary into README.md's sample; returns the key, or "" when the run has none."""
    key = key_of(records)
    if not key:
        return ""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    where = block(text, key)
    if where is None:
        return ""
    lines = text.splitlines()
    lines[where[0]:where[1]] = [""] + ["    " + line for line in lines_of(records, t)] + [""]
    with open(readme, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return key
