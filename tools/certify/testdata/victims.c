/* Kernels that go wrong in every way a probe must turn into a verdict
 * without going down itself (tools/certify/probe_test.c). It calls one
 * function nothing defines, so it loads only with lazy binding, as hosts
 * load kernel libraries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <tvm/ffi/c_api.h>

#define VICTIM __attribute__((visibility("default"))) int

VICTIM __tvm_ffi_good(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return 0;
}

VICTIM __tvm_ffi_segv(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  *(volatile int*)(uintptr_t)16 = 1;
  return 0;
}

VICTIM __tvm_ffi_aborts(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  abort();
}

VICTIM __tvm_ffi_exits(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  exit(3);
}

VICTIM __tvm_ffi_hangs(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  for (;;) sleep(1);
}

/* Touches memory until malloc fails, then dies of it like careless code
 * does; never more than 8 GiB whatever the limits. */
VICTIM __tvm_ffi_bomb(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  for (int k = 0; k < 128; ++k) {
    char* p = malloc((size_t)64 << 20);
    if (p == NULL) abort();
    memset(p, 1, (size_t)64 << 20);
  }
  return 0;
}

VICTIM __tvm_ffi_reads_past(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  volatile int32_t k = args[n].type_index;
  (void)k;
  return 0;
}

VICTIM __tvm_ffi_no_raise(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  return -1;
}

VICTIM __tvm_ffi_twice(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  TVMFFIErrorSetRaisedFromCStr("ValueError", "left behind");
  return 0;
}

/* Reads strides[0] without looking: NULL strides (legacy DLPack) crash it. */
VICTIM __tvm_ffi_strides_deref(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (n >= 1 && args[0].type_index == kTVMFFIDLTensorPtr && args[0].v_ptr) {
    const DLTensor* t = args[0].v_ptr;
    if (t->ndim > 0) {
      volatile int64_t s = t->strides[0];
      (void)s;
    }
  }
  return 0;
}

/* Reads element 0 of a non-empty CPU float32 tensor without checking data. */
VICTIM __tvm_ffi_null_data_deref(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (n >= 1 && args[0].type_index == kTVMFFIDLTensorPtr && args[0].v_ptr) {
    const DLTensor* t = args[0].v_ptr;
    if (t->ndim == 1 && t->shape[0] > 0 && t->device.device_type == kDLCPU && t->dtype.bits == 32) {
      volatile float x = *(const float*)((const char*)t->data + t->byte_offset);
      (void)x;
    }
  }
  return 0;
}

/* Puts a view (a raw C string) in the result slot: not an owned value. */
VICTIM __tvm_ffi_bad_result(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n;
  r->type_index = kTVMFFIRawStr;
  r->v_c_str = "not owned";
  return 0;
}

/* Every second call fails: two threads at once disagree. */
VICTIM __tvm_ffi_racy(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  static int calls;
  if (__atomic_fetch_add(&calls, 1, __ATOMIC_SEQ_CST) % 2 == 0) return 0;
  TVMFFIErrorSetRaisedFromCStr("RuntimeError", "racy: busy");
  return -1;
}

/* Metadata and doc getters. */
static int return_str(const char* s, TVMFFIAny* r) {
  TVMFFIByteArray b = {s, strlen(s)};
  return TVMFFIStringFromByteArray(&b, r);
}

VICTIM __tvm_ffi__metadata_good(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n;
  return return_str(
      "{\"type_schema\": \"{\\\"type\\\": \\\"ffi.Function\\\"}\", \"arg_names\": [\"x\"]}", r);
}

VICTIM __tvm_ffi__doc_good(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n;
  return return_str("good: accepts anything and returns None.", r);
}

VICTIM __tvm_ffi__metadata_notjson(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n;
  return return_str("not json", r);
}

/* A float32 CPU scale that adds one: wrong results, everything else right. */
VICTIM __tvm_ffi_scale_plus_one(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (n != 3) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "scale_plus_one: expected 3 arguments");
    return -1;
  }
  DLTensor* t[2];
  for (int k = 0; k < 2; ++k) {
    if (args[k].type_index == kTVMFFIDLTensorPtr && args[k].v_ptr) {
      t[k] = args[k].v_ptr;
    } else if (args[k].type_index == kTVMFFITensor) {
      t[k] = TVMFFITensorGetDLTensorPtr(args[k].v_obj);
    } else {
      TVMFFIErrorSetRaisedFromCStr("TypeError",
                                   k ? "input: expected a tensor" : "output: expected a tensor");
      return -1;
    }
    if (t[k]->ndim != 1 || t[k]->dtype.code != kDLFloat || t[k]->dtype.bits != 32 ||
        t[k]->device.device_type != kDLCPU || (t[k]->shape[0] > 0 && t[k]->data == NULL) ||
        (t[k]->strides && t[k]->shape[0] > 1 && t[k]->strides[0] != 1)) {
      TVMFFIErrorSetRaisedFromCStr("ValueError",
                                   k ? "input: unsupported tensor" : "output: unsupported tensor");
      return -1;
    }
  }
  if (t[0]->shape[0] != t[1]->shape[0]) {
    TVMFFIErrorSetRaisedFromCStr("ValueError", "output and input: element counts differ");
    return -1;
  }
  if (args[2].type_index != kTVMFFIFloat) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "factor: expected a float");
    return -1;
  }
  float* out = (float*)((char*)t[0]->data + t[0]->byte_offset);
  const float* in = (const float*)((const char*)t[1]->data + t[1]->byte_offset);
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) out[i] = in[i] * (float)args[2].v_float64 + 1.0f;
  return 0;
}

/* Refuses every call, valid or not (with a proper error). */
VICTIM __tvm_ffi_refuses(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  TVMFFIErrorSetRaisedFromCStr("TypeError", "refuses: never");
  return -1;
}

/* Allocates until malloc refuses, then frees it all and raises MemoryError:
 * a clean refusal, whatever the cap; judged the same every time. */
VICTIM __tvm_ffi_grows(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  void* chunks[4096];
  int k = 0;
  for (; k < 4096; ++k) {
    chunks[k] = malloc((size_t)16 << 20);
    if (chunks[k] == NULL) break;
    memset(chunks[k], 1, (size_t)16 << 20);
  }
  for (int j = 0; j < k; ++j) free(chunks[j]);
  TVMFFIErrorSetRaisedFromCStr("MemoryError", "grows: out of memory");
  return -1;
}

/* A name the test can look for among the machine's processes. */
static void name_process(const char* name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/* Forks a child that outlives the call (and is never waited for). */
VICTIM __tvm_ffi_forks(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  if (fork() == 0) {
    name_process("cert-stray");
    sleep(60);
    _exit(0);
  }
  return 0;
}

/* Starts a daemon: fork, setsid (leaving the process group), fork again,
 * and the middle process exits at once and is waited for. */
VICTIM __tvm_ffi_daemonizes(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  pid_t mid = fork();
  if (mid == 0) {
    setsid();
    if (fork() == 0) {
      name_process("cert-daemon");
      sleep(60);
    }
    _exit(0);
  }
  if (mid > 0) waitpid(mid, NULL, 0);
  return 0;
}

/* Closes every descriptor it did not open, then returns as if all were well. */
VICTIM __tvm_ffi_closes_fds(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args, (void)n, (void)r;
  for (int fd = 0; fd < 1024; ++fd) close(fd);
  return 0;
}

/* Reads a DLTensor* argument without checking it for NULL. */
VICTIM __tvm_ffi_dl_deref(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  for (int32_t k = 0; k < n; ++k) {
    if (args[k].type_index != kTVMFFIDLTensorPtr) continue;
    volatile int32_t nd = ((const DLTensor*)args[k].v_ptr)->ndim;
    (void)nd;
  }
  return 0;
}

/* Calls a function nothing defines: the library loads (lazily), and the
 * call ends the process with the loader's "symbol lookup error". */
int cert_defined_nowhere(int x);
VICTIM __tvm_ffi_calls_missing(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)args;
  r->type_index = kTVMFFIInt;
  r->v_int64 = cert_defined_nowhere(n);
  return 0;
}
