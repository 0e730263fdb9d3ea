"""fuzz_harness: one libFuzzer harness, its standalone binary and its replay test."""

load("//tools/bazel:copts.bzl", "C_WARNINGS")

# The libraries a runtime-facing harness may load (conformance/impl_load.h).
IMPLEMENTATIONS = [
    "//reference:libtvm_ffi.so",
    "@tvm_ffi_upstream//:libtvm_ffi",
]

def fuzz_harness(name, deps = [], data = [], dict = None, extra_srcs = [], runtime = False,
                 replay_env = []):
    """Declares //fuzz:<name> and //fuzz:<name>_replay_test.

    <name> is the libFuzzer binary under --config=fuzz (which defines
    fuzz=libfuzzer) and a plain replayer of its arguments otherwise, so
    `bazel build //...` never needs libFuzzer. <name>_replay_test feeds
    every file of corpus/<name>/ to the harness once, as an ordinary test.
    extra_srcs: code under test compiled into the harness (e.g. a parser).

    runtime: the harness drives the C API of whichever implementation
    TVMFFI_IMPL names (fuzz/impl_api.h) instead of linking the reference;
    its replay test judges each crash_ input against that implementation
    and spec/deviations.md (fuzz/replay_test.py), with replay_env
    (["NAME=value"]) in its environment.
    """
    srcs = [name + "_fuzz.c", "fuzz_common.h"] + extra_srcs
    corpus = native.glob(["corpus/%s/*" % name])
    dict_args = ["-dict=$(rootpath %s)" % dict] if dict else []
    copts = C_WARNINGS + ["-D_GNU_SOURCE"]
    under_test = ["//fuzz:impl_api"] if runtime else ["//reference:runtime"]
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = copts,
        # Under libFuzzer the first corpus directory receives new inputs:
        # that is the runfiles copy, never the committed corpus.
        args = dict_args + ["fuzz/corpus/" + name],
        data = corpus + data + ([dict] if dict else []) + (IMPLEMENTATIONS if runtime else []),
        # The C++ sanitizer runtimes too: an instrumented C++ runtime loaded
        # at run time (fuzz/build_upstream.sh) calls into them.
        linkopts = select({
            "//fuzz:libfuzzer": ["-fsanitize=fuzzer", "-fsanitize-link-c++-runtime"],
            "//conditions:default": [],
        }),
        deps = under_test + deps + select({
            "//fuzz:libfuzzer": [],
            "//conditions:default": ["//fuzz:replay_main"],
        }),
    )
    if runtime:
        native.py_test(
            name = name + "_replay_test",
            srcs = ["replay_test.py"],
            main = "replay_test.py",
            args = ["--env=" + e for e in replay_env] + ["$(rootpath :%s)" % name, "fuzz/corpus/" + name],
            data = [":" + name, "upstream_ubsan.supp", "//spec:report_inputs"] + corpus + data,
            python_version = "PY3",
            # Against a library that fails some inputs, each failure is
            # found by halving the batch: more runs than the one batch.
            size = "medium",
            # valgrind would check the Python interpreter, not the harness.
            tags = ["novalgrind"],
            deps = ["//tools:report_lib"],
        )
        return
    native.cc_test(
        name = name + "_replay_test",
        srcs = srcs,
        copts = copts,
        args = ["fuzz/corpus/" + name],
        data = corpus + data,
        size = "small",
        # The runtime's tffi_ symbols are hidden: only a static link sees them.
        linkstatic = True,
        deps = under_test + ["//fuzz:replay_main"] + deps,
    )
