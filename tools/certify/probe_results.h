/* What the probe engine (probe_engine.h) is given and gives back: its
 * options, and for each call how it ended and what it returned. */
#ifndef CERT_PROBE_RESULTS_H_
#define CERT_PROBE_RESULTS_H_

#include <stddef.h>

#include "probe_protocol.h"

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
  int has_sig; /* `sig` came from the call's fatal-signal handler */
  int signo;
  int exit_status;
  int memory_exhausted; /* peak memory reached most of the cap */
  long maxrss_kb;
  int strays;     /* processes it left behind, ended by certify */
  char stray[64]; /* the first of them, "pid (name)" */
  char* text;     /* a str the call returned, or the load failure; malloc'd */
  char* output;   /* the tail of the worker's stdout and stderr; malloc'd */
} CertResult;

typedef struct {
  CertChildConfig child;
  int jobs;
  double timeout_s;
  size_t memory_limit;
  void (*progress)(void* ctx, size_t done, size_t total, const char* what);
  void* progress_ctx;
} CertEngineOptions;

#endif
