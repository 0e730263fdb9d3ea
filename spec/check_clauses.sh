#!/usr/bin/env bash
# Every clause is named by a test, and every clause a test names exists.
# Arguments: the spec files, then "--", then the test sources.
set -euo pipefail

specs=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do specs+=("$1"); shift; done
shift || true
sources=("$@")

status=0
clause_re='^[A-Z]{2,5}-[0-9]{3} \[(MUST|SHOULD|WITHDRAWN)\] '

# Clause lines: well formed, and no ID defined twice.
defined=$(grep -hE '^[A-Z]{2,5}-[0-9]{3}\b' "${specs[@]}" | cut -d' ' -f1 | sort)
dups=$(printf '%s\n' "$defined" | uniq -d)
if [ -n "$dups" ]; then
  echo "clauses defined more than once:"; printf '%s\n' "$dups" | sed 's/^/  /'; status=1
fi
bad=$(grep -hE '^[A-Z]{2,5}-[0-9]{3}\b' "${specs[@]}" | grep -vE "$clause_re" || true)
if [ -n "$bad" ]; then
  echo "clause lines not of the form 'ID [MUST|SHOULD] text':"; printf '%s\n' "$bad"; status=1
fi
defined=$(printf '%s\n' "$defined" | sort -u)
withdrawn=$( { grep -hE '^[A-Z]{2,5}-[0-9]{3} \[WITHDRAWN\]' "${specs[@]}" || true; } | cut -d' ' -f1 | sort -u)

# Clause IDs named by tests: ABC_123 at the start of a Criterion test name or
# inside a pytest function name.
named=$( { grep -hoE '\b(Test|TEST|ParameterizedTest)\(\s*[a-z_0-9]+\s*,\s*[A-Z]{2,5}_[0-9]{3}' "${sources[@]}" \
             | grep -oE '[A-Z]{2,5}_[0-9]{3}$' || true;
           grep -hoE 'def test_[A-Za-z0-9_]*' "${sources[@]}" | grep -oE '[A-Z]{2,5}_[0-9]{3}' || true; } \
         | tr '_' '-' | sort -u)

unnamed=$(comm -23 <(printf '%s\n' "$defined") <(printf '%s\n' "$named") | grep . || true)
unnamed=$(comm -23 <(printf '%s\n' "$unnamed") <(printf '%s\n' "$withdrawn") | grep . || true)
unknown=$(comm -13 <(printf '%s\n' "$defined") <(printf '%s\n' "$named") | grep . || true)
if [ -n "$unnamed" ]; then
  echo "clauses named by no test:"; printf '%s\n' "$unnamed" | sed 's/^/  /'; status=1
fi
if [ -n "$unknown" ]; then
  echo "tests name clauses that the spec does not define:"; printf '%s\n' "$unknown" | sed 's/^/  /'; status=1
fi
echo "$(printf '%s\n' "$defined" | grep -c .) clauses, $(printf '%s\n' "$named" | grep -c .) named by tests"
exit "$status"
