/* The parent side of the probes: worker processes that each load the
 * runtime and the library once, then run calls the parent hands them one at
 * a time, each call in a process of its own forked from the worker. How a
 * call ended (returned, signal, exit, time-out, memory exhaustion) and
 * whether the library loaded at all become a CertResult. The parent itself
 * never loads the library or the runtime.
 *
 * Workers live as long as the engine, across several cert_engine_run
 * calls (the probes' phases), so each pays the load once. */
#ifndef CERT_PROBE_ENGINE_H_
#define CERT_PROBE_ENGINE_H_

#include <stddef.h>

#include "probe_child.h"

typedef enum {
  CERT_END_DONE = 0, /* the call returned: see `out` */
  CERT_END_SIGNAL,   /* the call's process died of `signo` (see `sig` when the handler reported) */
  CERT_END_EXIT,     /* the call's process exited (`exit_status`) in the middle of the call */
  CERT_END_TIMEOUT,  /* the call ran past the time limit and was killed */
  CERT_END_LOAD,     /* the runtime or library did not load: `text` says why */
  CERT_END_TOOL,     /* certify could not run the call (fork, pipe) */
} CertEnd;

typedef struct {
  CertEnd end;
  CertOutcome out;
  CertSignal sig;
  int has_sig;          /* `sig` came from the call's fatal-signal handler */
  int signo;
  int exit_status;
  int memory_exhausted; /* peak memory reached most of the cap */
  long maxrss_kb;
  char* text;           /* a str the call returned, or the load failure; malloc'd */
  char* output;         /* the tail of the worker's stdout and stderr; malloc'd */
} CertResult;

typedef struct {
  CertChildConfig child;
  int jobs;
  double timeout_s;
  size_t memory_limit;
  void (*progress)(void* ctx, size_t done, size_t total, const char* what);
  void* progress_ctx;
} CertEngineOptions;

typedef struct CertEngine CertEngine;

/* Returns NULL when out of memory. Workers start on the first run. */
CertEngine* cert_engine_open(const CertEngineOptions* opt);
/* Runs calls[0..n) and fills results[0..n). Returns 0, or -1 when certify
 * itself failed (the results say which calls did not run). */
int cert_engine_run(CertEngine* e, const CertCall* calls, size_t n, CertResult* results);
void cert_engine_close(CertEngine* e);
void cert_results_free(CertResult* results, size_t n);

#endif
