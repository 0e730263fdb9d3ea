"""certify's sources keep the rules its clean-up set (issue 31):

- static functions in .c files carry no prefix (cert_ names what other
  files call, a header's static inline functions among them);
- the "__tvm_ffi_" prefix is spelt in symbol_names.h only, and "starts
  with" is cert_starts_with there, not strncmp(s, p, strlen(p)) again;
- arrays grow through reference/vec.h (or buf.h for text), never a
  hand-written realloc loop (strict_heap.c, which replaces realloc, aside).

Run by `bazel test //tools/certify:style_test`.
"""
import glob
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(glob.glob(os.path.join(HERE, "*.c")) + glob.glob(os.path.join(HERE, "*.h")))
STATIC_PREFIXED = re.compile(r"^static\s+(?:inline\s+)?[\w\s\*]*?\bcert_\w+\s*\(", re.M)
PREFIX_LITERAL = re.compile(r'"__tvm_ffi_"')
STARTS_WITH = re.compile(r"strncmp\(\s*([^,]+),\s*([^,]+),\s*strlen\(\s*\2\s*\)\s*\)")
REALLOC = re.compile(r"\brealloc\s*\(")


def code(path):
    """The file without its comments (a rule is about code, not prose)."""
    text = open(path, encoding="utf-8").read()
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def offenders(pattern, skip=(), ext=(".c", ".h")):
    return [f"{os.path.basename(p)}: {m.group(0).strip()}" for p in SOURCES
            if os.path.basename(p) not in skip and p.endswith(ext) for m in pattern.finditer(code(p))]


def test_sources_are_there():
    assert len(SOURCES) > 50


def test_static_functions_carry_no_prefix():
    # A header's static inline functions are called from other files: cert_.
    assert offenders(STATIC_PREFIXED, ext=(".c",)) == []


def test_the_export_prefix_is_spelt_once():
    assert offenders(PREFIX_LITERAL, skip=("symbol_names.h",)) == []


def test_starts_with_is_written_once():
    assert offenders(STARTS_WITH, skip=("symbol_names.h",)) == []


def test_arrays_grow_through_one_helper():
    assert offenders(REALLOC, skip=("strict_heap.c", "strict_heap_test.c")) == []


@pytest.mark.parametrize("line, pattern", [
    ("static int cert_starts(const char* s) {", STATIC_PREFIXED),
    ('#define CERT_PREFIX "__tvm_ffi_"', PREFIX_LITERAL),
    ("return strncmp(s, prefix, strlen(prefix)) == 0;", STARTS_WITH),
    ("char* grown = realloc(t->s, cap);", REALLOC),
])
def test_each_rule_sees_what_it_forbids(line, pattern):
    assert pattern.search(line)


if __name__ == "__main__":
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
