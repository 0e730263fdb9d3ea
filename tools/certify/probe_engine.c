#include "probe_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CERT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CERT_SANITIZED 1
#endif
#endif
#ifndef CERT_SANITIZED
#define CERT_SANITIZED 0
#endif

enum { OUTPUT_TAIL = 4096, RECORD_BUF_MAX = 1 << 20 };

typedef struct {
  size_t* idx;
  size_t n;
  int alone; /* a re-run of one call that killed a shared child */
} Batch;

typedef struct {
  pid_t pid; /* 0: free slot */
  int rfd, ofd;
  Batch batch;
  size_t started; /* calls of the batch that sent START */
  size_t done;    /* calls of the batch that sent DONE */
  double probe_t0;
  int timed_out;
  int load_failed;
  CertSignal sig;
  int has_sig;
  char* rbuf;
  size_t rlen, rcap;
  char tail[OUTPUT_TAIL];
  size_t tail_len;
} Slot;

typedef struct {
  Batch* items;
  size_t n, cap;
} Queue;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int queue_push(Queue* q, Batch b) {
  if (q->n == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 16;
    Batch* grown = realloc(q->items, cap * sizeof *grown);
    if (grown == NULL) return -1;
    q->items = grown;
    q->cap = cap;
  }
  q->items[q->n++] = b;
  return 0;
}

/* A batch of the `count` indices starting at `from` of `idx`. */
static int batch_of(const size_t* idx, size_t count, int alone, Batch* out) {
  out->idx = malloc((count ? count : 1) * sizeof *out->idx);
  if (out->idx == NULL) return -1;
  memcpy(out->idx, idx, count * sizeof *idx);
  out->n = count;
  out->alone = alone;
  return 0;
}

/* ---- starting a child ------------------------------------------------- */

static void child_limits(const CertEngineOptions* opt) {
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  if (!CERT_SANITIZED && opt->memory_limit > 0) {
    struct rlimit as = {(rlim_t)opt->memory_limit, (rlim_t)opt->memory_limit};
    setrlimit(RLIMIT_AS, &as);
  }
}

static int start_child(const CertEngineOptions* opt, const CertCall* calls, Slot* s) {
  int rp[2], op[2];
  if (pipe(rp) != 0) return -1;
  if (pipe(op) != 0) {
    close(rp[0]), close(rp[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(rp[0]), close(rp[1]), close(op[0]), close(op[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    close(rp[0]);
    close(op[0]);
    dup2(op[1], STDOUT_FILENO);
    dup2(op[1], STDERR_FILENO);
    close(op[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    child_limits(opt);
    cert_child_main(&opt->child, calls, s->batch.idx, s->batch.n, rp[1]);
  }
  setpgid(pid, pid); /* both sides set it: whichever runs first wins the race */
  close(rp[1]);
  close(op[1]);
  fcntl(rp[0], F_SETFL, O_NONBLOCK);
  fcntl(op[0], F_SETFL, O_NONBLOCK);
  s->pid = pid;
  s->rfd = rp[0];
  s->ofd = op[0];
  s->probe_t0 = now_s();
  return 0;
}

/* ---- reading records -------------------------------------------------- */

static void keep_tail(Slot* s, const char* p, size_t n) {
  if (n >= OUTPUT_TAIL) {
    memcpy(s->tail, p + n - OUTPUT_TAIL, OUTPUT_TAIL);
    s->tail_len = OUTPUT_TAIL;
    return;
  }
  if (s->tail_len + n > OUTPUT_TAIL) {
    size_t drop = s->tail_len + n - OUTPUT_TAIL;
    memmove(s->tail, s->tail + drop, s->tail_len - drop);
    s->tail_len -= drop;
  }
  memcpy(s->tail + s->tail_len, p, n);
  s->tail_len += n;
}

static char* dup_bytes(const char* p, size_t n) {
  char* d = malloc(n + 1);
  if (d) {
    memcpy(d, p, n);
    d[n] = '\0';
  }
  return d;
}

static void progress(const CertEngineOptions* opt, size_t* finished, size_t total, const CertCall* c) {
  ++*finished;
  if (opt->progress) opt->progress(opt->progress_ctx, *finished, total, c->function);
}

/* How the call's own process ended, when it did not report a result. */
static void end_call(const CertEngineOptions* opt, Slot* s, CertResult* r, const CertEndRecord* e) {
  CertEndRecord end;
  memcpy(&end, e, sizeof end);
  r->maxrss_kb = (long)end.maxrss_kb;
  if (r->end == CERT_END_DONE) return;
  r->memory_exhausted = opt->memory_limit > 0 && !CERT_SANITIZED &&
                        (size_t)end.maxrss_kb * 1024 >= opt->memory_limit / 2;
  r->has_sig = s->has_sig;
  r->sig = s->sig;
  s->has_sig = 0;
  switch (end.how) {
    case 0: r->end = CERT_END_EXIT, r->exit_status = end.code; break;
    case 1: r->end = CERT_END_SIGNAL, r->signo = end.code; break;
    case 2: r->end = CERT_END_TIMEOUT; break;
    default: r->end = CERT_END_TOOL; break;
  }
  free(r->output);
  r->output = dup_bytes(s->tail, s->tail_len);
}

static void handle_record(const CertEngineOptions* opt, const CertCall* calls, Slot* s,
                          const CertRecordHeader* h, const char* payload, CertResult* results,
                          size_t* finished, size_t total) {
  size_t i = (size_t)h->index;
  switch (h->type) {
    case CERT_REC_START:
      s->started++;
      s->probe_t0 = now_s();
      break;
    case CERT_REC_DONE:
      if (h->len == sizeof(CertOutcome)) {
        results[i].end = CERT_END_DONE;
        memcpy(&results[i].out, payload, sizeof(CertOutcome));
      }
      break;
    case CERT_REC_END:
      if (h->len == sizeof(CertEndRecord)) end_call(opt, s, &results[i], (const CertEndRecord*)payload);
      s->done++;
      progress(opt, finished, total, &calls[i]);
      break;
    case CERT_REC_SIGNAL:
      if (h->len == sizeof(CertSignal)) {
        memcpy(&s->sig, payload, sizeof s->sig);
        s->has_sig = 1;
      }
      break;
    case CERT_REC_TEXT:
      free(results[i].text);
      results[i].text = dup_bytes(payload, h->len);
      break;
    case CERT_REC_LOAD:
      s->load_failed = 1;
      for (size_t k = 0; k < s->batch.n; ++k) {
        CertResult* r = &results[s->batch.idx[k]];
        r->end = CERT_END_LOAD;
        free(r->text);
        r->text = dup_bytes(payload, h->len);
        progress(opt, finished, total, &calls[s->batch.idx[k]]);
      }
      break;
    default:
      break;
  }
}

static void parse_records(const CertEngineOptions* opt, const CertCall* calls, Slot* s,
                          CertResult* results, size_t* finished, size_t total) {
  size_t pos = 0;
  while (s->rlen - pos >= sizeof(CertRecordHeader)) {
    CertRecordHeader h;
    memcpy(&h, s->rbuf + pos, sizeof h);
    if (h.len > CERT_TEXT_MAX + 64) {
      s->rlen = 0; /* a torn stream: give up on the rest */
      return;
    }
    if (s->rlen - pos - sizeof h < h.len) break;
    /* A load failure comes before any call began: it has no index. */
    if (h.type == CERT_REC_LOAD || (h.index >= 0 && (size_t)h.index < total)) {
      handle_record(opt, calls, s, &h, s->rbuf + pos + sizeof h, results, finished, total);
    }
    pos += sizeof h + h.len;
  }
  memmove(s->rbuf, s->rbuf + pos, s->rlen - pos);
  s->rlen -= pos;
}

/* Drains what is there; returns 1 at end of file. */
static int read_fd(int fd, Slot* s, int is_records) {
  char buf[8192];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n == 0) return 1;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EAGAIN ? 0 : 1;
    if (!is_records) {
      keep_tail(s, buf, (size_t)n);
      continue;
    }
    if (s->rlen + (size_t)n > s->rcap) {
      size_t cap = s->rcap ? s->rcap * 2 : 16384;
      while (cap < s->rlen + (size_t)n) cap *= 2;
      if (cap > RECORD_BUF_MAX) return 1;
      char* grown = realloc(s->rbuf, cap);
      if (grown == NULL) return 1;
      s->rbuf = grown;
      s->rcap = cap;
    }
    memcpy(s->rbuf + s->rlen, buf, (size_t)n);
    s->rlen += (size_t)n;
  }
}

/* ---- a child's end --------------------------------------------------------- */

static void finish_child(const CertEngineOptions* opt, const CertCall* calls, Slot* s, Queue* q,
                         CertResult* results, size_t* finished, size_t total, int* tool_error) {
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(s->pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  kill(-s->pid, SIGKILL); /* anything the call left running */
  read_fd(s->ofd, s, 0);
  close(s->rfd);
  close(s->ofd);
  size_t next = s->done;
  if (!s->load_failed && s->started == s->done + 1 && next < s->batch.n &&
      results[s->batch.idx[next]].end == CERT_END_DONE) {
    /* The call reported; the batch process died before saying how the
     * call's process ended. */
    progress(opt, finished, total, &calls[s->batch.idx[next]]);
    next++;
  } else if (!s->load_failed && s->started == s->done + 1 && next < s->batch.n) {
    size_t i = s->batch.idx[next];
    if (s->done > 0 && !s->batch.alone) {
      /* Killed after other calls shared its process: judge it on its own. */
      Batch again;
      if (batch_of(&s->batch.idx[next], 1, 1, &again) == 0 && queue_push(q, again) == 0) {
        next++;
        goto requeue;
      }
    }
    CertResult* r = &results[i];
    r->maxrss_kb = ru.ru_maxrss;
    r->memory_exhausted = opt->memory_limit > 0 && !CERT_SANITIZED &&
                          (size_t)ru.ru_maxrss * 1024 >= opt->memory_limit / 2;
    r->has_sig = s->has_sig;
    r->sig = s->sig;
    if (s->timed_out) {
      r->end = CERT_END_TIMEOUT;
    } else if (WIFSIGNALED(status)) {
      r->end = CERT_END_SIGNAL;
      r->signo = WTERMSIG(status);
    } else {
      r->end = CERT_END_EXIT;
      r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    free(r->output);
    r->output = dup_bytes(s->tail, s->tail_len);
    progress(opt, finished, total, &calls[i]);
    next++;
  } else if (!s->load_failed && s->started == 0 && s->batch.n > 0) {
    /* Died while loading (a constructor crashed, aborted or hung). */
    char why[256];
    if (s->timed_out) {
      snprintf(why, sizeof why, "loading the library did not finish within %.0f s", opt->timeout_s);
    } else if (WIFSIGNALED(status)) {
      snprintf(why, sizeof why, "loading the library killed the process with signal %d (%s)",
               WTERMSIG(status), strsignal(WTERMSIG(status)));
    } else {
      snprintf(why, sizeof why, "loading the library exited the process with status %d",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    for (size_t k = 0; k < s->batch.n; ++k) {
      CertResult* r = &results[s->batch.idx[k]];
      r->end = CERT_END_LOAD;
      free(r->text);
      r->text = strdup(why);
      free(r->output);
      r->output = dup_bytes(s->tail, s->tail_len);
      progress(opt, finished, total, &calls[s->batch.idx[k]]);
    }
    next = s->batch.n;
  }
requeue:
  if (!s->load_failed && next < s->batch.n) {
    Batch rest;
    if (batch_of(&s->batch.idx[next], s->batch.n - next, 0, &rest) != 0 || queue_push(q, rest) != 0) {
      *tool_error = 1;
    }
  }
  free(s->batch.idx);
  free(s->rbuf);
  memset(s, 0, sizeof *s);
}

/* ---- the loop -------------------------------------------------------------- */

static void check_timeout(const CertEngineOptions* opt, Slot* s) {
  if (s->pid == 0 || s->timed_out) return;
  /* The batch process enforces the limit per call; this is the backstop
   * for a batch process that itself stopped answering. */
  if (now_s() - s->probe_t0 > opt->timeout_s + 10) {
    s->timed_out = 1;
    kill(-s->pid, SIGKILL);
    kill(s->pid, SIGKILL);
  }
}

int cert_engine_run(const CertEngineOptions* opt, const CertCall* calls, size_t n, CertResult* results) {
  memset(results, 0, n * sizeof *results);
  for (size_t i = 0; i < n; ++i) results[i].end = CERT_END_TOOL;
  int jobs = opt->jobs > 0 ? opt->jobs : 1;
  if (jobs > 64) jobs = 64;
  /* One batch per job: each batch process loads the library once. */
  size_t per = opt->batch ? opt->batch : (n + (size_t)jobs - 1) / (size_t)jobs;
  if (per == 0) per = 1;
  Queue q = {0};
  int tool_error = 0;
  size_t* all = malloc((n ? n : 1) * sizeof *all);
  if (all == NULL) return -1;
  for (size_t i = 0; i < n; ++i) all[i] = i;
  for (size_t i = 0; i < n; i += per) {
    Batch b;
    if (batch_of(all + i, n - i < per ? n - i : per, 0, &b) != 0 || queue_push(&q, b) != 0) tool_error = 1;
  }
  free(all);
  Slot slots[64];
  memset(slots, 0, sizeof slots);
  size_t finished = 0, qhead = 0;
  for (;;) {
    int active = 0;
    for (int k = 0; k < jobs; ++k) {
      if (slots[k].pid == 0 && qhead < q.n) {
        slots[k].batch = q.items[qhead++];
        if (start_child(opt, calls, &slots[k]) != 0) {
          tool_error = 1;
          free(slots[k].batch.idx);
          memset(&slots[k], 0, sizeof slots[k]);
          continue;
        }
      }
      active += slots[k].pid != 0;
    }
    if (active == 0) break;
    struct pollfd fds[128];
    int slot_of[128];
    int nf = 0;
    for (int k = 0; k < jobs; ++k) {
      if (slots[k].pid == 0) continue;
      fds[nf] = (struct pollfd){slots[k].rfd, POLLIN, 0};
      slot_of[nf++] = k;
      fds[nf] = (struct pollfd){slots[k].ofd, POLLIN, 0};
      slot_of[nf++] = k;
    }
    poll(fds, (nfds_t)nf, 50);
    for (int f = 0; f < nf; ++f) {
      Slot* s = &slots[slot_of[f]];
      if (s->pid == 0 || !(fds[f].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int is_records = (f % 2) == 0;
      int eof = read_fd(fds[f].fd, s, is_records);
      if (is_records) parse_records(opt, calls, s, results, &finished, n);
      if (is_records && eof) finish_child(opt, calls, s, &q, results, &finished, n, &tool_error);
    }
    for (int k = 0; k < jobs; ++k) check_timeout(opt, &slots[k]);
  }
  for (size_t k = qhead; k < q.n; ++k) free(q.items[k].idx);
  free(q.items);
  return tool_error ? -1 : 0;
}

void cert_results_free(CertResult* results, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    free(results[i].text);
    free(results[i].output);
    results[i].text = results[i].output = NULL;
  }
}
