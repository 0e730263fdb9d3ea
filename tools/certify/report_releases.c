/* The per-release part of every report (certify --releases): a table row
 * per release and the one-line answer on stdout, the same in JSON, a
 * JUnit testcase per release, and a release x check grid in the HTML page.
 * Function names and causes quote the library: cleaned and escaped. */
#include "report_releases.h"

#include <stdlib.h>
#include <string.h>

#include "text.h"

static void put_clean(FILE* out, const char* s) {
  char* clean = cert_text_clean(s);
  fputs(clean ? clean : "?", out);
  free(clean);
}

void cert_report_releases_table(FILE* out, const CertReleaseAnswer* a, int width) {
  size_t releases = 0;
  for (size_t i = 0; i < a->n; ++i) releases += strcmp(a->rows[i].label, "reference") != 0;
  fprintf(out, "releases  (%zu release%s, %zu distinct librar%s run, the reference included)\n",
          releases, releases == 1 ? "" : "s", a->n_run, a->n_run == 1 ? "y" : "ies");
  for (size_t i = 0; i < a->n; ++i) {
    const CertReleaseRow* r = &a->rows[i];
    fprintf(out, "  %-14s %-8s", r->label, cert_release_status_name(r->status));
    if (r->status == CERT_REL_SKIPPED || (r->status == CERT_REL_UNTESTED && !r->same_as[0])) {
      fputs(" ", out);
      put_clean(out, r->cause);
    } else if (r->same_as[0]) {
      fprintf(out, " as %s (the same libtvm_ffi.so, run once)", r->same_as);
    } else if (r->status == CERT_REL_FAILS) {
      fputs(" ", out);
      put_clean(out, r->function[0] ? r->function : "(library)");
      fprintf(out, "  %s  %s\n%*s", r->check, r->clause[0] ? r->clause : "-", 26, "");
      /* The cause, wrapped at the table's width. */
      char* cause = cert_text_clean(r->cause);
      int col = 26, limit = width > 60 ? width : 100;
      for (char* w = cause ? strtok(cause, " ") : NULL; w; w = strtok(NULL, " ")) {
        int len = (int)strlen(w);
        if (col > 26 && col + 1 + len > limit) {
          fprintf(out, "\n%*s", 26, "");
          col = 26;
        }
        fprintf(out, "%s%s", col > 26 ? " " : "", w);
        col += len + (col > 26);
      }
      free(cause);
    }
    fputc('\n', out);
  }
  fputc('\n', out);
}

void cert_report_releases_answer(FILE* out, const CertReleaseAnswer* a) {
  fputs("certify: ", out);
  put_clean(out, a->answer);
  fputc('\n', out);
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t* text(const char* s) {
  char* clean = cert_text_clean(s);
  json_t* j = clean ? json_string(clean) : NULL;
  free(clean);
  return j;
}

static int put(json_t* o, const char* key, json_t* v) {
  return v == NULL ? -1 : json_object_set_new(o, key, v);
}

/* The JSON word: cert_release_status_name in lower case. */
static const char* status_word(CertReleaseStatus s) {
  return s == CERT_REL_FAILS ? "fails" : cert_release_status_name(s);
}

int cert_report_releases_json(json_t* root, const CertReleaseAnswer* a) {
  json_t* rows = json_array();
  int bad = rows == NULL;
  for (size_t i = 0; i < a->n && !bad; ++i) {
    const CertReleaseRow* r = &a->rows[i];
    json_t* o = json_object();
    bad |= o == NULL || put(o, "release", text(r->label)) |
                            put(o, "status", json_string(status_word(r->status))) |
                            put(o, "verdict", json_string(cert_verdict_name(r->worst))) |
                            put(o, "same_as", text(r->same_as)) |
                            put(o, "function", text(r->function)) |
                            put(o, "check", text(r->check)) | put(o, "clause", text(r->clause)) |
                            put(o, "cause", text(r->cause));
    if (!bad)
      bad |= json_array_append_new(rows, o) != 0;
    else
      json_decref(o);
  }
  if (bad) {
    json_decref(rows);
    return -1;
  }
  return put(root, "answer", text(a->answer)) | put(root, "releases", rows);
}

/* ---- JUnit ---------------------------------------------------------------- */

void cert_report_releases_junit_counts(const CertReleaseAnswer* a, size_t* tests, size_t* failures,
                                       size_t* skipped) {
  for (size_t i = 0; i < a->n; ++i) {
    ++*tests;
    *failures += a->rows[i].status == CERT_REL_FAILS;
    *skipped += a->rows[i].status == CERT_REL_SKIPPED || a->rows[i].status == CERT_REL_UNTESTED;
  }
}

void cert_report_releases_junit(FILE* out, const char* lib, const CertReleaseAnswer* a) {
  size_t tests = 0, failures = 0, skipped = 0;
  cert_report_releases_junit_counts(a, &tests, &failures, &skipped);
  fputs("  <testsuite name=\"certify ", out);
  cert_text_put_untrusted(out, lib);
  fprintf(out, " [releases]\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
          tests, failures, skipped);
  for (size_t i = 0; i < a->n; ++i) {
    const CertReleaseRow* r = &a->rows[i];
    fputs("    <testcase classname=\"certify.", out);
    cert_text_put_untrusted(out, lib);
    fputs(".releases\" name=\"", out);
    cert_text_put_untrusted(out, r->label);
    fputs("\" time=\"0\"", out);
    if (r->status == CERT_REL_RUNS) {
      fputs("/>\n", out);
      continue;
    }
    fputs(">\n      <", out);
    fputs(r->status == CERT_REL_FAILS ? "failure type=\"FAIL\" message=\"" : "skipped message=\"",
          out);
    cert_text_put_untrusted(out, r->cause);
    if (r->status == CERT_REL_FAILS) {
      fputs("\">", out);
      cert_text_put_untrusted(out, r->function[0] ? r->function : "(library)");
      fputs(" ", out);
      cert_text_put_untrusted(out, r->check);
      fputs(" ", out);
      cert_text_put_untrusted(out, r->clause);
      if (r->same_as[0]) {
        fputs(" (the library of ", out);
        cert_text_put_untrusted(out, r->same_as);
        fputs(")", out);
      }
      fputs("</failure>\n    </testcase>\n", out);
    } else {
      fputs("\"/>\n    </testcase>\n", out);
    }
  }
  fputs("  </testsuite>\n", out);
}

/* ---- HTML ------------------------------------------------------------------ */

/* The checks any finding of these runtimes (or a shared static one) has,
 * in the order first met. */
static size_t grid_checks(const CertFindings* f, const char** out) {
  size_t n = 0;
  for (size_t k = 0; k < f->n; ++k) {
    size_t j = 0;
    while (j < n && strcmp(out[j], f->items[k].check) != 0) ++j;
    if (j == n) out[n++] = f->items[k].check;
  }
  return n;
}

static int cell_verdict(const CertFindings* f, const char* runtime, const char* check) {
  int worst = -1;
  for (size_t k = 0; k < f->n; ++k) {
    const CertFinding* x = &f->items[k];
    if (strcmp(x->check, check) != 0) continue;
    if (x->runtime[0] && strcmp(x->runtime, runtime) != 0) continue;
    if ((int)x->verdict > worst) worst = (int)x->verdict;
  }
  return worst;
}

void cert_report_releases_html(FILE* out, const CertReleaseAnswer* a, const CertFindings* f) {
  const char** checks = malloc((f->n + 1) * sizeof *checks);
  if (checks == NULL) return;
  size_t n_checks = grid_checks(f, checks);
  fputs("<h2>Releases</h2>\n<p class=\"answer\"><strong>", out);
  cert_text_put_untrusted(out, a->answer);
  fputs("</strong></p>\n<table id=\"releases\">\n<thead><tr><th>Release</th><th>Result</th>", out);
  for (size_t c = 0; c < n_checks; ++c) {
    fputs("<th class=\"ck\">", out);
    cert_text_put_untrusted(out, checks[c]);
    fputs("</th>", out);
  }
  fputs("<th>Cause</th></tr></thead>\n<tbody>\n", out);
  for (size_t i = 0; i < a->n; ++i) {
    const CertReleaseRow* r = &a->rows[i];
    const char* cls = r->status == CERT_REL_FAILS  ? "FAIL"
                      : r->status == CERT_REL_RUNS ? "PASS"
                                                   : "SKIP";
    fprintf(out, "<tr class=\"r-%s\"><td class=\"rt\">", cls);
    cert_text_put_untrusted(out, r->label);
    fprintf(out, "</td><td><span class=\"badge v-%s\">%s</span></td>", cls,
            cert_release_status_name(r->status));
    const char* ran = r->same_as[0] ? r->same_as : r->label;
    for (size_t c = 0; c < n_checks; ++c) {
      int v = r->status == CERT_REL_SKIPPED ? -1 : cell_verdict(f, ran, checks[c]);
      if (v < 0) {
        fputs("<td></td>", out);
      } else {
        fprintf(out, "<td><span class=\"badge v-%s\">%s</span></td>",
                cert_verdict_name((CertVerdict)v), cert_verdict_name((CertVerdict)v));
      }
    }
    fputs("<td>", out);
    if (r->same_as[0]) {
      fputs("the same libtvm_ffi.so as ", out);
      cert_text_put_untrusted(out, r->same_as);
      if (r->cause[0]) fputs(": ", out);
    }
    cert_text_put_untrusted(out, r->cause);
    fputs("</td></tr>\n", out);
  }
  fputs("</tbody>\n</table>\n", out);
  free(checks);
}
