/* The JUnit XML report: one testsuite per runtime (static checks form
 * their own), one testcase per (function, check) in it. FAIL and NONSTRICT
 * are failures (typed by verdict), SKIP is skipped, WARN passes with the
 * warning in system-out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_index.h"
#include "report_releases.h"
#include "text.h"

/* The distinct runtime labels of the cells, in the order first met. */
static size_t junit_runtimes(const CertIndex* ix, const char** out) {
  size_t n = 0;
  for (size_t c = 0; c < ix->n_cells; ++c) {
    const char* rt = cert_cell_at(ix, &ix->cells[c], 0)->runtime;
    size_t k = 0;
    while (k < n && strcmp(out[k], rt) != 0) ++k;
    if (k == n) out[n++] = rt;
  }
  return n;
}

static int is_failure(CertVerdict v) { return v == CERT_FAIL || v == CERT_NONSTRICT; }

/* Every non-PASS finding of a cell, for the element's text. */
static void junit_body(FILE* out, const CertIndex* ix, const CertCell* c) {
  for (size_t k = 0; k < c->n; ++k) {
    const CertFinding* x = cert_cell_at(ix, c, k);
    if (x->verdict == CERT_PASS) continue;
    fprintf(out, "%s ", cert_verdict_name(x->verdict));
    cert_text_put_untrusted(out, x->clause[0] ? x->clause : "-");
    fputs(": ", out);
    cert_text_put_untrusted(out, x->reason);
    if (x->evidence[0]) {
      fputs("\nevidence: ", out);
      cert_text_put_untrusted(out, x->evidence);
    }
    if (x->replay[0]) {
      fputs("\nreplay: ", out);
      cert_text_put_untrusted(out, x->replay);
    }
    fputc('\n', out);
  }
}

/* The first finding with the cell's worst verdict: its reason is the message. */
static const CertFinding* junit_worst(const CertIndex* ix, const CertCell* c) {
  for (size_t k = 0; k < c->n; ++k) {
    const CertFinding* x = cert_cell_at(ix, c, k);
    if (x->verdict == c->worst) return x;
  }
  return cert_cell_at(ix, c, 0);
}

static void junit_case(FILE* out, const CertRunInfo* run, const CertIndex* ix, const CertCell* c) {
  const CertFinding* x = junit_worst(ix, c);
  fputs("    <testcase classname=\"certify.", out);
  cert_text_put_untrusted(out, cert_base_name(run->lib_path ? run->lib_path : "?"));
  fputc('.', out);
  cert_text_put_untrusted(out, x->function[0] ? x->function : "(library)");
  fputs("\" name=\"", out);
  cert_text_put_untrusted(out, x->check);
  fputs(" [", out);
  cert_text_put_untrusted(out, x->runtime[0] ? x->runtime : "static");
  fputs("]\" time=\"0\"", out);
  if (c->worst == CERT_PASS) {
    fputs("/>\n", out);
    return;
  }
  fputs(">\n", out);
  if (is_failure(c->worst) || c->worst == CERT_SKIP) {
    fprintf(out, "      <%s type=\"%s\" message=\"", c->worst == CERT_SKIP ? "skipped" : "failure",
            cert_verdict_name(c->worst));
    cert_text_put_untrusted(out, x->reason);
    fputs("\">", out);
    junit_body(out, ix, c);
    fprintf(out, "</%s>\n", c->worst == CERT_SKIP ? "skipped" : "failure");
  } else {
    fputs("      <system-out>", out);
    junit_body(out, ix, c);
    fputs("</system-out>\n", out);
  }
  fputs("    </testcase>\n", out);
}

static void junit_suite(FILE* out, const CertRunInfo* run, const CertIndex* ix,
                        const char* runtime) {
  size_t tests = 0, failures = 0, skipped = 0;
  for (size_t c = 0; c < ix->n_cells; ++c) {
    if (strcmp(cert_cell_at(ix, &ix->cells[c], 0)->runtime, runtime) != 0) continue;
    ++tests;
    failures += is_failure(ix->cells[c].worst);
    skipped += ix->cells[c].worst == CERT_SKIP;
  }
  fputs("  <testsuite name=\"certify ", out);
  cert_text_put_untrusted(out, cert_base_name(run->lib_path ? run->lib_path : "?"));
  fputs(" [", out);
  cert_text_put_untrusted(out, runtime[0] ? runtime : "static");
  fprintf(out, "]\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", tests,
          failures, skipped);
  for (size_t c = 0; c < ix->n_cells; ++c) {
    if (strcmp(cert_cell_at(ix, &ix->cells[c], 0)->runtime, runtime) != 0) continue;
    junit_case(out, run, ix, &ix->cells[c]);
  }
  fputs("  </testsuite>\n", out);
}

/* A tool error is one erroring testcase, so CI shows why nothing ran. */
static void junit_error(FILE* out, const CertRunInfo* run) {
  fputs(
      "  <testsuite name=\"certify\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
      "    <testcase classname=\"certify\" name=\"run\" time=\"0\">\n"
      "      <error type=\"ERROR\" message=\"",
      out);
  cert_text_put_untrusted(out, run->error);
  fputs("\"/>\n    </testcase>\n  </testsuite>\n", out);
}

static int junit_write(FILE* out, const CertRunInfo* run, const CertIndex* ix) {
  size_t failures = 0, skipped = 0;
  for (size_t c = 0; c < ix->n_cells; ++c) {
    failures += is_failure(ix->cells[c].worst);
    skipped += ix->cells[c].worst == CERT_SKIP;
  }
  int error = run->error != NULL;
  size_t tests = ix->n_cells + (size_t)error;
  if (run->releases) cert_report_releases_junit_counts(run->releases, &tests, &failures, &skipped);
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"certify\"", out);
  fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"%d\" skipped=\"%zu\" time=\"%.3f\">\n",
          tests, failures, error, skipped, run->seconds);
  if (error) junit_error(out, run);
  const char** runtimes = malloc((ix->n_cells + 1) * sizeof *runtimes);
  if (runtimes == NULL) return -1;
  size_t n = junit_runtimes(ix, runtimes);
  for (size_t r = 0; r < n; ++r) junit_suite(out, run, ix, runtimes[r]);
  free(runtimes);
  if (run->releases)
    cert_report_releases_junit(out, cert_base_name(run->lib_path ? run->lib_path : "?"),
                               run->releases);
  fputs("</testsuites>\n", out);
  return 0;
}

int cert_report_junit(const char* path, const CertRunInfo* run, const CertFindings* f) {
  return cert_index_write_file(path, run, f, junit_write);
}
