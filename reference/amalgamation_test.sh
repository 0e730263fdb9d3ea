#!/usr/bin/env bash
# The one-file build of the runtime (reference:libtvm_ffi_amalgamation.so)
# exports the same TVMFFI* functions as the usual build, and a host can
# load it and ask its version.
set -euo pipefail
one=$1 usual=$2
exports() { nm -D --defined-only "$1" | awk '$2 ~ /^[TtWi]$/ && $3 ~ /^TVMFFI/ {print $3}' | sort; }
diff <(exports "$usual") <(exports "$one") || { echo "FAIL: the exports differ (< usual, > one file)"; exit 1; }
n=$(exports "$one" | wc -l)
[ "$n" -gt 40 ] || { echo "FAIL: only $n TVMFFI* exports"; exit 1; }
python3 - "$one" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("patch", ctypes.c_uint32)]
v = Version()
lib.TVMFFIGetVersion(ctypes.byref(v))
assert (v.major, v.minor) == (0, 1), (v.major, v.minor, v.patch)
print(f"ok: one-file build loads, TVMFFIGetVersion {v.major}.{v.minor}.{v.patch}")
PY
echo "ok: $n TVMFFI* exports, the same as the usual build"
