/*
 * Entry point of every conformance binary: Criterion's runner, plus the
 * report formats a user expects. Under `bazel test` the JUnit XML goes where
 * Bazel asks (XML_OUTPUT_FILE), so each test case shows up by name with its
 * verdict; CONFORMANCE_JSON=path adds Criterion's JSON report.
 */
#include <stdio.h> /* criterion/output.h uses FILE without including it */
#include <criterion/criterion.h>
#include <criterion/options.h>
#include <criterion/output.h>
#include <stdlib.h>

int main(int argc, char* argv[]) {
  struct criterion_test_set* tests = criterion_initialize();
  criterion_options.logging_threshold = CRITERION_INFO; /* list every verdict */
  int keep_going = criterion_handle_args(argc, argv, true);
  const char* xml = getenv("XML_OUTPUT_FILE");
  if (xml && *xml) criterion_add_output("xml", xml);
  const char* json = getenv("CONFORMANCE_JSON");
  if (json && *json) criterion_add_output("json", json);
  int ok = 1;
  if (keep_going) ok = criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return keep_going ? !ok : 0;
}
