#include "checks.h"

#include <string.h>

const CertCheck cert_checks[CERT_CHECK_COUNT] = {
#define CERT_CHECK(name, id, stage, clauses, crash_clause, crash_verdict, summary, pass) \
  {id, stage, clauses, crash_clause, crash_verdict, summary, pass},
#include "checks.def"
#undef CERT_CHECK
};

int cert_finding_says_nothing_called(const CertFinding* x) {
  return x->verdict == CERT_SKIP && x->function[0] == '\0' &&
         strcmp(x->check, CERT_CHECK_NOTHING_CALLED) == 0;
}

int cert_findings_nothing_called(const CertFindings* f) {
  for (size_t i = 0; i < f->n; ++i) {
    if (cert_finding_says_nothing_called(&f->items[i])) return 1;
  }
  return 0;
}
