"""conformance_test: a Criterion binary that loads the implementation under test."""

IMPLEMENTATIONS = [
    "//reference:libtvm_ffi.so",
    "@tvm_ffi_upstream//:libtvm_ffi",
]

def conformance_test(name, srcs = None, deps = [], data = [], **kwargs):
    """A cc_test of srcs (default name.c) with the loader and the *_support.h helpers."""
    native.cc_test(
        name = name,
        srcs = srcs or [name + ".c"],
        copts = ["-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE"],
        deps = [
            "//conformance:impl",
            "//conformance:support",
        ] + deps,
        data = IMPLEMENTATIONS + data,
        size = kwargs.pop("size", "small"),
        # Run by //conformance:suite_test, which judges them clause by
        # clause; `bazel test //conformance:NAME` still runs one alone.
        tags = ["manual", "conformance_area"] + kwargs.pop("tags", []),
        **kwargs
    )
