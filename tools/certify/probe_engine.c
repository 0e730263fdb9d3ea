#include "probe_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe_procs.h"
#include "tools/certify/sanitized.h"

enum { OUTPUT_TAIL = 4096, RECORD_BUF_MAX = 1 << 20, MAX_JOBS = 32 };

/* A worker process and what the parent knows of it. */
typedef struct {
  pid_t pid; /* 0: none */
  int cmd, rfd, ofd;
  int ready;      /* loaded: READY came */
  size_t* batch;  /* the calls handed to it and not yet ended */
  size_t pending;
  long current;   /* the call in flight (index into the run's calls), or -1 */
  double t0;      /* when the worker started, or the current call began */
  int killed;     /* the parent's backstop killed it */
  int preempted;  /* killed because the function of its call hung elsewhere */
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
  size_t n_hung;
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

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char* dup_bytes(const char* p, size_t n) {
  char* d = malloc(n + 1);
  if (d) {
    memcpy(d, p, n);
    d[n] = '\0';
  }
  return d;
}

CertEngine* cert_engine_open(const CertEngineOptions* opt) {
  CertEngine* e = calloc(1, sizeof *e);
  if (e == NULL) return NULL;
  e->opt = *opt;
  e->jobs = opt->jobs > 0 ? opt->jobs : 1;
  if (e->jobs > MAX_JOBS) e->jobs = MAX_JOBS;
  for (int k = 0; k < e->jobs; ++k) e->w[k].current = -1;
  /* What a call abandons outlives its worker only as far as here. */
  cert_become_subreaper();
  return e;
}

const char* cert_engine_error(const CertEngine* e) { return e && e->runtime_failed ? e->load_text : NULL; }

const char* cert_engine_load_failure(const CertEngine* e, const char** output) {
  *output = e->load_output;
  return e->load_failed && !e->runtime_failed ? e->load_text : NULL;
}

const char* cert_engine_registered_globals(const CertEngine* e, int* listable) {
  *listable = e->globals_listable;
  return e->globals;
}

const char* cert_engine_registered_types(const CertEngine* e) { return e->types; }

const char* cert_engine_load_note(const CertEngine* e) { return e->load_note; }

/* ---- hung functions ------------------------------------------------------ */

static int is_hung(const CertEngine* e, const char* function) {
  for (size_t k = 0; k < e->n_hung; ++k) {
    if (strcmp(e->hung[k], function) == 0) return 1;
  }
  return 0;
}

static void mark_hung(CertEngine* e, const char* function) {
  if (is_hung(e, function)) return;
  char (*grown)[CERT_NAME_MAX] = realloc(e->hung, (e->n_hung + 1) * sizeof *grown);
  if (grown == NULL) return;
  e->hung = grown;
  snprintf(e->hung[e->n_hung++], CERT_NAME_MAX, "%s", function);
}

/* ---- starting a worker ---------------------------------------------- */

static void child_limits(const CertEngineOptions* opt) {
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  /* Loading may allocate (a constructor that bombs is capped too); each
   * batch's process caps what its calls allocate (probe_child.c). */
  long data_kb = cert_self_status_kb("VmData");
  if (opt->memory_limit > 0 && data_kb >= 0) {
    rlim_t cap = (rlim_t)data_kb * 1024 + (rlim_t)opt->memory_limit * 4;
    struct rlimit r = {cap, cap};
    setrlimit(RLIMIT_DATA, &r);
  }
}

static int start_worker(CertEngine* e, Worker* w) {
  int cp[2], rp[2], op[2];
  /* A socket for commands: send() with MSG_NOSIGNAL to a dead worker is an
   * error, not a SIGPIPE that would end certify. */
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, cp) != 0) return -1;
  if (pipe(rp) != 0) {
    close(cp[0]), close(cp[1]);
    return -1;
  }
  if (pipe(op) != 0) {
    close(cp[0]), close(cp[1]), close(rp[0]), close(rp[1]);
    return -1;
  }
  CertChildConfig cfg = e->opt.child;
  cfg.list_registry = !e->registry_asked;
  e->registry_asked = 1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(cp[0]), close(cp[1]), close(rp[0]), close(rp[1]), close(op[0]), close(op[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* certify gone: so is the worker */
    /* Only the worker's own ends: other workers' pipes must see EOF. */
    for (int k = 0; k < e->jobs; ++k) {
      if (e->w[k].pid > 0) close(e->w[k].cmd), close(e->w[k].rfd), close(e->w[k].ofd);
    }
    close(cp[1]), close(rp[0]), close(op[0]);
    dup2(op[1], STDOUT_FILENO);
    dup2(op[1], STDERR_FILENO);
    close(op[1]);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    signal(SIGPIPE, SIG_DFL);
    child_limits(&e->opt);
    cert_child_main(&cfg, cp[0], rp[1]);
  }
  setpgid(pid, pid); /* both sides set it: whichever runs first wins the race */
  close(cp[0]), close(rp[1]), close(op[1]);
  fcntl(rp[0], F_SETFL, O_NONBLOCK);
  fcntl(op[0], F_SETFL, O_NONBLOCK);
  fcntl(cp[1], F_SETFD, FD_CLOEXEC);
  size_t* batch = w->batch;
  memset(w, 0, sizeof *w);
  w->batch = batch;
  w->pid = pid;
  w->cmd = cp[1];
  w->rfd = rp[0];
  w->ofd = op[0];
  w->current = -1;
  w->t0 = now_s();
  return 0;
}

/* ---- the queue ------------------------------------------------------------ */

static void finish(CertEngine* e, Run* run, size_t i) {
  if (run->done[i]) return;
  run->done[i] = 1;
  run->finished++;
  if (e->opt.progress) e->opt.progress(e->opt.progress_ctx, run->finished, run->n, run->calls[i].function);
}

/* A call that did not run: again later, unless its function hung. */
static void requeue_or_skip(CertEngine* e, Run* run, size_t i) {
  if (run->done[i]) return;
  if (is_hung(e, run->calls[i].function)) {
    run->results[i].end = CERT_END_NOT_RUN;
    finish(e, run, i);
    return;
  }
  run->queue[--run->head] = i; /* never below 0: it was taken from there */
}

static void forget(Worker* w, size_t i) {
  for (size_t k = 0; k < w->pending; ++k) {
    if (w->batch[k] != i) continue;
    w->batch[k] = w->batch[--w->pending];
    break;
  }
  if (w->current == (long)i) w->current = -1;
}

static int owns(const Worker* w, size_t i) {
  for (size_t k = 0; k < w->pending; ++k) {
    if (w->batch[k] == i) return 1;
  }
  return 0;
}

/* Hands the worker its next batch: enough calls to keep every worker busy,
 * at most CERT_BATCH_MAX. */
static int send_batch(CertEngine* e, Run* run, Worker* w) {
  size_t left = run->tail - run->head;
  size_t want = (left + 2 * (size_t)e->jobs - 1) / (2 * (size_t)e->jobs);
  if (want > CERT_BATCH_MAX) want = CERT_BATCH_MAX;
  CertCommand* cmds = malloc((want ? want : 1) * sizeof *cmds);
  if (cmds == NULL) return -1;
  CertBatchHeader h = {0};
  while (run->head < run->tail && (size_t)h.n < want) {
    size_t i = run->queue[run->head++];
    if (is_hung(e, run->calls[i].function)) {
      run->results[i].end = CERT_END_NOT_RUN;
      finish(e, run, i);
      continue;
    }
    cmds[h.n] = (CertCommand){(int32_t)i, run->calls[i]};
    w->batch[w->pending++] = i;
    h.n++;
  }
  int rc = 0;
  if (h.n > 0) {
    struct iovec parts[2] = {{&h, sizeof h}, {cmds, (size_t)h.n * sizeof *cmds}};
    struct msghdr msg = {.msg_iov = parts, .msg_iovlen = 2};
    size_t total = parts[0].iov_len + parts[1].iov_len;
    while (total > 0) {
      ssize_t n = sendmsg(w->cmd, &msg, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        rc = -1;
        break;
      }
      total -= (size_t)n;
      while (n > 0 && msg.msg_iovlen > 0) {
        size_t take = (size_t)n < msg.msg_iov->iov_len ? (size_t)n : msg.msg_iov->iov_len;
        msg.msg_iov->iov_base = (char*)msg.msg_iov->iov_base + take;
        msg.msg_iov->iov_len -= take;
        n -= (ssize_t)take;
        if (msg.msg_iov->iov_len == 0) msg.msg_iov++, msg.msg_iovlen--;
      }
    }
  }
  free(cmds);
  w->t0 = now_s();
  return rc;
}

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
  char* copy = dup_bytes(text, len);
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

static int read_fd(Worker* w, int fd, int is_records);

/* How the call's own process ended, when it did not return. */
static void end_call(CertEngine* e, Run* run, Worker* w, size_t i, const CertEndRecord* end) {
  CertResult* r = &run->results[i];
  r->maxrss_kb = (long)end->maxrss_kb;
  r->strays += end->strays;
  if (end->strays > 0 && r->stray[0] == '\0') snprintf(r->stray, sizeof r->stray, "%s", end->stray);
  if (end->how == CERT_HOW_RETURNED) return;
  long grew_kb = (long)(end->maxrss_kb - end->base_rss_kb);
  r->memory_exhausted = e->opt.memory_limit > 0 && grew_kb > 0 &&
                        (size_t)grew_kb * 1024 >= e->opt.memory_limit / 2;
  r->has_sig = w->has_sig;
  r->sig = w->sig;
  /* What it printed as it died (the loader's "symbol lookup error", an
   * abort message) is in the pipe already: the worker waited for it. */
  read_fd(w, w->ofd, 0);
  switch (end->how) {
    case CERT_HOW_EXIT: r->end = CERT_END_EXIT, r->exit_status = end->code; break;
    case CERT_HOW_SIGNAL: r->end = CERT_END_SIGNAL, r->signo = end->code; break;
    case CERT_HOW_TIMEOUT: r->end = CERT_END_TIMEOUT; break;
    case CERT_HOW_FDS: r->end = CERT_END_FDS; break;
    default: r->end = CERT_END_TOOL; break;
  }
  free(r->output);
  r->output = dup_bytes(w->tail, w->tail_len);
}

/* A function hung: the calls of it other workers are running stop now. */
static void preempt_hung(CertEngine* e, Run* run, const Worker* except) {
  for (int k = 0; k < e->jobs; ++k) {
    Worker* o = &e->w[k];
    if (o == except || o->pid == 0 || o->current < 0 || o->preempted) continue;
    if (!is_hung(e, run->calls[o->current].function)) continue;
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
  forget(w, i);
  if (end->how == CERT_HOW_NOT_RUN) {
    requeue_or_skip(e, run, i);
    return;
  }
  if (end->how == CERT_HOW_TIMEOUT && is_hung(e, run->calls[i].function)) {
    /* Another worker's call of it hung at the same moment: judged once. */
    run->results[i].end = CERT_END_NOT_RUN;
    finish(e, run, i);
    return;
  }
  end_call(e, run, w, i, end);
  finish(e, run, i);
  /* A hang costs a time limit and a memory bomb the time to fill the cap,
   * on every call: either is judged once. */
  if (end->how == CERT_HOW_TIMEOUT || run->results[i].memory_exhausted) {
    mark_hung(e, run->calls[i].function);
    preempt_hung(e, run, w);
  }
}

static void handle_call_record(CertEngine* e, Run* run, Worker* w, const CertRecordHeader* h, const char* payload) {
  if (h->index < 0 || (size_t)h->index >= run->n || !owns(w, (size_t)h->index)) return;
  size_t i = (size_t)h->index;
  CertResult* r = &run->results[i];
  switch (h->type) {
    case CERT_REC_START:
      w->current = (long)i;
      w->t0 = now_s();
      w->has_sig = 0;
      if (is_hung(e, run->calls[i].function) && !w->preempted) {
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
      r->text = dup_bytes(payload, h->len);
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

static void handle_record(CertEngine* e, Run* run, Worker* w, const CertRecordHeader* h, const char* payload) {
  switch (h->type) {
    case CERT_REC_READY: w->ready = 1; return;
    case CERT_REC_LOAD:
    case CERT_REC_RUNTIME:
      if (!e->load_failed) {
        e->load_failed = 1;
        e->runtime_failed = h->type == CERT_REC_RUNTIME;
        e->load_text = dup_bytes(payload, h->len);
      }
      return;
    case CERT_REC_REGISTRY: registry_record(e, payload, h->len); return;
    case CERT_REC_LOADNOTE:
      if (e->load_note == NULL) e->load_note = dup_bytes(payload, h->len);
      return;
    default: handle_call_record(e, run, w, h, payload); return;
  }
}

static void parse_records(CertEngine* e, Run* run, Worker* w) {
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
static int read_fd(Worker* w, int fd, int is_records) {
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
    if (w->rlen + (size_t)n > w->rcap) {
      size_t cap = w->rcap ? w->rcap * 2 : 16384;
      while (cap < w->rlen + (size_t)n) cap *= 2;
      if (cap > RECORD_BUF_MAX) return 1;
      char* grown = realloc(w->rbuf, cap);
      if (grown == NULL) return 1;
      w->rbuf = grown;
      w->rcap = cap;
    }
    memcpy(w->rbuf + w->rlen, buf, (size_t)n);
    w->rlen += (size_t)n;
  }
}

/* ---- a worker's end -------------------------------------------------------- */

static void load_death(CertEngine* e, const Worker* w, int status) {
  char why[256];
  if (w->killed) {
    snprintf(why, sizeof why, "loading the library did not finish within %.0f s", e->opt.timeout_s + 10);
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
static void judge_by_worker(CertEngine* e, Run* run, Worker* w, size_t i, int status, const struct rusage* ru) {
  CertResult* r = &run->results[i];
  if (w->killed && is_hung(e, run->calls[i].function)) {
    r->end = CERT_END_NOT_RUN;
    finish(e, run, i);
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
  r->output = dup_bytes(w->tail, w->tail_len);
  finish(e, run, i);
  if (w->killed) mark_hung(e, run->calls[i].function);
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
static void reap(CertEngine* e, Run* run, Worker* w, int waited, int status, struct rusage ru) {
  kill(-w->pid, SIGKILL); /* anything a call left running */
  while (!waited && wait4(w->pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  /* What it wrote before it ended is still owed to its calls. */
  read_fd(w, w->rfd, 1);
  parse_records(e, run, w);
  read_fd(w, w->ofd, 0);
  close(w->cmd), close(w->rfd), close(w->ofd);
  if (!w->ready && !e->load_failed) load_death(e, w, status);
  if (w->ready && w->current < 0 && !w->preempted && !w->killed && !e->load_failed && ++e->idle_deaths >= 3) {
    /* Something the library started at load time (a thread, a timer)
     * kills its process on its own: no call can be judged in it. */
    char why[256];
    snprintf(why, sizeof why, "the process that loaded the library died by itself between calls (%s %d), "
             "three times", WIFSIGNALED(status) ? "signal" : "exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : (WIFEXITED(status) ? WEXITSTATUS(status) : -1));
    e->load_failed = 1;
    e->load_text = strdup(why);
  }
  if (e->load_failed && e->load_output == NULL) e->load_output = dup_bytes(w->tail, w->tail_len);
  if (w->current >= 0 && !e->load_failed && !w->preempted && !run->done[w->current]) {
    size_t i = (size_t)w->current;
    forget(w, i);
    judge_by_worker(e, run, w, i, status, &ru);
  }
  while (w->pending > 0) {
    size_t i = w->batch[--w->pending];
    if (!e->load_failed) requeue_or_skip(e, run, i);
  }
  free(w->rbuf);
  size_t* batch = w->batch;
  memset(w, 0, sizeof *w);
  w->batch = batch;
  w->current = -1;
  sweep_orphans(e);
}

static void mark_load_failure(CertEngine* e, Run* run) {
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

static void backstop(CertEngine* e, Worker* w) {
  if (w->pid == 0 || w->killed) return;
  /* The worker enforces the limit per call; this catches a worker that
   * itself stopped answering (or never finished loading). */
  int busy = w->current >= 0 || !w->ready;
  if (busy && now_s() - w->t0 > e->opt.timeout_s + 10) {
    w->killed = 1;
    kill(-w->pid, SIGKILL);
  }
}

/* ---- the loop -------------------------------------------------------------- */

/* Starts workers and hands out batches; returns how many workers live. */
static int dispatch(CertEngine* e, Run* run, int* tool_error) {
  int live = 0;
  for (int k = 0; k < e->jobs; ++k) {
    Worker* w = &e->w[k];
    int work = run->head < run->tail;
    if (w->pid == 0 && work && start_worker(e, w) != 0) {
      *tool_error = 1;
      continue;
    }
    if (w->pid != 0 && w->ready && w->pending == 0 && work && send_batch(e, run, w) != 0) {
      w->killed = 1;
      kill(-w->pid, SIGKILL);
    }
    live += w->pid != 0;
  }
  return live;
}

static void poll_workers(CertEngine* e, Run* run) {
  struct pollfd fds[2 * MAX_JOBS];
  int owner[2 * MAX_JOBS];
  int nf = 0;
  for (int k = 0; k < e->jobs; ++k) {
    if (e->w[k].pid == 0) continue;
    fds[nf] = (struct pollfd){e->w[k].rfd, POLLIN, 0};
    owner[nf++] = k;
    fds[nf] = (struct pollfd){e->w[k].ofd, POLLIN, 0};
    owner[nf++] = k;
  }
  poll(fds, (nfds_t)nf, 100);
  for (int f = 0; f < nf; ++f) {
    Worker* w = &e->w[owner[f]];
    if (w->pid == 0 || !(fds[f].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    int is_records = f % 2 == 0;
    int eof = read_fd(w, fds[f].fd, is_records);
    if (is_records) parse_records(e, run, w);
    if (is_records && eof) reap(e, run, w, 0, 0, (struct rusage){0});
  }
  /* A process the library forked may hold a worker's pipe open after the
   * worker died: look for the death itself too. */
  for (int k = 0; k < e->jobs; ++k) {
    Worker* w = &e->w[k];
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (w->pid != 0 && wait4(w->pid, &status, WNOHANG, &ru) == w->pid) reap(e, run, w, 1, status, ru);
  }
  for (int k = 0; k < e->jobs; ++k) backstop(e, &e->w[k]);
}

static int run_init(Run* run, const CertCall* calls, size_t n, CertResult* results) {
  memset(run, 0, sizeof *run);
  run->calls = calls;
  run->results = results;
  run->n = n;
  run->queue = malloc((n ? n : 1) * sizeof *run->queue);
  run->done = calloc(n ? n : 1, 1);
  if (run->queue == NULL || run->done == NULL) return -1;
  for (size_t i = 0; i < n; ++i) run->queue[i] = i;
  run->tail = n;
  return 0;
}

int cert_engine_run(CertEngine* e, const CertCall* calls, size_t n, CertResult* results) {
  memset(results, 0, n * sizeof *results);
  for (size_t i = 0; i < n; ++i) results[i].end = CERT_END_TOOL;
  Run run;
  int tool_error = 0;
  for (int k = 0; k < e->jobs; ++k) {
    if (e->w[k].batch == NULL) e->w[k].batch = malloc(CERT_BATCH_MAX * sizeof *e->w[k].batch);
    if (e->w[k].batch == NULL) tool_error = 1;
  }
  if (tool_error || run_init(&run, calls, n, results) != 0) {
    free(run.queue);
    free(run.done);
    return -1;
  }
  while (run.finished < run.n) {
    if (e->load_failed) {
      mark_load_failure(e, &run);
      break;
    }
    if (dispatch(e, &run, &tool_error) == 0) {
      /* No worker could start: nothing more will run. */
      for (size_t i = 0; i < run.n; ++i) finish(e, &run, i);
      break;
    }
    poll_workers(e, &run);
  }
  free(run.queue);
  free(run.done);
  if (e->runtime_failed) return -1;
  return tool_error && run.finished < run.n ? -1 : 0;
}

int cert_engine_load(CertEngine* e) {
  Run run;
  if (run_init(&run, NULL, 0, NULL) != 0) {
    free(run.queue);
    free(run.done);
    return -1;
  }
  Worker* w = &e->w[0];
  int rc = 0;
  if (w->pid == 0 && !e->load_failed && start_worker(e, w) != 0) rc = -1;
  while (rc == 0 && w->pid != 0 && !w->ready && !e->load_failed) poll_workers(e, &run);
  free(run.queue);
  free(run.done);
  return rc != 0 || e->runtime_failed ? -1 : 0;
}

void cert_engine_close(CertEngine* e) {
  if (e == NULL) return;
  for (int k = 0; k < e->jobs; ++k) {
    Worker* w = &e->w[k];
    free(w->batch);
    if (w->pid == 0) continue;
    close(w->cmd); /* end of file: the worker exits */
    kill(-w->pid, SIGKILL);
    while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    close(w->rfd), close(w->ofd);
    free(w->rbuf);
    w->pid = 0;
  }
  char first[64];
  if (cert_has_children()) cert_sweep_children(NULL, 0, first, sizeof first);
  free(e->load_text);
  free(e->load_output);
  free(e->registry_before);
  free(e->registry_after);
  free(e->globals);
  free(e->types);
  free(e->load_note);
  free(e->hung);
  free(e);
}

void cert_results_free(CertResult* results, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    free(results[i].text);
    free(results[i].output);
    results[i].text = results[i].output = NULL;
  }
}
