#include "probe_child.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

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
  CertSignal s = {signo, CERT_REGION_UNKNOWN, -1, t_thread, (uint64_t)(uintptr_t)info->si_addr};
  if (signo == SIGSEGV || signo == SIGBUS) {
    cert_region_find(s.addr, &s.region, &s.arg);
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
    TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
    snprintf(o->kind, sizeof o->kind, "%.*s", (int)(c->kind.size < 200 ? c->kind.size : 200),
             c->kind.data ? c->kind.data : "");
    snprintf(o->message, sizeof o->message, "%.*s",
             (int)(c->message.size < 2000 ? c->message.size : 2000), c->message.data ? c->message.data : "");
    cert_api.dec_ref(err);
  }
  o->result_type = inv->result.type_index;
  o->result_valid = cert_result_is_valid(&inv->result);
  if (o->result_valid) {
    if (result_text(&inv->result, &inv->text) != 0) inv->text = NULL;
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

/* ---- the child's main ------------------------------------------------------ */

static void load_failed(const char* what, const char* path, const char* why) {
  char msg[2048];
  snprintf(msg, sizeof msg, "%s %s: %s", what, path, why ? why : "(no reason given)");
  send_text(CERT_REC_LOAD, msg);
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


static void on_alarm(int signo) { (void)signo; }

/* Waits for the call's process, killing it after the time limit: a timer
 * interrupts the blocking wait (no SA_RESTART), so a quick call is seen
 * the moment it ends. */
static CertEndRecord wait_call(pid_t pid, double timeout_s) {
  CertEndRecord end = {0, 0, 0};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval timer = {{0, 0}, {(time_t)timeout_s, (suseconds_t)((timeout_s - (double)(time_t)timeout_s) * 1e6)}};
  if (timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0) timer.it_value.tv_usec = 1000;
  setitimer(ITIMER_REAL, &timer, NULL);
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  for (;;) {
    pid_t r = wait4(pid, &status, 0, &ru);
    if (r == pid) break;
    if (r < 0 && errno == EINTR) {
      if (end.how != 2) {
        end.how = 2;
        kill(pid, SIGKILL);
      }
      continue;
    }
    end.how = 3;
    break;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  end.maxrss_kb = ru.ru_maxrss;
  if (end.how >= 2) return end;
  if (WIFSIGNALED(status)) {
    end.how = 1;
    end.code = WTERMSIG(status);
  } else {
    end.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return end;
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

void cert_child_main(const CertChildConfig* cfg, int cmd_fd, int fd) {
  g_fd = fd;
  void* rt = dlopen(cfg->runtime_path, RTLD_NOW | RTLD_GLOBAL);
  if (rt == NULL) load_failed("the runtime did not load:", cfg->runtime_path, dlerror());
  char missing[128];
  if (cert_api_resolve(rt, missing, sizeof missing) != 0) {
    load_failed("the runtime lacks", missing, "certify needs it to probe");
  }
  g_lib = dlopen(cfg->lib_path, RTLD_NOW | RTLD_LOCAL);
  if (g_lib == NULL) load_failed("the library did not load:", cfg->lib_path, dlerror());
  warm_up(rt);
  void* gbase = NULL;
  size_t glen = 0;
  void* guard_page = NULL;
  cert_guarded_alloc(0, &gbase, &glen, &guard_page);
  double timeout_s = cfg->timeout_s > 0 ? cfg->timeout_s : 10.0;
  g_index = -1;
  send_record(CERT_REC_READY, NULL, 0);
  CertCommand cmd;
  while (read_all(cmd_fd, &cmd, sizeof cmd) == 0) {
    g_index = cmd.index;
    send_record(CERT_REC_START, NULL, 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(cmd_fd);
      /* After both loads: a runtime (upstream does) or a library may
       * install a crash handler of its own, and ours must report. */
      install_handlers();
      CertOutcome out;
      memset(&out, 0, sizeof out);
      out.ref_arg = -1;
      run_call(cfg, &cmd.call, guard_page, &out);
      send_record(CERT_REC_DONE, &out, sizeof out);
      _exit(0);
    }
    CertEndRecord end = {3, 0, 0};
    if (pid > 0) end = wait_call(pid, timeout_s);
    send_record(CERT_REC_END, &end, sizeof end);
  }
  _exit(0);
}
