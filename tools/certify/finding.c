#include "finding.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char* cert_dup(const char* s) { return strdup(s ? s : ""); }

static void cert_finding_clear(CertFinding* f) {
  free(f->function);
  free(f->check);
  free(f->clause);
  free(f->runtime);
  free(f->reason);
  free(f->evidence);
  free(f->replay);
}

int cert_findings_add(CertFindings* out, const char* function, const char* check,
                      const char* clause, const char* runtime, CertVerdict verdict,
                      const char* evidence, const char* replay, const char* reason_fmt, ...) {
  if (out->n == out->cap) {
    size_t cap = out->cap ? out->cap * 2 : 16;
    CertFinding* grown = realloc(out->items, cap * sizeof *grown);
    if (grown == NULL) return -1;
    out->items = grown;
    out->cap = cap;
  }
  char* reason = NULL;
  va_list ap;
  va_start(ap, reason_fmt);
  int len = vasprintf(&reason, reason_fmt, ap);
  va_end(ap);
  if (len < 0) return -1;
  CertFinding f = {cert_dup(function), cert_dup(check), cert_dup(clause), cert_dup(runtime),
                   verdict, reason, cert_dup(evidence), cert_dup(replay)};
  if (!f.function || !f.check || !f.clause || !f.runtime || !f.evidence || !f.replay) {
    cert_finding_clear(&f);
    return -1;
  }
  out->items[out->n++] = f;
  return 0;
}

void cert_findings_free(CertFindings* f) {
  for (size_t i = 0; i < f->n; ++i) cert_finding_clear(&f->items[i]);
  free(f->items);
  f->items = NULL;
  f->n = f->cap = 0;
}

const char* cert_verdict_name(CertVerdict v) {
  switch (v) {
    case CERT_PASS: return "PASS";
    case CERT_SKIP: return "SKIP";
    case CERT_WARN: return "WARN";
    case CERT_NONSTRICT: return "NONSTRICT";
    case CERT_FAIL: return "FAIL";
  }
  return "?";
}

int cert_findings_nothing_called(const CertFindings* f) {
  for (size_t i = 0; i < f->n; ++i) {
    const CertFinding* x = &f->items[i];
    if (x->verdict == CERT_SKIP && x->function[0] == '\0' && strcmp(x->check, CERT_CHECK_NOTHING_CALLED) == 0) {
      return 1;
    }
  }
  return 0;
}
