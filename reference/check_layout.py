"""The reference runtime's structure, checked: dependencies run one way.

A unit is a file stem (foo.c with foo.h; tffi_foo.h is foo's header where
plain foo.h would be a C library header's name). Unit A depends on unit B
when a file of A includes B's header. The check fails when
  - a header has the name of a C or POSIX header (`#include "string.h"`
    would find it before the system's, and readers would take it for libc),
  - the unit graph has a cycle (printed),
  - a header declares a tffi_ function that its own .c file does not define
    (a header speaking for another unit hides a dependency from the graph),
  - a file is longer than 400 lines (--max-lines=N: N; certify's cap is 500).
Usage: check_layout.py [--max-lines=N] FILE...   (the reference/*.c and *.h files)
"""
import os
import re
import sys

MAX_LINES = 400
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DECL = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(tffi_\w+)\s*\(", re.M)


# C17's standard headers and the POSIX ones a C runtime is likely to use.
SYSTEM_HEADERS = set("""
assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign
stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar
wchar wctype dlfcn fcntl poll pthread sched strings unistd
""".split())


def unit(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem[len("tffi_"):] if stem.startswith("tffi_") else stem


def find_cycle(graph):
    """A cycle as a list of units, or None (iterative depth-first search)."""
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt in graph and not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def main(args):
    max_lines = MAX_LINES
    paths = [a for a in args if not a.startswith("--max-lines=")]
    for a in args:
        if a.startswith("--max-lines="):
            max_lines = int(a.split("=", 1)[1])
    texts = {p: open(p, encoding="utf-8").read() for p in paths}
    units = {unit(p) for p in paths}
    graph = {u: set() for u in units}
    problems = []
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        if path.endswith(".h") and stem in SYSTEM_HEADERS:
            problems.append(f"{path}: has the name of the system header <{stem}.h> (call it tffi_{stem}.h)")
    for path, text in texts.items():
        if text.count("\n") > max_lines:
            problems.append(f"{path}: {text.count(chr(10))} lines (at most {max_lines})")
        for inc in INCLUDE.findall(text):
            dep = unit(inc)
            if dep in units and dep != unit(path) and "/" not in inc:
                graph[unit(path)].add(dep)
    cycle = find_cycle(graph)
    if cycle:
        problems.append("include cycle: " + " -> ".join(cycle))
    sources = {unit(p): t for p, t in texts.items() if p.endswith(".c")}
    for path, text in texts.items():
        if not path.endswith(".h") or path.endswith("_support.h"):
            continue
        body = re.sub(r"static inline[^{]*\{.*?\n\}", "", text, flags=re.S)
        for name in DECL.findall(body):
            own = sources.get(unit(path), "")
            if not re.search(r"^[^\n;]*\b%s\s*\([^;]*\)\s*\{" % name, own, re.M):
                problems.append(f"{path}: declares {name}, which {unit(path)}.c does not define")
    for p in problems:
        print(p)
    print(f"{len(units)} units, {sum(len(e) for e in graph.values())} dependencies, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
