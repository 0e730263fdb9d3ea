#!/usr/bin/env bash
# Packs the GPU bundle (called by the gpu_bundle rule, kernels/gpu_bundle.bzl).
# Usage: pack.sh OUT.tar.gz MANIFEST TESTS RUNNER README WORKSPACE
# MANIFEST lines are "runfiles-path<TAB>file"; symlinks are followed (the
# pinned upstream library is a link into site-packages).
set -euo pipefail
out=$1 manifest=$2 tests=$3 runner=$4 readme=$5 workspace=$6

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/gpu_bundle
mkdir -p "$root/runfiles" "$root/lib/cuda"
while IFS=$'\t' read -r dest src; do
  mkdir -p "$root/runfiles/$(dirname "$dest")"
  cp -L "$src" "$root/runfiles/$dest"
  chmod u+w "$root/runfiles/$dest"
done <"$manifest"
cp "$tests" "$root/TESTS"
cp "$runner" "$root/run_gpu_tests.sh"
cp "$readme" "$root/README.md"
chmod 755 "$root/run_gpu_tests.sh"
echo "$workspace" >"$root/WORKSPACE_NAME"

# The shared libraries the ELF files need, as this machine resolves them,
# except those every glibc system has in matching versions (glibc itself,
# libstdc++, libgcc_s) and those already in the bundle. The CUDA runtime
# goes to lib/cuda, kept apart so that Python (whose packages bring their
# own libraries) is given only it.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
find "$root/runfiles" -type f | sort | while read -r f; do
  if is_elf "$f"; then ldd "$f" 2>/dev/null || true; fi
done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case "$lib" in "$root"/*) continue ;; esac
  base=$(basename "$lib")
  case "$base" in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libresolv.so.* | \
      ld-linux*.so.* | libstdc++.so.* | libgcc_s.so.* | libutil.so.*) continue ;;
    libcudart.so.*) cp -L "$lib" "$root/lib/cuda/$base" ;;
    *) cp -L "$lib" "$root/lib/$base" ;;
  esac
done

find "$root" -type d -exec chmod 755 {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$out" -C "$stage" gpu_bundle
