#include "probe_worker.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe_procs.h"
#include "probe_queue.h"
#include "reference/vec.h"

/* ---- records ------------------------------------------------------------ */

static void keep_tail(Worker* w, const char* p, size_t n) {
  if (n >= OUTPUT_TAIL) {
    memcpy(w->tail, p + n - OUTPUT_TAIL, OUTPUT_TAIL);
    w->tail_len = OUTPUT_TAIL;
    return;
  }
  if (w->tail_len + n > OUTPUT_TAIL) {
    size_t drop = w->tail_len + n - OUTPUT_TAIL;
    memmove(w->tail, w->tail + drop, w->tail_len - drop);
    w->tail_len -= drop;
  }
  memcpy(w->tail + w->tail_len, p, n);
  w->tail_len += n;
}

/* The names on lines starting with `prefix` in `after` that `before` lacks. */
static char* added_names(const char* before, const char* after, const char* prefix) {
  size_t cap = strlen(after) + 1, len = 0, plen = strlen(prefix);
  char* out = calloc(cap, 1);
  if (out == NULL) return NULL;
  for (const char* line = after; *line;) {
    const char* nl = strchr(line, '\n');
    size_t n = nl ? (size_t)(nl - line) : strlen(line);
    if (n > plen && strncmp(line, prefix, plen) == 0) {
      int found = 0;
      for (const char* b = before; *b && !found;) {
        const char* bnl = strchr(b, '\n');
        size_t bn = bnl ? (size_t)(bnl - b) : strlen(b);
        found = bn == n && memcmp(b, line, n) == 0;
        b += bn + (bnl != NULL);
      }
      if (!found) {
        memcpy(out + len, line + plen, n - plen);
        len += n - plen;
        out[len++] = '\n';
      }
    }
    line += n + (nl != NULL);
  }
  return out;
}

static void registry_record(CertEngine* e, const char* text, size_t len) {
  char* copy = cert_dup_bytes(text, len);
  if (copy == NULL) return;
  char** slot = strncmp(copy, "before\n", 7) == 0 ? &e->registry_before : &e->registry_after;
  free(*slot);
  *slot = copy;
  if (e->registry_before == NULL || e->registry_after == NULL) return;
  free(e->globals);
  free(e->types);
  e->globals = added_names(e->registry_before, e->registry_after, "G ");
  e->types = added_names(e->registry_before, e->registry_after, "T ");
  e->globals_listable = strstr(e->registry_after, "\nG?\n") == NULL;
}

/* How the call's own process ended, when it did not return. */
static void end_call(CertEngine* e, Run* run, Worker* w, size_t i, const CertEndRecord* end) {
  CertResult* r = &run->results[i];
  r->maxrss_kb = (long)end->maxrss_kb;
  r->strays += end->strays;
  if (end->strays > 0 && r->stray[0] == '\0') snprintf(r->stray, sizeof r->stray, "%s", end->stray);
  if (end->how == CERT_HOW_RETURNED) return;
  long grew_kb = (long)(end->maxrss_kb - end->base_rss_kb);
  r->memory_exhausted =
      e->opt.memory_limit > 0 && grew_kb > 0 && (size_t)grew_kb * 1024 >= e->opt.memory_limit / 2;
  r->has_sig = w->has_sig;
  r->sig = w->sig;
  /* What it printed as it died (the loader's "symbol lookup error", an
   * abort message) is in the pipe already: the worker waited for it. */
  cert_worker_read_fd(w, w->ofd, 0);
  switch (end->how) {
    case CERT_HOW_EXIT: r->end = CERT_END_EXIT, r->exit_status = end->code; break;
    case CERT_HOW_SIGNAL: r->end = CERT_END_SIGNAL, r->signo = end->code; break;
    case CERT_HOW_TIMEOUT: r->end = CERT_END_TIMEOUT; break;
    case CERT_HOW_FDS: r->end = CERT_END_FDS; break;
    default: r->end = CERT_END_TOOL; break;
  }
  free(r->output);
  r->output = cert_dup_bytes(w->tail, w->tail_len);
}

/* A function hung: the calls of it other workers are running stop now. */
static void preempt_hung(CertEngine* e, Run* run, const Worker* except) {
  for (int k = 0; k < e->jobs; ++k) {
    Worker* o = &e->w[k];
    if (o == except || o->pid == 0 || o->current < 0 || o->preempted) continue;
    if (!cert_engine_is_hung(e, run->calls[o->current].function)) continue;
    o->preempted = 1;
    kill(-o->pid, SIGKILL);
  }
}

static void handle_end(CertEngine* e, Run* run, Worker* w, size_t i, const CertEndRecord* end) {
  if (run->done[i]) {
    /* It had returned; what it left behind came to light afterwards. */
    run->results[i].strays += end->strays;
    if (end->strays > 0 && run->results[i].stray[0] == '\0') {
      snprintf(run->results[i].stray, sizeof run->results[i].stray, "%s", end->stray);
    }
    return;
  }
  cert_worker_forget(w, i);
  if (end->how == CERT_HOW_NOT_RUN) {
    cert_run_requeue_or_skip(e, run, i);
    return;
  }
  if (end->how == CERT_HOW_TIMEOUT && cert_engine_is_hung(e, run->calls[i].function)) {
    /* Another worker's call of it hung at the same moment: judged once. */
    run->results[i].end = CERT_END_NOT_RUN;
    cert_run_finish(e, run, i);
    return;
  }
  end_call(e, run, w, i, end);
  cert_run_finish(e, run, i);
  /* A hang costs a time limit and a memory bomb the time to fill the cap,
   * on every call: either is judged once. */
  if (end->how == CERT_HOW_TIMEOUT || run->results[i].memory_exhausted) {
    cert_engine_mark_hung(e, run->calls[i].function);
    preempt_hung(e, run, w);
  }
}

static void handle_call_record(CertEngine* e, Run* run, Worker* w, const CertRecordHeader* h,
                               const char* payload) {
  if (h->index < 0 || (size_t)h->index >= run->n || !cert_worker_owns(w, (size_t)h->index)) return;
  size_t i = (size_t)h->index;
  CertResult* r = &run->results[i];
  switch (h->type) {
    case CERT_REC_START:
      w->current = (long)i;
      w->t0 = cert_now_s();
      w->has_sig = 0;
      if (cert_engine_is_hung(e, run->calls[i].function) && !w->preempted) {
        w->preempted = 1;
        kill(-w->pid, SIGKILL);
      }
      break;
    case CERT_REC_DONE:
      if (h->len == sizeof(CertOutcome)) {
        r->end = CERT_END_DONE;
        memcpy(&r->out, payload, sizeof(CertOutcome));
      }
      break;
    case CERT_REC_SIGNAL:
      if (h->len == sizeof(CertSignal)) {
        memcpy(&w->sig, payload, sizeof w->sig);
        w->has_sig = 1;
      }
      break;
    case CERT_REC_TEXT:
      free(r->text);
      r->text = cert_dup_bytes(payload, h->len);
      break;
    case CERT_REC_END:
      if (h->len == sizeof(CertEndRecord)) {
        CertEndRecord end;
        memcpy(&end, payload, sizeof end);
        handle_end(e, run, w, i, &end);
      }
      break;
    default: break;
  }
}

static void handle_record(CertEngine* e, Run* run, Worker* w, const CertRecordHeader* h,
                          const char* payload) {
  switch (h->type) {
    case CERT_REC_READY: w->ready = 1; return;
    case CERT_REC_LOAD:
    case CERT_REC_RUNTIME:
      if (!e->load_failed) {
        e->load_failed = 1;
        e->runtime_failed = h->type == CERT_REC_RUNTIME;
        e->load_text = cert_dup_bytes(payload, h->len);
      }
      return;
    case CERT_REC_REGISTRY: registry_record(e, payload, h->len); return;
    case CERT_REC_LOADNOTE:
      if (e->load_note == NULL) e->load_note = cert_dup_bytes(payload, h->len);
      return;
    default: handle_call_record(e, run, w, h, payload); return;
  }
}

void cert_worker_parse_records(CertEngine* e, Run* run, Worker* w) {
  size_t pos = 0;
  while (w->rlen - pos >= sizeof(CertRecordHeader)) {
    CertRecordHeader h;
    memcpy(&h, w->rbuf + pos, sizeof h);
    if (h.len > CERT_TEXT_MAX + 64) {
      w->rlen = 0; /* a torn stream: drop the rest */
      return;
    }
    if (w->rlen - pos - sizeof h < h.len) break;
    handle_record(e, run, w, &h, w->rbuf + pos + sizeof h);
    pos += sizeof h + h.len;
  }
  memmove(w->rbuf, w->rbuf + pos, w->rlen - pos);
  w->rlen -= pos;
}

/* Drains what is there; returns 1 at end of file. */
int cert_worker_read_fd(Worker* w, int fd, int is_records) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return 1;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN ? 0 : 1;
    if (!is_records) {
      keep_tail(w, buf, (size_t)n);
      continue;
    }
    size_t need = w->rlen + (size_t)n;
    if (need > RECORD_BUF_MAX || tffi_vec_reserve(&w->rbuf, &w->rcap, need, 1) != 0) return 1;
    memcpy(w->rbuf + w->rlen, buf, (size_t)n);
    w->rlen += (size_t)n;
  }
}

/* ---- a worker's end -------------------------------------------------------- */

static void load_death(CertEngine* e, const Worker* w, int status) {
  char why[256];
  if (w->killed) {
    snprintf(why, sizeof why, "loading the library did not finish within %.0f s",
             e->opt.timeout_s + 10);
  } else if (WIFSIGNALED(status)) {
    snprintf(why, sizeof why, "loading the library killed the process with signal %d (%s)",
             WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    snprintf(why, sizeof why, "loading the library ended the process with status %d",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  e->load_failed = 1;
  e->load_text = strdup(why);
}

/* The worker itself died during call i: judge the call by it. */
static void judge_by_worker(CertEngine* e, Run* run, Worker* w, size_t i, int status,
                            const struct rusage* ru) {
  CertResult* r = &run->results[i];
  if (w->killed && cert_engine_is_hung(e, run->calls[i].function)) {
    r->end = CERT_END_NOT_RUN;
    cert_run_finish(e, run, i);
    return;
  }
  r->has_sig = w->has_sig;
  r->sig = w->sig;
  r->maxrss_kb = ru->ru_maxrss;
  if (w->killed) {
    r->end = CERT_END_TIMEOUT;
  } else if (WIFSIGNALED(status)) {
    r->end = CERT_END_SIGNAL, r->signo = WTERMSIG(status);
  } else {
    r->end = CERT_END_EXIT, r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  free(r->output);
  r->output = cert_dup_bytes(w->tail, w->tail_len);
  cert_run_finish(e, run, i);
  if (w->killed) cert_engine_mark_hung(e, run->calls[i].function);
}

/* Ends what the worker's calls abandoned and this process inherited. */
static void sweep_orphans(CertEngine* e) {
  pid_t keep[MAX_JOBS];
  size_t n = 0;
  for (int k = 0; k < e->jobs; ++k) {
    if (e->w[k].pid > 0) keep[n++] = e->w[k].pid;
  }
  char first[64];
  cert_sweep_children(keep, n, first, sizeof first);
}

/* The worker has ended (`waited`: and was waited for, with status and ru),
 * or its record pipe reached its end. */
void cert_worker_reap(CertEngine* e, Run* run, Worker* w, int waited, int status,
                      struct rusage ru) {
  kill(-w->pid, SIGKILL); /* anything a call left running */
  while (!waited && wait4(w->pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  /* What it wrote before it ended is still owed to its calls. */
  cert_worker_read_fd(w, w->rfd, 1);
  cert_worker_parse_records(e, run, w);
  cert_worker_read_fd(w, w->ofd, 0);
  close(w->cmd), close(w->rfd), close(w->ofd);
  if (!w->ready && !e->load_failed) load_death(e, w, status);
  if (w->ready && w->current < 0 && !w->preempted && !w->killed && !e->load_failed &&
      ++e->idle_deaths >= 3) {
    /* Something the library started at load time (a thread, a timer)
     * kills its process on its own: no call can be judged in it. */
    char why[256];
    snprintf(
        why, sizeof why,
        "the process that loaded the library died by itself between calls (%s %d), "
        "three times",
        WIFSIGNALED(status) ? "signal" : "exit status",
        WIFSIGNALED(status) ? WTERMSIG(status) : (WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    e->load_failed = 1;
    e->load_text = strdup(why);
  }
  if (e->load_failed && e->load_output == NULL)
    e->load_output = cert_dup_bytes(w->tail, w->tail_len);
  if (w->current >= 0 && !e->load_failed && !w->preempted && !run->done[w->current]) {
    size_t i = (size_t)w->current;
    cert_worker_forget(w, i);
    judge_by_worker(e, run, w, i, status, &ru);
  }
  while (w->pending > 0) {
    size_t i = w->batch[--w->pending];
    if (!e->load_failed) cert_run_requeue_or_skip(e, run, i);
  }
  free(w->rbuf);
  size_t* batch = w->batch;
  memset(w, 0, sizeof *w);
  w->batch = batch;
  w->current = -1;
  sweep_orphans(e);
}

void cert_engine_mark_load_failure(CertEngine* e, Run* run) {
  for (size_t i = 0; i < run->n; ++i) {
    CertResult* r = &run->results[i];
    if (run->done[i]) continue;
    r->end = e->runtime_failed ? CERT_END_TOOL : CERT_END_LOAD;
    r->text = strdup(e->load_text ? e->load_text : "the library did not load");
    r->output = e->load_output ? strdup(e->load_output) : NULL;
    run->done[i] = 1;
  }
  run->finished = run->n;
}

void cert_worker_backstop(CertEngine* e, Worker* w) {
  if (w->pid == 0 || w->killed) return;
  /* The worker enforces the limit per call; this catches a worker that
   * itself stopped answering (or never finished loading). */
  int busy = w->current >= 0 || !w->ready;
  if (busy && cert_now_s() - w->t0 > e->opt.timeout_s + 10) {
    w->killed = 1;
    kill(-w->pid, SIGKILL);
  }
}
