"""Upstream's own Python tests, run on any libtvm_ffi.so.

    bazel run //tools:upstream_pytests -- [--runtime reference|upstream|PATH]
        [--release 0.1.15.post2] [-k EXPR] [--files a.py,b.py] [--scope in|out|all]
        [--jobs N] [--one-process] [--json FILE] [--no-baseline] [--refresh-baseline]

The tests come from the release's source archive on PyPI (pip download, kept
in the releases cache). The package is the release's wheel, installed into a
fresh virtual environment whose tvm_ffi/lib/libtvm_ffi.so is then replaced by
the runtime under test. Before any test runs, a probe imports tvm_ffi there
and reads /proc/self/maps: unless the one libtvm_ffi.so mapped is the runtime
asked for (same bytes), the tool stops with an error. Every child repeats the
check at its end (proof_plugin.py), so each file's verdict says what it ran on.

Each test file runs in its own pytest process, so a crash is that file's
verdict (with the test that was running) and the run goes on; --one-process
runs them all in one, for a pass/fail verdict in half the time. Each file is
compared with upstream's own result for it (the same files, the same -k, on
the release's own library; cached per release): SAME when every test has the
outcome it has on upstream, else DIFF with the tests that differ. The scope
list (scope.txt beside this file) says which files a minimal runtime must
pass and why the others are out of scope. The exit status is 0 when every
in-scope file is SAME and no file crashed, 1 otherwise, 2 for a usage or
setup error (including a failed proof).
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.environ.get("BUILD_WORKSPACE_DIRECTORY") or os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "releases"))
import releases  # noqa: E402

sys.path.insert(0, HERE)
import swap  # noqa: E402
from swap import SwapError, check_mapped, prove, sha256  # noqa: E402

OUTCOMES = ("passed", "failed", "skipped", "errors")


SetupError = SwapError  # the run cannot start: what to fetch, build or prove failed


def runfile(path):
    """A file of the py_binary's runfiles, or of the workspace outside Bazel."""
    base = os.environ.get("RUNFILES_DIR")
    if base and os.path.exists(os.path.join(base, "tvm_ffi_conformance", path)):
        return os.path.join(base, "tvm_ffi_conformance", path)
    for root in (os.path.dirname(os.path.dirname(HERE)), ROOT):
        for candidate in (os.path.join(root, path), os.path.join(root, "bazel-bin", path)):
            if os.path.exists(candidate):
                return candidate
    return os.path.join(ROOT, "bazel-bin", path)


def pinned_release():
    with open(os.path.join(os.path.dirname(HERE), "requirements.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith(releases.PACKAGE + "=="):
                return line.split("==", 1)[1].strip()
    raise SetupError("tools/requirements.txt pins no %s" % releases.PACKAGE)


# ---------------------------------------------------------------- the scope

def read_scope(path):
    """{file: (scope, reason, tags)} from scope.txt: `in|out FILE [ci] [build] -- reason`."""
    scope = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            head, sep, reason = line.partition(" -- ")
            words = head.split()
            tags = frozenset(words[2:])
            if not sep or len(words) < 2 or words[0] not in ("in", "out") \
                    or not tags <= {"ci", "build"} or not reason.strip():
                raise SetupError("%s:%d: expected `in|out FILE [ci] [build] -- reason`" % (path, number))
            scope[words[1]] = (words[0], reason.strip(), tags)
    return scope


def test_files(source):
    tests = os.path.join(source, "tests", "python")
    found = []
    for sub in ("", "utils"):
        folder = os.path.join(tests, sub)
        found += sorted(os.path.join(sub, n) if sub else n for n in os.listdir(folder)
                        if n.startswith("test_") and n.endswith(".py"))
    return found


# ---------------------------------------------------------------- the venv

def unpack_sources(version, archive=None):
    """The release's source tree (tests included), unpacked once in the
    cache: from `archive` when given, else from the archive on PyPI."""
    dest = os.path.join(releases.cache_dir(), "sources", version)
    if os.path.isdir(os.path.join(dest, "tests", "python")):
        return dest
    if archive is None:
        try:
            archive = releases.sdist(version)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            raise SetupError("cannot fetch the source archive: %s" % e)
    tmp = dest + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    with tarfile.open(archive) as tar:
        top = os.path.commonpath(tar.getnames())
        if hasattr(tarfile, "data_filter"):
            tar.extractall(tmp, filter="data")
        else:
            tar.extractall(tmp)
    os.replace(os.path.join(tmp, top), dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def make_venv(folder, wheel, runtime):
    """A venv with the release's wheel installed and, when `runtime` is given,
    its libtvm_ffi.so replaced by that file. The project venv's packages
    (pytest, numpy) come after the venv's own on sys.path, so its tvm_ffi
    never shadows the copy. Returns (python, the package's library path,
    extra PYTHONPATH entries)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    subprocess.run([base, "-m", "venv", "--without-pip", folder], check=True,
                   capture_output=True)
    python = os.path.join(folder, "bin", "python")
    res = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                          "--no-deps", "--no-index", "--disable-pip-version-check", wheel],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SetupError("installing %s failed: %s" % (wheel, res.stderr.strip()[-500:]))
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "zz_project_packages.pth"), "w", encoding="utf-8") as f:
        f.write(sysconfig.get_paths()["purelib"] + "\n")
    lib = os.path.join(site, "tvm_ffi", "lib", "libtvm_ffi.so")
    if runtime:
        os.remove(lib)
        shutil.copyfile(runtime, lib)
    return python, lib, []


def make_environment(folder, version, runtime):
    """The package of `version` over `runtime` (None: its own library): a
    copy of the installed package when it is that release (no download),
    else a venv of the release's wheel. Returns (python, library, extra
    PYTHONPATH entries)."""
    try:
        _, installed = swap.installed_package()
    except SwapError:
        installed = None
    if installed == version:
        lib = swap.package_copy(runtime, folder)
        return sys.executable, lib, [folder]
    try:
        wheel = releases.wheel(version)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        raise SetupError("cannot fetch the wheel: %s" % e)
    return make_venv(folder, wheel, runtime)


# ---------------------------------------------------------------- one file

def parse_log(path):
    """Outcome per test, collection errors, the test running at the end, maps."""
    tests, order, errors, started, maps = {}, [], [], None, None
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a crash
                event = rec.get("event")
                if event == "start":
                    started = rec["nodeid"]
                    if started not in tests:
                        order.append(started)
                        tests[started] = None
                elif event == "report":
                    merge_report(tests, order, rec)
                    if rec["when"] == "teardown" and rec["nodeid"] == started:
                        started = None
                elif event == "collect_error":
                    errors.append({"nodeid": rec["nodeid"], "message": rec.get("message", "")})
                elif event == "maps":
                    maps = rec
    return tests, order, errors, started, maps


def merge_report(tests, order, rec):
    """A test's outcome from its setup, call and teardown reports, as pytest
    counts them: a failed setup or teardown is an error, xfail a skip."""
    nodeid = rec["nodeid"]
    if nodeid not in tests:
        order.append(nodeid)
        tests[nodeid] = None
    current = tests[nodeid]
    when, outcome = rec["when"], rec["outcome"]
    if outcome == "failed":
        new = "failed" if when == "call" else "errors"
        # A teardown error after a failed call counts as both in pytest; the
        # call's failure is the verdict kept here.
        if current in (None, "passed", "skipped") or (current == "failed" and when == "call"):
            tests[nodeid] = new
        if current is not None and current != "passed" and when == "teardown":
            tests[nodeid] = current
        record_message(tests, nodeid, rec)
    elif outcome == "skipped":
        if current is None:
            tests[nodeid] = "skipped"
        record_message(tests, nodeid, rec)
    elif outcome == "passed" and when == "call" and current is None:
        tests[nodeid] = "passed"


MESSAGES = {}


def record_message(tests, nodeid, rec):
    if rec.get("message") and (nodeid, rec["when"]) not in MESSAGES:
        MESSAGES[(nodeid, rec["when"])] = rec["message"]


def launch(python, source, names, env, k, timeout, log):
    """One pytest process over `names`; its events go to `log`.
    Returns (exit status or "timeout", signal name or None, seconds, output)."""
    if os.path.exists(log):
        os.remove(log)
    cmd = [python, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-p",
           "proof_plugin", "-q", "--no-header", "-rN"] + [os.path.join("tests", "python", n)
                                                          for n in names]
    if k:
        cmd += ["-k", k]
    path = [p for p in (env.get("PYTHONPATH", ""), HERE) if p]
    env = dict(env, UPSTREAM_PYTESTS_LOG=log, PYTHONPATH=os.pathsep.join(path))
    start = time.monotonic()
    status, signal_name = None, None
    with open(log + ".out", "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=source, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            status = "timeout"
    seconds = time.monotonic() - start
    with open(log + ".out", encoding="utf-8", errors="replace") as f:
        output_tail = f.read()[-3000:]
    if isinstance(status, int) and status < 0:
        import signal
        signal_name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
    return status, signal_name, seconds, output_tail


def process_crash(status, signal_name, maps, collect_errors, running, timeout):
    """Why the pytest process did not finish its session, or None."""
    if status == "timeout":
        return "timeout after %d s%s" % (timeout, " in " + running if running else "")
    if signal_name or maps is None:
        return "%s%s" % (signal_name or "exit %s without finishing the session" % status,
                         " in " + running if running else "")
    if status not in (0, 1, 5) and not collect_errors:
        # 2 without a collection error: interrupted; 3: internal error; 4: usage error
        return "pytest exit status %s" % status
    return None


def file_result(name, tests, order, collect_errors, crashed, maps, seconds, output_tail):
    counts = {o: 0 for o in OUTCOMES}
    for nodeid in order:
        if tests[nodeid] is not None:
            counts[tests[nodeid]] += 1
    counts["errors"] += len(collect_errors)
    messages = {}
    for nodeid in order:
        if tests[nodeid] in ("failed", "errors"):
            for when in ("setup", "call", "teardown"):
                if (nodeid, when) in MESSAGES:
                    messages[nodeid] = MESSAGES[(nodeid, when)][-1500:]
                    break
    return {
        "file": name,
        "counts": counts,
        "crashed": crashed,
        "tests": {nodeid: tests[nodeid] or "incomplete" for nodeid in order},
        "collect_errors": collect_errors,
        "messages": messages,
        "runtimes": maps["runtimes"] if maps else None,
        "seconds": round(seconds, 2),
        "output_tail": output_tail if crashed or collect_errors else "",
    }


def run_file(python, source, name, env, k, timeout, workdir):
    log = os.path.join(workdir, name.replace(os.sep, "_") + ".jsonl")
    status, signal_name, seconds, output_tail = launch(python, source, [name], env, k, timeout, log)
    tests, order, collect_errors, running, maps = parse_log(log)
    crashed = process_crash(status, signal_name, maps, collect_errors, running, timeout)
    return file_result(name, tests, order, collect_errors, crashed, maps, seconds, output_tail)


def file_of(nodeid):
    return nodeid.split("::", 1)[0].replace(os.path.join("tests", "python", ""), "", 1)


def run_in_one_process(python, source, files, env, k, timeout, workdir):
    """Every file in one pytest process (--one-process): one start-up instead
    of one per file. A crash ends the run: the file running then, and every
    file not reached, are CRASH; files that finished keep their results."""
    os.makedirs(workdir, exist_ok=True)
    log = os.path.join(workdir, "all.jsonl")
    status, signal_name, seconds, output_tail = launch(python, source, files, env, k,
                                                       timeout * len(files), log)
    tests, order, collect_errors, running, maps = parse_log(log)
    crash = process_crash(status, signal_name, maps, collect_errors, running, timeout * len(files))
    results = {}
    for name in files:
        mine = [n for n in order if file_of(n) == name]
        errors = [e for e in collect_errors if file_of(e["nodeid"]) == name]
        reached = mine or errors
        crashed = None
        if crash and (not reached or (running and file_of(running) == name) or running is None):
            crashed = crash if reached else "not reached: " + crash
        results[name] = file_result(name, {n: tests[n] for n in mine}, mine, errors, crashed,
                                    maps, seconds / len(files), output_tail)
    return results


# ---------------------------------------------------------------- the run

def run_all(python, source, files, env, args, workdir, on_done):
    os.makedirs(workdir, exist_ok=True)
    if args.one_process:
        results = run_in_one_process(python, source, files, env, args.k, args.timeout, workdir)
        for name in files:
            on_done(results[name])
        return results
    results = {}
    lock = threading.Lock()

    def one(name):
        result = run_file(python, source, name, env, args.k, args.timeout, workdir)
        with lock:
            results[name] = result
            on_done(result)
        return result

    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        list(pool.map(one, files))
    return results


def baseline_path(version, k):
    key = hashlib.sha256((k or "").encode()).hexdigest()[:12]
    return os.path.join(releases.cache_dir(), "upstream_pytests", "baseline-%s-%s.json" % (version, key))


def load_baseline(version, k):
    path = baseline_path(version, k)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    return {}


def save_baseline(version, k, results):
    path = baseline_path(version, k)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    known = load_baseline(version, k)
    known.update({name: {key: r[key] for key in ("counts", "crashed", "tests", "seconds")}
                  for name, r in results.items() if not r["crashed"]})
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(known, f, indent=1, sort_keys=True)
    os.replace(path + ".tmp", path)


def compare(result, base):
    """SAME, DIFF (tests whose outcome differs), CRASH, or '?' without a baseline."""
    if result["crashed"]:
        return "CRASH", []
    if base is None:
        return "?", []
    if base.get("crashed"):
        return "?", []
    mine, theirs = result["tests"], base["tests"]
    differ = sorted(n for n in set(mine) | set(theirs) if mine.get(n) != theirs.get(n))
    if result["collect_errors"] and not differ:
        differ = [e["nodeid"] for e in result["collect_errors"]]
    return ("SAME" if not differ else "DIFF"), [
        {"test": n, "outcome": mine.get(n, "absent"), "upstream": theirs.get(n, "absent")}
        for n in differ]


def table(rows, label):
    """The per-file table: this runtime's counts, upstream's, the verdict."""
    head = "%-38s %-5s %6s %6s %6s %6s %8s | %8s %8s | %s" % (
        "file", "scope", "passed", "failed", "skip", "errors", "seconds", "up.pass", "up.skip",
        "verdict (%s vs upstream)" % label)
    lines = [head, "-" * len(head)]
    for r in rows:
        c, base = r["counts"], r["upstream"]
        up = ("%8d %8d" % (base["counts"]["passed"], base["counts"]["skipped"])) if base else \
            "%8s %8s" % ("-", "-")
        extra = r["crashed"] or ("%d differ" % len(r["differences"]) if r["differences"] else "")
        lines.append("%-38s %-5s %6d %6d %6d %6d %8.1f | %s | %s%s" % (
            r["file"], r["scope"], c["passed"], c["failed"], c["skipped"], c["errors"],
            r["seconds"], up, r["verdict"], ("  " + extra) if extra else ""))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default="reference",
                        help="reference (default), upstream, or a path to a libtvm_ffi.so")
    parser.add_argument("--release", default=None, help="the release whose tests and package run "
                        "(default: the pinned one of tools/requirements.txt)")
    parser.add_argument("-k", dest="k", default=None, help="pytest -k expression for every file")
    parser.add_argument("--files", default=None, help="comma-separated test files (default: all)")
    parser.add_argument("--scope", choices=("in", "out", "all", "ci", "runtime"), default="all",
                        help="which files of the scope list run (ci: the bounded CI subset; "
                        "runtime: in scope, less the files that build C++ code)")
    parser.add_argument("--jobs", type=int, default=2, help="files run at once (default 2)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per file (default 900)")
    parser.add_argument("--one-process", action="store_true",
                        help="run every file in one pytest process: faster, but a crash "
                        "takes the files not yet run with it (for a pass/fail verdict)")
    parser.add_argument("--json", default=None, help="write the results here (default: "
                        "upstream-pytests/<runtime>.json in the workspace)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="do not run upstream for the files its cached results lack")
    parser.add_argument("--refresh-baseline", action="store_true",
                        help="run upstream again for every file, replacing the cached results")
    parser.add_argument("--keep", action="store_true", help="keep the venvs and logs (printed)")
    parser.add_argument("--sdist", default=None, help="the release's source archive (default: "
                        "fetched from PyPI into the cache)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except SetupError as e:
        print("upstream_pytests: error: %s" % e, file=sys.stderr)
        return 2


def resolve_runtime(spec):
    if spec == "upstream":
        return "upstream", None
    if spec == "reference":
        path = runfile("reference/libtvm_ffi.so")
        if not os.path.exists(path):
            raise SetupError("the reference runtime is not built (bazel build //reference:libtvm_ffi.so)")
        return "reference", os.path.realpath(path)
    path = os.path.abspath(spec)
    if not os.path.isfile(path):
        raise SetupError("--runtime %s: no such file" % spec)
    return os.path.basename(path), path


def run(args):
    started = time.monotonic()
    version = args.release or pinned_release()
    label, runtime = resolve_runtime(args.runtime)
    scope = read_scope(os.path.join(HERE, "scope.txt"))
    source = unpack_sources(version, args.sdist)
    files = test_files(source)
    unlisted = [f for f in files if f not in scope]
    if args.files:
        wanted = [f.strip() for f in args.files.split(",") if f.strip()]
        missing = [f for f in wanted if f not in files]
        if missing:
            raise SetupError("no such test file in %s: %s" % (version, ", ".join(missing)))
        files = wanted
    elif args.scope != "all":
        files = [f for f in files if scope.get(f, ("?",))[0] == args.scope
                 or (args.scope == "ci" and "ci" in scope.get(f, ("", "", ()))[2])
                 or (args.scope == "runtime" and scope.get(f, ("",))[0] == "in"
                     and "build" not in scope[f][2])]
    work = tempfile.mkdtemp(prefix="upstream_pytests-")
    try:
        venv_env = dict(os.environ)
        venv_env.pop("PYTHONPATH", None)
        venv_env["TVM_FFI_CACHE_DIR"] = os.path.join(work, "build-cache")
        python, lib, extra = make_environment(os.path.join(work, "venv"), version, runtime)
        env = dict(venv_env, PYTHONPATH=os.pathsep.join(extra)) if extra else venv_env
        expected_sha = sha256(runtime or lib)
        import_error = prove(python, lib, expected_sha, env)
        print("upstream_pytests: apache-tvm-ffi %s, %d test files; runtime %s (%s)" %
              (version, len(files), label, runtime or lib))
        print("  proof: the one libtvm_ffi.so mapped after `import tvm_ffi` is %s, sha256 %s"
              % (lib, expected_sha[:16]))
        if import_error:
            print("  note: `import tvm_ffi` fails on this runtime: %s" % import_error)
        if unlisted:
            print("  note: test files missing from scope.txt: %s" % ", ".join(unlisted))

        baseline = {} if label == "upstream" else load_baseline(version, args.k)
        need = [] if label == "upstream" else [
            f for f in files if args.refresh_baseline or (f not in baseline and not args.no_baseline)]
        total = len(files) + len(need)
        done = [0]

        def progress(prefix):
            def on_done(r):
                done[0] += 1
                c = r["counts"]
                print("[%3d/%d] %-9s %-38s %4d passed %3d failed %3d skipped %3d errors%s (%.1f s)" % (
                    done[0], total, prefix, r["file"], c["passed"], c["failed"], c["skipped"],
                    c["errors"], ("  CRASH: " + r["crashed"]) if r["crashed"] else "", r["seconds"]),
                    flush=True)
            return on_done

        if need:
            print("  upstream's own results for %d files are not cached: running them first" % len(need))
            up_python, up_lib, up_extra = make_environment(os.path.join(work, "venv-upstream"),
                                                           version, None)
            up_env = dict(venv_env, PYTHONPATH=os.pathsep.join(up_extra)) if up_extra else venv_env
            prove(up_python, up_lib, sha256(up_lib), up_env)
            up = run_all(up_python, source, need, up_env, args, os.path.join(work, "upstream"),
                         progress("upstream"))
            for r in up.values():
                if r["runtimes"] is not None:
                    check_mapped(r["runtimes"], up_lib, sha256(up_lib), "upstream's " + r["file"])
            save_baseline(version, args.k, up)
            baseline.update(up)

        results = run_all(python, source, files, env, args, os.path.join(work, "runs"),
                          progress(label))
        if label == "upstream":
            save_baseline(version, args.k, results)
            baseline = {n: r for n, r in results.items()}
        rows = []
        for name in files:
            r = results[name]
            proved = r["runtimes"] is not None and check_mapped(r["runtimes"], lib, expected_sha, name)
            base = baseline.get(name)
            verdict, differences = compare(r, base)
            # Upstream's counts only: on upstream the baseline is this very record.
            r.update(scope=scope.get(name, ("?",))[0], scope_reason=scope.get(name, ("", "?"))[1],
                     verdict=verdict, differences=differences, proved=proved,
                     upstream={"counts": dict(base["counts"]), "crashed": base["crashed"]}
                     if base else None)
            rows.append(r)
        return report(rows, label, runtime or lib, version, args, started, work, import_error)
    finally:
        if args.keep:
            print("kept: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def report(rows, label, runtime, version, args, started, work, import_error):
    print()
    print(table(rows, label))
    for r in rows:
        if r["verdict"] in ("DIFF", "CRASH") or r["collect_errors"]:
            print("\n%s (%s scope): %s" % (r["file"], r["scope"], r["crashed"] or
                                           "%d tests differ from upstream" % len(r["differences"])))
            for d in r["differences"][:15]:
                print("  %-70s %s (upstream: %s)" % (d["test"], d["outcome"], d["upstream"]))
                msg = r["messages"].get(d["test"])
                if msg:
                    print("      " + msg.strip().splitlines()[-1][:200])
            if len(r["differences"]) > 15:
                print("  ... and %d more (JSON)" % (len(r["differences"]) - 15))
            for e in r["collect_errors"][:3]:
                print("  collection error: %s" % e["message"].strip().splitlines()[-1][:200])
    totals = {}
    for r in rows:
        t = totals.setdefault(r["scope"], {o: 0 for o in OUTCOMES + ("files", "same", "crashed")})
        t["files"] += 1
        t["same"] += r["verdict"] == "SAME"
        t["crashed"] += bool(r["crashed"])
        for o in OUTCOMES:
            t[o] += r["counts"][o]
    seconds = time.monotonic() - started
    print()
    for name in ("in", "out", "?"):
        if name in totals:
            t = totals[name]
            print("%-3s scope: %d files, %d as on upstream, %d crashed; tests: %d passed, %d failed, "
                  "%d skipped, %d errors" % (name, t["files"], t["same"], t["crashed"], t["passed"],
                                             t["failed"], t["skipped"], t["errors"]))
    in_scope_ok = all(r["verdict"] == "SAME" for r in rows if r["scope"] == "in")
    no_crash = not any(r["crashed"] for r in rows)
    print("upstream_pytests %s on %s: %s (%.0f s)" % (
        version, label, "every in-scope file as on upstream, no crash" if in_scope_ok and no_crash
        else "NOT as on upstream" if no_crash else "CRASHED", seconds))
    out = args.json or os.path.join(ROOT, "upstream-pytests", "%s.json" % label)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"release": version, "runtime": label, "runtime_path": runtime,
                   "import_error": import_error, "k": args.k, "seconds": round(seconds, 1),
                   "totals": totals, "files": rows}, f, indent=1)
    print("results: %s" % out)
    return 0 if in_scope_ok and no_crash else 1


if __name__ == "__main__":
    sys.exit(main())
