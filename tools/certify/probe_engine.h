/* The parent side of the probes: runs a list of calls in forked children,
 * several children at once, and turns however each call ended (returned,
 * signal, exit, time-out, memory exhaustion, the library not loading) into
 * a CertResult. The parent itself never loads the library or the runtime.
 *
 * Calls run in batches, one child per batch, to pay for the library load
 * once per batch. A call that kills its child after other calls ran in the
 * same child is run again alone, so a verdict is never caused by what an
 * earlier call left behind. */
#ifndef CERT_PROBE_ENGINE_H_
#define CERT_PROBE_ENGINE_H_

#include <stddef.h>

#include "probe_child.h"

typedef enum {
  CERT_END_DONE = 0, /* the call returned: see `out` */
  CERT_END_SIGNAL,   /* the child died of `signo` (see `sig` when the handler reported) */
  CERT_END_EXIT,     /* the child exited (`exit_status`) in the middle of the call */
  CERT_END_TIMEOUT,  /* the call ran past the time limit; its process group was killed */
  CERT_END_LOAD,     /* the runtime or library did not load: `text` says why */
  CERT_END_TOOL,     /* certify could not run the call (fork, pipe) */
} CertEnd;

typedef struct {
  CertEnd end;
  CertOutcome out;
  CertSignal sig;
  int has_sig;          /* `sig` came from the child's handler */
  int signo;            /* from waitpid */
  int exit_status;
  int memory_exhausted; /* peak memory reached most of the cap */
  long maxrss_kb;
  char* text;           /* a str the call returned, or the load failure; malloc'd */
  char* output;         /* the tail of the child's stdout and stderr; malloc'd */
} CertResult;

typedef struct {
  CertChildConfig child;
  int jobs;
  double timeout_s;
  size_t memory_limit;
  size_t batch; /* calls per child; 0: a default */
  void (*progress)(void* ctx, size_t done, size_t total, const char* what);
  void* progress_ctx;
} CertEngineOptions;

/* Runs calls[0..n) and fills results[0..n). Returns 0, or -1 when certify
 * itself failed (the results say which calls did not run). */
int cert_engine_run(const CertEngineOptions* opt, const CertCall* calls, size_t n, CertResult* results);
void cert_results_free(CertResult* results, size_t n);

#endif
