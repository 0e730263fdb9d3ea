/* The record every certify check produces: one verdict on one function (or
 * on the library as a whole) for one check. The static stage (ELF facts),
 * the dynamic probes and the report all speak this one vocabulary. */
#ifndef CERT_FINDING_H_
#define CERT_FINDING_H_

#include <stddef.h>

/* Ordered by severity: the report's verdict for a cell is the worst one. */
typedef enum {
  CERT_PASS = 0,
  CERT_SKIP,      /* could not be checked here; `reason` says why */
  CERT_WARN,      /* legal but likely to hurt a user; never changes the exit status */
  CERT_NONSTRICT, /* breaks a SHOULD, or accepts only what older DLPack allowed */
  CERT_FAIL,      /* breaks a MUST */
} CertVerdict;

typedef struct {
  char* function; /* exported name without the __tvm_ffi_ prefix; "" = the library */
  char* check;    /* stable check id, e.g. "static.needed-found", "probe.arity" */
  char* clause;   /* spec clause ID (e.g. "KER-013") or "" */
  char* runtime;  /* "reference", "upstream", a path, or "" for static checks */
  CertVerdict verdict;
  char* reason;   /* one sentence a vendor can act on */
  char* evidence; /* what was seen: signal, error kind and message, symbol names */
  char* replay;   /* the probe as one line for `certify --replay`, or "" */
} CertFinding;

typedef struct {
  CertFinding* items;
  size_t n, cap;
} CertFindings;

/* Appends a copy of every string (NULL stored as ""). The reason is a
 * printf format. Returns 0, or -1 when out of memory (nothing appended). */
int cert_findings_add(CertFindings* out, const char* function, const char* check,
                      const char* clause, const char* runtime, CertVerdict verdict,
                      const char* evidence, const char* replay, const char* reason_fmt, ...)
    __attribute__((format(printf, 9, 10)));

void cert_findings_free(CertFindings* f);

/* "PASS", "SKIP", "WARN", "NONSTRICT", "FAIL". */
const char* cert_verdict_name(CertVerdict v);

/* The check the probes report "nothing could be called" with, on the
 * library as a whole (function ""): no call reached any function, so the
 * library is not certified whatever else passed. */
#define CERT_CHECK_NOTHING_CALLED "probe.valid-call"

/* 1 when the findings say nothing could be called under some runtime. */
int cert_findings_nothing_called(const CertFindings* f);

#endif
