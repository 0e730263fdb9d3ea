#include "probe_invoke.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_args.h"
#include "probe_records.h"
#include "strict_heap.h"
#include "symbol_names.h"

static void* call_lib;
static CertHostLayout call_host; /* how a host of the runtime's release reads errors */
static __thread int32_t t_thread;

void cert_invoke_use(void* lib, const CertHostLayout* host) {
  call_lib = lib;
  call_host = *host;
}

/* ---- the fatal-signal handler -------------------------------------------- */

static void on_fatal(int signo, siginfo_t* info, void* uctx) {
  (void)uctx;
  /* Two threads of one call may fault at once (the same bad read on both):
   * the first one reports and ends the process; any other waits for that,
   * so the report can never be cut short by a second, unreported death. */
  static volatile int reporting;
  if (__atomic_exchange_n(&reporting, 1, __ATOMIC_SEQ_CST)) {
    for (;;) pause();
  }
  CertSignal s = {
      signo, CERT_REGION_UNKNOWN, -1, t_thread, (uint64_t)(uintptr_t)info->si_addr, 0, 0, -1};
  if (signo == SIGSEGV || signo == SIGBUS) {
    cert_guard_find((uintptr_t)s.addr, &s.region, &s.arg);
    uintptr_t start;
    size_t size;
    if (s.region == CERT_REGION_UNKNOWN &&
        cert_strict_heap_owner((uintptr_t)s.addr, &start, &size)) {
      s.region = CERT_REGION_HEAP_END;
      s.block = start;
      s.block_size = (int64_t)size;
      if (size >= sizeof(TVMFFIObject)) s.block_type = ((const TVMFFIObject*)start)->type_index;
    }
  }
  cert_send_record(CERT_REC_SIGNAL, &s, sizeof s);
  signal(signo, SIG_DFL);
  raise(signo);
}

void cert_install_fault_handlers(void) {
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

typedef struct {
  TVMFFISafeCallType fn;
  const CertCall* call;
  Built* built;
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
    cert_readback_error(err, &call_host, &o->error_rb);
    TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
    snprintf(o->kind, sizeof o->kind, "%.*s", (int)(c->kind.size < 200 ? c->kind.size : 200),
             c->kind.data ? c->kind.data : "");
    snprintf(o->message, sizeof o->message, "%.*s",
             (int)(c->message.size < 2000 ? c->message.size : 2000),
             c->message.data ? c->message.data : "");
    cert_api.dec_ref(err);
  }
  o->result_type = inv->result.type_index;
  cert_readback_result(&inv->result, &call_host, &o->result_rb);
  /* A header that does not read back is no object to judge or release. */
  o->result_valid = o->result_rb.problem != CERT_RB_HEADER && cert_result_is_valid(&inv->result);
  if (o->result_valid) {
    /* A payload that did not read back is not read again here. */
    if (o->result_rb.problem != CERT_RB_OK || cert_str_text(&inv->result, &inv->text) != 0)
      inv->text = NULL;
    if (inv->result.type_index >= kTVMFFIStaticObjectBegin) cert_api.dec_ref(inv->result.v_obj);
  }
}

static void* invoke_thread(void* p) {
  invoke(p);
  return NULL;
}

static void check_refs(const CertCall* call, const Built* b, CertOutcome* out) {
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

void cert_run_call(const CertChildConfig* cfg, const CertCall* call, void* guard_page,
                   CertOutcome* out) {
  char sym[CERT_NAME_MAX + 16];
  snprintf(sym, sizeof sym, CERT_EXPORT_PREFIX "%s", call->function);
  TVMFFISafeCallType fn = (TVMFFISafeCallType)(uintptr_t)dlsym(call_lib, sym);
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
  cert_guards_reset();
  cert_guard_add(guard_page, cert_page_size(), CERT_REGION_DATA_GUARD, -1);
  Built built[2];
  memset(built, 0, sizeof built);
  for (int t = 0; t < threads; ++t) {
    if (cert_args_build(call, &built[t], guard_page, out->note, sizeof out->note) != 0) {
      out->status = CERT_CALL_UNBUILT;
      for (int u = 0; u <= t; ++u) cert_args_release(&built[u], call->nargs);
      return;
    }
  }
  Invocation inv[2];
  memset(inv, 0, sizeof inv);
  pthread_barrier_t barrier;
  if (threads == 2) pthread_barrier_init(&barrier, NULL, 2);
  for (int t = 0; t < threads; ++t) {
    inv[t] =
        (Invocation){fn, call, &built[t], {0}, &out->t[t], NULL, t, threads == 2 ? &barrier : NULL};
  }
  if (threads == 2) {
    pthread_t th;
    if (pthread_create(&th, NULL, invoke_thread, &inv[1]) != 0) {
      snprintf(out->note, sizeof out->note, "could not start a second thread");
      out->status = CERT_CALL_UNBUILT;
      pthread_barrier_destroy(&barrier);
      for (int u = 0; u < threads; ++u) cert_args_release(&built[u], call->nargs);
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
  if (inv[0].text) cert_send_text(CERT_REC_TEXT, inv[0].text);
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
    cert_args_release(&built[t], call->nargs);
  }
}
