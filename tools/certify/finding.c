#include "finding.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"

static char* dup_or_empty(const char* s) { return strdup(s ? s : ""); }

static void finding_clear(CertFinding* f) {
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
  if (TFFI_VEC_RESERVE(out, out->n + 1) != 0) return -1;
  char* reason = NULL;
  va_list ap;
  va_start(ap, reason_fmt);
  int len = vasprintf(&reason, reason_fmt, ap);
  va_end(ap);
  if (len < 0) return -1;
  CertFinding f = {dup_or_empty(function),
                   dup_or_empty(check),
                   dup_or_empty(clause),
                   dup_or_empty(runtime),
                   verdict,
                   reason,
                   dup_or_empty(evidence),
                   dup_or_empty(replay)};
  if (!f.function || !f.check || !f.clause || !f.runtime || !f.evidence || !f.replay) {
    finding_clear(&f);
    return -1;
  }
  out->items[out->n++] = f;
  return 0;
}

void cert_findings_free(CertFindings* f) {
  for (size_t i = 0; i < f->n; ++i) finding_clear(&f->items[i]);
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
