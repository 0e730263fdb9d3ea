"""Every cached apache-tvm-ffi release as a Bazel input: @tvm_ffi_releases.

The cross-release matrix (tools/matrix) runs the conformance suite against
each release as one Bazel test whose input is that release's libtvm_ffi.so,
so Bazel schedules the runs like any other tests: across local jobs, or on a
remote-execution cluster, with no change.

This rule never downloads anything: it exposes what tools/releases/releases.py
already unpacked under $TVMFFI_CONFORMANCE_CACHE/releases (default
~/.cache/tvm-ffi-conformance/releases). On a machine that has none, the
repository is empty and RELEASES is [], so loading it costs nothing.
`bazel run //tools:matrix` fetches first, then passes the list it fetched as
--repo_env=TVMFFI_RELEASES_STAMP, which makes Bazel read the cache again.

Targets: `@tvm_ffi_releases//:lib_<version>` (the release's libtvm_ffi.so);
`releases.bzl` defines RELEASES, the versions, oldest first.
"""

def _cache_dir(ctx):
    explicit = ctx.os.environ.get("TVMFFI_CONFORMANCE_CACHE")
    if explicit:
        return explicit
    home = ctx.os.environ.get("XDG_CACHE_HOME") or (ctx.os.environ.get("HOME", "/tmp") + "/.cache")
    return home + "/tvm-ffi-conformance"

def _is_version(name):
    # 0.1.0, 0.1.8.post2: digits and dots, with an optional postN part.
    for part in name.replace(".post", ".").split("."):
        if not part.isdigit():
            return False
    return len(name.split(".")) >= 3

def _version_key(name):
    nums = [int(p) for p in name.replace(".post", ".").split(".")]
    return nums + [-1] * (5 - len(nums))

def _impl(ctx):
    releases = _cache_dir(ctx) + "/releases"
    listing = ctx.execute(["ls", "-1", releases])
    found = []
    for name in (listing.stdout.split("\n") if listing.return_code == 0 else []):
        name = name.strip()
        if not _is_version(name):
            continue  # .partial folders of an interrupted unpack, stray files
        lib = ctx.path(releases + "/" + name + "/tvm_ffi/lib/libtvm_ffi.so")
        if not lib.exists:
            continue
        ctx.symlink(lib, name + "/lib/libtvm_ffi.so")
        found.append(name)
    found = sorted(found, key = _version_key)
    build = ["package(default_visibility = [\"//visibility:public\"])", ""]
    for name in found:
        build.append("filegroup(name = \"lib_%s\", srcs = [\"%s/lib/libtvm_ffi.so\"])" % (name, name))
    ctx.file("BUILD", "\n".join(build) + "\n")
    ctx.file("WORKSPACE", "")
    ctx.file("releases.bzl", "RELEASES = %s\n" % repr(found))

tvm_ffi_releases = repository_rule(
    implementation = _impl,
    local = True,
    environ = ["TVMFFI_CONFORMANCE_CACHE", "XDG_CACHE_HOME", "HOME", "TVMFFI_RELEASES_STAMP"],
)
