"""Every cached apache-tvm-ffi release as a Bazel input: @tvm_ffi_releases.

The cross-release matrix (tools/matrix) runs the conformance suite against
each release as one Bazel test whose input is that release's libtvm_ffi.so,
so Bazel schedules the runs like any other tests: across local jobs, or on a
remote-execution cluster, with no change.

It exposes what tools/releases/releases.py already unpacked under
$TVMFFI_CONFORMANCE_CACHE/releases (default ~/.cache/tvm-ffi-conformance/
releases), and fetches only the few releases `fetch` names (certify's
fixtures built against old headers and its per-release test need them);
one that cannot be fetched is left out, and status.txt says why. On a
machine with an empty cache and no network, RELEASES is [] and loading it
costs nothing. `bazel run //tools:matrix` fetches first, then passes the
list it fetched as --repo_env=TVMFFI_RELEASES_STAMP, which makes Bazel read
the cache again.

Targets: `@tvm_ffi_releases//:lib_<version>` (the release's libtvm_ffi.so),
`:headers_<version>` (its C and C++ headers, with its dlpack.h, as a
cc_library; `:header_files_<version>` the same as files); `releases.bzl` defines RELEASES, the versions, oldest first;
`status.txt` lists the fetches that failed, one line each.
"""

load(":python.bzl", "find_python")

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

def _fetch(ctx, releases):
    """Fetches the releases of ctx.attr.fetch the cache lacks; returns the
    lines of status.txt."""
    missing = [v for v in ctx.attr.fetch
               if not ctx.path(releases + "/" + v + "/tvm_ffi/lib/libtvm_ffi.so").exists]
    if not missing:
        return []
    script = ctx.path(Label("//tools/releases:releases.py"))
    res = ctx.execute([find_python(ctx), str(script), "fetch"] + missing, timeout = 900,
                      environment = {"TVMFFI_CONFORMANCE_CACHE": releases[:-len("/releases")]})
    status = []
    for line in res.stdout.split("\n"):
        parts = line.split("\t")
        if len(parts) == 2 and parts[1].startswith("error: "):
            status.append("unavailable: apache-tvm-ffi==%s: %s" % (parts[0], parts[1][len("error: "):]))
    if res.return_code != 0:
        status.append("unavailable: %s: %s" % (", ".join(missing), (res.stderr.strip().split("\n") or ["?"])[-1]))
    return status

def _impl(ctx):
    releases = _cache_dir(ctx) + "/releases"
    status = _fetch(ctx, releases)
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
        ctx.symlink(releases + "/" + name + "/tvm_ffi/include", name + "/include")
        found.append(name)
    found = sorted(found, key = _version_key)
    build = ["package(default_visibility = [\"//visibility:public\"])", ""]
    for name in found:
        build.append("filegroup(name = \"lib_%s\", srcs = [\"%s/lib/libtvm_ffi.so\"])" % (name, name))
        build.append("cc_library(name = \"headers_%s\", hdrs = glob([\"%s/include/**/*.h\"]), " % (name, name) +
                     "includes = [\"%s/include\"])" % name)
        build.append("filegroup(name = \"header_files_%s\", srcs = glob([\"%s/include/**/*.h\"]))" % (name, name))
    build.append("exports_files([\"status.txt\"])")
    ctx.file("BUILD", "\n".join(build) + "\n")
    ctx.file("WORKSPACE", "")
    ctx.file("releases.bzl", "RELEASES = %s\n" % repr(found))
    ctx.file("status.txt", "".join([line + "\n" for line in status]))

tvm_ffi_releases = repository_rule(
    implementation = _impl,
    attrs = {
        "fetch": attr.string_list(doc = "releases to fetch into the cache when it lacks them"),
    },
    local = True,
    environ = ["TVMFFI_CONFORMANCE_CACHE", "XDG_CACHE_HOME", "HOME", "TVMFFI_RELEASES_STAMP"],
)
