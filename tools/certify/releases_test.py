"""certify --releases end to end: which releases a library runs on.

The fixtures of kernels/releases are our kernels built against chosen
releases' own headers (the C++ drop-in against 0.1.3, 0.1.7 and 0.1.8.post2,
the C scale kernel against 0.1.0). Each is certified under a handful of
releases taken from the release cache (@tvm_ffi_releases, fetched once) and
the reference, and the per-release answer is asserted exactly, with the
cause each failing release names; with every release in the cache, one
`--releases all` run answers for all of them. A fixture or release the
cache could not provide is a skip with the reason (status.txt).

Run by `bazel test //tools/certify:releases_test`.
"""

import os
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_test import DRIVER_STUB, NONSTRICT, UNTESTED, USAGE, Run, data_path, parse_html, runfile  # noqa: E402

RELEASES = runfile("../tvm_ffi_releases")
FIXTURES = runfile("kernels/releases")
# The handful the default runs use: both sides of every change that
# matters to these fixtures (0.1.2 registers type info for POD indices,
# 0.1.8.post0 grew the error cell).
CHOSEN = ["0.1.0", "0.1.2", "0.1.7", "0.1.8.post0", "0.1.15.post2"]

TYPE_INFO_EXIT = ("the call ended the process with exit(255) instead of returning after printing "
                  "'InternalError: Check failed: (entry != nullptr) is false: Cannot find type info "
                  "for type_index=7'")
OLD_ERROR_CELL = ("error cells made by the library are 56 bytes; these runtimes read 72: built against "
                  "headers older than 0.1.8.post0, see spec/layouts.md")

# fixture: the answer under CHOSEN and the reference (no range spans a
# release that was not run).
ANSWERS = {
    "libscale_dropin_0.1.3.so":
        "runs on: 0.1.2, 0.1.7; fails on: 0.1.0 (%s); 0.1.8.post0, 0.1.15.post2, reference (%s)"
        % (TYPE_INFO_EXIT, OLD_ERROR_CELL),
    "libscale_dropin_0.1.7.so":
        "runs on: 0.1.2, 0.1.7; fails on: 0.1.0 (%s); 0.1.8.post0, 0.1.15.post2, reference (%s)"
        % (TYPE_INFO_EXIT, OLD_ERROR_CELL),
    "libscale_dropin_0.1.8.post2.so":
        "runs on: 0.1.2, 0.1.7, 0.1.8.post0, 0.1.15.post2, reference; fails on: 0.1.0 (%s)" % TYPE_INFO_EXIT,
    "libscale_cpu_0.1.0.so": "runs on: 0.1.0, 0.1.2, 0.1.7, 0.1.8.post0, 0.1.15.post2, reference",
}

# The 0.1.7 drop-in under every release.
ALL_ANSWER = ("runs on: 0.1.2 - 0.1.7; fails on: 0.1.0, 0.1.1 (%s); 0.1.8.post0 - 0.1.15.post2, reference (%s)"
              % (TYPE_INFO_EXIT, OLD_ERROR_CELL))


def status():
    try:
        with open(os.path.join(RELEASES, "status.txt")) as f:
            return f.read().strip()
    except OSError as e:
        return "unavailable: %s" % e


def cached():
    """The releases whose libtvm_ffi.so this test has as an input."""
    if not os.path.isdir(RELEASES):
        return []
    return [v for v in os.listdir(RELEASES) if os.path.exists(os.path.join(RELEASES, v, "lib", "libtvm_ffi.so"))]


def cache_env(versions):
    """A release cache (the layout tools/releases writes) holding exactly
    `versions`, offline: certify may not fetch inside a test."""
    root = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    for v in versions:
        lib = os.path.join(root, "releases", v, "tvm_ffi", "lib")
        os.makedirs(lib)
        os.symlink(os.path.realpath(os.path.join(RELEASES, v, "lib", "libtvm_ffi.so")),
                   os.path.join(lib, "libtvm_ffi.so"))
    env = dict(os.environ, TVMFFI_CONFORMANCE_CACHE=root, TVMFFI_CONFORMANCE_OFFLINE="1")
    return env


def need_releases(versions):
    missing = sorted(set(versions) - set(cached()))
    if missing:
        pytest.skip("releases %s are not in the release cache (%s)" % (", ".join(missing), status() or "no reason given"))


def need(versions, fixture):
    need_releases(versions)
    path = os.path.join(FIXTURES, fixture)
    if not os.path.exists(path):
        pytest.skip("%s was not built: its release's headers are not in the cache (%s)" % (fixture, status()))
    return path


def certify_releases(fixture, versions, spec=None):
    path = need(versions, fixture)
    run = Run(path, "--releases", spec or ",".join(versions), env=cache_env(versions),
              reports=("json", "junit", "html"))
    assert run.report is not None, run.explain()
    return run


def rows(run):
    return {r["release"]: r for r in run.report["releases"]}


@pytest.mark.parametrize("fixture", sorted(ANSWERS))
def test_CDY_040_each_fixture_gets_its_exact_per_release_answer(fixture):
    run = certify_releases(fixture, CHOSEN)
    assert run.report["answer"] == ANSWERS[fixture], run.explain()
    # The answer is the last line of the output.
    assert run.stdout.rstrip("\n").splitlines()[-1] == "certify: " + ANSWERS[fixture], run.explain()
    assert [r["release"] for r in run.report["releases"]] == CHOSEN + ["reference"]
    assert run.report["runtimes"][0] == "reference"
    failing = {v for v, r in rows(run).items() if r["status"] == "fails"}
    assert bool(failing) == bool(run.rc & 4), run.explain()
    for v, r in rows(run).items():
        if r["status"] == "runs":
            assert r["check"] == "" and r["cause"] == "", r
            continue
        assert r["check"] and r["clause"] and r["cause"], r
    if "dropin_0.1.3" in fixture or "dropin_0.1.7" in fixture:
        for v in ("0.1.8.post0", "0.1.15.post2", "reference"):
            row = rows(run)[v]
            assert (row["check"], row["clause"], row["function"]) == (
                "probe.error-readback", "CDY-040", "scale_dropin"), row
            # The finding names the layout change that explains it.
            x = [f for f in run.findings("FAIL") if f["runtime"] == v and f["check"] == "probe.error-readback"]
            assert x and "TVMFFIErrorCell grew from 56 to 72 bytes at 0.1.8.post0" in x[0]["reason"], x
            assert "cause_chain at cell offset 56" in x[0]["evidence"], x
            assert "Rebuild the library against apache-tvm-ffi >= 0.1.8.post0" in x[0]["reason"], x
    # One JUnit test case per release, failing where the release fails.
    cases = [c for c in ET.parse(run.path("junit")).getroot().iter("testcase")
             if c.get("classname", "").endswith(".releases")]
    assert [c.get("name") for c in cases] == CHOSEN + ["reference"]
    assert {c.get("name") for c in cases if c.find("failure") is not None} == failing
    # The page holds the release x check grid and the answer.
    page, parser = parse_html(run.path("html"))
    assert 'id="releases"' in page and not parser.errors
    assert ANSWERS[fixture].split(" (")[0] in "".join(parser.text)


def test_every_release_at_once_with_byte_identical_runtimes_run_once():
    if os.environ.get("CERTIFY_SANITIZED"):
        pytest.skip("certify is built with %s here: every release would take many minutes, and the "
                    "per-fixture runs cover the same code" % os.environ["CERTIFY_SANITIZED"])
    versions = cached()
    every = ["0.1.%d" % n for n in range(8)] + ["0.1.8.post0", "0.1.8.post1", "0.1.8.post2"] + [
        "0.1.%d" % n for n in range(9, 13)] + ["0.1.13.post2", "0.1.13.post3", "0.1.14.post0", "0.1.14.post1",
                                               "0.1.15.post1", "0.1.15.post2"]
    need(every, "libscale_dropin_0.1.7.so")
    run = certify_releases("libscale_dropin_0.1.7.so", versions, spec="all")
    assert run.report["answer"] == ALL_ANSWER, run.explain()
    table = rows(run)
    assert table["0.1.8.post1"]["same_as"] == "0.1.8.post0"
    assert table["0.1.13.post3"]["same_as"] == "0.1.13.post2"
    assert table["0.1.15.post2"]["same_as"] == "0.1.15.post1"
    assert "0.1.8.post1" not in run.report["runtimes"]
    assert len(run.report["runtimes"]) == len(every) - 3 + 1


def test_a_release_that_cannot_be_had_is_skipped_with_the_reason():
    run = certify_releases("libscale_cpu_0.1.0.so", ["0.1.0"], spec="0.1.0,0.1.99")
    row = rows(run)["0.1.99"]
    assert row["status"] == "skipped", row
    assert "not in the release cache" in row["cause"] and "offline" in row["cause"], row
    assert run.report["answer"].endswith("not run: 0.1.99 (%s)" % row["cause"]), run.explain()
    assert run.rc == 0, run.explain()


def test_CDY_002_a_release_where_nothing_could_be_called_is_untested_not_runs():
    """Eight parameters and no manifest: every guessed call is refused under
    every runtime, so no release is shown as one the library runs on."""
    need_releases(["0.1.15.post2"])
    run = Run(data_path("libcert_takes8.so"), "--releases", "0.1.15.post2", env=cache_env(["0.1.15.post2"]),
              reports=("json", "junit"))
    assert run.report is not None, run.explain()
    why = ("nothing could be called: no call got past the argument checks of its 1 function; give a manifest "
           "(--manifest) that describes valid calls")
    assert run.report["answer"] == "untested on: 0.1.15.post2, reference (%s)" % why, run.explain()
    assert {r["status"] for r in run.report["releases"]} == {"untested"}, run.explain()
    assert run.rc & UNTESTED and not run.rc & 4, run.explain()
    assert run.report["verdict"] == "NOT CERTIFIED", run.explain()
    cases = [c for c in ET.parse(run.path("junit")).getroot().iter("testcase")
             if c.get("classname", "").endswith(".releases")]
    assert [c.find("skipped") is not None for c in cases] == [True, True], run.explain()


def test_release_runs_load_a_cuda_library_against_the_driver_stub():
    """The per-release runs load as the default run does: where this machine
    has no NVIDIA driver, the toolkit's stub stands in, so the CUDA-only
    kernel is reached (its NULL-strides crash is the NONSTRICT finding) and
    never reported untested for want of a driver."""
    if os.path.exists("/dev/nvidiactl"):
        pytest.skip("this machine has an NVIDIA driver")
    if not os.path.exists(DRIVER_STUB):
        pytest.skip("the CUDA toolkit has no driver stub here")
    need_releases(["0.1.15.post2"])
    run = Run(data_path("libcert_cuda_dsl.so"), "--releases", "0.1.15.post2", env=cache_env(["0.1.15.post2"]))
    assert run.report is not None, run.explain()
    assert run.report["answer"] == "runs on: 0.1.15.post2, reference", run.explain()
    legacy = [x for x in run.findings() if x["function"] == "add_one" and x["check"] == "probe.legacy-forms"]
    assert {x["runtime"] for x in legacy if x["verdict"] == "NONSTRICT"} == {"0.1.15.post2", "reference"}, \
        run.explain()
    assert run.rc == NONSTRICT, run.explain()


def test_releases_takes_no_runtime_and_names_real_versions():
    for args in (["--releases", "all", "--runtime", "upstream"], ["--releases", "0.1.x"]):
        run = Run(runfile("kernels/libscale_cpu.so"), *args)
        assert run.rc == USAGE, run.explain()
        assert "--releases" in run.stderr, run.stderr


if __name__ == "__main__":
    args = [__file__, "-v", "-p", "no:cacheprovider"]
    if os.environ.get("XML_OUTPUT_FILE"):
        args.append("--junitxml=" + os.environ["XML_OUTPUT_FILE"])
    sys.exit(pytest.main(args))
