#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building and testing this
# project. Idempotent: when everything is present it only checks, in seconds.
# Prints each thing it installs; on failure it names the command and exits
# non-zero.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

APT_PACKAGES=(
  bazel-bootstrap      # Bazel 4.2.3, offline-capable (see tools/bazel/)
  libcriterion-dev     # the test framework
  clang-14             # libFuzzer builds
  libfuzzer-14-dev
  libclang-rt-14-dev   # ASan/UBSan/libFuzzer runtimes for clang
  valgrind             # leak checks and callgrind instruction counts
  libelf-dev           # certify reads symbol tables and dynamic sections with elfutils' libelf
  libjansson-dev       # certify parses metadata symbols and manifests (JSON) with Jansson
  gcc
  g++
  python3
)

run() {
  if ! "$@"; then
    echo "bootstrap: FAILED: $*" >&2
    exit 1
  fi
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  run as_root apt-get update -qq
  run as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: Debian packages present"
fi

python=$(command -v python3 || true)
if [ -z "$python" ]; then
  echo "bootstrap: FAILED: no python3 on PATH" >&2
  exit 1
fi

# Compare installed versions with the pins without starting pip (fast path).
if ! "$python" - "$here/requirements.txt" <<'PY'
import sys
from importlib import metadata
bad = []
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        have = None
    if have != want:
        bad.append(f"{name} (have {have}, want {want})")
if bad:
    print("bootstrap: Python packages to install: " + ", ".join(bad))
    sys.exit(1)
PY
then
  run "$python" -m pip install --disable-pip-version-check -q -r "$here/requirements.txt"
else
  echo "bootstrap: Python packages present ($python)"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "bootstrap: note: /usr/local/cuda/bin/nvcc not found; the CUDA kernel target will not build" >&2
fi
echo "bootstrap: ready"
