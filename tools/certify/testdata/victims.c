/* Kernels that go wrong in every way a probe must turn into a verdict
 * without going down itself (tools/certify/probe_test.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
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
  return return_str("{\"type_schema\": \"{\\\"type\\\": \\\"ffi.Function\\\"}\", \"arg_names\": [\"x\"]}", r);
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
      TVMFFIErrorSetRaisedFromCStr("TypeError", k ? "input: expected a tensor" : "output: expected a tensor");
      return -1;
    }
    if (t[k]->ndim != 1 || t[k]->dtype.code != kDLFloat || t[k]->dtype.bits != 32 ||
        t[k]->device.device_type != kDLCPU || (t[k]->shape[0] > 0 && t[k]->data == NULL) ||
        (t[k]->strides && t[k]->shape[0] > 1 && t[k]->strides[0] != 1)) {
      TVMFFIErrorSetRaisedFromCStr("ValueError", k ? "input: unsupported tensor" : "output: unsupported tensor");
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
