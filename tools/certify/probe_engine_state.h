/* The probe engine's state (probe_engine.h), shared by its parts: the queue
 * of calls (probe_queue.c), what workers say and how they end
 * (probe_worker.c), and the loop that hands out the calls
 * (probe_engine.c). */
#ifndef CERT_PROBE_ENGINE_STATE_H_
#define CERT_PROBE_ENGINE_STATE_H_

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "probe_results.h"

typedef struct CertEngine CertEngine; /* as probe_engine.h says */

enum { OUTPUT_TAIL = 4096, RECORD_BUF_MAX = 1 << 20, MAX_JOBS = 32 };

/* A worker process and what the parent knows of it. */
typedef struct {
  pid_t pid; /* 0: none */
  int cmd, rfd, ofd;
  int ready;     /* loaded: READY came */
  size_t* batch; /* the calls handed to it and not yet ended */
  size_t pending;
  long current;  /* the call in flight (index into the run's calls), or -1 */
  double t0;     /* when the worker started, or the current call began */
  int killed;    /* the parent's backstop killed it */
  int preempted; /* killed because the function of its call hung elsewhere */
  CertSignal sig;
  int has_sig;
  char* rbuf;
  size_t rlen, rcap;
  char tail[OUTPUT_TAIL];
  size_t tail_len;
} Worker;

struct CertEngine {
  CertEngineOptions opt;
  int jobs;
  Worker w[MAX_JOBS];
  int load_failed;
  int runtime_failed;
  char* load_text;
  char* load_output;
  int idle_deaths; /* workers that died loaded but between calls */
  int registry_asked;
  char* registry_before;
  char* registry_after;
  char* globals;
  char* types;
  int globals_listable;
  char* load_note;
  char (*hung)[CERT_NAME_MAX]; /* functions that hung: their other calls are not run */
  size_t n_hung, hung_cap;
};

/* The state of one cert_engine_run. */
typedef struct {
  const CertCall* calls;
  CertResult* results;
  size_t n;
  size_t* queue; /* calls still to hand out: queue[head..tail) */
  size_t head, tail;
  unsigned char* done;
  size_t finished;
} Run;

static inline double cert_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline char* cert_dup_bytes(const char* p, size_t n) {
  char* d = malloc(n + 1);
  if (d) {
    memcpy(d, p, n);
    d[n] = '\0';
  }
  return d;
}

#endif
