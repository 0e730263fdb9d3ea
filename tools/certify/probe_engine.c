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

#include "probe_engine_state.h"
#include "probe_procs.h"
#include "probe_queue.h"
#include "probe_worker.h"
#include "tools/certify/sanitized.h"

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

const char* cert_engine_error(const CertEngine* e) {
  return e && e->runtime_failed ? e->load_text : NULL;
}

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
  w->t0 = cert_now_s();
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
    if (cert_engine_is_hung(e, run->calls[i].function)) {
      run->results[i].end = CERT_END_NOT_RUN;
      cert_run_finish(e, run, i);
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
  w->t0 = cert_now_s();
  return rc;
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
    int eof = cert_worker_read_fd(w, fds[f].fd, is_records);
    if (is_records) cert_worker_parse_records(e, run, w);
    if (is_records && eof) cert_worker_reap(e, run, w, 0, 0, (struct rusage){0});
  }
  /* A process the library forked may hold a worker's pipe open after the
   * worker died: look for the death itself too. */
  for (int k = 0; k < e->jobs; ++k) {
    Worker* w = &e->w[k];
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (w->pid != 0 && wait4(w->pid, &status, WNOHANG, &ru) == w->pid)
      cert_worker_reap(e, run, w, 1, status, ru);
  }
  for (int k = 0; k < e->jobs; ++k) cert_worker_backstop(e, &e->w[k]);
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
      cert_engine_mark_load_failure(e, &run);
      break;
    }
    if (dispatch(e, &run, &tool_error) == 0) {
      /* No worker could start: nothing more will run. */
      for (size_t i = 0; i < run.n; ++i) cert_run_finish(e, &run, i);
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
