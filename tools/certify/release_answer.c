#include "release_answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "checks.h"
#include "release_table.h"

const char* cert_release_status_name(CertReleaseStatus s) {
  switch (s) {
    case CERT_REL_RUNS: return "runs";
    case CERT_REL_FAILS: return "FAILS";
    case CERT_REL_SKIPPED: return "skipped";
    case CERT_REL_UNTESTED: return "untested";
  }
  return "?";
}

/* The first sentence of a reason, as the one-line cause (without what
 * follows it: more sentences, or a remark in parentheses such as the
 * judge's "(2 of 26 such calls)", which differs between releases). */
static void first_sentence(const char* reason, char* out, size_t size) {
  size_t n = 0;
  for (const char* p = reason; *p; ++p) {
    if (p[0] == '.' && p[1] == ' ' && ((p[2] >= 'A' && p[2] <= 'Z') || p[2] == '(')) break;
    if (p[0] == '.' && p[1] == '\0') break;
    ++n;
  }
  if (n >= size) n = size - 1;
  memcpy(out, reason, n);
  out[n] = '\0';
  if (out[0] >= 'A' && out[0] <= 'Z' && !(out[1] >= 'A' && out[1] <= 'Z'))
    out[0] = (char)(out[0] - 'A' + 'a');
}

/* The first FAIL that holds for `label`: its own findings before the
 * static ones every runtime shares; *untested: its own finding that
 * nothing could be called there, or NULL. */
static const CertFinding* first_failure(const CertFindings* f, const char* label,
                                        CertVerdict* worst, const CertFinding** untested) {
  const CertFinding* own = NULL;
  const CertFinding* shared = NULL;
  *worst = CERT_PASS;
  *untested = NULL;
  for (size_t k = 0; k < f->n; ++k) {
    const CertFinding* x = &f->items[k];
    int mine = strcmp(x->runtime, label) == 0;
    if (!mine && x->runtime[0] != '\0') continue;
    if (x->verdict > *worst) *worst = x->verdict;
    if (mine && *untested == NULL && cert_finding_says_nothing_called(x)) *untested = x;
    if (x->verdict != CERT_FAIL) continue;
    if (mine && own == NULL) own = x;
    if (!mine && shared == NULL) shared = x;
  }
  return own ? own : shared;
}

static void fill_row(const CertReleaseInput* in, size_t i, const CertFindings* f,
                     CertReleaseRow* row) {
  memset(row, 0, sizeof *row);
  snprintf(row->label, sizeof row->label, "%s", in[i].label);
  if (in[i].skip) {
    row->status = CERT_REL_SKIPPED;
    row->worst = CERT_SKIP;
    snprintf(row->cause, sizeof row->cause, "%s", in[i].skip);
    return;
  }
  const char* ran = in[i].label;
  if (in[i].same_as >= 0) {
    ran = in[in[i].same_as].label;
    snprintf(row->same_as, sizeof row->same_as, "%s", ran);
  }
  const CertFinding* untested = NULL;
  const CertFinding* x = first_failure(f, ran, &row->worst, &untested);
  if (x == NULL && untested == NULL) return;
  row->status = x ? CERT_REL_FAILS : CERT_REL_UNTESTED;
  if (x == NULL) x = untested;
  snprintf(row->function, sizeof row->function, "%s", x->function);
  snprintf(row->check, sizeof row->check, "%s", x->check);
  snprintf(row->clause, sizeof row->clause, "%s", x->clause);
  first_sentence(x->reason, row->cause, sizeof row->cause);
}

/* ---- the one line ---------------------------------------------------------- */

static void add(CertBuf* b, const char* fmt, const char* arg) {
  char piece[1200];
  if (snprintf(piece, sizeof piece, fmt, arg) >= 0) cert_buf_add(b, piece);
}

static int same_group(const CertReleaseRow* a, const CertReleaseRow* b) {
  return a->status == b->status && (a->status == CERT_REL_RUNS || strcmp(a->cause, b->cause) == 0);
}

/* "cause", with "this runtime reads" said of several. */
static void add_cause(CertBuf* b, const char* cause, size_t members) {
  static const char* const kOne[] = {"this runtime reads", "this runtime"};
  static const char* const kMany[] = {"these runtimes read", "these runtimes"};
  for (size_t k = 0; members > 1 && k < 2; ++k) {
    const char* at = strstr(cause, kOne[k]);
    if (at == NULL) continue;
    char head[700];
    snprintf(head, sizeof head, "%.*s", (int)(at - cause), cause);
    add(b, " (%s", head);
    add(b, "%s", kMany[k]);
    add(b, "%s)", at + strlen(kOne[k]));
    return;
  }
  add(b, " (%s)", cause);
}

static int is_reference(const CertReleaseRow* r) { return strcmp(r->label, "reference") == 0; }

/* The position of a release among every one certify knows, or -1. */
static long known_index(const char* label) {
  for (size_t k = 0; k < cert_release_count(); ++k) {
    if (strcmp(cert_release_name(k), label) == 0) return (long)k;
  }
  return -1;
}

/* Rows [i, end) as ranges: "A - B" only where every release between A and
 * B was run (never a range over releases that were not), "A, B" for two. */
static void add_ranges(CertBuf* b, const CertReleaseRow* rows, size_t i, size_t end) {
  while (i < end) {
    size_t stop = i + 1;
    while (stop < end && known_index(rows[stop].label) >= 0 &&
           known_index(rows[stop].label) == known_index(rows[stop - 1].label) + 1) {
      ++stop;
    }
    add(b, "%s", rows[i].label);
    if (stop - i == 2) add(b, ", %s", rows[stop - 1].label);
    if (stop - i > 2) add(b, " - %s", rows[stop - 1].label);
    if (stop < end) add(b, "%s", ", ");
    i = stop;
  }
}

/* Every group of consecutive releases with `status` (and one cause),
 * written as ranges; the reference is no part of a range: it joins the last
 * group of its status that shares its cause, or stands alone after them. */
static void add_status(CertBuf* b, const CertReleaseRow* rows, size_t n, CertReleaseStatus status) {
  size_t(*groups)[2] = calloc(n ? n : 1, sizeof *groups);
  if (groups == NULL) {
    b->failed = 1;
    return;
  }
  size_t n_groups = 0;
  const CertReleaseRow* ref = NULL;
  for (size_t i = 0; i < n;) {
    if (is_reference(&rows[i])) {
      if (rows[i].status == status) ref = &rows[i];
      ++i;
      continue;
    }
    if (rows[i].status != status) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < n && !is_reference(&rows[end]) && same_group(&rows[i], &rows[end])) ++end;
    groups[n_groups][0] = i;
    groups[n_groups][1] = end;
    ++n_groups;
    i = end;
  }
  size_t join = n_groups;
  for (size_t g = 0; ref && g < n_groups; ++g) {
    if (same_group(&rows[groups[g][0]], ref)) join = g;
  }
  for (size_t g = 0; g < n_groups; ++g) {
    size_t i = groups[g][0], end = groups[g][1];
    if (g) add(b, "%s", status == CERT_REL_RUNS ? ", " : "; ");
    add_ranges(b, rows, i, end);
    if (g == join) add(b, "%s", ", reference");
    if (status != CERT_REL_RUNS) add_cause(b, rows[i].cause, end - i + (g == join));
  }
  if (ref && join == n_groups) {
    if (n_groups) add(b, "%s", status == CERT_REL_RUNS ? ", " : "; ");
    add(b, "%s", "reference");
    if (status != CERT_REL_RUNS) add_cause(b, ref->cause, 1);
  }
  free(groups);
}

static char* answer_line(const CertReleaseRow* rows, size_t n) {
  CertBuf b = {0};
  static const struct {
    CertReleaseStatus status;
    const char* head;
  } kParts[] = {{CERT_REL_RUNS, "runs on: "},
                {CERT_REL_FAILS, "fails on: "},
                {CERT_REL_UNTESTED, "untested on: "},
                {CERT_REL_SKIPPED, "not run: "}};
  int any = 0;
  for (size_t p = 0; p < sizeof kParts / sizeof kParts[0]; ++p) {
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) count += rows[i].status == kParts[p].status;
    if (count == 0) continue;
    add(&b, "%s", any ? "; " : "");
    add(&b, "%s", kParts[p].head);
    add_status(&b, rows, n, kParts[p].status);
    any = 1;
  }
  if (!any) add(&b, "%s", "no runtime was chosen");
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}

int cert_release_answer(const CertReleaseInput* in, size_t n, const CertFindings* f,
                        CertReleaseAnswer* out) {
  memset(out, 0, sizeof *out);
  out->rows = calloc(n ? n : 1, sizeof *out->rows);
  if (out->rows == NULL) return -1;
  out->n = n;
  for (size_t i = 0; i < n; ++i) {
    fill_row(in, i, f, &out->rows[i]);
    out->n_run += in[i].skip == NULL && in[i].same_as < 0;
  }
  out->answer = answer_line(out->rows, n);
  if (out->answer == NULL) {
    cert_release_answer_free(out);
    return -1;
  }
  return 0;
}

void cert_release_answer_free(CertReleaseAnswer* a) {
  free(a->rows);
  free(a->answer);
  memset(a, 0, sizeof *a);
}
