/*
 * scale(output, input, factor) for CPU tensors: output[i] = input[i] * factor.
 *
 * Exported as __tvm_ffi_scale in the plain C ABI, so any TVM-FFI runtime that
 * loads this library (the reference, upstream, the Python package) can call
 * it. The TVMFFI* functions it uses are left undefined here and bound to the
 * runtime already loaded in the process.
 *
 * Rounding matches the CUDA kernel: float64 multiplies in double; float32
 * multiplies by the factor rounded to float; float16 and bfloat16 widen to
 * float, multiply by that float factor, and round back to nearest-even.
 */
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "half_bits.h"
#include "scale_check.h"

#define KERN_SCALE_CPU_DTYPES (KERN_SCALE_F16 | KERN_SCALE_BF16 | KERN_SCALE_F32 | KERN_SCALE_F64)

/* The plain loops below are what the compiler vectorises (built with -O3).
 * No restrict: output may be the same buffer as input (in place), and the
 * compiler's runtime overlap check still picks the vector loop then. */
static void scale_f32(float* out, const float* in, float f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * f;
}

static void scale_f64(double* out, const double* in, double f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * f;
}

static void scale_f16(uint16_t* out, const uint16_t* in, float f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = kern_f32_to_f16(kern_f16_to_f32(in[i]) * f);
}

static void scale_bf16(uint16_t* out, const uint16_t* in, float f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = kern_f32_to_bf16(kern_bf16_to_f32(in[i]) * f);
}

__attribute__((visibility("default"))) int __tvm_ffi_scale(void* handle, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result) {
  (void)handle; /* NULL from a library module; the Function object via FunctionCreate */
  (void)result; /* returns None: the caller's result slot stays as it was given */
  KernScaleArgs a = {NULL, NULL, 0.0, 0}; /* zeroed only to quiet -Wmaybe-uninitialized */
  if (kern_scale_unpack(args, num_args, kDLCPU, "CPU", KERN_SCALE_CPU_DTYPES, &a) != 0) return -1;
  void* out = kern_scale_data(a.output);
  const void* in = kern_scale_data(a.input);
  switch (kern_scale_dtype_bit(a.input->dtype)) {
    case KERN_SCALE_F32: scale_f32((float*)out, (const float*)in, (float)a.factor, a.n); break;
    case KERN_SCALE_F64: scale_f64((double*)out, (const double*)in, a.factor, a.n); break;
    case KERN_SCALE_F16:
      scale_f16((uint16_t*)out, (const uint16_t*)in, (float)a.factor, a.n);
      break;
    default: scale_bf16((uint16_t*)out, (const uint16_t*)in, (float)a.factor, a.n); break;
  }
  return 0;
}
