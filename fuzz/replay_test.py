"""A runtime-facing harness's corpus replayed against the implementation
under test (TVMFFI_IMPL; --config=upstream; default the bundled reference),
judged like the conformance suite (tools/report.py).

Every `crash_*` and `regress_*` file runs in a process of its own: it is
one test case, named after the file without its prefix (`crash_ENV_009_x`
is ENV_009_x, which names clause ENV-009), in the suite `fuzz_<harness>`.
The other files (seeds and merged finds) run together as the case `corpus`;
when that fails, the batch is halved until each failing file is found, and
each becomes a case `corpus_<file>`.

A case that fails against a library is KNOWN when spec/deviations.md lists
`fuzz_<harness>::<case>` for the release it reports, and never for the
bundled reference, which must pass every input. The clause checks (and
error kinds) that the release's section lists on its "Fuzz tolerates:"
line are tolerated (FUZZ_TOLERATE, fuzz/fuzz_common.h): they are recorded
deviations, and the inputs go on to everything else. Memory is bounded the way a
campaign bounds it: libFuzzer builds get -rss_limit_mb and -malloc_limit_mb,
ASan builds max_allocation_size_mb, and plain builds an address-space cap,
so an input that makes a runtime allocate gigabytes fails instead of taking
the machine's memory.

Arguments: [--env=NAME=value ...] the harness binary (runfiles path), the
corpus folder.
"""
import os
import re
import resource
import subprocess
import sys
import tempfile

from tools import report

TIMEOUT_S = 120
MALLOC_LIMIT_MB = 1024
RSS_LIMIT_MB = 2048
PLAIN_AS_LIMIT = 3 << 30
BANNER = re.compile(r"^fuzz \S+: implementation under test: (.*) \(TVMFFIGetVersion ([^,)]*)(, the bundled reference)?\)$",
                    re.M)
NAMED = re.compile(r"^(?:crash|regress)_([A-Z]{2,5}_\d{3}_.*)$")


def binary_kind(path):
    with open(path, "rb") as f:
        data = f.read()
    return {"libfuzzer": b"LLVMFuzzerRunDriver" in data, "asan": b"__asan_init" in data}


def tolerated(deviations_md, version):
    """The "Fuzz tolerates:" items of the section for a reported version."""
    items, current = [], None
    with open(deviations_md, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                m = re.search(r"reports (\d+\.\d+\.\d+)", line)
                current = m.group(1) if m else None
            elif current == version and line.startswith("Fuzz tolerates:"):
                items += re.findall(r"`([^`]+)`", line)
    return ",".join(items)


def run(binary, kind, files, tolerate=""):
    """Runs the harness on files; returns (status, output)."""
    args = [os.path.abspath(binary)]
    env = dict(os.environ)
    if tolerate:
        env["FUZZ_TOLERATE"] = tolerate
        # An instrumented upstream (fuzz/build_upstream.sh) reports the
        # UBSan findings of upstream_ubsan.supp on nearly every input.
        supp = os.path.abspath("fuzz/upstream_ubsan.supp")
        opts = env.get("UBSAN_OPTIONS", "")
        env["UBSAN_OPTIONS"] = (opts + ":" if opts else "") + "suppressions=" + supp
    preexec = None
    if kind["libfuzzer"]:
        args += ["-runs=0", f"-rss_limit_mb={RSS_LIMIT_MB}", f"-malloc_limit_mb={MALLOC_LIMIT_MB}",
                 f"-timeout={TIMEOUT_S // 2}"]
    if kind["asan"]:
        opts = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + f"max_allocation_size_mb={MALLOC_LIMIT_MB}"
    else:
        def preexec():
            resource.setrlimit(resource.RLIMIT_AS, (PLAIN_AS_LIMIT, PLAIN_AS_LIMIT))
    try:
        p = subprocess.run(args + files, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT_S, preexec_fn=preexec)
    except subprocess.TimeoutExpired as exc:
        return "TIMEOUT", (exc.output or b"").decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode == 0:
        return "PASSED", out
    return "CRASHED", out


def failing(binary, kind, files, tolerate):
    """The inputs that fail alone, found by halving a failing batch:
    [(file, status, output)]."""
    if len(files) == 1:
        status, out = run(binary, kind, files, tolerate)
        return [] if status == "PASSED" else [(files[0], status, out)]
    found = []
    for half in (files[:len(files) // 2], files[len(files) // 2:]):
        if run(binary, kind, half, tolerate)[0] != "PASSED":
            found += failing(binary, kind, half, tolerate)
    return found


def failure_message(out):
    """The line that says what broke: a failed check or a sanitizer's summary."""
    for pattern in (r"check failed: .*", r"SUMMARY: .*", r"==\d+==ERROR: .*", r"deadly signal.*",
                    r"out-of-memory.*", r"runtime error: .*"):
        m = re.search(pattern, out)
        if m:
            return m.group(0)[:300]
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1][:300] if lines else "the harness failed"


def case(suite, name, status, out, impl):
    rec = {"target": "", "suite": suite, "name": name, "status": status, "impl": impl,
           "message": "", "detail": ""}
    if status != "PASSED":
        rec["message"] = failure_message(out)
        rec["detail"] = rec["message"] + "\n" + out[-3000:]
    return rec


def main(binary, corpus):
    harness = os.path.basename(binary)
    suite = "fuzz_" + harness
    target = f"//fuzz:{harness}_replay_test"
    kind = binary_kind(binary)
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus) if not f.startswith("."))
    special = [f for f in files if os.path.basename(f).startswith(("crash_", "regress_"))]
    seeds = [f for f in files if f not in special]
    if not files:
        print(f"{target}: no corpus files in {corpus}")
        return 1

    # An empty input: which library, and that it loads.
    empty = os.path.join(tempfile.mkdtemp(), "empty")
    open(empty, "wb").close()
    status, out = run(binary, kind, [empty])
    banner = BANNER.search(out)
    if not banner:
        print(out)
        print(f"{target}: the harness printed no banner (did the library load?)")
        return 1
    impl = {"implementation": banner.group(1), "version": banner.group(2),
            "bundled_reference": "1" if banner.group(3) else "0", "load_error": ""}
    srcdir = os.path.join(os.environ.get("TEST_SRCDIR", "."), os.environ.get("TEST_WORKSPACE", ""))
    spec = os.path.join(srcdir, "spec")
    tolerate = "" if banner.group(3) else tolerated(os.path.join(spec, "deviations.md"), banner.group(2))
    print(f"{target}: {banner.group(0)}")
    print(f"{target}: {len(seeds)} corpus inputs, {len(special)} crash_/regress_ inputs"
          + (f"; tolerated as recorded deviations: {tolerate}" if tolerate else ""))
    status, out = run(binary, kind, seeds, tolerate) if seeds else ("PASSED", "")

    raw = []
    if status == "PASSED":
        raw.append(case(suite, "corpus", "PASSED", out, impl))
    else:
        for f, s, o in failing(binary, kind, seeds, tolerate):
            raw.append(case(suite, "corpus_" + os.path.basename(f), s, o, impl))
        if not raw:  # the batch failed, no input alone does: report the batch
            raw.append(case(suite, "corpus", status, out, impl))
    for f in special:
        base = os.path.basename(f)
        m = NAMED.match(base)
        s, o = run(binary, kind, [f], tolerate)
        raw.append(case(suite, m.group(1) if m else base, s, o, impl))
    for rec in raw:
        rec["target"] = target

    records, rows, totals = report.build(raw, spec)
    outdir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR") or tempfile.mkdtemp()
    args = report.argparse.Namespace(problems_only=False, label=suite, json=os.path.join(outdir, "report.json"),
                                     junit=os.environ.get("XML_OUTPUT_FILE"), html=None)
    return report.emit(records, rows, totals, args, srcdir)


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    argv = sys.argv[1:]
    while argv and argv[0].startswith("--env="):
        name, _, value = argv.pop(0)[len("--env="):].partition("=")
        os.environ[name] = value
    sys.exit(main(argv[0], argv[1]))
