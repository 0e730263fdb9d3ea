"""release_suite_test: the conformance suite against one release, as a Bazel test."""

def release_suite_test(name, release, lib):
    """Runs every conformance area against `lib` (a label holding one
    libtvm_ffi.so), recording the outcomes as those of `release`
    ("reference": the bundled runtime).

    The library is a declared input, so the test runs wherever Bazel sends
    it (a local job, a remote executor) and is cached like any test. It
    passes when the suite ran and its outcomes were recorded, whatever they
    are: they are the result (test.xml, judged by tools/matrix), not a pass
    or fail of the target. Tagged manual: `bazel test //...` never
    needs the releases."""
    native.py_test(
        name = name,
        srcs = ["release_test.py", "//conformance:suite_test.py"],
        main = "release_test.py",
        args = [release, "$(rootpath %s)" % lib, "$(rootpaths //conformance:areas)"],
        # No spec files: the runs are judged by tools/matrix, so a clause
        # edit does not invalidate them.
        data = [lib, "//conformance:areas"],
        deps = ["//tools:report_lib"],
        python_version = "PY3",
        # About 90 s of CPU; on a loaded machine several times that of wall
        # time, and a run cut short is a column lost.
        size = "large",
        tags = ["manual", "matrix", "novalgrind"],
    )
