#!/usr/bin/env bash
# valgrind_run.sh must fail a leaking test and put that verdict into the
# test's XML, where the report reads it (the test's own cases all passed);
# a clean test keeps its status and its XML; errors made inside tests that
# the forked-worker runner (conformance/fork_runner.c) runs are seen too.
set -u
wrapper=$1 fixture=$2 forked=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
xml_of_passing_case() {
  echo '<?xml version="1.0"?><testsuites><testsuite name="s" tests="1"><testcase name="a"/></testsuite></testsuites>' > "$1"
}
# check WHAT COMMAND...: runs COMMAND; WHAT is the expectation it tests.
check() {
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; status=1; fi
}

xml_of_passing_case "$tmp/leak.xml"
XML_OUTPUT_FILE=$tmp/leak.xml bash "$wrapper" "$fixture" leak > "$tmp/leak.out" 2>&1
check "a leak exits 1" test $? -eq 1
check "a leak prints valgrind's log" grep -q "definitely lost: 32 bytes" "$tmp/leak.out"
check "a leak is a failing case in the XML" grep -q \
  '<testcase name="memory_errors_or_leaks"><failure message="valgrind found memory errors or leaks in 1 process(es)' \
  "$tmp/leak.xml"
check "the XML still parses" \
  python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "$tmp/leak.xml"

xml_of_passing_case "$tmp/clean.xml"
cp "$tmp/clean.xml" "$tmp/clean.want"
XML_OUTPUT_FILE=$tmp/clean.xml bash "$wrapper" "$fixture" > "$tmp/clean.out" 2>&1
check "a clean run exits 0" test $? -eq 0
check "a clean run leaves the XML alone" cmp -s "$tmp/clean.xml" "$tmp/clean.want"
# Three tests in forked children: one leaks, one branches on uninitialised
# memory, one is clean. Each error is found in the child that made it.
XML_OUTPUT_FILE=$tmp/forked.xml bash "$wrapper" "$forked" > "$tmp/forked.out" 2>&1
check "errors in forked tests exit 1" test $? -eq 1
check "a forked test's leak is found" grep -q "definitely lost: 48 bytes" "$tmp/forked.out"
check "a forked test's uninitialised read is found" \
  grep -q "Conditional jump or move depends on uninitialised value" "$tmp/forked.out"
check "two processes, the two faulty tests" grep -q \
  'valgrind found memory errors or leaks in 2 process(es)' "$tmp/forked.xml"
check "the three tests ran and passed" grep -q 'Passing: 3 | Failing: 0' "$tmp/forked.out"
exit "$status"
