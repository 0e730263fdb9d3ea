#include "probe_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/vec.h"
/* ---- hung functions ------------------------------------------------------ */

int cert_engine_is_hung(const CertEngine* e, const char* function) {
  for (size_t k = 0; k < e->n_hung; ++k) {
    if (strcmp(e->hung[k], function) == 0) return 1;
  }
  return 0;
}

void cert_engine_mark_hung(CertEngine* e, const char* function) {
  if (cert_engine_is_hung(e, function)) return;
  if (tffi_vec_reserve(&e->hung, &e->hung_cap, e->n_hung + 1, sizeof *e->hung) != 0) return;
  snprintf(e->hung[e->n_hung++], CERT_NAME_MAX, "%s", function);
}

/* ---- the queue ------------------------------------------------------------ */

void cert_run_finish(CertEngine* e, Run* run, size_t i) {
  if (run->done[i]) return;
  run->done[i] = 1;
  run->finished++;
  if (e->opt.progress)
    e->opt.progress(e->opt.progress_ctx, run->finished, run->n, run->calls[i].function);
}

/* A call that did not run: again later, unless its function hung. */
void cert_run_requeue_or_skip(CertEngine* e, Run* run, size_t i) {
  if (run->done[i]) return;
  if (cert_engine_is_hung(e, run->calls[i].function)) {
    run->results[i].end = CERT_END_NOT_RUN;
    cert_run_finish(e, run, i);
    return;
  }
  run->queue[--run->head] = i; /* never below 0: it was taken from there */
}

void cert_worker_forget(Worker* w, size_t i) {
  for (size_t k = 0; k < w->pending; ++k) {
    if (w->batch[k] != i) continue;
    w->batch[k] = w->batch[--w->pending];
    break;
  }
  if (w->current == (long)i) w->current = -1;
}

int cert_worker_owns(const Worker* w, size_t i) {
  for (size_t k = 0; k < w->pending; ++k) {
    if (w->batch[k] == i) return 1;
  }
  return 0;
}
