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

def _find_wheel(ctx, cache, prefix, suffix = ".whl"):
    res = ctx.execute(["sh", "-c", "ls -1 '%s' 2>/dev/null | grep -F '%s' | grep -F '%s' | head -n 1" % (cache, prefix, suffix)])
    name = res.stdout.strip()
    return cache + "/" + name if name else None

def _sdist(ctx):
    """The source archive of the requirement (pip builds only its metadata)."""
    name, version = ctx.attr.requirement.split("==")
    archive_name = name.replace("-", "_") + "-" + version + ".tar.gz"
    cache = _cache_dir(ctx).rsplit("/", 1)[0] + "/sdists"
    archive = cache + "/" + archive_name
    if not ctx.path(archive).exists:
        ctx.execute(["mkdir", "-p", cache])
        res = ctx.execute([find_python(ctx), "-m", "pip", "download", "--no-deps", "--no-binary=" + name,
                           "--disable-pip-version-check", "-q", "-d", cache, ctx.attr.requirement],
                          timeout = 600)
        if not ctx.path(archive).exists:
            reason = (res.stderr.strip().split("\n") or ["pip download failed"])[-1]
            ctx.file("status.txt", "unavailable: %s (source archive): %s\n" % (ctx.attr.requirement, reason))
            return
    if ctx.attr.sha256:
        res = ctx.execute(["sha256sum", archive])
        got = res.stdout.split(" ")[0] if res.return_code == 0 else "?"
        if got != ctx.attr.sha256:
            ctx.file("status.txt", "unavailable: %s: sha256 %s, expected %s\n" % (archive, got, ctx.attr.sha256))
            return
    ctx.symlink(archive, "sdist.tar.gz")
    ctx.file("status.txt", "available: %s\n" % archive_name)

def _impl(ctx):
    ctx.file("WORKSPACE", "")
    ctx.file("BUILD", _BUILD)
    if ctx.attr.sdist:
        _sdist(ctx)
        return
    name, version = ctx.attr.requirement.split("==")
    prefix = name.replace("-", "_") + "-" + version + "-"
    cache = _cache_dir(ctx)
    wheel = _find_wheel(ctx, cache, prefix)
    if wheel == None:
        ctx.execute(["mkdir", "-p", cache])
        python = find_python(ctx)
        res = ctx.execute([python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                           "--disable-pip-version-check", "-q", "-d", cache, ctx.attr.requirement],
                          timeout = 300)
        wheel = _find_wheel(ctx, cache, prefix)
        if wheel == None:
            reason = (res.stderr.strip().split("\n") or ["pip download failed"])[-1]
            ctx.file("status.txt", "unavailable: %s: %s\n" % (ctx.attr.requirement, reason))
            return
    if ctx.attr.sha256:
        res = ctx.execute(["sha256sum", wheel])
        got = res.stdout.split(" ")[0] if res.return_code == 0 else "?"
        if got != ctx.attr.sha256:
            ctx.file("status.txt", "unavailable: %s: sha256 %s, expected %s\n" % (wheel, got, ctx.attr.sha256))
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
