/* certify's checks as a C table, made from checks.def (the only list of
 * them): an enum of their names and a row per check. */
#ifndef CERT_CHECKS_H_
#define CERT_CHECKS_H_

#include "finding.h"

typedef enum {
#define CERT_CHECK(name, id, stage, clauses, crash_clause, crash_verdict, summary, pass) \
  CERT_CHECK_##name,
#include "checks.def"
#undef CERT_CHECK
  CERT_CHECK_COUNT
} CertCheckName;

typedef struct {
  const char* id;           /* "probe.arity" */
  const char* stage;        /* "static", "dynamic", ... */
  const char* clauses;      /* "CDY-008, CDY-009", or "" */
  const char* crash_clause; /* what a call of it that dies breaks; "" when it makes no call */
  CertVerdict crash_verdict;
  const char* summary;
  const char* pass; /* the reason when all its calls passed; "" for "Passed." */
} CertCheck;

extern const CertCheck cert_checks[CERT_CHECK_COUNT];

/* The check the probes report "nothing could be called" with, on the
 * library as a whole (function ""): no call reached any function, so the
 * library is not certified whatever else passed. */
#define CERT_CHECK_NOTHING_CALLED (cert_checks[CERT_CHECK_PROBE_VALID_CALL].id)

/* 1 when the finding says nothing could be called (a library-level SKIP of
 * CERT_CHECK_NOTHING_CALLED). */
int cert_finding_says_nothing_called(const CertFinding* x);

/* 1 when the findings say nothing could be called under some runtime. */
int cert_findings_nothing_called(const CertFindings* f);

#endif
