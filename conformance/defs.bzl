"""conformance_test: a Criterion binary that loads the implementation under test."""

load("//tools/bazel:copts.bzl", "C_WARNINGS")

IMPLEMENTATIONS = [
    "//reference:libtvm_ffi.so",
    "@tvm_ffi_upstream//:libtvm_ffi",
]

def _area_tags():
    # The areas of //conformance are run by //conformance:suite_test, which
    # judges them clause by clause; `bazel test //conformance:NAME` still
    # runs one alone. Users of this macro elsewhere (kernels) stay ordinary.
    if native.package_name() == "conformance":
        return ["manual", "conformance_area"]
    return []

def conformance_test(name, srcs = None, deps = [], data = [], **kwargs):
    """A cc_test of srcs (default name.c) with the loader and the *_support.h helpers."""
    native.cc_test(
        name = name,
        srcs = srcs or [name + ".c"],
        copts = C_WARNINGS + ["-D_GNU_SOURCE"],
        deps = [
            "//conformance:alloc_fail",
            "//conformance:impl",
            "//conformance:support",
        ] + deps,
        data = IMPLEMENTATIONS + data,
        size = kwargs.pop("size", "small"),
        tags = _area_tags() + kwargs.pop("tags", []),
        **kwargs
    )

def conformance_areas():
    """Names of every area test declared so far in this package: the suite
    runs all of them, so an area added later cannot be left out."""
    return sorted([
        r["name"]
        for r in native.existing_rules().values()
        if "conformance_area" in (r.get("tags") or [])
    ])
