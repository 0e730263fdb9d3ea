"""The apache-tvm-ffi releases on PyPI, fetched once and unpacked in a cache.

Every tool that looks at more than the pinned release (the layout table, the
cross-release matrix, certify's symbol table) takes its releases from here,
so they agree on which releases exist and where their files are. Wheels are
downloaded with `pip download --no-deps` into
$TVMFFI_CONFORMANCE_CACHE/wheels (default ~/.cache/tvm-ffi-conformance) and
unpacked beside them under releases/<version>/; reruns, offline, use the cache.
"""

import os
import re
import subprocess
import sys
import zipfile

PACKAGE = "apache-tvm-ffi"


def cache_dir():
    root = os.environ.get("TVMFFI_CONFORMANCE_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tvm-ffi-conformance")
    return root


def version_key(v):
    """0.1.8.post2 sorts after 0.1.8.post1 and before 0.1.9."""
    nums = [int(x) for x in re.findall(r"\d+", v)]
    return nums + [-1] * (5 - len(nums))


def _cached_wheel(version):
    wheels = os.path.join(cache_dir(), "wheels")
    prefix = "apache_tvm_ffi-%s-" % version
    if os.path.isdir(wheels):
        for name in sorted(os.listdir(wheels)):
            if name.startswith(prefix) and name.endswith(".whl"):
                return os.path.join(wheels, name)
    return None


def cached_versions():
    wheels = os.path.join(cache_dir(), "wheels")
    found = set()
    if os.path.isdir(wheels):
        for name in os.listdir(wheels):
            m = re.match(r"apache_tvm_ffi-([0-9][^-]*)-.*\.whl$", name)
            if m:
                found.add(m.group(1))
    return sorted(found, key=version_key)


def available_versions():
    """Every release pip can see, oldest first; the cache's when pip can't answer."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "index", "versions", PACKAGE, "--disable-pip-version-check"],
            capture_output=True, text=True, timeout=120).stdout
        m = re.search(r"Available versions:\s*(.*)", out)
        if m:
            return sorted((v.strip() for v in m.group(1).split(",")), key=version_key)
    except (OSError, subprocess.TimeoutExpired):
        pass
    return cached_versions()


def fetch(version):
    """Returns the unpacked release folder (holding tvm_ffi/include and tvm_ffi/lib),
    or raises RuntimeError with the reason it cannot be had."""
    dest = os.path.join(cache_dir(), "releases", version)
    if os.path.exists(os.path.join(dest, "tvm_ffi", "lib", "libtvm_ffi.so")):
        return dest
    wheel = _cached_wheel(version)
    if wheel is None:
        wheels = os.path.join(cache_dir(), "wheels")
        os.makedirs(wheels, exist_ok=True)
        res = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
             "--disable-pip-version-check", "-d", wheels, "%s==%s" % (PACKAGE, version)],
            capture_output=True, text=True, timeout=600)
        wheel = _cached_wheel(version)
        if wheel is None:
            lines = (res.stderr or res.stdout or "pip download failed").strip().splitlines()
            raise RuntimeError("%s==%s: %s" % (PACKAGE, version, lines[-1] if lines else "?"))
    tmp = dest + ".partial"
    with zipfile.ZipFile(wheel) as z:
        members = [m for m in z.namelist()
                   if m.startswith("tvm_ffi/include/") or m.startswith("tvm_ffi/lib/")]
        z.extractall(tmp, members)
    os.replace(tmp, dest)
    return dest


def select(spec):
    """`all`, or a comma-separated list of versions."""
    if spec in (None, "", "all"):
        return available_versions()
    return sorted((v.strip() for v in spec.split(",") if v.strip()), key=version_key)


def main(argv):
    """`releases.py fetch VERSION...` (certify --releases uses it): fetches
    each release into the cache and prints one line per version,
    VERSION<tab>FOLDER, or VERSION<tab>error: REASON."""
    if len(argv) < 2 or argv[0] != "fetch":
        print("usage: releases.py fetch VERSION...", file=sys.stderr)
        return 2
    for version in argv[1:]:
        try:
            print("%s\t%s" % (version, fetch(version)), flush=True)
        except (RuntimeError, OSError, subprocess.TimeoutExpired, zipfile.BadZipFile) as e:
            print("%s\terror: %s" % (version, str(e).replace("\n", " ")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
