/* The parent side of the probes: worker processes that each load the
 * runtime and the library once, then run the batches of calls the parent
 * hands them (probe_child.h). How each call ended (returned, signal, exit,
 * time-out, memory exhaustion, processes left behind, certify's descriptors
 * closed) and whether the library loaded at all become a CertResult. The
 * parent itself never loads the library or the runtime.
 *
 * A function that hangs or exhausts the memory cap is judged once: its
 * other calls are not run (CERT_END_NOT_RUN), and calls of it already
 * running elsewhere are stopped. Workers live as long as the engine, across several
 * cert_engine_run calls (the probes' phases), so each pays the load once. */
#ifndef CERT_PROBE_ENGINE_H_
#define CERT_PROBE_ENGINE_H_

#include <stddef.h>

#include "probe_child.h"

typedef enum {
  CERT_END_DONE = 0, /* the call returned: see `out` */
  CERT_END_SIGNAL,   /* the call's process died of `signo` (see `sig` when the handler reported) */
  CERT_END_EXIT,     /* the call's process exited (`exit_status`) in the middle of the call */
  CERT_END_TIMEOUT,  /* the call ran past the time limit and was killed */
  CERT_END_LOAD,     /* the library did not load: `text` says why */
  CERT_END_TOOL,     /* certify could not run the call (fork, pipe, the runtime did not load) */
  CERT_END_NOT_RUN,  /* not run: its function hung or exhausted memory on another call */
  CERT_END_FDS,      /* it returned with certify's descriptors closed or replaced */
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
  int strays;           /* processes it left behind, ended by certify */
  char stray[64];       /* the first of them, "pid (name)" */
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
 * itself failed (the runtime did not load: cert_engine_error says why; or
 * the results say which calls did not run). */
int cert_engine_run(CertEngine* e, const CertCall* calls, size_t n, CertResult* results);
void cert_engine_close(CertEngine* e);
void cert_results_free(CertResult* results, size_t n);

/* Starts a worker and waits until it loaded the library (or failed to):
 * for a library with nothing to call. 0, or -1 when certify failed. */
int cert_engine_load(CertEngine* e);

/* Why certify itself could not probe (the runtime did not load), or NULL. */
const char* cert_engine_error(const CertEngine* e);

/* Why the library did not load (the loader's message) and what the process
 * printed, or NULL when it loaded (or nothing tried yet). */
const char* cert_engine_load_failure(const CertEngine* e, const char** output);

/* What loading the library registered with the runtime, one per line
 * ("name"), and whether the runtime could list them (0: it has no way to
 * list global functions, say). NULL until a worker loaded the library. */
const char* cert_engine_registered_globals(const CertEngine* e, int* listable);
const char* cert_engine_registered_types(const CertEngine* e);

/* How the library was loaded, when something stood in for what this
 * machine lacks (a driver stub), or NULL. */
const char* cert_engine_load_note(const CertEngine* e);

#endif
