/* Judging one probe's result (probe_judge.c): at most one issue per
 * result, the first problem in the order crash, error hygiene, result
 * slot, reference counts, threads, documented behaviour. probe_fold.c
 * folds the issues into findings. */
#ifndef CERT_PROBE_JUDGE_H_
#define CERT_PROBE_JUDGE_H_

#include <stddef.h>

#include "finding.h"
#include "probe_plan.h"

typedef struct {
  const char* check;
  const char* clause;
  CertVerdict verdict;
  char reason[700];
  char evidence[1600];
} CertIssue;

/* What a function's calls showed as a whole, for judging each one. */
typedef struct {
  int reached;    /* some call got past its argument checks (returned 0, failed only for want of a
                     GPU, or died) */
  int base_died;  /* its base call crashed, exited or hung: variations of it die for that reason */
  int has_symbol; /* it is exported */
  char refusal[600]; /* the first clean refusal, for saying why nothing reached it */
} CertFunctionView;

/* The issue of probe k (fv: its function's view, or NULL). */
void cert_judge_one(const CertPlan* plan, size_t k, const CertFunctionView* fv, CertIssue* is);

#endif
