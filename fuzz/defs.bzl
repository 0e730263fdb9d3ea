"""fuzz_harness: one libFuzzer harness, its standalone binary and its replay test."""

load("//tools/bazel:copts.bzl", "C_WARNINGS")

def fuzz_harness(name, deps = [], data = [], dict = None, extra_srcs = []):
    """Declares //fuzz:<name> and //fuzz:<name>_replay_test.

    <name> is the libFuzzer binary under --config=fuzz (which defines
    fuzz=libfuzzer) and a plain replayer of its arguments otherwise, so
    `bazel build //...` never needs libFuzzer. <name>_replay_test feeds
    every file of corpus/<name>/ to the harness once, as an ordinary test.
    extra_srcs: code under test compiled into the harness (e.g. a kernel).
    """
    srcs = [name + "_fuzz.c", "fuzz_common.h"] + extra_srcs
    corpus = native.glob(["corpus/%s/*" % name])
    dict_args = ["-dict=$(rootpath %s)" % dict] if dict else []
    copts = C_WARNINGS + ["-D_GNU_SOURCE"]
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = copts,
        # Under libFuzzer the first corpus directory receives new inputs:
        # that is the runfiles copy, never the committed corpus.
        args = dict_args + ["fuzz/corpus/" + name],
        data = corpus + data + ([dict] if dict else []),
        linkopts = select({
            "//fuzz:libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = ["//reference:runtime"] + deps + select({
            "//fuzz:libfuzzer": [],
            "//conditions:default": ["//fuzz:replay_main"],
        }),
    )
    native.cc_test(
        name = name + "_replay_test",
        srcs = srcs,
        copts = copts,
        args = ["fuzz/corpus/" + name],
        data = corpus + data,
        size = "small",
        # The runtime's tffi_ symbols are hidden: only a static link sees them.
        linkstatic = True,
        deps = ["//reference:runtime", "//fuzz:replay_main"] + deps,
    )
