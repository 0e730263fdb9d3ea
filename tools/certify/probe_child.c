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
#include "probe_args.h"
#include "probe_invoke.h"
#include "probe_procs.h"
#include "probe_records.h"
#include "probe_registry.h"

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
  cert_write_all(fd, &m, sizeof m);
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
static void run_batch_process(const CertChildConfig* cfg, const CertCommand* cmds, size_t from,
                              size_t n, int prog_fd, Shared* sh, void* guard_page) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* the worker gone: so is the batch */
  cert_become_subreaper();
  cert_install_fault_handlers();
  cap_memory(cfg->memory_limit, sh);
  struct stat rec_st, prog_st;
  fstat(cert_record_fd(), &rec_st);
  fstat(prog_fd, &prog_st);
  for (size_t k = from; k < n; ++k) {
    cert_record_index(cmds[k].index);
    sh->at = (int32_t)k;
    sh->state = PHASE_CALLING;
    progress(prog_fd, 'S', (int32_t)k);
    cert_send_record(CERT_REC_START, NULL, 0);
    CertOutcome out;
    memset(&out, 0, sizeof out);
    out.ref_arg = -1;
    cert_run_call(cfg, &cmds[k].call, guard_page, &out);
    out.left_processes = cert_has_children();
    if (!same_file(cert_record_fd(), &rec_st) || !same_file(prog_fd, &prog_st)) {
      sh->state = PHASE_FDS_LOST;
      _exit(0);
    }
    cert_send_record(CERT_REC_DONE, &out, sizeof out);
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
  int32_t saved = cert_record_index(cmd->index);
  cert_send_record(CERT_REC_END, end, sizeof *end);
  cert_record_index(saved);
}

typedef struct {
  const CertCommand* cmds;
  size_t n;
  pid_t pid;
  int prog_fd;
  long current; /* the batch position of the call in flight, or -1 */
  double deadline;
  int timed_out;
  long left;   /* the call that returned leaving processes, or -1 */
  size_t next; /* where a new process would go on */
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
  struct itimerval timer = {
      {0, 0}, {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)}};
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
static size_t run_one_process(const CertChildConfig* cfg, const CertCommand* cmds, size_t from,
                              size_t n, int cmd_fd, Shared* sh, void* guard_page) {
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
  if (cert_has_children())
    end.strays = (int32_t)cert_sweep_children(NULL, 0, end.stray, sizeof end.stray);
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

static void run_batch(const CertChildConfig* cfg, const CertCommand* cmds, size_t n, int cmd_fd,
                      Shared* sh, void* guard_page) {
  size_t from = 0;
  while (from < n) from = run_one_process(cfg, cmds, from, n, cmd_fd, sh, guard_page);
}

/* ---- the worker ------------------------------------------------------------ */

static void load_failed(int32_t type, const char* what, const char* path, const char* why) {
  char msg[2048];
  snprintf(msg, sizeof msg, "%s %s: %s", what, path, why ? why : "(no reason given)");
  cert_send_text(type, msg);
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

static void report_registry(const char* tag) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char* text = cert_registry_text(tag);
    cert_send_text(CERT_REC_REGISTRY, text ? text : tag);
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
    snprintf(
        note, sizeof note,
        "%.127s => %.4095s (the CUDA toolkit's driver stub: this machine has no NVIDIA driver)",
        needed, path);
    cert_send_text(CERT_REC_LOADNOTE, note);
  }
  return NULL;
}

void cert_child_main(const CertChildConfig* cfg, int cmd_fd, int fd) {
  cert_record_open(fd);
  cert_become_subreaper();
  void* rt = dlopen(cfg->runtime_path, RTLD_NOW | RTLD_GLOBAL);
  if (rt == NULL)
    load_failed(CERT_REC_RUNTIME, "the runtime did not load:", cfg->runtime_path, dlerror());
  char missing[128];
  if (cert_api_resolve(rt, missing, sizeof missing) != 0) {
    load_failed(CERT_REC_RUNTIME, "the runtime lacks", missing, "certify needs it to probe");
  }
  void (*version)(TVMFFIVersion*) =
      (void (*)(TVMFFIVersion*))(uintptr_t)dlsym(rt, "TVMFFIGetVersion");
  TVMFFIVersion v = {0, 0, 0};
  CertHostLayout host;
  if (version) version(&v);
  if (cfg->layout_release == NULL || cert_host_layout_named(cfg->layout_release, &host) != 0) {
    cert_host_layout(&v, &host);
  }
  if (cfg->list_registry) report_registry("before");
  void* lib = load_library(cfg);
  if (lib == NULL)
    load_failed(CERT_REC_LOAD, "the library did not load:", cfg->lib_path, dlerror());
  if (cfg->list_registry) report_registry("after");
  cert_invoke_use(lib, &host);
  warm_up(rt);
  void* gbase = NULL;
  size_t glen = 0;
  void* guard_page = NULL;
  cert_guarded_alloc(0, 0, &gbase, &glen, &guard_page);
  Shared* sh =
      mmap(NULL, cert_page_size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED)
    load_failed(CERT_REC_RUNTIME, "certify could not map", "a page", strerror(errno));
  cert_record_index(-1);
  cert_send_record(CERT_REC_READY, NULL, 0);
  CertBatchHeader h;
  while (read_all(cmd_fd, &h, sizeof h) == 0) {
    if (h.n <= 0 || h.n > CERT_BATCH_MAX) break;
    CertCommand* cmds = malloc((size_t)h.n * sizeof *cmds);
    if (cmds == NULL || read_all(cmd_fd, cmds, (size_t)h.n * sizeof *cmds) != 0) break;
    run_batch(cfg, cmds, (size_t)h.n, cmd_fd, sh, guard_page);
    free(cmds);
    cert_record_index(-1);
  }
  _exit(0);
}
