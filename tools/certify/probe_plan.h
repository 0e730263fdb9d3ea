/* The probes certify makes on each function, and how their results become
 * findings. Internal to the dynamic stage (probe.c drives it).
 *
 * Phase 1 (discovery) calls each function with 0..4 tensors on a guarded
 * argument array and tries a few plausible argument lists to find a call
 * the function accepts (the "base call"); with a manifest the base call
 * comes from the signature instead. Phase 2 varies the base call: every
 * argument kind in every position, every tensor form, two threads, and
 * with a manifest valid calls with checked results and invalid calls with
 * documented error kinds. */
#ifndef CERT_PROBE_PLAN_H_
#define CERT_PROBE_PLAN_H_

#include <stdio.h>

#include "finding.h"
#include "manifest.h"
#include "probe_classes.h"
#include "probe_options.h"
#include "probe_engine.h"

typedef struct {
  CertCall call;
  CertProbeClass cls;
  int error_case; /* CertErrorCase for CERT_P_ERRORS */
  int varied_arg; /* CERT_P_KINDS: the argument replaced; else -1 */
} CertProbe;

/* A function's base call: the probes of phase 2 vary it, so what it did
 * decides what their outcomes mean. */
typedef struct {
  char name[CERT_NAME_MAX];
  size_t base;  /* the probe that made the base call, or SIZE_MAX */
  int manifest; /* the base call comes from the manifest */
} CertPlanFunction;

typedef struct {
  const CertProbeOptions* opt;
  CertProbe* probes;
  CertResult* results;
  size_t n, cap;
  int have_gpu;
  CertPlanFunction* fns;
  size_t n_fns, fns_cap;
} CertPlan;

int cert_plan_init(CertPlan* plan, const CertProbeOptions* opt);
void cert_plan_free(CertPlan* plan);

int cert_plan_discovery(CertPlan* plan, const char* function);
int cert_plan_metadata(CertPlan* plan, const char* symbol);
/* Needs the discovery results of `function`. */
int cert_plan_probes(CertPlan* plan, const char* function);
int cert_plan_add_replay(CertPlan* plan, const CertCall* call);

/* Every probe's result judged, aggregated to one finding per function and
 * check (the worst, with its replay line). A check whose calls never got
 * past a function's argument checks (the function accepted none of them)
 * is a SKIP, never a PASS. Sets *reached to the number of functions some
 * call reached. */
int cert_plan_judge(const CertPlan* plan, CertFindings* out, size_t* reached);

/* A failure that means only that this machine has no usable GPU
 * (cudaErrorNoDevice, a driver stub, ...). */
int cert_no_gpu_message(const char* message);

/* What probe k did, in words (for --replay). */
void cert_plan_describe(const CertPlan* plan, size_t k, FILE* f);

#endif
