/* A worker as the parent sees it (probe_worker.c): the records it sends
 * read and acted on (a call's start, outcome and end, the registry, the
 * load), and its end judged: which call a death belongs to, which go back
 * in the queue. */
#ifndef CERT_PROBE_WORKER_H_
#define CERT_PROBE_WORKER_H_

#include <sys/resource.h>

#include "probe_engine_state.h"

/* Drains what is there on fd (the record pipe, or the output the worker
 * printed); returns 1 at end of file. */
int cert_worker_read_fd(Worker* w, int fd, int is_records);

/* Acts on every whole record read so far. */
void cert_worker_parse_records(CertEngine* e, Run* run, Worker* w);

/* The worker has ended (`waited`: and was waited for, with status and ru),
 * or its record pipe reached its end. */
void cert_worker_reap(CertEngine* e, Run* run, Worker* w, int waited, int status, struct rusage ru);

/* The library did not load: every call not yet done ends so. */
void cert_engine_mark_load_failure(CertEngine* e, Run* run);

/* Kills a worker that stopped answering (the worker enforces the time
 * limit per call; this catches the worker itself). */
void cert_worker_backstop(CertEngine* e, Worker* w);

#endif
