/* Shaped like CuTe DSL kernels exported with TVM-FFI, on the CPU: one
 * that requires its extent to be a multiple of 16 and its data 16-byte
 * aligned (add_one_checked), one that takes a tuple and a stream
 * (scale_tuple), one that takes a raw data pointer and its length
 * (copy_ptr). Each refuses, in CuTe's words, the calls it is entitled to
 * refuse; tools/certify/testdata/dsl.manifest.json writes their
 * signatures down. */
#include "tools/certify/testdata/dsl_shape.h"

static int null_data(const DLTensor* t, int k, const char* sig) {
  if (t->shape[0] == 0 || t->data != NULL) return 0;
  return dsl_fail("ValueError", "Mismatched Tensor on argument #%d when calling: `%s`, %s", k, sig,
                  "data != NULL");
}

static const char kAddSig[] = "add_one_checked(x: Tensor([n], float32), y: Tensor([n], float32))";

DSL_EXPORT __tvm_ffi_add_one_checked(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (dsl_arity(n, 2, kAddSig) != 0) return -1;
  const DLTensor* t[2];
  for (int k = 0; k < 2; ++k) {
    if ((t[k] = dsl_tensor(args, k, kDLCPU, kAddSig, 1)) == NULL ||
        null_data(t[k], k, kAddSig) != 0)
      return -1;
    if ((uintptr_t)t[k]->data % 16 != 0) {
      return dsl_fail("ValueError", "Misaligned Tensor data on argument #%d when calling: `%s`, %s",
                      k, kAddSig, "expected data alignment=16 bytes");
    }
  }
  if (t[1]->shape[0] != t[0]->shape[0]) {
    return dsl_fail("ValueError", "Mismatched y.shape[0] on argument #%d when calling: `%s`, %s", 1,
                    kAddSig, "symbolic constraint violated");
  }
  if (t[0]->shape[0] % 16 != 0) {
    return dsl_fail("ValueError", "Invalid x.shape[0] on argument #%d when calling: `%s`, %s", 0,
                    kAddSig, "expected to be divisible by 16");
  }
  const float* x = t[0]->data;
  float* y = t[1]->data;
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) y[i] = x[i] + 1.0f;
  return 0;
}

static const char kScaleSig[] =
    "scale_tuple(out: Tensor([n], float32), inp: Tensor([n], float32), params: Tuple[float32, "
    "int32], stream: "
    "Stream)";

/* params: an ffi.Array of a float and an int. */
static int read_params(const TVMFFIAny* a, double* factor, int64_t* bias) {
  if (a->type_index != kTVMFFIArray) {
    return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", 2,
                    kScaleSig, "expected ffi.Array for tuple");
  }
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(a->v_obj);
  if (cell->size != 2) {
    return dsl_fail("ValueError", "Mismatched tuple size on argument #%d when calling: `%s`, %s", 2,
                    kScaleSig, "expected tuple size=2");
  }
  const TVMFFIAny* item = cell->data;
  if (item[0].type_index != kTVMFFIFloat || item[1].type_index != kTVMFFIInt) {
    return dsl_fail("TypeError",
                    "Mismatched type on params[0] in argument #%d when calling: `%s`, %s", 2,
                    kScaleSig, "expected float, int");
  }
  *factor = item[0].v_float64;
  *bias = item[1].v_int64;
  return 0;
}

DSL_EXPORT __tvm_ffi_scale_tuple(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (dsl_arity(n, 4, kScaleSig) != 0) return -1;
  const DLTensor* t[2];
  for (int k = 0; k < 2; ++k) {
    if ((t[k] = dsl_tensor(args, k, kDLCPU, kScaleSig, 1)) == NULL ||
        null_data(t[k], k, kScaleSig) != 0)
      return -1;
  }
  double factor = 0;
  int64_t bias = 0;
  if (read_params(&args[2], &factor, &bias) != 0) return -1;
  if (args[3].type_index != kTVMFFIOpaquePtr && args[3].type_index != kTVMFFINone) {
    return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", 3,
                    kScaleSig, "expected handle");
  }
  if (t[1]->shape[0] != t[0]->shape[0]) {
    return dsl_fail("ValueError", "Mismatched inp.shape[0] on argument #%d when calling: `%s`, %s",
                    1, kScaleSig, "symbolic constraint violated");
  }
  float* out = t[0]->data;
  const float* inp = t[1]->data;
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) {
    float p = inp[i] * (float)factor;
    out[i] = p + (float)bias;
  }
  return 0;
}

static const char kCopySig[] = "copy_ptr(dst: DataPointer, src: Tensor([n], float32), n: Int32)";

DSL_EXPORT __tvm_ffi_copy_ptr(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (dsl_arity(n, 3, kCopySig) != 0) return -1;
  int32_t t0 = args[0].type_index;
  if (t0 != kTVMFFIOpaquePtr && t0 != kTVMFFINone && t0 != kTVMFFIInt) {
    return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", 0,
                    kCopySig, "expected handle or int");
  }
  const DLTensor* src = dsl_tensor(args, 1, kDLCPU, kCopySig, 1);
  if (src == NULL || null_data(src, 1, kCopySig) != 0) return -1;
  if (args[2].type_index != kTVMFFIInt) {
    return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", 2,
                    kCopySig, "expected int");
  }
  if (args[2].v_int64 != src->shape[0]) {
    return dsl_fail("ValueError", "Mismatched n on argument #%d when calling: `%s`, %s", 2,
                    kCopySig, "symbolic constraint violated");
  }
  float* dst = t0 == kTVMFFINone ? NULL : (float*)(uintptr_t)args[0].v_int64;
  if (dst == NULL && src->shape[0] > 0) {
    return dsl_fail("ValueError", "Mismatched value on argument #%d when calling: `%s`, %s", 0,
                    kCopySig, "dst is NULL");
  }
  const float* s = src->data;
  for (int64_t i = 0; i < src->shape[0]; ++i) dst[i] = s[i];
  return 0;
}
