"""LD_PRELOAD for loading a sanitizer-built library into plain Python.

Under --config=asan the C libraries the Python tests load are instrumented,
and the sanitizer runtimes must then be the first libraries in the process;
a test re-runs its interpreter with the environment this module returns.
"""
import os
import subprocess


def sanitizer_env(path, env=None):
    """The environment to run Python in so that it may load the library at
    `path`, or None when the library is not instrumented (or the runtimes
    are already preloaded)."""
    env = dict(os.environ if env is None else env)
    with open(path, "rb") as f:
        data = f.read()
    libs = [name for name in ("libasan.so", "libubsan.so") if name.encode() in data]
    if not libs or "libasan" in env.get("LD_PRELOAD", ""):
        return None
    found = [
        subprocess.run(["gcc", "-print-file-name=" + name], capture_output=True, text=True,
                       check=True).stdout.strip()
        for name in libs
    ]
    env["LD_PRELOAD"] = ":".join(found)
    # The interpreter is not instrumented and keeps memory to the end on
    # purpose; leak reports would be about it, not the library.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env
