"""Makes the pip-installed apache-tvm-ffi visible to Bazel as @tvm_ffi_upstream.

The package is found by asking the project's Python (python.bzl's
find_python: the venv tools/bootstrap.sh made) where `tvm_ffi` lives, so the
build uses exactly the release that tools/requirements.txt pinned.
"""

load(":python.bzl", "find_python")

_BUILD = """
package(default_visibility = ["//visibility:public"])

# DLPack alone, in a folder of its own: the reference runtime takes its
# dlpack.h from here without also seeing upstream's tvm/ffi headers.
cc_library(
    name = "dlpack",
    hdrs = ["dlpack_include/dlpack/dlpack.h"],
    includes = ["dlpack_include"],
)

# Upstream's public headers (tvm/ffi/c_api.h and the C++ headers), for the
# side-by-side layout check and for kernels written against upstream.
cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
)

# The same headers as files, for tools that compile against them at run time.
filegroup(
    name = "header_files",
    srcs = glob(["include/**/*.h"]),
)

filegroup(
    name = "libtvm_ffi",
    srcs = ["lib/libtvm_ffi.so"],
)

# Upstream's own test library: third-party code for the drop-in checks.
filegroup(
    name = "libtvm_ffi_testing",
    srcs = ["lib/libtvm_ffi_testing.so"],
)

cc_import(
    name = "libtvm_ffi_import",
    shared_library = "lib/libtvm_ffi.so",
)

exports_files(["VERSION"])
"""

def _impl(ctx):
    python = find_python(ctx)
    res = ctx.execute([python, "-c", "import os, tvm_ffi; print(os.path.dirname(tvm_ffi.__file__)); print(tvm_ffi.__version__)"])
    if res.return_code != 0:
        fail("the pip package apache-tvm-ffi is not importable by %s; run tools/bootstrap.sh\n%s" % (python, res.stderr))
    root, version = res.stdout.strip().split("\n")[:2]
    ctx.symlink(root + "/include", "include")
    ctx.symlink(root + "/include/dlpack/dlpack.h", "dlpack_include/dlpack/dlpack.h")
    ctx.symlink(root + "/lib/libtvm_ffi.so", "lib/libtvm_ffi.so")
    ctx.symlink(root + "/lib/libtvm_ffi_testing.so", "lib/libtvm_ffi_testing.so")
    ctx.file("VERSION", version + "\n")
    ctx.file("WORKSPACE", "")
    ctx.file("BUILD", _BUILD)

tvm_ffi_upstream = repository_rule(
    implementation = _impl,
    local = True,
    environ = ["PATH", "PYENV_VERSION", "VIRTUAL_ENV"],
)
