/* Argument checks in the order and words of CuTe DSL's TVM-FFI export
 * (tvm_ffi_builder): the fixtures that look like DSL kernels share them. */
#ifndef CERT_TESTDATA_DSL_SHAPE_H_
#define CERT_TESTDATA_DSL_SHAPE_H_

#include <stdint.h>
#include <stdio.h>
#include <tvm/ffi/c_api.h>

#define DSL_EXPORT __attribute__((visibility("default"))) int

static inline int dsl_fail(const char* kind, const char* fmt, int arg, const char* sig,
                           const char* expect) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg, sig, expect);
  TVMFFIErrorSetRaisedFromCStr(kind, msg);
  return -1;
}

static inline int dsl_arity(int32_t got, int32_t want, const char* sig) {
  if (got == want) return 0;
  char msg[512];
  snprintf(msg, sizeof msg, "Expected %d but got %d arguments when calling: `%s`", (int)want,
           (int)got, sig);
  TVMFFIErrorSetRaisedFromCStr("TypeError", msg);
  return -1;
}

/* A 1-D float32 tensor on `device` (byte_offset 0, compact). CuTe reads
 * the strides it is given without asking whether there are any; with
 * `null_strides_ok` NULL strides mean compact, as older DLPack said. */
static inline const DLTensor* dsl_tensor(const TVMFFIAny* args, int k, int device, const char* sig,
                                         int null_strides_ok) {
  const DLTensor* t = NULL;
  if (args[k].type_index == kTVMFFIDLTensorPtr) t = args[k].v_ptr;
  if (args[k].type_index == kTVMFFITensor) t = TVMFFITensorGetDLTensorPtr(args[k].v_obj);
  const char* what = "Mismatched Tensor on argument #%d when calling: `%s`, expected %s";
  if (t == NULL) {
    dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, expected %s", k, sig,
             "Tensor");
  } else if (t->ndim != 1) {
    dsl_fail("ValueError", what, k, sig, "ndim=1");
  } else if ((int)t->device.device_type != device) {
    dsl_fail("ValueError", what, k, sig, device == kDLCPU ? "device_type=cpu" : "device_type=cuda");
  } else if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    dsl_fail("ValueError", what, k, sig, "dtype=float32");
  } else if (t->byte_offset != 0) {
    dsl_fail("ValueError", what, k, sig, "byte_offset=0");
  } else if (t->shape[0] > 1 && !(null_strides_ok && t->strides == NULL) && t->strides[0] != 1) {
    dsl_fail("ValueError", what, k, sig, "contiguous");
  } else {
    return t;
  }
  return NULL;
}

#endif
