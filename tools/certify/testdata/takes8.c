/* A DSL kernel of eight parameters (four tensors, three ints, a float):
 * every call certify can guess is refused by its argument count, so
 * without a manifest nothing reaches it; with one it is probed fully. */
#include "tools/certify/testdata/dsl_shape.h"

static const char kSig[] =
    "gemm8(a: Tensor([n], float32), b: Tensor([n], float32), c: Tensor([n], float32), d: "
    "Tensor([n], "
    "float32), m: Int32, k: Int32, l: Int32, alpha: Float32)";

DSL_EXPORT __tvm_ffi_gemm8(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* r) {
  (void)h, (void)r;
  if (dsl_arity(n, 8, kSig) != 0) return -1;
  const DLTensor* t[4];
  for (int k = 0; k < 4; ++k) {
    if ((t[k] = dsl_tensor(args, k, kDLCPU, kSig, 1)) == NULL) return -1;
    if (t[k]->shape[0] != t[0]->shape[0]) {
      return dsl_fail("ValueError", "Mismatched shape on argument #%d when calling: `%s`, %s", k,
                      kSig, "symbolic constraint violated");
    }
    if (t[k]->shape[0] > 0 && t[k]->data == NULL) {
      return dsl_fail("ValueError", "Mismatched Tensor on argument #%d when calling: `%s`, %s", k,
                      kSig, "data != NULL");
    }
  }
  for (int k = 4; k < 7; ++k) {
    if (args[k].type_index != kTVMFFIInt) {
      return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", k,
                      kSig, "expected int");
    }
  }
  if (args[7].type_index != kTVMFFIFloat && args[7].type_index != kTVMFFIInt) {
    return dsl_fail("TypeError", "Mismatched type on argument #%d when calling: `%s`, %s", 7, kSig,
                    "expected float");
  }
  double alpha = args[7].type_index == kTVMFFIFloat ? args[7].v_float64 : (double)args[7].v_int64;
  float* d = t[3]->data;
  const float* a = t[0]->data;
  const float* b = t[1]->data;
  const float* c = t[2]->data;
  /* In float32, left to right: what the manifest's reference computes. */
  for (int64_t i = 0; i < t[0]->shape[0]; ++i) {
    float p = (float)alpha * a[i];
    p = p * b[i];
    d[i] = p + c[i];
  }
  return 0;
}
