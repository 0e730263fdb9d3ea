#include "probe_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/certify/sanitized.h"

enum { OUTPUT_TAIL = 4096, RECORD_BUF_MAX = 1 << 20, MAX_JOBS = 32 };

/* A worker process and what the parent knows of it. */
typedef struct {
  pid_t pid; /* 0: none */
  int cmd, rfd, ofd;
  int ready;     /* loaded: READY came */
  long current;  /* the call in flight (index into the run's calls), or -1 */
  double t0;     /* when the worker started, or the current call was sent */
  int killed;    /* the parent's backstop killed it */
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
  char* load_text;
  char* load_output;
  int idle_deaths; /* workers that died loaded but between calls */
};

/* The state of one cert_engine_run. */
typedef struct {
  const CertCall* calls;
  CertResult* results;
  size_t n, next, finished;
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
  return e;
}

/* ---- starting a worker ---------------------------------------------- */

static void child_limits(const CertEngineOptions* opt) {
  struct rlimit core = {0, 0};
  setrlimit(RLIMIT_CORE, &core);
  if (!CERT_SANITIZED && opt->memory_limit > 0) {
    /* The CUDA driver reserves far more address space than any cap, as
     * inaccessible mappings: with a GPU, cap only writable private memory
     * (what a memory bomb allocates) instead of all address space. */
    struct rlimit cap = {(rlim_t)opt->memory_limit, (rlim_t)opt->memory_limit};
    setrlimit(access("/dev/nvidiactl", F_OK) == 0 ? RLIMIT_DATA : RLIMIT_AS, &cap);
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
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(cp[0]), close(cp[1]), close(rp[0]), close(rp[1]), close(op[0]), close(op[1]);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
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
    cert_child_main(&e->opt.child, cp[0], rp[1]);
  }
  setpgid(pid, pid); /* both sides set it: whichever runs first wins the race */
  close(cp[0]), close(rp[1]), close(op[1]);
  fcntl(rp[0], F_SETFL, O_NONBLOCK);
  fcntl(op[0], F_SETFL, O_NONBLOCK);
  fcntl(cp[1], F_SETFD, FD_CLOEXEC);
  memset(w, 0, sizeof *w);
  w->pid = pid;
  w->cmd = cp[1];
  w->rfd = rp[0];
  w->ofd = op[0];
  w->current = -1;
  w->t0 = now_s();
  return 0;
}

static int send_call(Worker* w, const Run* run, size_t i) {
  CertCommand cmd;
  memset(&cmd, 0, sizeof cmd);
  cmd.index = (int32_t)i;
  cmd.call = run->calls[i];
  const char* p = (const char*)&cmd;
  size_t left = sizeof cmd;
  while (left > 0) {
    ssize_t n = send(w->cmd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    p += n;
    left -= (size_t)n;
  }
  w->current = (long)i;
  w->t0 = now_s();
  w->has_sig = 0;
  return 0;
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

static void finish(CertEngine* e, Run* run, size_t i) {
  run->finished++;
  if (e->opt.progress) e->opt.progress(e->opt.progress_ctx, run->finished, run->n, run->calls[i].function);
}

static int read_fd(Worker* w, int fd, int is_records);

/* How the call's own process ended, when it did not report a result. */
static void end_call(CertEngine* e, Worker* w, CertResult* r, const CertEndRecord* rec) {
  CertEndRecord end;
  memcpy(&end, rec, sizeof end);
  r->maxrss_kb = (long)end.maxrss_kb;
  if (r->end == CERT_END_DONE) return;
  r->memory_exhausted = e->opt.memory_limit > 0 && !CERT_SANITIZED &&
                        (size_t)end.maxrss_kb * 1024 >= e->opt.memory_limit / 2;
  r->has_sig = w->has_sig;
  r->sig = w->sig;
  switch (end.how) {
    case 0: r->end = CERT_END_EXIT, r->exit_status = end.code; break;
    case 1: r->end = CERT_END_SIGNAL, r->signo = end.code; break;
    case 2: r->end = CERT_END_TIMEOUT; break;
    default: r->end = CERT_END_TOOL; break;
  }
  /* The call's process is gone, so all it printed is in the pipe: take it
   * before the tail is read (the record may arrive first). */
  read_fd(w, w->ofd, 0);
  free(r->output);
  r->output = dup_bytes(w->tail, w->tail_len);
}

static void handle_record(CertEngine* e, Run* run, Worker* w, const CertRecordHeader* h, const char* payload) {
  if (h->type == CERT_REC_READY) {
    w->ready = 1;
    return;
  }
  if (h->type == CERT_REC_LOAD) {
    if (!e->load_failed) {
      e->load_failed = 1;
      e->load_text = dup_bytes(payload, h->len);
    }
    return;
  }
  if (w->current < 0 || h->index != w->current) return; /* not the call in flight */
  size_t i = (size_t)w->current;
  CertResult* r = &run->results[i];
  switch (h->type) {
    case CERT_REC_START: w->t0 = now_s(); break;
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
      if (h->len == sizeof(CertEndRecord)) end_call(e, w, r, (const CertEndRecord*)payload);
      w->current = -1;
      finish(e, run, i);
      break;
    default: break;
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

static void reap(CertEngine* e, Run* run, Worker* w) {
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  kill(-w->pid, SIGKILL); /* anything a call left running */
  while (wait4(w->pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  read_fd(w, w->ofd, 0);
  close(w->cmd), close(w->rfd), close(w->ofd);
  if (!w->ready && !e->load_failed) {
    /* Died while loading (a constructor crashed, aborted, exited or hung). */
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
  if (w->ready && w->current < 0 && !e->load_failed && ++e->idle_deaths >= 3) {
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
  if (w->current >= 0 && !e->load_failed) {
    /* The worker itself died during a call: judge the call by it. */
    CertResult* r = &run->results[w->current];
    if (r->end != CERT_END_DONE) {
      r->has_sig = w->has_sig;
      r->sig = w->sig;
      r->maxrss_kb = ru.ru_maxrss;
      if (w->killed) {
        r->end = CERT_END_TIMEOUT;
      } else if (WIFSIGNALED(status)) {
        r->end = CERT_END_SIGNAL, r->signo = WTERMSIG(status);
      } else {
        r->end = CERT_END_EXIT, r->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      free(r->output);
      r->output = dup_bytes(w->tail, w->tail_len);
    }
    finish(e, run, (size_t)w->current);
  }
  free(w->rbuf);
  memset(w, 0, sizeof *w);
  w->current = -1;
}

static void mark_load_failure(CertEngine* e, Run* run) {
  for (size_t i = 0; i < run->n; ++i) {
    CertResult* r = &run->results[i];
    if (r->end != CERT_END_TOOL) continue; /* finished already */
    r->end = CERT_END_LOAD;
    r->text = strdup(e->load_text ? e->load_text : "the library did not load");
    r->output = e->load_output ? strdup(e->load_output) : NULL;
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

int cert_engine_run(CertEngine* e, const CertCall* calls, size_t n, CertResult* results) {
  memset(results, 0, n * sizeof *results);
  for (size_t i = 0; i < n; ++i) results[i].end = CERT_END_TOOL;
  Run run = {calls, results, n, 0, 0};
  int tool_error = 0;
  while (run.finished < run.n) {
    if (e->load_failed) {
      mark_load_failure(e, &run);
      break;
    }
    int live = 0;
    for (int k = 0; k < e->jobs; ++k) {
      Worker* w = &e->w[k];
      if (w->pid == 0 && run.next < run.n && start_worker(e, w) != 0) {
        tool_error = 1;
        continue;
      }
      if (w->pid != 0 && w->ready && w->current < 0 && run.next < run.n) {
        if (send_call(w, &run, run.next) == 0) {
          run.next++;
        } else {
          w->killed = 1;
          kill(-w->pid, SIGKILL);
        }
      }
      live += w->pid != 0;
    }
    if (live == 0) {
      /* No worker could start: nothing more will run. */
      for (size_t i = run.next; i < run.n; ++i) finish(e, &run, i);
      break;
    }
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
      if (is_records) parse_records(e, &run, w);
      if (is_records && eof) reap(e, &run, w);
    }
    for (int k = 0; k < e->jobs; ++k) backstop(e, &e->w[k]);
  }
  return tool_error && run.finished < run.n ? -1 : 0;
}

void cert_engine_close(CertEngine* e) {
  if (e == NULL) return;
  for (int k = 0; k < e->jobs; ++k) {
    Worker* w = &e->w[k];
    if (w->pid == 0) continue;
    close(w->cmd); /* end of file: the worker exits */
    kill(-w->pid, SIGKILL);
    while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    close(w->rfd), close(w->ofd);
    free(w->rbuf);
  }
  free(e->load_text);
  free(e->load_output);
  free(e);
}

void cert_results_free(CertResult* results, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    free(results[i].text);
    free(results[i].output);
    results[i].text = results[i].output = NULL;
  }
}
