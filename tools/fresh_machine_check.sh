#!/usr/bin/env bash
# Runs the README's quick-start lines, verbatim, on a fresh Debian 12.
#
# The fresh machine is a `debootstrap --variant=minbase bookworm` root plus
# what a standard server install has (python3, git, ca-certificates), built
# once and kept as a tarball. Every run unpacks a new copy of it, clones the
# committed HEAD of this checkout into it, and runs each quick-start line of
# README.md inside `chroot`, each in its own fresh copy of the clone. It prints
# each line's exit status and wall time, then one summary line; the exit
# status is 0 only when every line passed.
#
# Usage: sudo tools/fresh_machine_check.sh            (needs root: debootstrap, chroot, mount)
#        sudo tools/fresh_machine_check.sh --prepare  only build the pristine root, if missing
# Env:   TVMFFI_CONFORMANCE_CACHE  cache folder (default ~/.cache/tvm-ffi-conformance);
#                                  the pristine root is fresh-root/bookworm-minbase.tar
#                                  there (delete it to rebuild), logs are in fresh-root/logs.
#        FRESH_KEEP=1              keep the run's root after the run (for a look inside).
#
# Only the network's own settings come from this machine: /etc/resolv.conf,
# the apt sources and this machine's CA certificates (this network's package
# proxy presents certificates only this machine's trust store knows).
set -euo pipefail

checkout=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${TVMFFI_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tvm-ffi-conformance}/fresh-root
pristine=$cache/bookworm-minbase.tar

# Beyond minbase: what a standard Debian 12 server install already has.
STANDARD_PACKAGES=(python3 git ca-certificates)

# The login a new user would have: root's default PATH, nothing inherited.
CHROOT_ENV=(env -i HOME=/root TERM=dumb LANG=C.UTF-8 LOGNAME=root USER=root
            PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

say() { echo "fresh_machine_check: $*"; }
die() { echo "fresh_machine_check: FAILED: $*" >&2; exit 1; }

mounted=()   # mount points, in mount order

mount_into() {  # ROOT: what apt, Python and Bazel need inside a chroot
  local root=$1
  mount -t proc proc "$root/proc" || die "mount $root/proc"
  mounted+=("$root/proc")
  mount --bind /sys "$root/sys" || die "mount $root/sys"
  mounted+=("$root/sys")
  mount --bind /dev "$root/dev" || die "mount $root/dev"
  mounted+=("$root/dev")
  # A plain bind of /dev leaves out its own submounts: apt wants /dev/pts,
  # Python's multiprocessing a /dev/shm.
  mount --bind /dev/pts "$root/dev/pts" || die "mount $root/dev/pts"
  mounted+=("$root/dev/pts")
  mount -t tmpfs shm "$root/dev/shm" || die "mount $root/dev/shm"
  mounted+=("$root/dev/shm")
}

# Ends the processes left running inside ROOT (Bazel's server lingers after
# `bazel test`), found by their root directory, so the mounts can go.
stop_processes_in() {
  local root=$1 pass pid found
  for pass in TERM TERM KILL; do
    found=0
    for pid in /proc/[0-9]*; do
      pid=${pid#/proc/}
      if [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ]; then
        kill "-$pass" "$pid" 2>/dev/null || true
        found=1
      fi
    done
    [ "$found" -eq 0 ] && return 0
    sleep 2
  done
}

unmount_all() {
  local i m
  for (( i=${#mounted[@]}-1; i>=0; i-- )); do
    m=${mounted[$i]}
    umount "$m" 2>/dev/null || umount -l "$m" || echo "fresh_machine_check: could not unmount $m" >&2
  done
  mounted=()
}

# Deletes ROOT, but never while anything is still mounted below it (a
# mounted /dev there is this machine's /dev).
remove_root() {
  local root=$1
  [ -d "$root" ] || return 0
  if grep -qF " $root/" /proc/self/mounts; then
    echo "fresh_machine_check: still mounted under $root; not deleting it" >&2
    return 1
  fi
  rm -rf --one-file-system "$root"
}

cleanup_root=""
cleanup() {
  if [ -n "$cleanup_root" ]; then
    stop_processes_in "$cleanup_root"
    unmount_all
    if [ "${FRESH_KEEP:-0}" = 1 ]; then
      say "kept $cleanup_root"
    else
      remove_root "$cleanup_root" || true
    fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_root() {  # ROOT COMMAND: runs COMMAND with bash as a login shell inside ROOT
  chroot "$1" "${CHROOT_ENV[@]}" /bin/bash -lc "$2"
}

debian_mirror() {
  local uri
  uri=$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  echo "${uri:-http://deb.debian.org/debian}"
}

# This machine's network settings into ROOT.
copy_network_settings() {
  local root=$1 f
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  rm -f "$root/etc/apt/sources.list"
  [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/sources.list"
  for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] && cp "$f" "$root/etc/apt/sources.list.d/"
  done
  # The mirror may serve a dated snapshot whose Release files have expired.
  echo 'Acquire::Check-Valid-Until "false";' > "$root/etc/apt/apt.conf.d/99fresh-check"
}

# This machine's trust store, both over the bundle and as a local CA file,
# so that a later update-ca-certificates (a package's trigger) keeps it.
copy_certificates() {
  local root=$1
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/this-network.crt"
  in_root "$root" "update-ca-certificates >/dev/null 2>&1"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
}

build_pristine() {
  local root=$cache/build.$$ mirror
  mirror=$(debian_mirror)
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap"
    if ! { apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }; then
      die "apt-get install debootstrap"
    fi
  fi
  say "building the pristine Debian 12 root from $mirror (once; a few minutes)"
  cleanup_root=$root
  debootstrap --variant=minbase bookworm "$root" "$mirror" > "$cache/debootstrap.log" 2>&1 \
    || die "debootstrap (log: $cache/debootstrap.log)"
  copy_network_settings "$root"
  mount_into "$root"
  in_root "$root" "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${STANDARD_PACKAGES[*]} >/dev/null && apt-get clean" \
    || die "installing ${STANDARD_PACKAGES[*]} in the root"
  copy_certificates "$root"
  stop_processes_in "$root"
  unmount_all
  tar -C "$root" --numeric-owner -cf "$pristine.tmp" . || die "tar of the root"
  mv "$pristine.tmp" "$pristine"
  remove_root "$root"
  cleanup_root=""
}

# The indented command lines of README.md's "Quick start" section.
quick_start_lines() {
  awk '/^## / { inside = ($0 ~ /^## Quick start/) } inside && /^    [^ ]/ { sub(/^    /, ""); print }' \
    "$checkout/README.md"
}

main() {
  case "${1:-}" in
    ""|--prepare) ;;
    *) echo "usage: tools/fresh_machine_check.sh [--prepare]" >&2; exit 2 ;;
  esac
  [ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, mount); run it with sudo"
  mkdir -p "$cache/logs"
  mapfile -t lines < <(quick_start_lines)
  [ "${#lines[@]}" -ge 1 ] || die "no command lines found in README.md's Quick start section"
  if [ -n "$(git -C "$checkout" status --porcelain --untracked-files=no)" ]; then
    say "note: uncommitted changes are not tested; the check clones the committed HEAD"
  fi
  local commit
  commit=$(git -C "$checkout" rev-parse HEAD)

  [ -f "$pristine" ] || build_pristine
  if [ "${1:-}" = "--prepare" ]; then
    say "pristine root: $pristine"
    return 0
  fi

  local root
  root=$(mktemp -d "$cache/run.XXXXXX")
  cleanup_root=$root
  say "unpacking a fresh root into $root"
  tar -C "$root" --numeric-owner -xpf "$pristine" || die "unpacking $pristine"
  git clone -q --no-hardlinks "$checkout" "$root/root/clone" || die "git clone $checkout"
  git -C "$root/root/clone" checkout -q --detach "$commit" || die "checkout of $commit"
  mount_into "$root"

  local stamp n=0 passed=0 summary=() line dir log rc t0 secs tests
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  for line in "${lines[@]}"; do
    n=$((n + 1))
    dir=/root/tvm-ffi-conformance-$n
    log=$cache/logs/$stamp-line$n.log
    cp -a "$root/root/clone" "$root$dir"
    say "line $n (in $dir, a fresh clone of $commit): $line"
    t0=$(date +%s)
    set +e
    in_root "$root" "cd $dir && $line" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e
    secs=$(( $(date +%s) - t0 ))
    in_root "$root" "cd $dir && command -v bazel >/dev/null && bazel shutdown" >/dev/null 2>&1 || true
    stop_processes_in "$root"
    tests=$(grep -E '^Executed [0-9]+ out of [0-9]+ test' "$log" | tail -n 1)
    summary+=("line $n: exit $rc in ${secs}s: $line${tests:+ ($tests)}")
    say "line $n: exit $rc in ${secs}s (log: $log)"
    # Test cases that skipped (Criterion's [SKIP] lines), by reason.
    in_root "$root" "cd $dir && grep -rh '^\[SKIP\]' bazel-testlogs/ --include=test.log 2>/dev/null" |
      sed 's/^\[SKIP\] [^ ]*: //' | sort | uniq -c | sed "s/^ */fresh_machine_check: line $n: skipped: /" || true
    [ "$rc" -eq 0 ] && passed=$((passed + 1))
  done
  for line in "${summary[@]}"; do say "$line"; done
  say "$passed of $n quick-start lines passed on a fresh Debian 12 (commit $commit)"
  [ "$passed" -eq "$n" ]
}

main "$@"
