/*
 * Entry point of every conformance binary: Criterion's runner, plus the
 * report a user and tools/report.py read. Under `bazel test` the JUnit XML
 * goes where Bazel asks (XML_OUTPUT_FILE); CONFORMANCE_JSON=path adds
 * Criterion's JSON report.
 *
 * The XML is written here, not by Criterion's own "xml" output, because
 * that one drops what a vendor needs to act on: the reason a test was
 * skipped and the text of every failed assertion. Each <testcase> carries
 * status PASSED, FAILED, SKIPPED, CRASHED or TIMEOUT; the verdicts of the
 * spec (MUST/SHOULD, known deviations) are assigned by tools/report.py,
 * which reads the clause text and spec/deviations.md.
 */
#define _GNU_SOURCE /* strsignal */
#include <stdio.h>  /* criterion/output.h uses FILE without including it */
#include <criterion/criterion.h>
#include <criterion/options.h>
#include <criterion/output.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "criterion_run.h"

/* What the harness (conformance/impl.c) knows about the library under test.
 * Weak: binaries without the harness (the reference's unit tests) have none. */
__attribute__((weak)) const char* conf_impl_path(void);
__attribute__((weak)) const char* conf_impl_load_error(void);
__attribute__((weak)) const char* conf_impl_version(void);
__attribute__((weak)) int conf_impl_is_reference(void);
__attribute__((weak)) int conf_impl_exported(void);
__attribute__((weak)) int conf_impl_api_total(void);
__attribute__((weak)) const char* conf_impl_missing(void);
__attribute__((weak)) const char* conf_impl_api_release(void);

/* Present only in the forked-worker build (criterion_run.h). */
__attribute__((weak)) int conf_run_in_forks(struct criterion_test_set* tests, const char* xml);

/* XML text: markup characters escaped; control bytes and bytes outside
 * ASCII (which may not be valid UTF-8) become '?', so the file always parses. */
static void put_xml_text(FILE* f, const char* s) {
  for (; s && *s; ++s) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      case '\n': fputs("&#10;", f); break;
      case '\t': fputc(' ', f); break;
      default: fputc(c < 0x20 || c >= 0x7f ? '?' : c, f);
    }
  }
}

static void put_property(FILE* f, const char* name, const char* value) {
  fprintf(f, "      <property name=\"%s\" value=\"", name);
  put_xml_text(f, value ? value : "");
  fputs("\"/>\n", f);
}

static void put_properties(FILE* f) {
  if (conf_impl_path == NULL) return;
  fputs("    <properties>\n", f);
  put_property(f, "implementation", conf_impl_path());
  put_property(f, "version", conf_impl_version ? conf_impl_version() : "");
  put_property(f, "bundled_reference",
               conf_impl_is_reference && conf_impl_is_reference() ? "1" : "0");
  put_property(f, "load_error", conf_impl_load_error ? conf_impl_load_error() : "");
  /* How many of the C API's functions it exports (none when it did not
   * load): the first thing a report says about a library. */
  const char* error = conf_impl_load_error ? conf_impl_load_error() : NULL;
  if (conf_impl_exported && conf_impl_api_total && !(error && *error)) {
    char count[32];
    snprintf(count, sizeof count, "%d", conf_impl_exported());
    put_property(f, "api_exported", count);
    snprintf(count, sizeof count, "%d", conf_impl_api_total());
    put_property(f, "api_total", count);
    put_property(f, "api_missing", conf_impl_missing ? conf_impl_missing() : "");
    put_property(f, "api_release", conf_impl_api_release ? conf_impl_api_release() : "");
  }
  fputs("    </properties>\n", f);
}

/* A signal or exit status the test declares (.signal, .exit_code) is its
 * pass, not a crash or a failure. */
static const char* status_of(const struct criterion_test_stats* t) {
  const struct criterion_test_extra_data* data = t->test->data;
  if (t->timed_out) return "TIMEOUT";
  if (t->crashed || (t->signal != 0 && t->signal != data->signal)) return "CRASHED";
  if (t->test_status == CR_STATUS_SKIPPED) return "SKIPPED";
  if (t->test_status == CR_STATUS_FAILED || t->failed_asserts > 0 ||
      t->exit_code != data->exit_code)
    return "FAILED";
  return "PASSED";
}

/* The failed assertions, one per line as FILE:LINE: MESSAGE. */
static void put_failed_asserts(FILE* f, const struct criterion_test_stats* t) {
  for (const struct criterion_assert_stats* a = t->asserts; a; a = a->next) {
    if (a->passed) continue;
    fprintf(f, "%s:%u: ", a->file ? a->file : "?", a->line);
    put_xml_text(f, a->message && *a->message ? a->message : "assertion failed");
    fputs("&#10;", f);
  }
}

static void put_case(FILE* f, const char* suite, const struct criterion_test_stats* t) {
  const char* status = status_of(t);
  fprintf(f, "    <testcase name=\"%s\" classname=\"%s\" time=\"%.3f\" status=\"%s\">\n",
          t->test->name, suite, t->elapsed_time, status);
  if (strcmp(status, "SKIPPED") == 0) {
    fputs("      <skipped message=\"", f);
    put_xml_text(f, t->message && *t->message ? t->message : "skipped (no reason given)");
    fputs("\"/>\n", f);
  } else if (strcmp(status, "TIMEOUT") == 0) {
    fprintf(f,
            "      <error type=\"timeout\" message=\"the test did not finish within %.0f s\"/>\n",
            t->test->data->timeout);
  } else if (strcmp(status, "CRASHED") == 0) {
    fprintf(f, "      <error type=\"crash\" message=\"the test process died with signal %d (%s)",
            t->signal, strsignal(t->signal));
    fputs("\">", f);
    put_failed_asserts(f, t);
    fputs("</error>\n", f);
  } else if (strcmp(status, "FAILED") == 0) {
    fputs("      <failure type=\"assert\" message=\"", f);
    if (t->exit_code != t->test->data->exit_code && t->failed_asserts == 0)
      fprintf(f, "the test process exited with status %d", t->exit_code);
    else
      put_xml_text(f, t->message && *t->message ? t->message : "");
    fputs("\">", f);
    put_failed_asserts(f, t);
    fputs("</failure>\n", f);
  }
  fputs("    </testcase>\n", f);
}

void conf_write_junit(FILE* f, struct criterion_global_stats* stats) {
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
  fprintf(f, "<testsuites name=\"conformance\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n",
          stats->nb_tests, stats->tests_failed, stats->tests_crashed);
  for (struct criterion_suite_stats* s = stats->suites; s; s = s->next) {
    if (s->nb_tests == 0) continue;
    fprintf(f, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
            s->suite->name, s->nb_tests, s->tests_failed, s->tests_skipped);
    put_properties(f);
    for (struct criterion_test_stats* t = s->tests; t; t = t->next) put_case(f, s->suite->name, t);
    fputs("  </testsuite>\n", f);
  }
  fputs("</testsuites>\n", f);
}

/* A library that does not load: one line and one test case that says so,
 * instead of every test failing with the same text. */
static int report_load_failure(const char* xml, const char* why) {
  fprintf(stderr, "conformance: cannot load %s: %s\n", conf_impl_path(), why);
  if (xml == NULL || *xml == '\0') return 1;
  FILE* f = fopen(xml, "w");
  if (f == NULL) return 1;
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
  fputs("<testsuites name=\"conformance\" tests=\"1\" failures=\"0\" errors=\"1\">\n", f);
  fputs("  <testsuite name=\"load\" tests=\"1\" failures=\"0\" skipped=\"0\">\n", f);
  put_properties(f);
  fputs(
      "    <testcase name=\"implementation_loads\" classname=\"load\" time=\"0\" "
      "status=\"LOAD_FAILED\">\n      <error type=\"load\" message=\"cannot load ",
      f);
  put_xml_text(f, conf_impl_path());
  fputs(": ", f);
  put_xml_text(f, why);
  fputs("\"/>\n    </testcase>\n  </testsuite>\n</testsuites>\n", f);
  fclose(f);
  return 1;
}

int main(int argc, char* argv[]) {
  const char* xml = getenv("XML_OUTPUT_FILE");
  const char* load_error = conf_impl_load_error ? conf_impl_load_error() : NULL;
  if (load_error && *load_error) return report_load_failure(xml, load_error);
  struct criterion_test_set* tests = criterion_initialize();
  criterion_options.logging_threshold = CRITERION_INFO; /* list every verdict */
  int keep_going = criterion_handle_args(argc, argv, true);
  criterion_register_output_provider("conformance-junit", conf_write_junit);
  if (xml && *xml) criterion_add_output("conformance-junit", xml);
  const char* json = getenv("CONFORMANCE_JSON");
  if (json && *json) criterion_add_output("json", json);
  int ok = 1;
  if (keep_going && conf_run_in_forks != NULL)
    ok = conf_run_in_forks(tests, xml);
  else if (keep_going)
    ok = criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return keep_going ? !ok : 0;
}
