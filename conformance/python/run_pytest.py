"""Bazel entry point: runs the pytest files beside it with this interpreter.

Bazel starts it with the project's Python (the venv tools/bootstrap.sh gave
the pinned pip apache-tvm-ffi, see tools/bazel/python.bzl), so the tests
exercise upstream's Python package. The package runs over the
implementation under test: with TVMFFI_IMPL=upstream over its own library;
otherwise over a copy of the package whose lib/libtvm_ffi.so is the
implementation (the bundled reference runtime by default, or the file
TVMFFI_IMPL names), first on PYTHONPATH, after a child process proved
(/proc/self/maps) that `import tvm_ffi` maps exactly that file. The
tests learn what they run on from CONF_PYTHON_RUNTIME.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "upstream_pytests"))

from tools.sanitizer_preload import sanitizer_env  # noqa: E402
import swap  # noqa: E402


def runtime_under_test():
    """The library path to swap in, or None for upstream's own."""
    impl = os.environ.get("TVMFFI_IMPL", "")
    if impl == "upstream":
        return None
    if impl in ("", "reference"):
        return os.path.join(ROOT, "reference", "libtvm_ffi.so")
    return impl


def main() -> int:
    tests = [os.path.join(HERE, name) for name in sorted(os.listdir(HERE)) if name.endswith("_test.py")]
    env = dict(os.environ)
    # The C test library sits in the runfiles next to this folder.
    env.setdefault("CONF_RAISE_KINDS_LIB", os.path.join(os.path.dirname(HERE), "libraise_kinds.so"))
    runtime = runtime_under_test()
    with tempfile.TemporaryDirectory(prefix="conf_python_") as work:
        if runtime is None:
            env["CONF_PYTHON_RUNTIME"] = "upstream"
        else:
            copy = os.path.join(work, "site")
            lib = swap.package_copy(runtime, copy)
            env["PYTHONPATH"] = os.pathsep.join(p for p in (copy, env.get("PYTHONPATH", "")) if p)
            # An instrumented runtime needs the sanitizer runtimes preloaded.
            env = sanitizer_env(runtime, env) or env
            import_error = swap.prove(sys.executable, lib, swap.sha256(runtime), env)
            if import_error:
                print("upstream's package does not import over %s: %s" % (runtime, import_error))
            env["CONF_PYTHON_RUNTIME"] = runtime
        env = sanitizer_env(env["CONF_RAISE_KINDS_LIB"], env) or env
        # Arguments pass through to pytest: `-k NAME` runs one test (the rerun
        # command tools/report.py gives).
        cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *tests, *sys.argv[1:]]
        xml = os.environ.get("XML_OUTPUT_FILE")
        if xml:
            cmd.append("--junitxml=" + xml)
        return subprocess.call(cmd, env=env, cwd=HERE)


if __name__ == "__main__":
    sys.exit(main())
