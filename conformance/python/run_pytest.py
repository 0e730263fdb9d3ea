"""Bazel entry point: runs the pytest files beside it with this interpreter.

Bazel starts it with the project's Python (the venv tools/bootstrap.sh gave
the pinned pip apache-tvm-ffi, see tools/bazel/python.bzl), so the tests
exercise upstream's Python package.
"""
import os
import subprocess
import sys

from tools.sanitizer_preload import sanitizer_env


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    tests = [os.path.join(here, name) for name in sorted(os.listdir(here)) if name.endswith("_test.py")]
    env = dict(os.environ)
    # The C test library sits in the runfiles next to this folder.
    env.setdefault("CONF_RAISE_KINDS_LIB", os.path.join(os.path.dirname(here), "libraise_kinds.so"))
    env = sanitizer_env(env["CONF_RAISE_KINDS_LIB"], env) or env
    # Arguments pass through to pytest: `-k NAME` runs one test (the rerun
    # command tools/report.py gives).
    cmd = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", *tests, *sys.argv[1:]]
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        cmd.append("--junitxml=" + xml)
    return subprocess.call(cmd, env=env, cwd=here)


if __name__ == "__main__":
    sys.exit(main())
