#!/usr/bin/env bash
# The project's lint: clang-format (the root .clang-format) on the C, C++
# and CUDA sources, pyflakes on the Python, shellcheck on the shell scripts.
# Only files git tracks are read, so build outputs and caches never count.
#
# Usage: tools/lint/lint.sh [--fix]
#   --fix   rewrite the C sources in place with clang-format instead of
#           checking them (the other two have nothing to fix automatically)
# Env: CLANG_FORMAT (default clang-format-14, else clang-format).
# Exit status: 0 when every check is clean, 1 otherwise. The last line is
# "lint: N passed, N failed" (one count per tool).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

fix=0
[ "${1:-}" = "--fix" ] && fix=1
cf=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
passed=0 failed=0

verdict() { # verdict NAME RC
  if [ "$2" -eq 0 ]; then echo "lint: $1: ok"; passed=$((passed + 1))
  else echo "lint: $1: FAILED"; failed=$((failed + 1)); fi
}

# Generated files follow their generator, not the style (format_exempt.txt).
mapfile -t exempt < <(grep -v '^#' tools/lint/format_exempt.txt | awk 'NF {print $1}')
is_exempt() { local e; for e in "${exempt[@]}"; do [ "$1" = "$e" ] && return 0; done; return 1; }
# Files not formatted yet (format_pending.txt says why): a ratchet. They are
# not held to the style, but one that already matches it must leave the list,
# so the list only shrinks; every other file, a new one included, is held.
mapfile -t pending < <(grep -v '^#' tools/lint/format_pending.txt | awk 'NF {print $1}')
is_pending() { local e; for e in "${pending[@]}"; do [ "$1" = "$e" ] && return 0; done; return 1; }

c_sources() {
  local f
  git ls-files '*.c' '*.h' '*.cc' '*.cu' '*.inc' | while read -r f; do
    is_exempt "$f" || echo "$f"
  done
}

if [ -z "$cf" ]; then
  echo "lint: clang-format: not installed (tools/bootstrap.sh installs clang-format-14)"
  verdict clang-format 1
elif [ $fix = 1 ]; then
  c_sources | while read -r f; do is_pending "$f" || echo "$f"; done | xargs -r "$cf" -i
  verdict "clang-format --fix" 0
else
  off=() done_now=()
  while read -r f; do
    if "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
      is_pending "$f" && done_now+=("$f")
    else
      is_pending "$f" || off+=("$f")
    fi
  done < <(c_sources)
  if [ "${#off[@]}" -gt 0 ]; then
    echo "lint: clang-format: ${#off[@]} files differ from .clang-format (tools/lint/lint.sh --fix):"
    printf '  %s\n' "${off[@]}"
  fi
  if [ "${#done_now[@]}" -gt 0 ]; then
    echo "lint: clang-format: ${#done_now[@]} files match the style now: take them off tools/lint/format_pending.txt:"
    printf '  %s\n' "${done_now[@]}"
  fi
  verdict clang-format $(( ${#off[@]} + ${#done_now[@]} ))
fi

mapfile -t py < <(git ls-files '*.py')
pyflakes3 "${py[@]}"
verdict pyflakes $?

mapfile -t sh < <(git ls-files '*.sh'; echo .ci/run)
shellcheck -f gcc "${sh[@]}"
verdict shellcheck $?

echo "lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
