"""gpu_bundle: one tarball that runs the GPU checks where there is no Bazel.

The tarball (gpu_bundle/) holds the test binaries with one shared runfiles
tree (runfiles/<workspace>/..., runfiles/<external repo>/...), the list of
tests (TESTS), the shared libraries they need that a bare Debian or Ubuntu
lacks (lib/, lib/cuda/ for the CUDA runtime), found by ldd when packing, and
the runner (run_gpu_tests.sh). See kernels/bundle/README.md.
"""

def _runfiles_path(ctx, f):
    # short_path is "pkg/file" in this workspace, "../repo/file" in another.
    if f.short_path.startswith("../"):
        return f.short_path[3:]
    return ctx.workspace_name + "/" + f.short_path

def _gpu_bundle_impl(ctx):
    files = {}
    tests = []
    for t in ctx.attr.tests:
        info = t[DefaultInfo]
        exe = info.files_to_run.executable
        tests.append(_runfiles_path(ctx, exe))
        for f in info.default_runfiles.files.to_list() + [exe]:
            files[_runfiles_path(ctx, f)] = f
    for d in ctx.attr.data:
        for f in d[DefaultInfo].files.to_list():
            files[_runfiles_path(ctx, f)] = f
    for s in ctx.attr.scripts:
        for f in s[DefaultInfo].files.to_list():
            tests.append(_runfiles_path(ctx, f))
            files[_runfiles_path(ctx, f)] = f
    manifest = ctx.actions.declare_file(ctx.label.name + ".manifest")
    ctx.actions.write(
        manifest,
        "".join(["%s\t%s\n" % (dest, files[dest].path) for dest in sorted(files)]),
    )
    test_list = ctx.actions.declare_file(ctx.label.name + ".tests")
    ctx.actions.write(test_list, "\n".join(tests) + "\n")
    out = ctx.actions.declare_file(ctx.label.name + ".tar.gz")
    ctx.actions.run(
        executable = ctx.executable.packer,
        arguments = [
            out.path,
            manifest.path,
            test_list.path,
            ctx.file.runner.path,
            ctx.file.readme.path,
            ctx.workspace_name,
        ],
        inputs = [manifest, test_list, ctx.file.runner, ctx.file.readme] + files.values(),
        outputs = [out],
        mnemonic = "GpuBundle",
        progress_message = "Packing the GPU bundle %s" % out.short_path,
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

gpu_bundle = rule(
    implementation = _gpu_bundle_impl,
    attrs = {
        "tests": attr.label_list(doc = "Test binaries, each run by the runner"),
        "scripts": attr.label_list(allow_files = True, doc = "Python tests, run with python3"),
        "data": attr.label_list(allow_files = True, doc = "More runfiles"),
        "runner": attr.label(allow_single_file = True, mandatory = True),
        "readme": attr.label(allow_single_file = True, mandatory = True),
        "packer": attr.label(executable = True, cfg = "exec", mandatory = True),
    },
)
