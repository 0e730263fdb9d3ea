"""upstream's Python package over another libtvm_ffi.so, and the proof of it.

`package_copy` copies an installed `tvm_ffi` package (the project venv's
pinned release) with its dist-info into a folder of its own and replaces
its lib/libtvm_ffi.so by the runtime under test; putting that folder first
on PYTHONPATH makes `import tvm_ffi` load the copy, and the package's own
library search (its RECORD) find the swapped file. `prove` imports tvm_ffi
in a child and reads /proc/self/maps: the one libtvm_ffi.so mapped must be
the copy's, with the runtime's bytes, or it raises SwapError.
"""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.realpath(__file__))


class SwapError(Exception):
    """The package copy could not be made, or does not map the runtime asked for."""


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def installed_package():
    """(site folder, version) of the tvm_ffi this interpreter imports."""
    import importlib.util  # noqa: PLC0415
    spec = importlib.util.find_spec("tvm_ffi")
    if spec is None or not spec.origin:
        raise SwapError("tvm_ffi is not installed for %s" % sys.executable)
    site = os.path.dirname(os.path.dirname(spec.origin))
    infos = glob.glob(os.path.join(site, "apache_tvm_ffi-*.dist-info"))
    if len(infos) != 1:
        raise SwapError("expected one apache_tvm_ffi dist-info in %s, found %d" % (site, len(infos)))
    return site, os.path.basename(infos[0])[len("apache_tvm_ffi-"):-len(".dist-info")]


def package_copy(runtime, dest):
    """Copies the installed package into dest with its library replaced by
    `runtime` (None: kept). Returns the library path inside the copy."""
    site, _ = installed_package()
    os.makedirs(dest, exist_ok=True)
    shutil.copytree(os.path.join(site, "tvm_ffi"), os.path.join(dest, "tvm_ffi"), symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for info in glob.glob(os.path.join(site, "apache_tvm_ffi-*.dist-info")):
        shutil.copytree(info, os.path.join(dest, os.path.basename(info)))
    lib = os.path.join(dest, "tvm_ffi", "lib", "libtvm_ffi.so")
    if runtime:
        os.remove(lib)
        shutil.copyfile(runtime, lib)
    return lib


def mapped_runtimes():
    """(path, device, inode) of every mapped file named libtvm_ffi.so."""
    found = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and os.path.basename(parts[5].strip()) == "libtvm_ffi.so":
                    found.add((parts[5].strip(), parts[3], int(parts[4])))
    except OSError:
        pass
    return sorted(found)


_PROBE = """
import json, sys
sys.path.insert(0, %r)
import swap
error = None
try:
    import tvm_ffi
except BaseException as e:
    error = "%%s: %%s" %% (type(e).__name__, e)
print(json.dumps({"runtimes": swap.mapped_runtimes(), "import_error": error}))
"""


def check_mapped(runtimes, lib, expected_sha, who):
    """Raises SwapError unless the one libtvm_ffi.so mapped is `lib` with
    the expected bytes. None mapped (a process that never imported tvm_ffi)
    proves nothing and is allowed, except for the probe. Returns whether
    one was mapped."""
    paths = sorted({path for path, _, _ in runtimes})
    if not paths and who != "the probe":
        return False
    if len(paths) != 1:
        raise SwapError("%s mapped %d libtvm_ffi.so files (%s), expected exactly %s"
                        % (who, len(paths), ", ".join(paths) or "none", lib))
    if os.path.realpath(paths[0]) != os.path.realpath(lib):
        raise SwapError("%s mapped %s, not the package's %s" % (who, paths[0], lib))
    if sha256(paths[0]) != expected_sha:
        raise SwapError("%s mapped %s, whose content is not the runtime asked for" % (who, lib))
    return True


def prove(python, lib, expected_sha, env):
    """Imports tvm_ffi with `python` under `env` and checks what it mapped.
    Returns the import error text (None when tvm_ffi imports)."""
    res = subprocess.run([python, "-c", _PROBE % HERE], capture_output=True, text=True, env=env,
                         timeout=300)
    try:
        probe = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SwapError("the probe died (exit %d) before reading /proc/self/maps: %s"
                        % (res.returncode, res.stderr.strip()[-500:]))
    check_mapped(probe["runtimes"], lib, expected_sha, "the probe")
    return probe["import_error"]


def main(argv):
    """swap.py DEST RUNTIME: a copy of the installed package in DEST over
    RUNTIME, proved; put DEST first on PYTHONPATH to use it."""
    if len(argv) != 2:
        print("usage: swap.py DEST LIBTVM_FFI_SO", file=sys.stderr)
        return 2
    dest, runtime = (os.path.abspath(a) for a in argv)
    try:
        lib = package_copy(runtime, dest)
        env = dict(os.environ, PYTHONPATH=dest)
        error = prove(sys.executable, lib, sha256(runtime), env)
    except (SwapError, OSError) as e:
        print("swap.py: error: %s" % e, file=sys.stderr)
        return 1
    print("tvm_ffi %s over %s (proved: the one libtvm_ffi.so mapped after import)"
          % (installed_package()[1], runtime))
    if error:
        print("  but `import tvm_ffi` fails there: %s" % error)
    print("  use it with: PYTHONPATH=%s" % dest)
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
