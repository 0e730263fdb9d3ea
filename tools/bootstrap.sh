#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks for building and testing this
# project. Idempotent: when everything is present it only checks, in about a
# second. Prints each thing it installs; on failure it names the command and
# exits non-zero.
#
# Python: the project's packages go into a virtual environment in the
# checkout, .venv/ (git-ignored), never into the user's own Python; Bazel
# (tools/bazel/python.bzl) and the tools run that interpreter. The venv is
# made from Debian's /usr/bin/python3, the Python every Debian 12 has and
# python3-venv belongs to; a pyenv or conda python3 earlier on PATH is
# passed over (it can change or vanish under the venv). Only where there is
# no /usr/bin/python3 is the python3 on PATH used.
#
# CUDA: tools/find_cuda.sh looks for a toolkit ($CUDA_HOME, $CUDA_PATH, nvcc
# on PATH, /usr/local/cuda); where there is none, NVIDIA's toolkit wheels
# (tools/requirements-cuda.txt) go into the venv.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=$(dirname "$here")/.venv

# One package a line.
APT_PACKAGES=(
  bazel-bootstrap      # Bazel 4.2.3, offline-capable (see tools/bazel/)
  libcriterion-dev     # the test framework
  clang-14             # libFuzzer builds
  libfuzzer-14-dev
  libclang-rt-14-dev   # ASan/UBSan/libFuzzer runtimes for clang
  valgrind             # leak checks and callgrind instruction counts
  libelf-dev           # certify reads symbol tables and dynamic sections with elfutils' libelf
  libjansson-dev       # certify parses metadata symbols and manifests (JSON) with Jansson
  clang-format-14      # tools/lint/lint.sh: the C style (.clang-format)
  shellcheck           # tools/lint/lint.sh: the shell scripts
  python3-pyflakes     # tools/lint/lint.sh: the Python (pyflakes3)
  gcc
  g++
  python3
  python3-venv         # the project venv (.venv/)
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

# One dpkg-query for all of them: this check is most of bootstrap's time
# when nothing is missing. It fails when some are unknown; `true` keeps
# set -e from ending the script there.
installed=" $(dpkg-query -W -f='${Package}=${Status}\n' "${APT_PACKAGES[@]}" 2>/dev/null |
              sed -n 's/=install ok installed$//p' | tr '\n' ' '; true)"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  [[ "$installed" == *" $pkg "* ]] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  run as_root apt-get update -qq
  run as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "bootstrap: Debian packages present"
fi

# A venv whose interpreter no longer starts (its base Python is gone) is
# made again.
if ! "$venv/bin/python3" -c '' 2>/dev/null; then
  base=/usr/bin/python3
  [ -x "$base" ] || base=$(command -v python3 || true)
  [ -n "$base" ] || { echo "bootstrap: FAILED: no python3" >&2; exit 1; }
  echo "bootstrap: creating the project venv $venv from $base"
  rm -rf "$venv"
  run "$base" -m venv "$venv"
fi
python=$venv/bin/python3

requirements=("$here/requirements.txt")
if ! cuda=$("$here/find_cuda.sh" --system); then
  requirements+=("$here/requirements-cuda.txt")
  cuda="NVIDIA's wheels in the venv (tools/requirements-cuda.txt)"
else
  cuda=$(sed -n 's/^nvcc=//p' <<<"$cuda")
fi

# Compare installed versions with the pins without starting pip (fast path).
if ! "$python" - "${requirements[@]}" <<'PY'
import sys
from importlib import metadata
bad = []
for path in sys.argv[1:]:
    for line in open(path):
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
  args=()
  for r in "${requirements[@]}"; do args+=(-r "$r"); done
  run "$python" -m pip install --disable-pip-version-check -q "${args[@]}"
else
  echo "bootstrap: Python packages present ($python)"
fi
echo "bootstrap: CUDA toolkit: $cuda"
echo "bootstrap: ready"
