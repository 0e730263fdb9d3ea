#include "probe_child.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

#include "strict_heap.h"

/* ---- the runtime's C API, resolved on the runtime handle ------------- */

typedef struct {
  void (*error_move)(TVMFFIObjectHandle*);
  int (*dec_ref)(TVMFFIObjectHandle);
  int (*string_from)(const TVMFFIByteArray*, TVMFFIAny*);
  int (*bytes_from)(const TVMFFIByteArray*, TVMFFIAny*);
  int (*tensor_from)(DLManagedTensorVersioned*, int32_t, int32_t, TVMFFIObjectHandle*);
  int (*function_create)(void*, TVMFFISafeCallType, void (*)(void*), TVMFFIObjectHandle*);
  int (*error_create)(const TVMFFIByteArray*, const TVMFFIByteArray*, const TVMFFIByteArray*,
                      TVMFFIObjectHandle*);
} Api;

static Api g_api;
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

/* ---- guard regions and the fatal-signal handler ------------------------ */

enum { MAX_REGIONS = 64 };
typedef struct {
  uintptr_t start, end;
  int32_t region, arg;
} Region;
static Region g_regions[MAX_REGIONS];
static volatile int g_nregions;
static __thread int32_t t_thread;

static void add_region(void* start, size_t len, CertRegion region, int32_t arg) {
  if (g_nregions == MAX_REGIONS) return;
  g_regions[g_nregions] = (Region){(uintptr_t)start, (uintptr_t)start + len, region, arg};
  g_nregions = g_nregions + 1;
}

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
    for (int k = 0; k < g_nregions; ++k) {
      if (s.addr >= g_regions[k].start && s.addr < g_regions[k].end) {
        s.region = g_regions[k].region;
        s.arg = g_regions[k].arg;
      }
    }
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

/* ---- memory with unreadable neighbours --------------------------------- */

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* A mapping of `len` usable bytes that ends exactly at an unreadable page.
 * Returns the start of the usable bytes (or the guard page itself when len
 * is 0); *base and *total say what to unmap. */
static void* guarded_alloc(size_t len, void** base, size_t* total, void** guard) {
  size_t ps = page_size();
  size_t body = (len + ps - 1) / ps * ps;
  *total = body + ps;
  char* m = mmap(NULL, *total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (mprotect(m + body, ps, PROT_NONE) != 0) {
    munmap(m, *total);
    return NULL;
  }
  *base = m;
  *guard = m + body;
  return m + body - len;
}

/* ---- building arguments ------------------------------------------------- */

typedef struct {
  DLTensor dl;
  int64_t shape[CERT_MAX_NDIM];
  int64_t strides[CERT_MAX_NDIM];
  void* map_base;
  size_t map_len;
  void* before; /* copy of the data bytes before the call */
  size_t span_bytes;
  DLManagedTensorVersioned managed;
} TensorBox;

typedef struct {
  TVMFFIAny* args;
  void* args_base;
  size_t args_len;
  TVMFFIAny owned[CERT_MAX_ARGS]; /* objects to release after the call */
  TensorBox* boxes[CERT_MAX_ARGS];
  void* guard_page;
  uint32_t refs_before[CERT_MAX_ARGS];
} Built;

double cert_fill_value(int32_t arg, int64_t i) {
  /* Quarter steps in [-2.75, 2.75]: exact in every float type, and never
   * zero everywhere so a kernel that writes nothing is seen. */
  return (double)(((i * 7 + arg * 3) % 23) - 11) * 0.25;
}

static int32_t strong_count(TVMFFIObject* obj) { return (int32_t)(obj->combined_ref_count & 0xffffffffu); }

/* The elements a layout spans (largest offset + 1), or -1. */
static int64_t span_elements(const TensorBox* b) {
  int64_t span = 1;
  for (int32_t k = 0; k < b->dl.ndim; ++k) {
    if (b->shape[k] == 0) return 0;
    int64_t st = b->strides[k] < 0 ? -b->strides[k] : b->strides[k];
    int64_t add;
    if (__builtin_mul_overflow(b->shape[k] - 1, st, &add) || __builtin_add_overflow(span, add, &span)) return -1;
  }
  return span;
}

static void compact_strides(const CertArg* a, int64_t* st) {
  int64_t s = 1;
  for (int32_t k = a->ndim - 1; k >= 0; --k) {
    st[k] = s;
    s *= a->shape[k] > 0 ? a->shape[k] : 1;
  }
}

static int build_tensor(const CertArg* a, int32_t k, Built* b, char* note, size_t nn) {
  TensorBox* t = calloc(1, sizeof *t);
  if (t == NULL) return snprintf(note, nn, "out of memory"), -1;
  b->boxes[k] = t;
  memcpy(t->shape, a->shape, sizeof t->shape);
  if (a->strides_mode == CERT_STRIDES_EXPLICIT) {
    memcpy(t->strides, a->strides, sizeof t->strides);
  } else {
    compact_strides(a, t->strides);
  }
  t->dl.ndim = a->ndim;
  t->dl.dtype = a->dtype;
  t->dl.device = a->device;
  t->dl.shape = t->shape;
  t->dl.strides = a->strides_mode == CERT_STRIDES_NULL && a->ndim > 0 ? NULL : t->strides;
  t->dl.byte_offset = a->byte_offset;
  size_t esize = cert_dtype_bytes(a->dtype);
  int64_t span = span_elements(t);
  if (esize == 0 || span < 0 || (uint64_t)span > (1u << 26) / esize) {
    return snprintf(note, nn, "argument %d: layout too large to build", (int)k), -1;
  }
  t->span_bytes = (size_t)span * esize;
  int is_cpu = a->device.device_type == kDLCPU;
  void* guard = NULL;
  if (a->data == CERT_DATA_NULL || (!is_cpu && span == 0 && a->data == CERT_DATA_DEFAULT)) {
    t->dl.data = NULL;
  } else if (a->data == CERT_DATA_GUARD || !is_cpu) {
    /* Never hand a pointer to readable host memory as device memory. */
    t->dl.data = b->guard_page;
  } else {
    char* data = guarded_alloc(t->span_bytes + a->byte_offset, &t->map_base, &t->map_len, &guard);
    if (data == NULL) return snprintf(note, nn, "argument %d: mmap failed", (int)k), -1;
    add_region(guard, page_size(), CERT_REGION_DATA_END, k);
    t->dl.data = data;
    char* first = data + a->byte_offset;
    int64_t n = cert_arg_elements(a);
    /* Element i (row-major index) at its strided offset. */
    for (int64_t i = 0; i < n; ++i) {
      int64_t rem = i, off = 0;
      for (int32_t d = a->ndim - 1; d >= 0; --d) {
        off += (rem % t->shape[d]) * (t->strides[d] < 0 ? -t->strides[d] : t->strides[d]);
        rem /= t->shape[d];
      }
      if (cert_value_store(a->dtype, first + off * (int64_t)esize, cert_fill_value(k, i)) != 0) {
        memset(first + off * (int64_t)esize, (int)(i & 0x7f), esize);
      }
    }
    t->before = malloc(t->span_bytes ? t->span_bytes : 1);
    if (t->before) memcpy(t->before, first, t->span_bytes);
  }
  if (a->kind == CERT_ARG_DLTENSOR) {
    b->args[k] = (TVMFFIAny){.type_index = kTVMFFIDLTensorPtr, .v_ptr = &t->dl};
    return 0;
  }
  if (g_api.tensor_from == NULL) return snprintf(note, nn, "the runtime lacks TVMFFITensorFromDLPackVersioned"), -1;
  t->managed.version.major = DLPACK_MAJOR_VERSION;
  t->managed.version.minor = DLPACK_MINOR_VERSION;
  t->managed.dl_tensor = t->dl;
  TVMFFIObjectHandle h = NULL;
  if (g_api.tensor_from(&t->managed, 0, 0, &h) != 0 || h == NULL) {
    TVMFFIObjectHandle err = NULL;
    g_api.error_move(&err);
    if (err) {
      TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
      snprintf(note, nn, "the runtime refused to make this Tensor: %.*s: %.*s", (int)c->kind.size,
               c->kind.data, (int)c->message.size, c->message.data);
      g_api.dec_ref(err);
    } else {
      snprintf(note, nn, "the runtime refused to make this Tensor");
    }
    return -1;
  }
  b->owned[k] = (TVMFFIAny){.type_index = kTVMFFITensor, .v_obj = h};
  b->args[k] = b->owned[k];
  return 0;
}

static int dummy_callback(void* h, const TVMFFIAny* a, int32_t n, TVMFFIAny* r) {
  (void)h, (void)a, (void)n, (void)r;
  return 0;
}

static int build_text(const CertArg* a, int32_t k, Built* b, int bytes, char* note, size_t nn) {
  TVMFFIByteArray ba = {a->word, strlen(a->word)};
  int (*make)(const TVMFFIByteArray*, TVMFFIAny*) = bytes ? g_api.bytes_from : g_api.string_from;
  if (make == NULL) return snprintf(note, nn, "the runtime lacks TVMFFI%sFromByteArray", bytes ? "Bytes" : "String"), -1;
  TVMFFIAny v = {.type_index = kTVMFFINone};
  if (make(&ba, &v) != 0) return snprintf(note, nn, "the runtime refused to make argument %d", (int)k), -1;
  if (v.type_index >= kTVMFFIStaticObjectBegin) b->owned[k] = v;
  b->args[k] = v;
  return 0;
}

static int build_object(const CertArg* a, int32_t k, Built* b, char* note, size_t nn) {
  TVMFFIObjectHandle h = NULL;
  int rc = -1;
  if (a->kind == CERT_ARG_FUNCTION && g_api.function_create) {
    rc = g_api.function_create(NULL, dummy_callback, NULL, &h);
  } else if (a->kind == CERT_ARG_ERROR && g_api.error_create) {
    TVMFFIByteArray kind = {"ValueError", 10}, msg = {"certify probe", 13}, bt = {"", 0};
    rc = g_api.error_create(&kind, &msg, &bt, &h);
  }
  if (rc != 0 || h == NULL) return snprintf(note, nn, "the runtime could not make argument %d", (int)k), -1;
  b->owned[k] = (TVMFFIAny){.type_index = TVMFFIObjectGetTypeIndex(h), .v_obj = h};
  b->args[k] = b->owned[k];
  return 0;
}

static int build_arg(const CertArg* a, int32_t k, Built* b, char* note, size_t nn) {
  TVMFFIAny* v = &b->args[k];
  memset(v, 0, sizeof *v);
  switch (a->kind) {
    case CERT_ARG_NONE: v->type_index = kTVMFFINone; return 0;
    case CERT_ARG_BOOL: v->type_index = kTVMFFIBool; v->v_int64 = a->i != 0; return 0;
    case CERT_ARG_INT: v->type_index = kTVMFFIInt; v->v_int64 = a->i; return 0;
    case CERT_ARG_FLOAT: v->type_index = kTVMFFIFloat; v->v_float64 = a->f; return 0;
    case CERT_ARG_RAWSTR: v->type_index = kTVMFFIRawStr; v->v_c_str = a->word; return 0;
    case CERT_ARG_STR: return build_text(a, k, b, 0, note, nn);
    case CERT_ARG_BYTES: return build_text(a, k, b, 1, note, nn);
    case CERT_ARG_DTYPE: v->type_index = kTVMFFIDataType; v->v_dtype = a->dtype; return 0;
    case CERT_ARG_DEVICE: v->type_index = kTVMFFIDevice; v->v_device = a->device; return 0;
    case CERT_ARG_PTR:
      v->type_index = kTVMFFIOpaquePtr;
      v->v_ptr = a->i ? b->guard_page : NULL;
      return 0;
    case CERT_ARG_FUNCTION:
    case CERT_ARG_ERROR: return build_object(a, k, b, note, nn);
    case CERT_ARG_DLNULL: v->type_index = kTVMFFIDLTensorPtr; v->v_ptr = NULL; return 0;
    case CERT_ARG_DLTENSOR:
    case CERT_ARG_TENSOR: return build_tensor(a, k, b, note, nn);
  }
  return snprintf(note, nn, "unknown argument kind"), -1;
}

static void release_built(Built* b, int32_t nargs) {
  for (int32_t k = 0; k < nargs; ++k) {
    if (b->owned[k].type_index >= kTVMFFIStaticObjectBegin && b->owned[k].v_obj) g_api.dec_ref(b->owned[k].v_obj);
    TensorBox* t = b->boxes[k];
    if (t) {
      if (t->map_base) munmap(t->map_base, t->map_len);
      free(t->before);
      free(t);
    }
  }
  if (b->args_base) munmap(b->args_base, b->args_len);
}

static int build_all(const CertCall* call, Built* b, void* guard_page, char* note, size_t nn) {
  memset(b, 0, sizeof *b);
  b->guard_page = guard_page;
  void* guard = NULL;
  b->args = guarded_alloc((size_t)call->nargs * sizeof(TVMFFIAny), &b->args_base, &b->args_len, &guard);
  if (b->args == NULL) return snprintf(note, nn, "mmap failed"), -1;
  add_region(guard, page_size(), CERT_REGION_ARGS_END, call->nargs);
  for (int32_t k = 0; k < call->nargs; ++k) {
    if (build_arg(&call->args[k], k, b, note, nn) != 0) return -1;
    if (b->owned[k].type_index >= kTVMFFIStaticObjectBegin && b->owned[k].v_obj) {
      b->refs_before[k] = (uint32_t)strong_count(b->owned[k].v_obj);
    }
  }
  return 0;
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

/* An owned result must be None, an inline value, or an object of its
 * stated type with at least one reference; views are not owned values. */
static int result_is_valid(const TVMFFIAny* r) {
  int32_t ti = r->type_index;
  if (ti == kTVMFFINone || ti == kTVMFFIInt || ti == kTVMFFIBool || ti == kTVMFFIFloat ||
      ti == kTVMFFIOpaquePtr || ti == kTVMFFIDataType || ti == kTVMFFIDevice ||
      ti == kTVMFFISmallStr || ti == kTVMFFISmallBytes) {
    return ti != kTVMFFISmallStr && ti != kTVMFFISmallBytes ? 1 : r->small_str_len <= 7;
  }
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  return r->v_obj != NULL && r->v_obj->type_index == ti && strong_count(r->v_obj) >= 1;
}

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
  g_api.error_move(&err);
  if (err) {
    o->has_error = 1;
    cert_readback_error(err, &g_host, &o->error_rb);
    TVMFFIErrorCell* c = TVMFFIErrorGetCellPtr(err);
    snprintf(o->kind, sizeof o->kind, "%.*s", (int)(c->kind.size < 200 ? c->kind.size : 200),
             c->kind.data ? c->kind.data : "");
    snprintf(o->message, sizeof o->message, "%.*s",
             (int)(c->message.size < 2000 ? c->message.size : 2000), c->message.data ? c->message.data : "");
    g_api.dec_ref(err);
  }
  o->result_type = inv->result.type_index;
  cert_readback_result(&inv->result, &g_host, &o->result_rb);
  /* A header that does not read back is no object to judge or release. */
  o->result_valid = o->result_rb.problem != CERT_RB_HEADER && result_is_valid(&inv->result);
  if (o->result_valid) {
    /* A payload that did not read back is not read again here. */
    if (o->result_rb.problem != CERT_RB_OK || result_text(&inv->result, &inv->text) != 0) inv->text = NULL;
    if (inv->result.type_index >= kTVMFFIStaticObjectBegin) g_api.dec_ref(inv->result.v_obj);
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
    uint32_t now = (uint32_t)strong_count(o->v_obj);
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
  g_nregions = 0;
  add_region(guard_page, page_size(), CERT_REGION_DATA_GUARD, -1);
  Built built[2];
  memset(built, 0, sizeof built);
  for (int t = 0; t < threads; ++t) {
    if (build_all(call, &built[t], guard_page, out->note, sizeof out->note) != 0) {
      out->status = CERT_CALL_UNBUILT;
      for (int u = 0; u <= t; ++u) release_built(&built[u], call->nargs);
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
      for (int u = 0; u < threads; ++u) release_built(&built[u], call->nargs);
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
    release_built(&built[t], call->nargs);
  }
}

/* ---- the child's main ------------------------------------------------------ */

static int resolve_api(void* rt, char* missing, size_t n) {
#define REQUIRE(field, name)                                        \
  do {                                                              \
    *(void**)&g_api.field = dlsym(rt, name);                        \
    if (g_api.field == NULL) return snprintf(missing, n, "%s", name), -1; \
  } while (0)
  REQUIRE(error_move, "TVMFFIErrorMoveFromRaised");
  REQUIRE(dec_ref, "TVMFFIObjectDecRef");
#undef REQUIRE
  *(void**)&g_api.string_from = dlsym(rt, "TVMFFIStringFromByteArray");
  *(void**)&g_api.bytes_from = dlsym(rt, "TVMFFIBytesFromByteArray");
  *(void**)&g_api.tensor_from = dlsym(rt, "TVMFFITensorFromDLPackVersioned");
  *(void**)&g_api.function_create = dlsym(rt, "TVMFFIFunctionCreate");
  *(void**)&g_api.error_create = dlsym(rt, "TVMFFIErrorCreate");
  return 0;
}

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
  g_api.error_move(&err);
  if (err) g_api.dec_ref(err);
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
  if (resolve_api(rt, missing, sizeof missing) != 0) {
    load_failed("the runtime lacks", missing, "certify needs it to probe");
  }
  void (*version)(TVMFFIVersion*) = (void (*)(TVMFFIVersion*))(uintptr_t)dlsym(rt, "TVMFFIGetVersion");
  TVMFFIVersion v = {0, 0, 0};
  if (version) version(&v);
  if (cfg->layout_release == NULL || cert_host_layout_named(cfg->layout_release, &g_host) != 0) {
    cert_host_layout(&v, &g_host);
  }
  g_lib = dlopen(cfg->lib_path, RTLD_NOW | RTLD_LOCAL);
  if (g_lib == NULL) load_failed("the library did not load:", cfg->lib_path, dlerror());
  warm_up(rt);
  void* gbase = NULL;
  size_t glen = 0;
  void* guard_page = NULL;
  guarded_alloc(0, &gbase, &glen, &guard_page);
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
