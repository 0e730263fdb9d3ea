/*
 * call_kernel RUNTIME.so KERNEL.so NAME: one cell of the build-against x
 * run-on table. Loads a runtime the way a host does (RTLD_GLOBAL), then a
 * kernel library built against some release's headers, and calls its scale
 * function the ways every release promises to support: a valid call, whose
 * output must be exact, and two refused calls, whose errors must come back
 * as raised errors with the documented kind.
 *
 * Each case runs in its own child process, so a kernel and a runtime that
 * disagree on a layout show up as the signal it dies of, not as the end of
 * the run. Prints one line per case ("ok valid", "CRASH refused-dtype
 * SIGBUS", ...) and exits 0 only when every case is ok.
 *
 * It plays the host, so it is compiled against the headers of the runtime
 * it runs on, as a real host is: it reads a raised error through that
 * release's TVMFFIErrorCell. Where that cell has cause_chain
 * (MK_CELL_HAS_CAUSE_CHAIN, 0.1.8 on), a plain raised error must have none:
 * an error object allocated by a kernel built against older headers is
 * shorter, and what a new host reads there belongs to something else.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

typedef int (*SafeCall)(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);

static struct {
  void (*move_from_raised)(TVMFFIObjectHandle*);
  int (*dec_ref)(TVMFFIObjectHandle);
  SafeCall scale;
} mk;

static TVMFFIAny mk_tensor(DLTensor* t) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = kTVMFFIDLTensorPtr;
  a.v_ptr = t;
  return a;
}

static TVMFFIAny mk_float(double v) {
  TVMFFIAny a;
  memset(&a, 0, sizeof a);
  a.type_index = kTVMFFIFloat;
  a.v_float64 = v;
  return a;
}

static DLTensor mk_vector(void* data, int64_t* shape, uint8_t code, uint8_t bits) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = code;
  t.dtype.bits = bits;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

/* The raised error's kind, copied out; "" when none was raised, and
 * "cause_chain=<garbage>" when the cell is not what this host's headers say. */
static void take_error_kind(char* kind, size_t cap) {
  TVMFFIObjectHandle err = NULL;
  kind[0] = '\0';
  mk.move_from_raised(&err);
  if (err == NULL) return;
  const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)((char*)err + sizeof(TVMFFIObject));
#if MK_CELL_HAS_CAUSE_CHAIN
  /* Not dereferenced: a host would DecRef it, and that is the crash. */
  if (cell->cause_chain != NULL) {
    snprintf(kind, cap, "cause_chain not NULL: the error cell is shorter than this host's");
    mk.dec_ref(err);
    return;
  }
#endif
  size_t n = cell->kind.size < cap - 1 ? cell->kind.size : cap - 1;
  memcpy(kind, cell->kind.data, n);
  kind[n] = '\0';
  mk.dec_ref(err);
}

static int case_valid(void) {
  float x[4] = {1.0f, -2.0f, 0.5f, 3.0f}, y[4] = {0};
  int64_t n = 4;
  DLTensor tx = mk_vector(x, &n, kDLFloat, 32), ty = mk_vector(y, &n, kDLFloat, 32);
  TVMFFIAny args[3] = {mk_tensor(&ty), mk_tensor(&tx), mk_float(2.5)}, result;
  memset(&result, 0, sizeof result);
  if (mk.scale(NULL, args, 3, &result) != 0) {
    char kind[128];
    take_error_kind(kind, sizeof kind);
    printf("FAIL valid: returned -1 (%s)\n", kind);
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    if (y[i] != x[i] * 2.5f) {
      printf("FAIL valid: y[%d] = %g, expected %g\n", i, y[i], x[i] * 2.5f);
      return 1;
    }
  }
  printf("ok valid\n");
  return 0;
}

/* A call every scale refuses: `expect` is the kind it must raise. */
static int case_refused(const char* label, const TVMFFIAny* args, int32_t num_args,
                        const char* expect) {
  TVMFFIAny result;
  memset(&result, 0, sizeof result);
  if (mk.scale(NULL, args, num_args, &result) != -1) {
    printf("FAIL %s: accepted\n", label);
    return 1;
  }
  char kind[128];
  take_error_kind(kind, sizeof kind);
  if (strcmp(kind, expect) != 0) {
    printf("FAIL %s: raised '%s', expected %s\n", label, kind, expect);
    return 1;
  }
  printf("ok %s\n", label);
  return 0;
}

static int case_wrong_dtype(void) {
  int32_t x[2] = {1, 2}, y[2] = {0, 0};
  int64_t n = 2;
  DLTensor tx = mk_vector(x, &n, kDLInt, 32), ty = mk_vector(y, &n, kDLInt, 32);
  TVMFFIAny args[3] = {mk_tensor(&ty), mk_tensor(&tx), mk_float(2.0)};
  return case_refused("refused-dtype", args, 3, "TypeError");
}

static int case_wrong_arity(void) {
  TVMFFIAny args[1] = {mk_float(2.0)};
  return case_refused("refused-arity", args, 1, "TypeError");
}

/* Runs one case in a child; its verdict line, or the signal it died of. */
static int run_case(const char* label, int (*fn)(void)) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    printf("ERROR %s: fork failed\n", label);
    return 1;
  }
  if (pid == 0) {
    alarm(20);
    int rc = fn();
    fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    printf("CRASH %s: %s\n", label, strsignal(WTERMSIG(status)));
    return 1;
  }
  return WEXITSTATUS(status) != 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: call_kernel RUNTIME.so KERNEL.so FUNCTION\n");
    return 2;
  }
  void* rt = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (rt == NULL) {
    printf("LOAD runtime: %s\n", dlerror());
    return 1;
  }
  mk.move_from_raised = (void (*)(TVMFFIObjectHandle*))dlsym(rt, "TVMFFIErrorMoveFromRaised");
  mk.dec_ref = (int (*)(TVMFFIObjectHandle))dlsym(rt, "TVMFFIObjectDecRef");
  if (mk.move_from_raised == NULL || mk.dec_ref == NULL) {
    printf("LOAD runtime: lacks TVMFFIErrorMoveFromRaised or TVMFFIObjectDecRef\n");
    return 1;
  }
  void* kernel = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (kernel == NULL) {
    printf("LOAD kernel: %s\n", dlerror());
    return 1;
  }
  char symbol[256];
  snprintf(symbol, sizeof symbol, "__tvm_ffi_%s", argv[3]);
  mk.scale = (SafeCall)dlsym(kernel, symbol);
  if (mk.scale == NULL) {
    printf("LOAD kernel: no symbol %s\n", symbol);
    return 1;
  }
  int failed = 0;
  failed += run_case("valid", case_valid);
  failed += run_case("refused-dtype", case_wrong_dtype);
  failed += run_case("refused-arity", case_wrong_arity);
  return failed != 0;
}
