"""The CUDA toolkit as @cuda: where nvcc is and how to link the CUDA runtime.

tools/find_cuda.sh decides (the same answer tools/bootstrap.sh gets). The
repository holds defs.bzl, for genrules that run nvcc, and the toolkit's
driver stubs (`@cuda//:driver_stubs`, its lib64/stubs/libcuda.so and
friends; empty where the toolkit has none), which certify loads kernel
libraries against on a machine without an NVIDIA driver:

    load("@cuda//:defs.bzl", "NVCC", "CUDART_LINK")

NVCC is the absolute path of nvcc. CUDART_LINK are the nvcc flags that link
the shared CUDA runtime from the toolkit's library folder and put that folder
in the RPATH (so a host and its tests share one runtime instance). Where no
toolkit is found, NVCC is a script that fails naming what was looked at, so
only the CUDA targets fail and the rest of the build goes on.
"""

_BUILD = """# defs.bzl and the driver stubs; see tools/bazel/cuda.bzl
package(default_visibility = ["//visibility:public"])

filegroup(
    name = "driver_stubs",
    srcs = glob(["stubs/*.so"], allow_empty = True),
)
"""

def _link_stubs(ctx, lib):
    """Links the toolkit's lib64/stubs driver libraries into stubs/."""
    for name in ["libcuda.so", "libnvidia-ml.so"]:
        for folder in [lib + "/stubs", lib + "/../lib64/stubs", lib + "/../targets/x86_64-linux/lib/stubs"]:
            if lib and ctx.path(folder + "/" + name).exists:
                ctx.symlink(folder + "/" + name, "stubs/" + name)
                break

def _impl(ctx):
    ctx.file("WORKSPACE", "")
    ctx.file("BUILD", _BUILD)
    finder = ctx.path(Label("//tools:find_cuda.sh"))
    res = ctx.execute([str(finder)])
    if res.return_code != 0:
        reason = res.stdout.strip() or res.stderr.strip()
        ctx.file("nvcc_missing.sh", "#!/bin/sh\necho 'no CUDA toolkit: %s; run tools/bootstrap.sh' >&2\nexit 1\n" %
                                    reason.replace("'", ""), executable = True)
        ctx.file("defs.bzl", "\n".join([
            "CUDA_FOUND_BY = None",
            'CUDA_LIB = ""',
            "NVCC = %r" % str(ctx.path("nvcc_missing.sh")),
            'CUDART_LINK = ""',
            "",
        ]))
        return
    found = {}
    for line in res.stdout.strip().split("\n"):
        key, _, value = line.partition("=")
        found[key] = value
    lib = found["lib"]
    _link_stubs(ctx, lib)
    link = ["-cudart none"]
    if lib:
        link += ["-L" + lib, found["cudart"], "-Xlinker -rpath," + lib]
    else:
        link.append(found["cudart"])
    ctx.file("defs.bzl", "\n".join([
        "# Found by tools/find_cuda.sh: " + found["found_by"],
        "CUDA_FOUND_BY = %r" % found["found_by"],
        # The folder of libcudart, and the RUNPATH the CUDA kernels carry.
        "CUDA_LIB = %r" % lib,
        "NVCC = %r" % found["nvcc"],
        "CUDART_LINK = %r" % " ".join(link),
        "",
    ]))

cuda_toolkit = repository_rule(
    implementation = _impl,
    local = True,
    environ = ["CUDA_HOME", "CUDA_PATH", "PATH"],
)
