/*
 * Fuzz harness: any kernel library's exported __tvm_ffi_<name> functions.
 *
 *   bazel run //fuzz:kernel --config=fuzz -- /abs/libkernel.so [/abs/manifest.json] \
 *       -fork=1 -ignore_crashes=1 -max_total_time=600
 *
 * (or FUZZ_KERNEL / FUZZ_KERNEL_MANIFEST in the environment; with neither,
 * the library FUZZ_KERNEL_DEFAULT names at build time, the CPU scale kernel
 * unless fuzz/build.sh's KERNEL_SO replaced it). The runtime
 * is the implementation under test, chosen as everywhere (TVMFFI_IMPL), and
 * loaded RTLD_GLOBAL before the kernel library (RTLD_LOCAL), as a host
 * would. The callable functions are the ones certify finds in the file
 * (cert_elf_callable).
 *
 * Each input becomes a call in certify's own description (CertCall,
 * tools/certify/probe_call.h): the function, the argument count and every
 * argument's kind and fields, tensors with hostile metadata (dtypes, ndim,
 * extents, strides, offsets, NULL or unreadable data, devices). The
 * arguments are built by certify's probe code (probe_args.h): the argument
 * array ends right before an unreadable page, so does every CPU tensor's
 * data, and device data is an unreadable page. With a manifest, most calls
 * follow the function's signature (its dtypes, device and shared extents)
 * and some of their arguments are then replaced by hostile ones.
 *
 * Checks (spec/certify_dynamic.md): no crash, no hang, no touch of a guard
 * page (the fault handler names the region: CDY-003, CDY-005); 0 or -1
 * returned, -1 with one raised error with a kind and a message (CDY-008), 0
 * with none raised (CDY-009) and a valid owned result (CDY-010); object
 * arguments keep their reference counts (CDY-011). Run it in libFuzzer's
 * -fork mode so that a crash of the kernel is one finding and the campaign
 * goes on.
 *
 * A kernel built without coverage instrumentation is fuzzed blind, but not
 * without guidance: the outcome of each call (function, return code, the
 * error's kind and its message with numbers blanked) is fed to libFuzzer
 * as extra counters, so an input that gets a kernel one check further (a
 * new message) is kept and mutated like new coverage.
 */
#include "fuzz/impl_api.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "fuzz/fuzz_common.h"
#include "tools/certify/elf_facts.h"
#include "tools/certify/manifest.h"
#include "tools/certify/probe_args.h"
#include "tools/certify/probe_manifest_calls.h"

#ifndef FUZZ_KERNEL_DEFAULT
#define FUZZ_KERNEL_DEFAULT "kernels/libscale_cpu.so"
#endif

enum { MAX_FUNCTIONS = 64, MAX_ELEMENTS = 4096, EXTRA_COUNTERS = 8192 };

typedef struct {
  char name[CERT_NAME_MAX];
  TVMFFISafeCallType fn;
  const CertManifestFunction* manifest; /* NULL without one */
} Function;

static Function g_fns[MAX_FUNCTIONS];
static int g_nfns;
static CertManifest g_manifest;
static void* g_guard_page;
static const char* g_kernel;

/* libFuzzer reads this section as coverage (its "extra counters"). */
__attribute__((section("__libfuzzer_extra_counters"))) static uint8_t g_outcomes[EXTRA_COUNTERS];

/* ---- describing a call ---------------------------------------------------- */

static const DLDataType kDtypes[] = {
    {kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},  {kDLFloat, 64, 1},
    {kDLInt, 32, 1},   {kDLInt, 64, 1},   {kDLInt, 8, 1},      {kDLUInt, 8, 1},
    {kDLBool, 8, 1},   {kDLFloat, 32, 4}, {kDLComplex, 64, 1}, {kDLUInt, 1, 1},
};

static DLDataType read_dtype(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 128) return kDtypes[0];
  return kDtypes[how % (sizeof kDtypes / sizeof kDtypes[0])];
}

static DLDevice read_device(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 216) return (DLDevice){kDLCPU, 0};
  if (how < 240) return (DLDevice){kDLCUDA, how % 2};
  return (DLDevice){(DLDeviceType)(how % 18), (int32_t)(how % 3)};
}

static int64_t read_extent(FuzzReader* r) {
  uint8_t how = fuzz_u8(r);
  if (how < 200) return how % 9;
  if (how < 250) return how % 65;
  return 4099;
}

/* Keeps the element count within MAX_ELEMENTS (a fuzz input runs in
 * microseconds, not in the time a 16 M element fill takes). */
static void bound_elements(CertArg* a) {
  for (int32_t k = 0; k < a->ndim; ++k) {
    while (cert_arg_elements(a) > MAX_ELEMENTS && a->shape[k] > 1) a->shape[k] /= 2;
  }
}

/* The tensor layout options probes use: strides, offset, data. */
static void read_layout(FuzzReader* r, CertArg* a) {
  uint8_t how = fuzz_u8(r);
  if (how >= 236) {
    a->strides_mode = CERT_STRIDES_NULL;
  } else if (how >= 200) {
    a->strides_mode = CERT_STRIDES_EXPLICIT;
    for (int32_t k = 0; k < a->ndim; ++k) a->strides[k] = fuzz_u8(r) % 9;
  }
  uint8_t off = fuzz_u8(r);
  if (off >= 224) a->byte_offset = (uint64_t)(off % 8) * 4 + (off & 1);
  uint8_t data = fuzz_u8(r);
  /* The guard page stands for device memory only: a CPU tensor whose data
   * is unreadable is the caller's lie, which no kernel can detect (a
   * kernel must read a CPU tensor's data), so it is never a finding. */
  if (data >= 248) {
    a->data = data & 1 && a->device.device_type != kDLCPU ? CERT_DATA_GUARD : CERT_DATA_NULL;
  }
}

/* Any tensor, shaped like `like` (an earlier tensor) when the input says. */
static void read_tensor(FuzzReader* r, CertArg* a, const CertArg* like) {
  a->dtype = read_dtype(r);
  a->device = read_device(r);
  uint8_t nd = fuzz_u8(r);
  if (like != NULL && nd < 112) {
    a->ndim = like->ndim;
    memcpy(a->shape, like->shape, sizeof a->shape);
  } else {
    a->ndim = nd < 200 ? 1 : nd % (CERT_MAX_NDIM + 1);
    for (int32_t k = 0; k < a->ndim; ++k) a->shape[k] = read_extent(r);
  }
  read_layout(r, a);
  bound_elements(a);
}

static void read_word(FuzzReader* r, char* word) {
  size_t n = 0;
  const uint8_t* p = fuzz_bytes(r, fuzz_u8(r) % CERT_WORD_MAX, &n);
  for (size_t k = 0; k < n; ++k) word[k] = (char)(p[k] ? p[k] : 'x');
  word[n] = '\0';
}

static void read_any(FuzzReader* r, CertCall* call, CertArg* a, const CertArg* like);

/* An ffi.Array of up to three items of any kind but an array, appended to
 * the call's items. */
static void read_array(FuzzReader* r, CertCall* call, CertArg* a) {
  a->i = call->nitems;
  a->ndim = 0;
  int32_t want = fuzz_u8(r) % 4;
  for (int32_t k = 0; k < want && call->nitems < CERT_MAX_ITEMS; ++k) {
    CertArg* item = &call->items[call->nitems];
    read_any(r, NULL, item, NULL);
    if (item->kind == CERT_ARG_DLTENSOR) item->kind = CERT_ARG_TENSOR; /* items are owned values */
    call->nitems++;
    a->ndim++;
  }
}

/* Any argument of any kind (an array only when `call` can hold its items). */
static void read_any(FuzzReader* r, CertCall* call, CertArg* a, const CertArg* like) {
  static const CertArgKind kinds[] = {
      CERT_ARG_DLTENSOR, CERT_ARG_DLTENSOR, CERT_ARG_TENSOR, CERT_ARG_FLOAT,    CERT_ARG_INT,
      CERT_ARG_NONE,     CERT_ARG_BOOL,     CERT_ARG_STR,    CERT_ARG_RAWSTR,   CERT_ARG_BYTES,
      CERT_ARG_DTYPE,    CERT_ARG_DEVICE,   CERT_ARG_PTR,    CERT_ARG_FUNCTION, CERT_ARG_ERROR,
      CERT_ARG_DLNULL,   CERT_ARG_DATAPTR,  CERT_ARG_SHAPE,  CERT_ARG_ARRAY,
  };
  *a = cert_arg_simple(kinds[fuzz_u8(r) % (sizeof kinds / sizeof kinds[0])]);
  if (a->kind == CERT_ARG_ARRAY && call == NULL) a->kind = CERT_ARG_NONE;
  switch (a->kind) {
    case CERT_ARG_DLTENSOR:
    case CERT_ARG_TENSOR:
    case CERT_ARG_DATAPTR: read_tensor(r, a, like); break;
    case CERT_ARG_SHAPE:
      a->ndim = fuzz_u8(r) % (CERT_MAX_NDIM + 1);
      for (int32_t k = 0; k < a->ndim; ++k) a->shape[k] = fuzz_u8(r) % 65;
      break;
    case CERT_ARG_ARRAY: read_array(r, call, a); break;
    case CERT_ARG_FLOAT: a->f = (double)(int8_t)fuzz_u8(r) / 4; break;
    case CERT_ARG_INT:
    case CERT_ARG_BOOL:
    case CERT_ARG_PTR: a->i = (int8_t)fuzz_u8(r); break;
    case CERT_ARG_STR:
    case CERT_ARG_RAWSTR:
    case CERT_ARG_BYTES: read_word(r, a->word); break;
    case CERT_ARG_DTYPE: a->dtype = read_dtype(r); break;
    case CERT_ARG_DEVICE: a->device = read_device(r); break;
    default: break;
  }
  if (a->kind == CERT_ARG_PTR) a->i &= 1;
}

/* A call shaped by the manifest, as certify's probes make it
 * (cert_manifest_call: its argument kinds, tuples and pointers, one of its
 * dtypes, its device, every named extent the same multiple of what it must
 * divide by), then made hostile: some arguments replaced, the count
 * changed. */
static void read_manifest_call(FuzzReader* r, const CertManifestFunction* m, CertCall* call) {
  DLDataType dtype = m->ndtypes ? m->dtypes[fuzz_u8(r) % m->ndtypes] : kDtypes[0];
  int64_t n = read_extent(r);
  *call = cert_manifest_call(m, dtype, n, fuzz_u8(r) < 192 ? CERT_ARG_DLTENSOR : CERT_ARG_TENSOR);
  for (int32_t k = 0; k < call->nargs; ++k) {
    if (cert_arg_is_tensor(&call->args[k])) bound_elements(&call->args[k]);
  }
  for (int32_t k = 0; k < call->nitems; ++k) {
    if (cert_arg_is_tensor(&call->items[k])) bound_elements(&call->items[k]);
  }
  for (int32_t k = 0; k < call->nargs; ++k) {
    if (fuzz_u8(r) >= 216) read_any(r, call, &call->args[k], k ? &call->args[k - 1] : NULL);
  }
  uint8_t arity = fuzz_u8(r);
  if (arity >= 240 && call->nargs > 0) call->nargs--;
  if (arity >= 248 && call->nargs < CERT_MAX_ARGS)
    read_any(r, call, &call->args[call->nargs++], NULL);
}

static void read_call(FuzzReader* r, const Function* f, CertCall* call) {
  memset(call, 0, sizeof *call);
  call->threads = 1;
  snprintf(call->function, sizeof call->function, "%s", f->name);
  uint8_t mode = fuzz_u8(r);
  if (f->manifest != NULL && mode < 192) {
    read_manifest_call(r, f->manifest, call);
    return;
  }
  uint8_t n = fuzz_u8(r);
  call->nargs = n < 192 ? n % 5 : n % (CERT_MAX_ARGS + 1);
  const CertArg* last_tensor = NULL;
  for (int32_t k = 0; k < call->nargs; ++k) {
    read_any(r, call, &call->args[k], last_tensor);
    if (cert_arg_is_tensor(&call->args[k])) last_tensor = &call->args[k];
  }
}

/* ---- the outcome, as coverage --------------------------------------------- */

static void count_outcome(int fn, int rc, const char* kind, const char* message) {
  uint32_t h = 2166136261u;
  h = (h ^ (uint32_t)fn) * 16777619u;
  h = (h ^ (uint32_t)(rc + 2)) * 16777619u;
  for (const char* p = kind; p && *p; ++p) h = (h ^ (uint8_t)*p) * 16777619u;
  /* The message with its numbers blanked: the same refusal of a different
   * extent is not a new outcome. */
  for (int k = 0; message && message[k] && k < 160; ++k) {
    char c = message[k];
    if ((c >= '0' && c <= '9') || c == '-') continue;
    h = (h ^ (uint8_t)c) * 16777619u;
  }
  uint8_t* c = &g_outcomes[h % EXTRA_COUNTERS];
  if (*c < 255) ++*c;
}

/* ---- faults on guard pages ------------------------------------------------ */

static struct sigaction g_previous[2];
static const int kFaultSignals[2] = {SIGSEGV, SIGBUS};

static void say(const char* s) {
  ssize_t w = write(2, s, strlen(s));
  (void)w;
}

/* Names the guard region a fault hit, then hands the signal on to whoever
 * handled it before (libFuzzer, the sanitizer): they report and save the
 * input. */
static void on_fault(int signo, siginfo_t* info, void* uctx) {
  int32_t region = CERT_REGION_UNKNOWN, arg = -1;
  cert_guard_find((uintptr_t)info->si_addr, &region, &arg);
  static const char* const what[] = {
      "",
      "fuzz kernel: CDY-003: the kernel read past the end of the argument array\n",
      "fuzz kernel: CDY-005: the kernel touched memory past the last element of a tensor\n",
      "fuzz kernel: CDY-005: the kernel dereferenced a non-CPU tensor's data on the host\n",
      "fuzz kernel: CDY-005: the kernel dereferenced an opaque pointer argument\n",
  };
  if (region > 0 && region < (int32_t)(sizeof what / sizeof what[0])) say(what[region]);
  const struct sigaction* prev = &g_previous[signo == SIGBUS];
  if (prev->sa_flags & SA_SIGINFO) {
    if (prev->sa_sigaction) prev->sa_sigaction(signo, info, uctx);
  } else if (prev->sa_handler != SIG_IGN && prev->sa_handler != SIG_DFL) {
    prev->sa_handler(signo);
  }
  signal(signo, SIG_DFL);
  raise(signo);
}

/* Installed on the first input, after libFuzzer and the sanitizers have
 * installed theirs. */
static void install_fault_handler(void) {
  static int done;
  if (done++) return;
  for (int k = 0; k < 2; ++k) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(kFaultSignals[k], &sa, &g_previous[k]);
  }
}

/* ---- setup ---------------------------------------------------------------- */

/* A positional argument ending in `suffix` (removed from argv, so libFuzzer
 * does not take it for a corpus), else the environment variable; either way
 * left in the environment, where -fork's children find it. */
static const char* take_arg(int* argc, char*** argv, const char* suffix, const char* env) {
  size_t sl = strlen(suffix);
  for (int k = 1; k < *argc; ++k) {
    const char* a = (*argv)[k];
    size_t n = strlen(a);
    if (a[0] == '-' || n <= sl || strcmp(a + n - sl, suffix) != 0) continue;
    setenv(env, a, 1);
    memmove(&(*argv)[k], &(*argv)[k + 1], sizeof(char*) * (size_t)(*argc - k));
    --*argc;
    break;
  }
  return getenv(env);
}

static void load_manifest(const char* path) {
  char err[512];
  if (cert_manifest_load(path, &g_manifest, err, sizeof err) != 0) {
    fprintf(stderr, "fuzz kernel: cannot use the manifest: %s\n", err);
    exit(1);
  }
}

static void find_functions(void* lib) {
  CertElf elf;
  char err[256];
  if (cert_elf_read(g_kernel, &elf, err, sizeof err) != 0) {
    fprintf(stderr, "fuzz kernel: cannot read %s: %s\n", g_kernel, err);
    exit(1);
  }
  const char* names[MAX_FUNCTIONS];
  size_t n = cert_elf_callable(&elf, names, MAX_FUNCTIONS);
  for (size_t k = 0; k < n; ++k) {
    Function* f = &g_fns[g_nfns];
    char sym[CERT_NAME_MAX + 16];
    snprintf(f->name, sizeof f->name, "%s", names[k]);
    snprintf(sym, sizeof sym, "__tvm_ffi_%s", names[k]);
    f->fn = (TVMFFISafeCallType)(uintptr_t)dlsym(lib, sym);
    f->manifest = cert_manifest_find(&g_manifest, f->name);
    if (f->fn != NULL) ++g_nfns;
  }
  cert_elf_free(&elf);
}

int LLVMFuzzerInitialize(int* argc, char*** argv) {
  static const char* const needed[] = {"TVMFFIErrorMoveFromRaised", "TVMFFIObjectDecRef", NULL};
  g_kernel = take_arg(argc, argv, ".so", "FUZZ_KERNEL");
  const char* manifest = take_arg(argc, argv, ".json", "FUZZ_KERNEL_MANIFEST");
  if (g_kernel == NULL || *g_kernel == '\0') {
    g_kernel = strdup(conf_library_path(FUZZ_KERNEL_DEFAULT));
    fprintf(stderr,
            "fuzz kernel: no library named (an argument ending in .so, or FUZZ_KERNEL): "
            "fuzzing %s\n",
            g_kernel);
  }
  fuzz_impl_init("kernel", needed);
  char missing[128];
  if (cert_api_resolve(conf_impl_handle(), missing, sizeof missing) != 0) {
    fprintf(stderr, "fuzz kernel: the runtime lacks %s\n", missing);
    exit(1);
  }
  if (manifest != NULL && *manifest) load_manifest(manifest);
  void* lib = dlopen(g_kernel, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "fuzz kernel: %s does not load: %s\n", g_kernel, dlerror());
    exit(1);
  }
  find_functions(lib);
  if (g_nfns == 0) {
    fprintf(stderr, "fuzz kernel: %s exports no callable __tvm_ffi_<name> function\n", g_kernel);
    exit(1);
  }
  fprintf(stderr, "fuzz kernel: %s: %d function%s:", g_kernel, g_nfns, g_nfns == 1 ? "" : "s");
  for (int k = 0; k < g_nfns; ++k) {
    fprintf(stderr, " %s%s", g_fns[k].name, g_fns[k].manifest ? " (manifest)" : "");
  }
  fputc('\n', stderr);
  void *base = NULL, *guard = NULL;
  size_t len = 0;
  cert_guarded_alloc(0, 0, &base, &len, &guard);
  g_guard_page = guard;
  return 0;
}

/* ---- one call ------------------------------------------------------------- */

static void check_outcome(const Function* f, const CertCall* call, const Built* b, int rc,
                          TVMFFIAny* result) {
  TVMFFIObjectHandle err = NULL;
  cert_api.error_move(&err);
  const TVMFFIErrorCell* cell = err ? TVMFFIErrorGetCellPtr(err) : NULL;
  char kind[64] = "", message[200] = "";
  if (cell != NULL) {
    snprintf(kind, sizeof kind, "%.*s", (int)(cell->kind.size < 63 ? cell->kind.size : 63),
             cell->kind.data ? cell->kind.data : "");
    snprintf(message, sizeof message, "%.*s",
             (int)(cell->message.size < 199 ? cell->message.size : 199),
             cell->message.data ? cell->message.data : "");
  }
  count_outcome((int)(f - g_fns), rc, kind, message);
  if (getenv("FUZZ_VERBOSE")) {
    char line[1024];
    cert_call_format(call, line, sizeof line);
    fprintf(stderr, "%s -> %d %s %s\n", line, rc, kind, message);
  }
  FUZZ_CLAUSE("CDY-008", rc == 0 || rc == -1, "%s returned %d", f->name, rc);
  if (rc == -1) {
    FUZZ_CLAUSE("CDY-008", err != NULL && kind[0] && message[0], "%s returned -1 with %s", f->name,
                err ? "an empty kind or message" : "nothing raised");
  } else if (rc == 0) {
    FUZZ_CLAUSE("CDY-009", err == NULL, "%s returned 0 but left %s raised: %s", f->name, kind,
                message);
    FUZZ_CLAUSE("CDY-010", cert_result_is_valid(result),
                "%s returned 0 with a result of type index %d", f->name, result->type_index);
    if (cert_result_is_valid(result) && result->type_index >= kTVMFFIStaticObjectBegin) {
      cert_api.dec_ref(result->v_obj);
    }
  }
  if (err != NULL) cert_api.dec_ref(err);
  for (int32_t k = 0; k < call->nargs; ++k) {
    const TVMFFIAny* o = &b->owned[k];
    if (o->type_index < kTVMFFIStaticObjectBegin || o->v_obj == NULL) continue;
    FUZZ_CLAUSE("CDY-011", (uint32_t)cert_strong_count(o->v_obj) == b->refs_before[k],
                "%s changed argument %d's strong count from %u to %u", f->name, (int)k,
                b->refs_before[k], (uint32_t)cert_strong_count(o->v_obj));
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  install_fault_handler();
  FuzzReader r = fuzz_reader(data, size);
  const Function* f = &g_fns[fuzz_u8(&r) % g_nfns];
  CertCall call;
  read_call(&r, f, &call);
  cert_guards_reset();
  cert_guard_add(g_guard_page, cert_page_size(), CERT_REGION_DATA_GUARD, -1);
  Built built;
  char note[256];
  if (cert_args_build(&call, &built, g_guard_page, note, sizeof note) == 0) {
    TVMFFIAny result;
    memset(&result, 0, sizeof result);
    int rc = f->fn(NULL, built.args, call.nargs, &result);
    check_outcome(f, &call, &built, rc, &result);
  }
  cert_args_release(&built, call.nargs);
  return 0;
}
