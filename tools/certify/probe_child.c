#include "probe_child.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

#include "lib_search.h"
#include "probe_procs.h"
#include "strict_heap.h"

static CertHostLayout g_host; /* how a host of the runtime's release reads errors */
static void* g_lib;
static int g_fd = -1;
static int32_t g_index = -1;

/* ---- writing records ----------------------------------------------- */

static void write_all(int fd, const void* p, size_t n) {
  const char* c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= (size_t)w;
  }
}

/* One write per record when it fits a pipe's atomic size, so a record is
 * never torn by the signal handler's own. */
static void send_record(int32_t type, const void* payload, uint32_t len) {
  char buf[4096];
  CertRecordHeader h = {type, g_index, len};
  if (sizeof h + len <= sizeof buf) {
    memcpy(buf, &h, sizeof h);
    if (len) memcpy(buf + sizeof h, payload, len);
    write_all(g_fd, buf, sizeof h + len);
  } else {
    write_all(g_fd, &h, sizeof h);
    write_all(g_fd, payload, len);
  }
}

static void send_text(int32_t type, const char* text) {
  size_t n = strlen(text);
  if (n > CERT_TEXT_MAX) n = CERT_TEXT_MAX;
  send_record(type, text, (uint32_t)n);
}

/* ---- the fatal-signal handler ------------------------------------------ */

static __thread int32_t t_thread;

static void on_fatal(int signo, siginfo_t* info, void* uctx) {
  (void)uctx;
  /* Two threads of one call may fault at once (the same bad read on both):
   * the first one reports and ends the process; any other waits for that,
   * so the report can never be cut short by a second, unreported death. */
  static volatile int reporting;
  if (__atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST)) {
    for (;;) pause();
  }
  CertSignal s = {signo, CERT_REGION_UNKNOWN, -1, t_thread, (uint64_t)(uintptr_t)info->si_addr, 0, 0, -1};
  if (signo == SIGSEGV || signo == SIGBUS) {
    cert_region_find(s.addr, &s.region, &s.arg);
    uintptr_t start;
    size_t size;
    if (s.region == CERT_REGION_UNKNOWN && cert_strict_heap_owner((uintptr_t)s.addr, &start, &size)) {
      s.region = CERT_REGION_HEAP_END;
      s.block = start;
      s.block_size = (int64_t)size;
      if (size >= sizeof(TVMFFIObject)) s.block_type = ((const TVMFFIObject*)start)->type_index;
    }
  }
  send_record(CERT_REC_SIGNAL, &s, sizeof s);
  signal(signo, SIG_DFL);
  raise(signo);
}

static void install_handlers(void) {
  static char altstack[65536];
  stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
  for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; ++k) sigaction(sigs[k], &sa, NULL);
}

/* ---- one call ------------------------------------------------------------ */

/* Reads a str result (small or object) into buf; 0 on success. */
static int result_text(const TVMFFIAny* r, char** out) {
  const char* data = NULL;
  size_t size = 0;
  if (r->type_index == kTVMFFISmallStr) {
    data = r->v_bytes;
    size = r->small_str_len;
    if (size > 7) return -1;
  } else if (r->type_index == kTVMFFIStr && r->v_obj) {
    TVMFFIByteArray* ba = TVMFFIBytesGetByteArrayPtr(r->v_obj);
    data = ba->data;
    size = ba->size;
  } else {
    return -1;
  }
  if (size > CERT_TEXT_MAX) size = CERT_TEXT_MAX;
  *out = malloc(size + 1);
  if (*out == NULL) return -1;
  memcpy(*out, data, size);
  (*out)[size] = '\0';
  return 0;
}

typedef struct {
  TVMFFISafeCallType fn;
  const CertCall* call;
  CertBuilt* built;
  TVMFFIAny result;
  CertThreadOutcome* out;
  char* text; /* a str result, for metadata and doc calls */
  int32_t id;
  pthread_barrier_t* barrier;
} Invocation;

static void invoke(Invocation* inv) {
  t_thread = inv->id;
  inv->result = (TVMFFIAny){.type_index = kTVMFFINone};
  if (inv->barrier) pthread_barrier_wait(inv->barrier);
  CertThreadOutcome* o = inv->out;
  o->rc = inv->fn(NULL, inv->built->args, inv->call->nargs, &inv->result);
  TVMFFIObjectHandle err = NULL;
  cert_api.error_move(&err);
  if (err) {
    o->has_error = 1;
    cert_readback_error(err, &g_host, &o->error_rb);
    TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
    snprintf(o->kind, sizeof o->kind, "%.*s", (int)(c->kind.size < 200 ? c->kind.size : 200),
             c->kind.data ? c->kind.data : "");
    snprintf(o->message, sizeof o->message, "%.*s",
             (int)(c->message.size < 2000 ? c->message.size : 2000), c->message.data ? c->message.data : "");
    cert_api.dec_ref(err);
  }
  o->result_type = inv->result.type_index;
  cert_readback_result(&inv->result, &g_host, &o->result_rb);
  /* A header that does not read back is no object to judge or release. */
  o->result_valid = o->result_rb.problem != CERT_RB_HEADER && cert_result_is_valid(&inv->result);
  if (o->result_valid) {
    /* A payload that did not read back is not read again here. */
    if (o->result_rb.problem != CERT_RB_OK || result_text(&inv->result, &inv->text) != 0) inv->text = NULL;
    if (inv->result.type_index >= kTVMFFIStaticObjectBegin) cert_api.dec_ref(inv->result.v_obj);
  }
}

static void* invoke_thread(void* p) {
  invoke(p);
  return NULL;
}

static void check_refs(const CertCall* call, const CertBuilt* b, CertOutcome* out) {
  for (int32_t k = 0; k < call->nargs; ++k) {
    const TVMFFIAny* o = &b->owned[k];
    if (o->type_index < kTVMFFIStaticObjectBegin || o->v_obj == NULL) continue;
    uint32_t now = (uint32_t)cert_strong_count(o->v_obj);
    if (now != b->refs_before[k] && out->ref_arg < 0) {
      out->ref_arg = k;
      out->ref_before = (int32_t)b->refs_before[k];
      out->ref_after = (int32_t)now;
    }
  }
}

static void run_call(const CertChildConfig* cfg, const CertCall* call, void* guard_page, CertOutcome* out) {
  char sym[CERT_NAME_MAX + 16];
  snprintf(sym, sizeof sym, "__tvm_ffi_%s", call->function);
  TVMFFISafeCallType fn = (TVMFFISafeCallType)(uintptr_t)dlsym(g_lib, sym);
  if (fn == NULL) {
    out->status = CERT_CALL_NO_SYMBOL;
    snprintf(out->note, sizeof out->note, "%s is not exported", sym);
    return;
  }
  int threads = call->threads == 2 ? 2 : 1;
  out->threads = threads;
  /* From here every block ends at an unreadable page: the arguments the
   * runtime makes, what the library allocates, what it returns or raises. */
  cert_strict_heap_enable(1);
  cert_regions_clear();
  cert_region_add(guard_page, cert_page_size(), CERT_REGION_DATA_GUARD, -1);
  CertBuilt built[2];
  memset(built, 0, sizeof built);
  for (int t = 0; t < threads; ++t) {
    if (cert_build_all(call, &built[t], guard_page, out->note, sizeof out->note) != 0) {
      out->status = CERT_CALL_UNBUILT;
      for (int u = 0; u <= t; ++u) cert_release_built(&built[u], call->nargs);
      return;
    }
  }
  Invocation inv[2];
  memset(inv, 0, sizeof inv);
  pthread_barrier_t barrier;
  if (threads == 2) pthread_barrier_init(&barrier, NULL, 2);
  for (int t = 0; t < threads; ++t) {
    inv[t] = (Invocation){fn, call, &built[t], {0}, &out->t[t], NULL, t, threads == 2 ? &barrier : NULL};
  }
  if (threads == 2) {
    pthread_t th;
    if (pthread_create(&th, NULL, invoke_thread, &inv[1]) != 0) {
      snprintf(out->note, sizeof out->note, "could not start a second thread");
      out->status = CERT_CALL_UNBUILT;
      pthread_barrier_destroy(&barrier);
      for (int u = 0; u < threads; ++u) cert_release_built(&built[u], call->nargs);
      return;
    }
    invoke(&inv[0]);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&barrier);
  } else {
    invoke(&inv[0]);
  }
  out->status = CERT_CALL_RETURNED;
  check_refs(call, &built[0], out);
  if (inv[0].text) send_text(CERT_REC_TEXT, inv[0].text);
  if (call->check_reference && cfg->check && out->t[0].rc == 0) {
    void* tensors[CERT_MAX_ARGS] = {0};
    void* before[CERT_MAX_ARGS] = {0};
    for (int32_t k = 0; k < call->nargs; ++k) {
      if (built[0].boxes[k]) {
        tensors[k] = &built[0].boxes[k]->dl;
        before[k] = built[0].boxes[k]->before;
      }
    }
    int m = cfg->check(cfg->check_ctx, call, tensors, before, out->note, sizeof out->note);
    out->checked = m >= 0;
    out->mismatches = m > 0 ? m : 0;
  }
  for (int t = 0; t < threads; ++t) {
    free(inv[t].text);
    cert_release_built(&built[t], call->nargs);
  }
}

/* ---- a batch's process ----------------------------------------------------- */

/* What the process running a batch shares with its worker, so the worker
 * knows what happened even when the library closed every descriptor. */
typedef struct {
  volatile int32_t state; /* Phase */
  volatile int32_t at;    /* the batch position of the call the state is about */
  volatile int64_t base_rss_kb;
} Shared;

typedef enum { PHASE_SETUP, PHASE_CALLING, PHASE_RETURNED, PHASE_FDS_LOST } Phase;

/* A message on the progress pipe: call `at` began ('S') or returned ('R';
 * 'L': returned and left processes behind). */
typedef struct {
  int32_t what;
  int32_t at;
} Progress;

static void progress(int fd, int32_t what, int32_t at) {
  Progress m = {what, at};
  write_all(fd, &m, sizeof m);
}

/* The call's process may allocate `limit` bytes beyond what it holds now:
 * RLIMIT_DATA counts private writable memory (what a memory bomb takes)
 * and not the address space a CUDA driver or a sanitizer reserves. */
static void cap_memory(size_t limit, Shared* sh) {
  long data_kb = cert_self_status_kb("VmData");
  sh->base_rss_kb = cert_self_status_kb("VmRSS");
  if (limit == 0 || data_kb < 0) return;
  rlim_t cap = (rlim_t)data_kb * 1024 + (rlim_t)limit;
  struct rlimit r = {cap, cap};
  setrlimit(RLIMIT_DATA, &r);
}

static int same_file(int fd, const struct stat* was) {
  struct stat now;
  return fstat(fd, &now) == 0 && now.st_dev == was->st_dev && now.st_ino == was->st_ino;
}

/* Runs cmds[from..n) one after another; never returns. A call that leaves
 * processes behind ends the batch here, so the worker can end them and
 * blame exactly that call. */
static void run_batch_process(const CertChildConfig* cfg, const CertCommand* cmds, size_t from, size_t n,
                              int prog_fd, Shared* sh, void* guard_page) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* the worker gone: so is the batch */
  cert_become_subreaper();
  install_handlers();
  cap_memory(cfg->memory_limit, sh);
  struct stat rec_st, prog_st;
  fstat(g_fd, &rec_st);
  fstat(prog_fd, &prog_st);
  for (size_t k = from; k < n; ++k) {
    g_index = cmds[k].index;
    sh->at = (int32_t)k;
    sh->state = PHASE_CALLING;
    progress(prog_fd, 'S', (int32_t)k);
    send_record(CERT_REC_START, NULL, 0);
    CertOutcome out;
    memset(&out, 0, sizeof out);
    out.ref_arg = -1;
    run_call(cfg, &cmds[k].call, guard_page, &out);
    out.left_processes = cert_has_children();
    if (!same_file(g_fd, &rec_st) || !same_file(prog_fd, &prog_st)) {
      sh->state = PHASE_FDS_LOST;
      _exit(0);
    }
    send_record(CERT_REC_DONE, &out, sizeof out);
    sh->state = PHASE_RETURNED;
    progress(prog_fd, out.left_processes ? 'L' : 'R', (int32_t)k);
    if (out.left_processes) _exit(0);
  }
  _exit(0);
}

/* ---- a batch, supervised by the worker ---------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void send_end(const CertCommand* cmd, const CertEndRecord* end) {
  int32_t saved = g_index;
  g_index = cmd->index;
  send_record(CERT_REC_END, end, sizeof *end);
  g_index = saved;
}

typedef struct {
  const CertCommand* cmds;
  size_t n;
  pid_t pid;
  int prog_fd;
  long current;       /* the batch position of the call in flight, or -1 */
  double deadline;
  int timed_out;
  long left;          /* the call that returned leaving processes, or -1 */
  size_t next;        /* where a new process would go on */
  int status;
  struct rusage ru;
} Watch;

/* Reads progress messages; returns 1 at end of file. */
static int drain_progress(Watch* w, double timeout_s) {
  Progress m;
  for (;;) {
    ssize_t r = read(w->prog_fd, &m, sizeof m);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return 0;
    if (r != (ssize_t)sizeof m) return 1;
    if (m.at < 0 || (size_t)m.at >= w->n) continue;
    if (m.what == 'S') {
      w->current = m.at;
      w->deadline = now_s() + timeout_s;
    } else if (m.what == 'R' || m.what == 'L') {
      w->current = -1;
      w->next = (size_t)m.at + 1;
      if (m.what == 'L') {
        w->left = m.at;
      } else {
        CertEndRecord end = {CERT_HOW_RETURNED, 0, 0, 0, 0, ""};
        send_end(&w->cmds[m.at], &end);
      }
    }
  }
}

static void on_alarm(int signo) { (void)signo; }

/* A blocking wait for `pid` of at most `seconds` (a timer interrupts it).
 * Returns 1 when it was reaped. */
static int wait_for(pid_t pid, double seconds, int* status, struct rusage* ru) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  if (seconds < 0.001) seconds = 0.001;
  struct itimerval timer = {{0, 0}, {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)}};
  setitimer(ITIMER_REAL, &timer, NULL);
  pid_t r = wait4(pid, status, 0, ru);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  return r == pid;
}

/* Waits for the batch's process, killing it when a call runs past the time
 * limit. Progress messages wake it at once, and so does the end of the
 * pipe when the process exits; a process the library forked may keep the
 * pipe open, hence the polling. */
static void watch(Watch* w, double timeout_s) {
  int eof = 0;
  for (;;) {
    double wait = 0.05;
    if (w->current >= 0 && !w->timed_out) wait = w->deadline - now_s();
    if (wait > 0.05 && !eof) wait = 0.05;
    if (wait < 0) wait = 0;
    if (eof) {
      /* The process closed its end: it is exiting (or closed every
       * descriptor and goes on: then the deadline still holds). */
      if (w->current < 0 || w->timed_out) wait = 1.0;
      if (wait_for(w->pid, wait, &w->status, &w->ru)) break;
    } else {
      struct pollfd pfd = {w->prog_fd, POLLIN, 0};
      if (poll(&pfd, 1, (int)(wait * 1000) + (wait > 0)) > 0) eof = drain_progress(w, timeout_s);
      pid_t r = wait4(w->pid, &w->status, WNOHANG, &w->ru);
      if (r == w->pid) break;
      if (r < 0 && errno != EINTR) break;
    }
    if (w->current >= 0 && !w->timed_out && now_s() >= w->deadline) {
      w->timed_out = 1;
      kill(-w->pid, SIGKILL);
      kill(w->pid, SIGKILL);
    }
  }
  drain_progress(w, timeout_s);
}

static CertEndRecord end_of(const Watch* w, const Shared* sh) {
  CertEndRecord end = {CERT_HOW_EXIT, 0, w->ru.ru_maxrss, sh->base_rss_kb, 0, ""};
  if (w->timed_out) {
    end.how = CERT_HOW_TIMEOUT;
  } else if (WIFSIGNALED(w->status)) {
    end.how = CERT_HOW_SIGNAL;
    end.code = WTERMSIG(w->status);
  } else {
    end.code = WIFEXITED(w->status) ? WEXITSTATUS(w->status) : -1;
  }
  return end;
}

/* Runs one process for cmds[from..n); returns where the next one starts
 * (n when the batch is over). */
static size_t run_one_process(const CertChildConfig* cfg, const CertCommand* cmds, size_t from, size_t n,
                              int cmd_fd, Shared* sh, void* guard_page) {
  int prog[2];
  CertEndRecord nofork = {CERT_HOW_NOFORK, 0, 0, 0, 0, ""};
  if (pipe(prog) != 0) {
    for (size_t k = from; k < n; ++k) send_end(&cmds[k], &nofork);
    return n;
  }
  memset((void*)sh, 0, sizeof *sh);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(cmd_fd);
    close(prog[0]);
    run_batch_process(cfg, cmds, from, n, prog[1], sh, guard_page);
  }
  close(prog[1]);
  if (pid < 0) {
    close(prog[0]);
    for (size_t k = from; k < n; ++k) send_end(&cmds[k], &nofork);
    return n;
  }
  fcntl(prog[0], F_SETFL, O_NONBLOCK);
  Watch w;
  memset(&w, 0, sizeof w);
  w.cmds = cmds;
  w.n = n;
  w.pid = pid;
  w.prog_fd = prog[0];
  w.current = -1;
  w.left = -1;
  w.next = from;
  watch(&w, cfg->timeout_s > 0 ? cfg->timeout_s : 10.0);
  close(prog[0]);
  kill(-pid, SIGKILL); /* what the calls started in their process group */
  CertEndRecord end = end_of(&w, sh);
  if (cert_has_children()) end.strays = (int32_t)cert_sweep_children(NULL, 0, end.stray, sizeof end.stray);
  long at = sh->state == PHASE_SETUP ? (long)from : sh->at;
  if (w.left >= 0 || (sh->state == PHASE_RETURNED && end.strays > 0)) {
    /* It returned; what it left behind is its finding. */
    long blame = w.left >= 0 ? w.left : at;
    CertEndRecord left = {CERT_HOW_RETURNED, 0, end.maxrss_kb, end.base_rss_kb, end.strays, ""};
    memcpy(left.stray, end.stray, sizeof left.stray);
    send_end(&cmds[blame], &left);
    return (size_t)blame + 1;
  }
  if (sh->state == PHASE_RETURNED) {
    /* Died between calls: go on after the last that returned. */
    if (w.next <= (size_t)at) {
      CertEndRecord returned = {CERT_HOW_RETURNED, 0, 0, 0, 0, ""};
      send_end(&cmds[at], &returned);
      w.next = (size_t)at + 1;
    }
    return w.next;
  }
  if (sh->state == PHASE_FDS_LOST) {
    end.how = CERT_HOW_FDS;
    send_end(&cmds[at], &end);
    return (size_t)at + 1;
  }
  if (w.timed_out) {
    send_end(&cmds[at], &end);
    CertEndRecord skipped = {CERT_HOW_NOT_RUN, 0, 0, 0, 0, ""};
    for (size_t k = (size_t)at + 1; k < n; ++k) send_end(&cmds[k], &skipped);
    return n;
  }
  /* A death is the call's own only when it ran first in a fresh process. */
  if ((size_t)at > from) return (size_t)at;
  send_end(&cmds[at], &end);
  return (size_t)at + 1;
}

static void run_batch(const CertChildConfig* cfg, const CertCommand* cmds, size_t n, int cmd_fd, Shared* sh,
                      void* guard_page) {
  size_t from = 0;
  while (from < n) from = run_one_process(cfg, cmds, from, n, cmd_fd, sh, guard_page);
}

/* ---- the worker ------------------------------------------------------------ */

static void load_failed(int32_t type, const char* what, const char* path, const char* why) {
  char msg[2048];
  snprintf(msg, sizeof msg, "%s %s: %s", what, path, why ? why : "(no reason given)");
  send_text(type, msg);
  _exit(0);
}

/* Some runtimes pay a large one-time cost on the first raised error
 * (upstream initialises its backtrace reader): pay it here, once, so that
 * every forked call starts warm. */
static void warm_up(void* rt) {
  void (*raise_)(const char*, const char*) =
      (void (*)(const char*, const char*))(uintptr_t)dlsym(rt, "TVMFFIErrorSetRaisedFromCStr");
  if (raise_ == NULL) return;
  raise_("RuntimeError", "certify warm-up");
  TVMFFIObjectHandle err = NULL;
  cert_api.error_move(&err);
  if (err) cert_api.dec_ref(err);
}

/* Waits for a helper process (the registry lister), killing it after
 * `timeout_s`. */
static void wait_helper(pid_t pid, double timeout_s) {
  int status = 0;
  struct rusage ru;
  if (wait_for(pid, timeout_s, &status, &ru)) return;
  kill(pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/* Reads exactly n bytes; 0 on success, -1 at end of file or error. */
static int read_all(int fd, void* p, size_t n) {
  char* c = p;
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

/* ---- what loading registered -------------------------------------------------- */

typedef struct {
  char* s;
  size_t len, cap;
} Text;

static void text_add(Text* t, const char* prefix, const char* line) {
  size_t n = strlen(prefix) + strlen(line) + 1;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 4096;
    while (cap < t->len + n + 1) cap *= 2;
    char* grown = realloc(t->s, cap);
    if (grown == NULL) return;
    t->s = grown;
    t->cap = cap;
  }
  t->len += (size_t)sprintf(t->s + t->len, "%s%s\n", prefix, line);
}

/* Calls a Function object on `args`; 0 with the result, or -1. */
static int call_object(TVMFFIObjectHandle f, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  *out = (TVMFFIAny){.type_index = kTVMFFINone};
  if (cert_api.function_call(f, args, n, out) == 0) return 0;
  TVMFFIObjectHandle err = NULL;
  cert_api.error_move(&err);
  if (err) cert_api.dec_ref(err);
  return -1;
}

static int call_global(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObjectHandle f = NULL;
  TVMFFIByteArray key = {name, strlen(name)};
  if (cert_api.get_global == NULL || cert_api.function_call == NULL || cert_api.get_global(&key, &f) != 0 || f == NULL) {
    return -1;
  }
  int rc = call_object(f, args, n, out);
  cert_api.dec_ref(f);
  return rc;
}

static void add_str(Text* t, const char* prefix, const TVMFFIAny* v) {
  char* str = NULL;
  if (result_text(v, &str) == 0) text_add(t, prefix, str);
  free(str);
}

/* Global function names, by upstream's name-list functor ("G name"); a
 * runtime without it says so ("G?"). */
static void list_globals(Text* t) {
  TVMFFIAny functor;
  if (call_global("ffi.FunctionListGlobalNamesFunctor", NULL, 0, &functor) != 0 ||
      functor.type_index != kTVMFFIFunction) {
    text_add(t, "G?", "");
    return;
  }
  TVMFFIAny arg = {.type_index = kTVMFFIInt, .v_int64 = -1}, count;
  if (call_object(functor.v_obj, &arg, 1, &count) == 0 && count.type_index == kTVMFFIInt) {
    for (int64_t i = 0; i < count.v_int64 && i < 100000; ++i) {
      TVMFFIAny name;
      arg.v_int64 = i;
      if (call_object(functor.v_obj, &arg, 1, &name) != 0) break;
      add_str(t, "G ", &name);
      if (name.type_index >= kTVMFFIStaticObjectBegin) cert_api.dec_ref(name.v_obj);
    }
  }
  cert_api.dec_ref(functor.v_obj);
}

/* Type keys ("T key"): upstream lists them; elsewhere the dynamic type
 * indices are walked (a runtime that returns NULL for unknown ones). */
static void list_types(Text* t) {
  TVMFFIAny keys;
  if (call_global("ffi.GetRegisteredTypeKeys", NULL, 0, &keys) == 0 && keys.type_index == kTVMFFIArray) {
    TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(keys.v_obj);
    const TVMFFIAny* items = cell->data;
    for (int64_t i = 0; i < cell->size && i < 100000; ++i) add_str(t, "T ", &items[i]);
    cert_api.dec_ref(keys.v_obj);
    return;
  }
  int misses = 0;
  for (int32_t i = kTVMFFIDynObjectBegin; cert_api.type_info && misses < 64 && i < 1 << 20; ++i) {
    const TVMFFITypeInfo* info = cert_api.type_info(i);
    if (info == NULL) {
      TVMFFIObjectHandle err = NULL;
      cert_api.error_move(&err);
      if (err) cert_api.dec_ref(err);
      misses++;
      continue;
    }
    misses = 0;
    char key[256];
    snprintf(key, sizeof key, "%.*s", (int)(info->type_key.size < 255 ? info->type_key.size : 255),
             info->type_key.data);
    text_add(t, "T ", key);
  }
}

/* Lists the registry in a process of its own (a runtime may abort on a
 * question it does not like): one record, `tag` on its first line. */
static void report_registry(const char* tag) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    Text t = {0};
    text_add(&t, "", tag);
    list_globals(&t);
    list_types(&t);
    send_text(CERT_REC_REGISTRY, t.s ? t.s : tag);
    _exit(0);
  }
  if (pid > 0) wait_helper(pid, 20);
}

/* ---- loading as hosts load ------------------------------------------------------ */

/* The driver library a dlopen error says is missing ("libcuda.so.1:
 * cannot open shared object file"), when it is one, into buf. */
static int missing_driver(const char* why, char* buf, size_t size, char* stub, size_t stub_size) {
  const char* tail = why ? strstr(why, ": cannot open shared object file") : NULL;
  if (tail == NULL) return 0;
  const char* start = tail;
  while (start > why && start[-1] != ' ' && start[-1] != ':') --start;
  snprintf(buf, size, "%.*s", (int)(tail - start), start);
  return cert_driver_stub_name(buf, stub, stub_size);
}

/* dlopen as upstream's tvm_ffi.load_module does (RTLD_LAZY | RTLD_LOCAL).
 * Where it fails for want of an NVIDIA driver, the toolkit's stub of that
 * driver library stands in (loaded RTLD_GLOBAL, its soname answers the
 * library's DT_NEEDED), and the load is tried again. */
static void* load_library(const CertChildConfig* cfg) {
  for (int tries = 0; tries < 4; ++tries) {
    void* lib = dlopen(cfg->lib_path, RTLD_LAZY | RTLD_LOCAL);
    if (lib != NULL || cfg->driver_stubs == NULL) return lib;
    const char* why = dlerror();
    char saved[1024], needed[128], stub[64], path[4096];
    snprintf(saved, sizeof saved, "%s", why ? why : "");
    if (!missing_driver(saved, needed, sizeof needed, stub, sizeof stub)) {
      load_failed(CERT_REC_LOAD, "the library did not load:", cfg->lib_path, saved);
    }
    snprintf(path, sizeof path, "%s/%s", cfg->driver_stubs, stub);
    if (dlopen(path, RTLD_NOW | RTLD_GLOBAL) == NULL) {
      load_failed(CERT_REC_LOAD, "the library did not load:", cfg->lib_path, saved);
    }
    char note[4400];
    snprintf(note, sizeof note, "%.127s => %.4095s (the CUDA toolkit's driver stub: this machine has no NVIDIA driver)",
             needed, path);
    send_text(CERT_REC_LOADNOTE, note);
  }
  return NULL;
}

void cert_child_main(const CertChildConfig* cfg, int cmd_fd, int fd) {
  g_fd = fd;
  cert_become_subreaper();
  void* rt = dlopen(cfg->runtime_path, RTLD_NOW | RTLD_GLOBAL);
  if (rt == NULL) load_failed(CERT_REC_RUNTIME, "the runtime did not load:", cfg->runtime_path, dlerror());
  char missing[128];
  if (cert_api_resolve(rt, missing, sizeof missing) != 0) {
    load_failed(CERT_REC_RUNTIME, "the runtime lacks", missing, "certify needs it to probe");
  }
  void (*version)(TVMFFIVersion*) = (void (*)(TVMFFIVersion*))(uintptr_t)dlsym(rt, "TVMFFIGetVersion");
  TVMFFIVersion v = {0, 0, 0};
  if (version) version(&v);
  if (cfg->layout_release == NULL || cert_host_layout_named(cfg->layout_release, &g_host) != 0) {
    cert_host_layout(&v, &g_host);
  }
  if (cfg->list_registry) report_registry("before");
  g_lib = load_library(cfg);
  if (g_lib == NULL) load_failed(CERT_REC_LOAD, "the library did not load:", cfg->lib_path, dlerror());
  if (cfg->list_registry) report_registry("after");
  warm_up(rt);
  void* gbase = NULL;
  size_t glen = 0;
  void* guard_page = NULL;
  cert_guarded_alloc(0, 0, &gbase, &glen, &guard_page);
  Shared* sh = mmap(NULL, cert_page_size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) load_failed(CERT_REC_RUNTIME, "certify could not map", "a page", strerror(errno));
  g_index = -1;
  send_record(CERT_REC_READY, NULL, 0);
  CertBatchHeader h;
  while (read_all(cmd_fd, &h, sizeof h) == 0) {
    if (h.n <= 0 || h.n > CERT_BATCH_MAX) break;
    CertCommand* cmds = malloc((size_t)h.n * sizeof *cmds);
    if (cmds == NULL || read_all(cmd_fd, cmds, (size_t)h.n * sizeof *cmds) != 0) break;
    run_batch(cfg, cmds, (size_t)h.n, cmd_fd, sh, guard_page);
    free(cmds);
    g_index = -1;
  }
  _exit(0);
}
