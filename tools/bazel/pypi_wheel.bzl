"""Third-party wheels (or a source archive) from PyPI as Bazel inputs,
fetched once into a cache.

Tests that run on libraries nobody here wrote take them from a repository
made by this rule. The wheel is downloaded with `pip download --no-deps`
into a cache outside the workspace (reruns and offline runs use the cache),
checked against its pinned sha256, and unpacked. When it cannot be had, the
repository still builds: `status.txt` then says "unavailable: <reason>" and
the tests that need it SKIP with that reason instead of failing the build.
"""

load(":python.bzl", "find_python")

_BUILD = """
package(default_visibility = ["//visibility:public"])

exports_files(["status.txt"])

filegroup(
    name = "files",
    srcs = glob(["wheel/**"]),
)

# With sdist = True: the source archive itself, unpacked by its user.
filegroup(
    name = "archive",
    srcs = glob(["sdist.tar.gz"]),
)
"""

def _cache_dir(ctx):
    explicit = ctx.os.environ.get("TVMFFI_CONFORMANCE_CACHE")
    if explicit:
        return explicit + "/wheels"
    home = ctx.os.environ.get("XDG_CACHE_HOME") or (ctx.os.environ.get("HOME", "/tmp") + "/.cache")
    return home + "/tvm-ffi-conformance/wheels"

def _find_wheel(ctx, cache, prefix):
    res = ctx.execute(["sh", "-c", "ls -1 '%s' 2>/dev/null | grep -F '%s' | grep '\\.whl$' | head -n 1" % (cache, prefix)])
    name = res.stdout.strip()
    return cache + "/" + name if name else None

def _find_archive(ctx, cache, path):
    return path if ctx.path(path).exists else None

def _fetch(ctx, cache, find, what, binary_flag):
    """The cached file find(ctx, cache, what) names, downloaded first when missing; None
    with status.txt saying why when it cannot be had or its sha256 is not
    the pinned one."""
    found = find(ctx, cache, what)
    if found == None:
        ctx.execute(["mkdir", "-p", cache])
        res = ctx.execute([find_python(ctx), "-m", "pip", "download", "--no-deps", binary_flag,
                           "--disable-pip-version-check", "-q", "-d", cache, ctx.attr.requirement],
                          timeout = 600)
        found = find(ctx, cache, what)
        if found == None:
            reason = (res.stderr.strip().split("\n") or ["pip download failed"])[-1]
            ctx.file("status.txt", "unavailable: %s: %s\n" % (ctx.attr.requirement, reason))
            return None
    if ctx.attr.sha256:
        res = ctx.execute(["sha256sum", found])
        got = res.stdout.split(" ")[0] if res.return_code == 0 else "?"
        if got != ctx.attr.sha256:
            ctx.file("status.txt", "unavailable: %s: sha256 %s, expected %s\n" % (found, got, ctx.attr.sha256))
            return None
    return found

def _impl(ctx):
    ctx.file("WORKSPACE", "")
    ctx.file("BUILD", _BUILD)
    name, version = ctx.attr.requirement.split("==")
    if ctx.attr.sdist:
        # Only this package as source (pip builds its metadata from wheels).
        cache = _cache_dir(ctx).rsplit("/", 1)[0] + "/sdists"
        archive = cache + "/" + name.replace("-", "_") + "-" + version + ".tar.gz"
        found = _fetch(ctx, cache, _find_archive, archive, "--no-binary=" + name)
        if found != None:
            ctx.symlink(found, "sdist.tar.gz")
            ctx.file("status.txt", "available: %s\n" % found.split("/")[-1])
        return
    cache = _cache_dir(ctx)
    prefix = name.replace("-", "_") + "-" + version + "-"
    wheel = _fetch(ctx, cache, _find_wheel, prefix, "--only-binary=:all:")
    if wheel == None:
        return
    # Bazel 4 picks the archive format by extension only.
    ctx.symlink(wheel, "wheel.zip")
    ctx.extract("wheel.zip", output = "wheel")
    ctx.file("status.txt", "available: %s\n" % wheel.split("/")[-1])

pypi_wheel = repository_rule(
    implementation = _impl,
    attrs = {
        "requirement": attr.string(mandatory = True, doc = "name==version"),
        "sha256": attr.string(doc = "of the wheel (or archive) file; empty: not checked"),
        "sdist": attr.bool(default = False, doc = "fetch the source archive instead of a wheel"),
    },
    local = True,
    environ = ["TVMFFI_CONFORMANCE_CACHE", "XDG_CACHE_HOME", "HOME"],
)
