"""Loading the libraries under test into a pytest process with ctypes."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List


def runfile(*parts: str) -> str:
    """A data file of the test, under Bazel's runfiles or beside the sources."""
    candidates: List[str] = []
    srcdir, ws = os.environ.get("TEST_SRCDIR"), os.environ.get("TEST_WORKSPACE")
    if srcdir and ws:
        candidates.append(os.path.join(srcdir, ws, *parts))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    candidates.append(os.path.join(root, *parts))
    for c in candidates:
        if os.path.exists(c):
            return c
    raise FileNotFoundError(os.path.join(*parts) + " not found in " + ", ".join(candidates))


def _run(cmd: List[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return ""


def _sanitizer_runtimes(path: str) -> str:
    """The ASan/UBSan runtimes a sanitized `path` needs loaded first.

    GCC (--config=asan) links the shared libasan/libubsan, which ldd names.
    Clang (--config=fuzz) leaves a shared library's __asan_* symbols
    undefined for the executable to provide; python3 does not, so clang's
    shared ASan runtime (which carries UBSan too) is preloaded instead.
    """
    libs = [line.split("=>")[1].split()[0] for line in _run(["ldd", path]).splitlines()
            if "=>" in line and ("libasan" in line or "libubsan" in line)]
    if not libs and " __asan_init" in _run(["nm", "-D", "--undefined-only", path]):
        rt = _run(["clang-14", "-print-file-name=libclang_rt.asan-x86_64.so"]).strip()
        libs = [rt] if rt else []
    return ":".join(p for p in libs if os.path.exists(p))


def reexec_with_sanitizers(library: str) -> None:
    """Re-runs this script with the sanitizer runtimes preloaded, if needed.

    A sanitized library can only load into a process whose first loaded
    library is the sanitizer runtime. The interpreter itself leaks by
    design, so leak checking is off; ASan still reports every bad read or
    write of the library under test.
    """
    preload = _sanitizer_runtimes(library)
    if not preload or "FUZZ_PRELOADED" in os.environ:
        return
    env = dict(os.environ, LD_PRELOAD=preload, FUZZ_PRELOADED="1")
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"  # later options win
    os.execve(sys.executable, [sys.executable] + sys.argv, env)
