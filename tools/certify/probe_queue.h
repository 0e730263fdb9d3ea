/* The calls of one run as the engine hands them out (probe_queue.c): which
 * are done, which go back in the queue, which worker holds which, and the
 * functions that hung (their other calls are not run). */
#ifndef CERT_PROBE_QUEUE_H_
#define CERT_PROBE_QUEUE_H_

#include <stddef.h>

#include "probe_engine_state.h"

int cert_engine_is_hung(const CertEngine* e, const char* function);
void cert_engine_mark_hung(CertEngine* e, const char* function);

/* Call i is done (once): counted, and progress reported. */
void cert_run_finish(CertEngine* e, Run* run, size_t i);

/* A call that did not run: again later, unless its function hung. */
void cert_run_requeue_or_skip(CertEngine* e, Run* run, size_t i);

/* The worker no longer holds call i. */
void cert_worker_forget(Worker* w, size_t i);
int cert_worker_owns(const Worker* w, size_t i);

#endif
