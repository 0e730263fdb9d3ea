"""Mutation testing of the conformance suite: break the reference runtime on
purpose, one small change at a time, and see whether the suite notices.

    bazel run //tools:mutants -- [--files reference/X.c ...] [--sample N]
        [--seed S] [--jobs J] [--asan] [--json FILE] [--min-score P]
    bazel run //tools:mutants -- --gate NAME MIN [reference/X.c ...] ...
        [--sample N] [--seed S] [--jobs J] [--json-dir DIR]

Mutants come from universalmutator (pinned; installed on first use into a
venv of its own in the cache). The suite is built once, from unmutated code,
with Bazel; each mutant is then one recompiled object linked with the
unmutated others into a libtvm_ffi.so, and the conformance binaries run
against it through TVMFFI_IMPL, the way a vendor runs them against their
own library; the Python areas run upstream's own package over it, and,
for what all of them let through, upstream's own Python tests of the files
in scope (tools/upstream_pytests; less those that compile C++ code, which
test the headers and take minutes), last. Test data and tools are never
built from mutated code.

A mutant is build-broken (does not compile), same code (it compiles to
an object byte-identical to the unmutated one: trivially equivalent, so no
test runs), killed (some test fails), timed out (killed by the clock:
counted as killed, shown apart), equivalent (survived, and
tools/mutants/equivalent.txt explains why no test can tell), or survived.
The score is killed / (compiled - same code - equivalent). Mutants whose
objects are identical to an earlier mutant's take its verdict without a rerun. With --asan,
survivors are run once more against an ASan+UBSan build of the same mutant
(a second column: what only a sanitizer sees).
"""

import argparse
import concurrent.futures
import difflib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
MUTATOR = ["universalmutator==1.14.1", "tabulate==0.10.0"]
# Bazel's flags for //reference:runtime, less -Werror: a warning is no reason
# to drop a mutant, but an undeclared function is (it would be a wrong ABI),
# and so is a function that can end without its value: its result is
# undefined, and what -O2 leaves in the register is luck, not behaviour.
CFLAGS = ["-std=c17", "-O2", "-fPIC", "-fvisibility=hidden", "-D_GNU_SOURCE", "-DTFFI_IN_RUNTIME",
          "-fno-omit-frame-pointer",
          "-Werror=implicit-function-declaration", "-Werror=int-conversion", "-Werror=return-type"]
ASAN_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
LDLIBS = ["-ldl", "-lpthread"]


STARTED = time.time()


def log(msg):
    print("%s [%.0f s]" % (msg, time.time() - STARTED), file=sys.stderr, flush=True)


def workspace_root():
    root = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if root:
        return root
    out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("mutants: run it with `bazel run //tools:mutants` or from a checkout")
    return out.stdout.strip()


def cache_root():
    base = os.environ.get("TVMFFI_CONFORMANCE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tvm-ffi-conformance")
    return base


def mutate_command():
    """The `mutate` of a venv holding exactly the pinned mutator. Installed
    with --no-deps: its other requirements only serve features we don't use
    (comby-based rules, the web viewer)."""
    venv = os.path.join(cache_root(), "mutator-venv")
    exe = os.path.join(venv, "bin", "mutate")
    stamp = os.path.join(venv, "pins.txt")
    want = "\n".join(MUTATOR)
    if os.path.exists(exe) and os.path.exists(stamp) and open(stamp).read() == want:
        return exe
    log("mutants: installing %s into %s" % (" ".join(MUTATOR), venv))
    subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-deps",
                    "--disable-pip-version-check"] + MUTATOR, check=True)
    with open(stamp, "w") as f:
        f.write(want)
    return exe


# ---- the unmutated suite -------------------------------------------------

class Suite:
    """The conformance binaries, built once, and how to run one against a library."""

    def __init__(self, root):
        self.root = root
        bazel = ["bazel"]
        # The area binaries are named one by one: built only as data of
        # suite_test they would get no runfiles tree of their own, and the
        # tests that read test data through runfiles would fail unmutated.
        # The Python areas (upstream's own package over the library) too:
        # the host support the package alone calls is theirs to judge.
        q = subprocess.run(bazel + ["query", "kind('cc_test|py_test', deps(//conformance:suite_test))"
                                    " except //conformance:suite_test"],
                           cwd=root, capture_output=True, text=True, check=True)
        pq = subprocess.run(bazel + ["query", "kind(py_test, deps(//conformance:suite_test))"],
                            cwd=root, capture_output=True, text=True, check=True)
        log("mutants: building the suite (%d conformance binaries, //reference:libtvm_ffi.so)"
            % len(q.stdout.split()))
        # Each binary runs its tests in children forked from its runner
        # (conformance/fork_runner.c), not a fresh process per test: the
        # same verdicts, about a quarter of the time.
        subprocess.run(bazel + ["build", "--define=criterion_workers=fork",
                                "//reference:libtvm_ffi.so"] + q.stdout.split(),
                       cwd=root, check=True)
        bin_dir = subprocess.run(bazel + ["info", "bazel-bin"], cwd=root, capture_output=True,
                                 text=True, check=True).stdout.strip()
        base = subprocess.run(bazel + ["info", "output_base"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        self.dlpack_include = os.path.join(base, "external", "tvm_ffi_upstream", "dlpack_include")
        self.binaries = {}
        self.python = {label.split(":")[1] for label in pq.stdout.split()}
        for label in q.stdout.split():
            name = label.split(":")[1]
            self.binaries[name] = os.path.join(bin_dir, "conformance", name)
        self.timeouts = {}
        self.pytests = False

    def run(self, name, lib, env_extra=None, timeout=None):
        """('pass'|'fail'|'timeout', first failing line). Stops at the first failure."""
        exe = self.binaries[name]
        env = dict(os.environ)
        env.update({"TEST_SRCDIR": exe + ".runfiles", "TEST_WORKSPACE": "tvm_ffi_conformance",
                    "TVMFFI_IMPL": lib})
        env.pop("XML_OUTPUT_FILE", None)
        env.update(env_extra or {})
        with tempfile.TemporaryDirectory() as tmp:
            env["TEST_TMPDIR"] = tmp
            argv = [exe] if name in self.python else [exe, "--fail-fast", "-j1"]
            res = run_in_group(argv, env, timeout or self.timeouts.get(name, 120))
            if res is None:
                return "timeout", "%s: timed out" % name
        if res.returncode == 0:
            return "pass", ""
        lines = (res.stdout + res.stderr).splitlines()
        failed = next((l for l in lines if l.startswith("[FAIL]") or l.startswith("FAILED ")),
                      "exit %d" % res.returncode)
        # Criterion prints the message two lines under "Assertion Failed",
        # after a line holding only its "[----]" prefix.
        i = next((k for k, l in enumerate(lines) if "Assertion Failed" in l), None)
        after = [l.strip("[-] ").strip() for l in lines[i + 1:i + 4]] if i is not None else []
        why = next((l for l in after if l), "")
        detail = failed.replace("[FAIL] ", "") + (": " + why if why else "")
        return "fail", "%s: %s" % (name, detail[:200])


def run_in_group(argv, env, timeout, cwd=None):
    """subprocess.run in a process group of its own; None on a timeout, when
    the whole group is killed: a mutant's endless loop may be running in a
    child of the binary, which killing the binary alone would leave behind."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


# ---- building libraries from objects ---------------------------------------

class Builder:
    """Compiles reference/*.c once to objects; a mutant recompiles one file."""

    def __init__(self, root, suite, work, sanitize):
        self.root, self.work = root, work
        self.flags = CFLAGS + (ASAN_FLAGS if sanitize else [])
        self.ldflags = ASAN_FLAGS if sanitize else []
        # -iquote, never -I: no header of reference/ may stand in for a system one.
        self.includes = ["-iquote", os.path.join(root, "reference"),
                         "-I" + os.path.join(root, "reference", "include"),
                         "-I" + suite.dlpack_include]
        self.sources = runtime_sources(root)
        self.objdir = os.path.join(work, "objects-asan" if sanitize else "objects")
        os.makedirs(self.objdir, exist_ok=True)
        # Shared by every checkout: an object is keyed by everything that
        # goes into it (flags, the source, every header it could include),
        # so a fresh clone of an unchanged runtime compiles nothing.
        self.cache = os.path.join(cache_root(), "mutants", "objects")
        os.makedirs(self.cache, exist_ok=True)
        headers = hashlib.sha1(" ".join(self.flags).encode())
        for path in header_files(root, suite.dlpack_include):
            with open(path, "rb") as f:
                headers.update(f.read())
        for src in self.sources:
            self._compile_cached(os.path.join(root, src), self._obj(src), headers.copy())

    def _compile_cached(self, path, obj, key):
        with open(path, "rb") as f:
            key.update(f.read())
        cached = os.path.join(self.cache, key.hexdigest() + ".o")
        if not os.path.exists(cached):
            self._compile(path, obj)
            publish(obj, cached)
        else:
            shutil.copyfile(cached, obj)

    def _obj(self, src, where=None):
        return os.path.join(where or self.objdir, os.path.basename(src)[:-2] + ".o")

    def _compile(self, path, obj):
        # From the source's own folder, by its bare name: the object then
        # records the same file name for a mutant as for the original, so
        # identical code gives identical bytes.
        cmd = ["cc"] + self.flags + self.includes + ["-c", os.path.basename(path), "-o", obj]
        res = subprocess.run(cmd, cwd=os.path.dirname(path), capture_output=True, text=True)
        if res.returncode != 0:
            raise BuildError(res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "cc failed")

    def link(self, out, replaced=None, mutant_obj=None):
        objs = [mutant_obj if src == replaced else self._obj(src) for src in self.sources]
        cmd = ["cc", "-shared", "-o", out, "-Wl,-soname,libtvm_ffi.so", "-Wl,-z,nodelete,-z,now"] + \
            self.ldflags + objs + LDLIBS
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise BuildError(res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "link failed")

    def mutant_library(self, src, mutant_path, tmp):
        """Copies the mutant beside the real sources' headers and builds a library."""
        # Compiled from its own folder, but with reference/ on the include
        # path, so "foo.h" includes resolve to the unmutated headers.
        obj = os.path.join(tmp, "mutant.o")
        staged = os.path.join(tmp, os.path.basename(src))
        shutil.copyfile(mutant_path, staged)
        self._compile(staged, obj)
        with open(obj, "rb") as f:
            code = f.read()
        lib = os.path.join(tmp, "libtvm_ffi.so")
        self.link(lib, replaced=src, mutant_obj=obj)
        return lib, hashlib.sha1(code).hexdigest()

    def original_digest(self, src):
        with open(self._obj(src), "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()


class BuildError(Exception):
    pass


def header_files(root, dlpack_include):
    """Every header a runtime source can include, in a fixed order."""
    found = []
    for top in (os.path.join(root, "reference"), dlpack_include):
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".h")]
    return found


def publish(path, dest):
    """Copies `path` to `dest` so that no reader sees half a file: another
    checkout may be filling the same shared cache at the same time."""
    tmp = "%s.%d.tmp" % (dest, os.getpid())
    if os.path.isdir(path):
        shutil.copytree(path, tmp)
    else:
        shutil.copyfile(path, tmp)
    try:
        os.rename(tmp, dest)
    except OSError:  # a directory another process published first
        shutil.rmtree(tmp, ignore_errors=True)


def runtime_sources(root):
    ref = os.path.join(root, "reference")
    return sorted("reference/" + f for f in os.listdir(ref)
                  if f.endswith(".c") and not f.endswith("_test.c"))


# ---- mutants ----------------------------------------------------------------

class Mutant:
    # The pool holds every mutant of every file (80,000 for the runtime) and
    # a sample reads a few hundred: each is read and compared with its
    # original only when first asked (line, before, after, diff).
    def __init__(self, src, path, original_lines):
        self.src, self.path = src, path
        self.original_lines = original_lines
        self.compared = None
        self.status, self.detail, self.asan = "", "", ""

    def _compare(self):
        if self.compared is None:
            original = self.original_lines
            with open(self.path, errors="replace") as f:
                mutated = f.read().splitlines()
            line, before, after = 0, "", ""
            for i, (a, b) in enumerate(zip(original, mutated)):
                if a != b:
                    line, before, after = i + 1, a, b
                    break
            else:
                if len(mutated) != len(original):
                    line = min(len(mutated), len(original)) + 1
                    before = original[line - 1] if line <= len(original) else ""
            diff = "".join(difflib.unified_diff(
                [l + "\n" for l in original], [l + "\n" for l in mutated],
                self.src, self.src + " (mutant)", n=1))
            self.compared = (line, before, after, diff)
        return self.compared

    line = property(lambda self: self._compare()[0])
    before = property(lambda self: self._compare()[1])
    after = property(lambda self: self._compare()[2])
    diff = property(lambda self: self._compare()[3])

    @property
    def key(self):
        # No line number: edits elsewhere in the file must not orphan an entry.
        return "%s\t%s\t%s" % (self.src, self.before.strip(), self.after.strip())

    def record(self):
        return {"file": self.src, "line": self.line, "before": self.before.strip(),
                "after": self.after.strip(), "status": self.status, "detail": self.detail,
                "asan": self.asan, "mutant": os.path.basename(self.path)}


def generate(root, files, work):
    mutate = mutate_command()
    pool = []
    # Keyed by the source's content and the mutator's pins, and shared by
    # every checkout: an edited source gets fresh mutants, an unchanged one
    # is not mutated again in a fresh clone.
    shared = os.path.join(cache_root(), "mutants", "generated")
    os.makedirs(shared, exist_ok=True)
    for src in files:
        with open(os.path.join(root, src), "rb") as f:
            digest = hashlib.sha1(f.read() + "\n".join(MUTATOR).encode()).hexdigest()[:12]
        out = os.path.join(shared, "%s-%s" % (os.path.basename(src)[:-2], digest))
        if not os.path.isdir(out):
            with tempfile.TemporaryDirectory(dir=work) as tmp:
                made = os.path.join(tmp, "mutants")
                os.makedirs(made)
                subprocess.run([mutate, os.path.join(root, src), "c", "--noCheck", "--mutantDir", made],
                               cwd=tmp, capture_output=True, text=True, check=True)
                publish(made, out)
        with open(os.path.join(root, src)) as f:
            original = f.read().splitlines()
        names = sorted(os.listdir(out), key=lambda n: int(re.findall(r"\d+", n)[-1]))
        pool += [Mutant(src, os.path.join(out, n), original) for n in names]
        log("mutants: %s: %d mutants" % (src, len(names)))
    return pool


def load_equivalent(path):
    """{key: reason} from lines 'file:line<TAB>original<TAB>mutated<TAB>reason'.
    The line number is for the reader; the match is on the two texts."""
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) >= 4:
                        src = parts[0].rsplit(":", 1)[0]
                        known["%s\t%s\t%s" % (src, parts[1].strip(), parts[2].strip())] = parts[3]
    return known


def order_binaries(suite, src, kills):
    """The binaries most likely to kill a mutant of `src` first: those that
    killed its earlier mutants, then those named after it, then the rest."""
    stem = os.path.basename(src)[:-2].split("_")[0]
    names = sorted(suite.binaries)
    # A Python area starts an interpreter and upstream's package: last.
    return sorted(names, key=lambda n: (-kills.get((src, n), 0), n in suite.python,
                                        not n.startswith(stem), n))


def judge(suite, builder, mutant, kills, seen, env_extra=None):
    """The verdict of one mutant. `seen` maps object digests to the verdicts
    already given: the same code cannot be told apart by any test."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            lib, digest = builder.mutant_library(mutant.src, mutant.path, tmp)
        except BuildError as e:
            return "build-broken", str(e)
        if digest == builder.original_digest(mutant.src):
            return "same code", "compiles to the unmutated object"
        if digest in seen:
            status, detail, where = seen[digest]
            return status, "same code as %s; %s" % (where, detail)
        status, detail = judge_library(suite, lib, mutant, kills, env_extra)
        seen[digest] = (status, detail, "%s:%d" % (mutant.src, mutant.line))
        return status, detail


def judge_library(suite, lib, mutant, kills, env_extra):
    for name in order_binaries(suite, mutant.src, kills):
        verdict, detail = suite.run(name, lib, env_extra)
        if verdict == "fail":
            kills[(mutant.src, name)] = kills.get((mutant.src, name), 0) + 1
            return "killed", detail
        if verdict == "timeout":
            return "timed out", detail
    if not env_extra and suite.pytests:
        verdict, detail = upstream_pytests(suite.root, lib)
        if verdict != "pass":
            return ("killed" if verdict == "fail" else "timed out"), detail
    return "survived", ""


def upstream_pytests(root, lib, baseline=False):
    """Upstream's own Python tests of the files in scope that build no C++ code
    (tools/upstream_pytests, --scope runtime),
    on upstream's package over `lib`: the oracle of the host support that
    only the package calls. Run last, for what the suite let through."""
    tool = os.path.join(root, "tools", "upstream_pytests", "upstream_pytests.py")
    with tempfile.TemporaryDirectory() as tmp:
        # --one-process: a mutant needs a verdict, not which file crashed;
        # one pytest start-up instead of one per file halves the run.
        argv = [sys.executable, tool, "--runtime", lib, "--scope", "runtime", "--jobs", "1",
                "--one-process", "--json", os.path.join(tmp, "results.json")] + \
            ([] if baseline else ["--no-baseline"])
        res = run_in_group(argv, None, 600, cwd=root)
        if res is None:
            return "timeout", "upstream_pytests: timed out"
    if res.returncode == 0:
        return "pass", ""
    lines = [l for l in res.stdout.splitlines() if "| DIFF" in l or "| CRASH" in l or "| ?" in l]
    return "fail", "upstream_pytests: " + (lines[0].strip() if lines else "exit %d" % res.returncode)[:180]


def asan_env():
    def lib(name):
        return subprocess.run(["cc", "-print-file-name=" + name], capture_output=True,
                              text=True).stdout.strip()
    # The suite's binaries are not instrumented: the runtimes go first.
    return {"LD_PRELOAD": "%s:%s" % (lib("libasan.so"), lib("libubsan.so")),
            "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:detect_odr_violation=0",
            "UBSAN_OPTIONS": "halt_on_error=1"}


# ---- report -------------------------------------------------------------------

COLUMNS = ["build-broken", "same code", "killed", "timed out", "equivalent", "survived"]


def tally(mutants):
    rows = {}
    for m in mutants:
        row = rows.setdefault(m.src, {c: 0 for c in COLUMNS + ["sampled", "asan-killed"]})
        row["sampled"] += 1
        row[m.status] += 1
        if m.asan == "killed":
            row["asan-killed"] += 1
    total = {c: sum(r[c] for r in rows.values()) for c in COLUMNS + ["sampled", "asan-killed"]}
    for r in list(rows.values()) + [total]:
        judged = r["killed"] + r["timed out"] + r["survived"]
        r["score"] = (r["killed"] + r["timed out"]) / judged if judged else None
    return rows, total


def print_table(rows, total, asan):
    head = ["file", "sampled"] + COLUMNS + (["asan-killed"] if asan else []) + ["score"]
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))

    def line(name, r):
        cells = [name, str(r["sampled"])] + [str(r[c]) for c in COLUMNS]
        if asan:
            cells.append(str(r["asan-killed"]))
        cells.append("-" if r["score"] is None else "%.1f%%" % (100 * r["score"]))
        print(" | ".join(cells))

    for name in sorted(rows):
        line(name, rows[name])
    line("all", total)


def parse_gate(words, root):
    """--gate NAME MIN [FILE ...]: a named sample with its own target; no
    files (or the word all) means every runtime source."""
    if len(words) < 2:
        sys.exit("mutants: --gate takes a name, a minimum score and the files")
    try:
        floor = float(words[1])
    except ValueError:
        sys.exit("mutants: --gate %s: the minimum score %r is not a number" % (words[0], words[1]))
    files = [f for f in words[2:] if f != "all"] or runtime_sources(root)
    return words[0], floor, files


def prepare(root, work, jobs):
    """The unmutated suite and runtime, checked: what every gate shares."""
    suite = Suite(root)
    builder = Builder(root, suite, work, sanitize=False)
    baseline = os.path.join(work, "libtvm_ffi.so")
    builder.link(baseline)

    def timed(name):
        t0 = time.time()
        verdict, detail = suite.run(name, baseline, timeout=600)
        return name, verdict, detail, time.time() - t0

    # Timed side by side, as the mutants will run: the clock each binary
    # gets (10x its time here) then includes the same sharing of the CPUs.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        for name, verdict, detail, took in ex.map(timed, sorted(suite.binaries)):
            if verdict != "pass":
                sys.exit("mutants: the unmutated runtime fails the suite (%s); fix that first" % detail)
            suite.timeouts[name] = max(30.0, 10 * took)
    log("mutants: unmutated runtime passes all %d binaries" % len(suite.binaries))
    # Upstream's Python tests judge mutants only where the unmutated runtime
    # runs them as upstream does (the package, the archive and upstream's
    # own results are at hand); otherwise they would kill everything.
    verdict, detail = upstream_pytests(root, baseline, baseline=True)
    suite.pytests = verdict == "pass"
    log("mutants: upstream's Python tests in scope %s" % (
        "judge what the suite lets through" if suite.pytests else "unavailable (%s): not used" % detail))
    return suite, builder


def draw_and_judge(suite, builder, pool, seed, want, jobs, memo):
    """Mutants in a seeded order until `want` of them compile to changed
    code. `memo` (kills, seen) carries over between gates: a mutant drawn
    twice is judged once."""
    order = list(pool)
    random.Random(seed).shuffle(order)
    want = want if want > 0 else len(order)
    equivalent = load_equivalent(os.path.join(HERE, "equivalent.txt"))
    kills, seen = memo
    chosen = []
    compiled = 0
    running = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        while order or running:
            while order and len(running) < max(1, jobs) and compiled + len(running) < want:
                m = order.pop(0)
                running[ex.submit(judge, suite, builder, m, kills, seen)] = m
            if not running:
                break
            finished, _ = concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in finished:
                m = running.pop(fut)
                status, detail = fut.result()
                if status == "survived" and m.key in equivalent:
                    status, detail = "equivalent", equivalent[m.key]
                m.status, m.detail = status, detail
                chosen.append(m)
                compiled += status not in ("build-broken", "same code")
                log("[%d/%d] %s:%d %s%s" % (compiled, want, m.src, m.line, status,
                                              (" (" + detail[:110] + ")") if detail else ""))
    chosen.sort(key=lambda m: (m.src, m.line))
    return chosen


def report(chosen, pool_size, seed, started, asan, json_path, min_score, name=None):
    """Prints the table, the survivors and the summary line; 1 below the target."""
    survivors = [m for m in chosen if m.status == "survived"]
    rows, total = tally(chosen)
    print_table(rows, total, asan)
    for m in survivors:
        print("\nsurvived: %s:%d%s\n%s" % (m.src, m.line, "  (killed under ASan)" if m.asan == "killed" else "",
                                          m.diff.rstrip()))
    elapsed = time.time() - started
    score = total["score"]
    print("\nmutants%s: %d drawn from %d (seed %d), %d compiled, %d to changed code, score %s, %.0f s" % (
        " (%s)" % name if name else "", len(chosen), pool_size, seed, len(chosen) - total["build-broken"],
        len(chosen) - total["build-broken"] - total["same code"],
        "-" if score is None else "%.1f%%" % (100 * score), elapsed), flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"seed": seed, "pool": pool_size, "seconds": elapsed,
                       "files": rows, "total": total,
                       "mutants": [m.record() for m in chosen]}, f, indent=1)
    if min_score is not None and (score is None or 100 * score < min_score):
        print("mutants%s: score below %.1f%%" % (" (%s)" % name if name else "", min_score))
        return 1
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs="*", help="runtime sources to mutate (default: every reference/*.c)")
    ap.add_argument("--gate", nargs="+", action="append", metavar="NAME MIN FILE",
                    help="a named sample with its own minimum score, over FILEs (none: every source); "
                         "repeat it for several, which share the setup and the verdicts")
    ap.add_argument("--sample", type=int, default=300, help="mutants to judge that compile to changed code (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--asan", action="store_true", help="run survivors again under ASan+UBSan")
    ap.add_argument("--json", help="write every mutant's outcome here")
    ap.add_argument("--json-dir", help="with --gate: write each gate's outcomes to DIR/NAME.json")
    ap.add_argument("--min-score", type=float, help="exit 1 when the score (percent) is below this")
    ap.add_argument("--work", help="working folder (default: a cache folder per checkout)")
    args = ap.parse_args(argv)
    if args.gate and (args.files or args.json or args.min_score is not None or args.asan):
        sys.exit("mutants: --gate names its own files and score; --files, --json, --min-score "
                 "and --asan are for a single run")

    root = workspace_root()
    started = time.time()
    here = os.environ.get("BUILD_WORKING_DIRECTORY", os.getcwd())
    work = args.work or os.path.join(cache_root(), "mutants", re.sub(r"[^A-Za-z0-9]", "_", root))
    os.makedirs(work, exist_ok=True)
    suite, builder = prepare(root, work, args.jobs)
    memo = ({}, {})

    if args.gate:
        failed = 0
        for words in args.gate:
            name, floor, files = parse_gate(words, root)
            t0 = time.time()
            pool = generate(root, files, work)
            chosen = draw_and_judge(suite, builder, pool, args.seed, args.sample, args.jobs, memo)
            out = os.path.join(here, args.json_dir, name + ".json") if args.json_dir else None
            failed |= report(chosen, len(pool), args.seed, t0, False, out, floor, name)
        log("mutants: %d gates in %.0f s" % (len(args.gate), time.time() - started))
        return failed

    files = args.files or runtime_sources(root)
    files = [os.path.relpath(os.path.join(here, f), root)
             if not f.startswith("reference/") else f for f in files]
    pool = generate(root, files, work)
    chosen = draw_and_judge(suite, builder, pool, args.seed, args.sample, args.jobs, memo)
    survivors = [m for m in chosen if m.status == "survived"]
    if args.asan and survivors:
        log("mutants: running %d survivors under ASan+UBSan" % len(survivors))
        abuilder = Builder(root, suite, work, sanitize=True)
        env = asan_env()
        for m in survivors:
            status, detail = judge(suite, abuilder, m, {}, {}, env)
            m.asan = status if status in ("killed", "timed out") else "survived"
    out = os.path.join(here, args.json) if args.json else None
    return report(chosen, len(pool), args.seed, started, args.asan, out, args.min_score)


if __name__ == "__main__":
    sys.exit(main())
