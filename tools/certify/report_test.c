/* The report writers on findings built here: exit bits, the verdict line,
 * the table's grouping and merging, and that hostile strings (markup,
 * control characters, invalid UTF-8) come out cleaned and escaped. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "report.h"
#include "text.h"

static const char* two_runtimes[] = {"reference", "upstream"};

static CertRunInfo run_info(void) {
  CertRunInfo run = {"/tmp/lib/libfoo.so", two_runtimes, 2, 4.1, 3, NULL,
                     "certify libfoo.so",  NULL};
  return run;
}

/* Writes with a writer that takes a FILE*, returns the text (malloc'd). */
static char* capture(void (*write)(FILE*, const CertRunInfo*, const CertFindings*),
                     const CertRunInfo* run, const CertFindings* f) {
  char* text = NULL;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  write(out, run, f);
  fclose(out);
  return text;
}

static char* slurp(const char* path) {
  FILE* in = fopen(path, "rb");
  cr_assert_not_null(in, "cannot open %s", path);
  char* text = NULL;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, n, out);
  fclose(in);
  fclose(out);
  return text;
}

static char* temp_path(const char* name) {
  const char* dir = getenv("TEST_TMPDIR");
  char* path = NULL;
  cr_assert(asprintf(&path, "%s/%s", dir ? dir : "/tmp", name) > 0);
  return path;
}

static void add(CertFindings* f, const char* fn, const char* check, const char* clause,
                const char* rt, CertVerdict v, const char* evidence, const char* replay,
                const char* reason) {
  cr_assert_eq(cert_findings_add(f, fn, check, clause, rt, v, evidence, replay, "%s", reason), 0);
}

/* A library-level warning, one function with a MUST failure under both
 * runtimes (identical), a NONSTRICT under reference only, and passes. */
static void sample(CertFindings* f) {
  add(f, "", "static.runtime-needed", "KER-002", "", CERT_WARN,
      "imports TVMFFIErrorSetRaisedFromCStr", "",
      "imports TVMFFI* without libtvm_ffi.so in DT_NEEDED");
  add(f, "scale", "probe.arity", "CDY-002", "reference", CERT_FAIL, "signal 11 (SIGSEGV)",
      "scale(none) threads=1", "crashes when called with 1 argument");
  add(f, "scale", "probe.arity", "CDY-002", "upstream", CERT_FAIL, "signal 11 (SIGSEGV)",
      "scale(none) threads=1", "crashes when called with 1 argument");
  add(f, "scale", "probe.legacy-forms", "CDY-006", "reference", CERT_NONSTRICT,
      "ValueError: strides", "scale(dl:float32[4]{strides=null}@cpu:0)", "refuses NULL strides");
  add(f, "scale", "probe.legacy-forms", "CDY-006", "upstream", CERT_PASS, "", "",
      "accepts NULL strides");
  add(f, "scale", "probe.error-hygiene", "CDY-008", "reference", CERT_PASS, "", "",
      "one error raised");
  add(f, "scale", "probe.error-hygiene", "CDY-008", "upstream", CERT_PASS, "", "",
      "one error raised");
  add(f, "add", "probe.arity", "CDY-002", "reference", CERT_PASS, "", "",
      "refuses every wrong count");
}

Test(report, exit_status_bits) {
  CertFindings f = {0};
  cr_assert_eq(cert_exit_status(&f, 0), 0);
  cr_assert_eq(cert_exit_status(&f, 1), CERT_EXIT_TOOL_ERROR);
  add(&f, "a", "c", "", "", CERT_WARN, "", "", "w");
  add(&f, "a", "c", "", "", CERT_SKIP, "", "", "s");
  cr_assert_eq(cert_exit_status(&f, 0), 0, "WARN and SKIP never change the exit status");
  add(&f, "a", "c", "", "", CERT_NONSTRICT, "", "", "n");
  cr_assert_eq(cert_exit_status(&f, 0), CERT_EXIT_NONSTRICT);
  add(&f, "a", "c", "", "", CERT_FAIL, "", "", "f");
  cr_assert_eq(cert_exit_status(&f, 0), CERT_EXIT_MUST | CERT_EXIT_NONSTRICT);
  cr_assert_eq(cert_exit_status(&f, 1), 13);
  cert_findings_free(&f);
}

/* No call reached the library: not certified, whatever passed, with its
 * own exit bit; a function nothing reached is only a SKIP of its own. */
Test(report, nothing_called_is_not_certified) {
  CertFindings f = {0};
  add(&f, "gemm8", "probe.valid-call", "", "reference", CERT_SKIP, "", "", "no call reached it");
  add(&f, "", "static.exports", "CST-001", "", CERT_PASS, "", "", "exports 1 function");
  CertRunInfo run = {"libtakes8.so", two_runtimes, 1, 0.5, 1, NULL, NULL, NULL};
  cr_assert_eq(cert_exit_status(&f, 0), 0,
               "one unreached function among others is not the library");
  add(&f, "", CERT_CHECK_NOTHING_CALLED, "", "reference", CERT_SKIP, "", "",
      "Nothing could be called.");
  cr_assert_eq(cert_exit_status(&f, 0), CERT_EXIT_UNTESTED);
  char* line = capture(cert_report_verdict, &run, &f);
  cr_assert_str_eq(
      line,
      "certify: libtakes8.so: NOT CERTIFIED: nothing could be called; 2 skipped, 1 passed "
      "(1 function, 1 runtime, 0.5 s)\n");
  free(line);
  add(&f, "gemm8", "probe.arity", "", "reference", CERT_FAIL, "", "", "crashed");
  cr_assert_eq(cert_exit_status(&f, 0), CERT_EXIT_UNTESTED | CERT_EXIT_MUST);
  cert_findings_free(&f);
}

Test(report, verdict_line_counts_every_verdict) {
  CertFindings f = {0};
  sample(&f);
  CertRunInfo run = run_info();
  char* line = capture(cert_report_verdict, &run, &f);
  cr_assert_str_eq(line,
                   "certify: libfoo.so: NOT CERTIFIED: 2 MUST failures, 1 NONSTRICT, 1 warning, "
                   "4 passed (3 functions, 2 runtimes, 4.1 s)\n");
  free(line);
  cert_findings_free(&f);
}

Test(report, verdict_line_certified_and_error) {
  CertFindings f = {0};
  add(&f, "scale", "probe.arity", "", "reference", CERT_PASS, "", "", "ok");
  add(&f, "scale", "manifest.valid-calls", "", "reference", CERT_SKIP, "", "", "no GPU");
  CertRunInfo run = {"libscale_cpu.so", two_runtimes, 1, 0.25, 1, NULL, NULL, NULL};
  char* line = capture(cert_report_verdict, &run, &f);
  cr_assert_str_eq(line,
                   "certify: libscale_cpu.so: CERTIFIED: 1 skipped, 1 passed "
                   "(1 function, 1 runtime, 0.2 s)\n");
  free(line);
  cert_findings_free(&f);
  cr_assert_eq(cert_findings_add(&f, "scale", "x", "", "", CERT_NONSTRICT, "", "", "n"), 0);
  line = capture(cert_report_verdict, &run, &f);
  cr_assert(strstr(line, ": NOT STRICTLY CERTIFIED: 1 NONSTRICT (") != NULL, "%s", line);
  free(line);
  run.error = "x.so: not an ELF file";
  line = capture(cert_report_verdict, &run, &f);
  cr_assert(strncmp(line, "certify: libscale_cpu.so: ERROR: x.so: not an ELF file (", 55) == 0,
            "%s", line);
  free(line);
  cert_findings_free(&f);
}

Test(report, table_groups_merges_and_shows_differences) {
  setenv("COLUMNS", "100", 1);
  CertFindings f = {0};
  sample(&f);
  CertRunInfo run = run_info();
  char* t = capture(cert_report_table, &run, &f);
  const char* lib = strstr(t, "\n(library)  [1 WARN]\n");
  const char* scale = strstr(t, "\nscale  [2 FAIL, 1 NONSTRICT, 3 PASS]\n");
  const char* add_fn = strstr(t, "\nadd  [1 PASS]\n");
  cr_assert(lib && scale && add_fn && lib < scale && scale < add_fn, "%s", t);
  /* The twin FAILs are one row naming both runtimes. */
  cr_assert(
      strstr(t, "  FAIL      probe.arity                  CDY-002  reference+upstream\n") != NULL,
      "%s", t);
  const char* first = strstr(t, "crashes when called with 1 argument");
  cr_assert(first && strstr(first + 1, "crashes when called with 1 argument") == NULL, "%s", t);
  cr_assert(strstr(t,
                   "replay:   certify libfoo.so --runtime reference --replay "
                   "'scale(none) threads=1'\n") != NULL,
            "%s", t);
  cr_assert(strstr(t, "runtimes differ: reference NONSTRICT, upstream PASS\n") != NULL, "%s", t);
  cr_assert(strstr(t, "  PASS      probe.error-hygiene\n") != NULL, "%s", t);
  cr_assert(strstr(t, "\033") == NULL, "no colour when not a terminal");
  free(t);
  cert_findings_free(&f);
}

Test(report, table_truncates_long_evidence_and_cleans_controls) {
  setenv("COLUMNS", "80", 1);
  CertFindings f = {0};
  char evidence[2000];
  memset(evidence, 'x', sizeof evidence - 1);
  evidence[sizeof evidence - 1] = '\0';
  for (size_t i = 50; i < sizeof evidence - 1; i += 51) evidence[i] = ' ';
  add(&f, "f\033[2J", "probe.arg-kinds", "", "reference", CERT_FAIL, evidence, "", "bad\x01 \xff");
  CertRunInfo run = run_info();
  char* t = capture(cert_report_table, &run, &f);
  cr_assert(strstr(t, "... (more in the JSON report)") != NULL, "%s", t);
  cr_assert(strstr(t, "\033") == NULL && strchr(t, '\x01') == NULL && strchr(t, '\xff') == NULL);
  cr_assert(strstr(t, "f\\x1b[2J") != NULL && strstr(t, "bad\\x01 \\xff") != NULL, "%s", t);
  for (char* line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
    cr_assert(strlen(line) <= 80, "line longer than the terminal: %s", line);
  }
  free(t);
  cert_findings_free(&f);
}

Test(report, clean_keeps_utf8_and_escapes_the_rest) {
  char* s = cert_text_clean("ok \xc3\xa9 tab\there \xed\xa0\x80 \xc0\xaf \xc2\x9b x\x7f");
  cr_assert_str_eq(s, "ok \xc3\xa9 tab\there \\xed\\xa0\\x80 \\xc0\\xaf \\u009b x\\x7f");
  free(s);
}

Test(report, json_round_trips_through_jansson) {
  CertFindings f = {0};
  sample(&f);
  add(&f, "bad", "probe.arg-kinds", "", "upstream", CERT_SKIP, "\xff\xfe<b>", "", "\"quoted\"");
  CertRunInfo run = run_info();
  char* path = temp_path("report.json");
  cr_assert_eq(cert_report_json(path, &run, &f), 0);
  json_error_t error;
  json_t* root = json_load_file(path, 0, &error);
  cr_assert_not_null(root, "%s", error.text);
  cr_assert_str_eq(json_string_value(json_object_get(root, "schema")), "tvm-ffi-certify/1");
  cr_assert_str_eq(json_string_value(json_object_get(root, "verdict")), "NOT CERTIFIED");
  cr_assert_eq(json_integer_value(json_object_get(root, "exit_status")), 12);
  cr_assert(json_is_null(json_object_get(root, "error")));
  cr_assert_eq(json_integer_value(json_object_get(json_object_get(root, "counts"), "FAIL")), 2);
  json_t* findings = json_object_get(root, "findings");
  cr_assert_eq(json_array_size(findings), f.n);
  json_t* last = json_array_get(findings, f.n - 1);
  cr_assert_str_eq(json_string_value(json_object_get(last, "evidence")), "\\xff\\xfe<b>");
  cr_assert_str_eq(json_string_value(json_object_get(last, "reason")), "\"quoted\"");
  json_t* diffs = json_object_get(root, "differences");
  cr_assert_eq(json_array_size(diffs), 1);
  json_t* d = json_array_get(diffs, 0);
  cr_assert_str_eq(json_string_value(json_object_get(d, "check")), "probe.legacy-forms");
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(d, "verdicts"), "upstream")),
                   "PASS");
  json_t* functions = json_object_get(root, "functions");
  cr_assert_eq(json_array_size(functions), 3);
  cr_assert_str_eq(json_string_value(json_array_get(functions, 0)), "scale");
  json_decref(root);
  free(path);
  cert_findings_free(&f);
}

Test(report, junit_and_html_escape_hostile_strings) {
  CertFindings f = {0};
  sample(&f);
  add(&f, "<script>alert(1)</script>", "probe.arg-kinds", "", "reference", CERT_FAIL,
      "]]> & \x01 \xff", "", "it said \"<b>\" & 'x'");
  CertRunInfo run = run_info();
  char* junit = temp_path("report.xml");
  char* html = temp_path("report.html");
  cr_assert_eq(cert_report_junit(junit, &run, &f), 0);
  cr_assert_eq(cert_report_html(html, &run, &f), 0);
  char* x = slurp(junit);
  char* h = slurp(html);
  cr_assert(strstr(x, "<script>") == NULL && strstr(h, "<script>alert") == NULL);
  cr_assert(strstr(x, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL, "%s", x);
  cr_assert(strstr(x, "it said &quot;&lt;b&gt;&quot; &amp; &#39;x&#39;") != NULL, "%s", x);
  cr_assert(strstr(x, "]]&gt; &amp; \\x01 \\xff") != NULL, "%s", x);
  cr_assert(strchr(x, '\x01') == NULL && strchr(h, '\x01') == NULL);
  /* One testcase per (function, check, runtime): 1 static, 5 reference, 3 upstream. */
  cr_assert(strstr(x,
                   "<testsuites name=\"certify\" tests=\"9\" failures=\"4\" errors=\"0\" "
                   "skipped=\"0\"") != NULL,
            "%s", x);
  cr_assert(strstr(x, "<failure type=\"NONSTRICT\" message=\"refuses NULL strides\">") != NULL,
            "%s", x);
  cr_assert(strstr(h, "data-function=\"&lt;script&gt;alert(1)&lt;/script&gt;\"") != NULL);
  cr_assert(strstr(h, "<span class=\"badge v-FAIL\">FAIL</span>") != NULL);
  free(x);
  free(h);
  free(junit);
  free(html);
  cert_findings_free(&f);
}

Test(report, junit_reports_a_tool_error) {
  CertFindings f = {0};
  CertRunInfo run = run_info();
  run.error = "libfoo.so: not an ELF file <\x02>";
  char* junit = temp_path("error.xml");
  cr_assert_eq(cert_report_junit(junit, &run, &f), 0);
  char* x = slurp(junit);
  cr_assert(
      strstr(x, "<error type=\"ERROR\" message=\"libfoo.so: not an ELF file &lt;\\x02&gt;\"/>") !=
          NULL,
      "%s", x);
  cr_assert(strstr(x, "errors=\"1\"") != NULL);
  free(x);
  free(junit);
}
