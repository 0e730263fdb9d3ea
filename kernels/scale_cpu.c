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
 *
 * Speed: the kernel is bound by memory traffic. On x86-64 CPUs with AVX2
 * (chosen at run time, scale_cpu_x86.c) large outputs are written with
 * non-temporal stores, which save the read of every output line that an
 * ordinary store costs; everything else runs the portable loops below.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "half_bits.h"
#include "scale_check.h"
#include "scale_cpu.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
__attribute__((visibility("default"))) int __tvm_ffi_scale(void* handle, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result);

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

/* For data that is not aligned to its element size (byte_offset may put
 * element 0 anywhere): the same arithmetic, through memcpy so no misaligned
 * typed access is made. Rare, so kept simple. */
static void scale_unaligned(char* out, const char* in, int dtype_bit, double factor, int64_t n) {
  size_t es = dtype_bit == KERN_SCALE_F64 ? 8 : dtype_bit == KERN_SCALE_F32 ? 4 : 2;
  for (int64_t i = 0; i < n; ++i) {
    unsigned char x[8], y[8];
    memcpy(x, in + (size_t)i * es, es);
    switch (dtype_bit) {
      case KERN_SCALE_F32: scale_f32((float*)y, (const float*)x, (float)factor, 1); break;
      case KERN_SCALE_F64: scale_f64((double*)y, (const double*)x, factor, 1); break;
      case KERN_SCALE_F16: scale_f16((uint16_t*)y, (const uint16_t*)x, (float)factor, 1); break;
      default: scale_bf16((uint16_t*)y, (const uint16_t*)x, (float)factor, 1); break;
    }
    memcpy(out + (size_t)i * es, y, es);
  }
}

static void scale_portable(void* out, const void* in, int dtype_bit, double factor, int64_t n) {
  switch (dtype_bit) {
    case KERN_SCALE_F32: scale_f32((float*)out, (const float*)in, (float)factor, n); break;
    case KERN_SCALE_F64: scale_f64((double*)out, (const double*)in, factor, n); break;
    case KERN_SCALE_F16: scale_f16((uint16_t*)out, (const uint16_t*)in, (float)factor, n); break;
    default: scale_bf16((uint16_t*)out, (const uint16_t*)in, (float)factor, n); break;
  }
}

/* How calls in this process run, decided at the first call: the
 * instruction set (what the CPU has, lowered by KERN_SCALE_CPU_ISA=portable)
 * and the streaming threshold. Racing first calls compute the same values;
 * `ready` is published last with release order. */
typedef struct {
  int isa;
  int64_t stream_bytes;
  int ready;
} Config;

static Config config;

static int64_t stream_bytes_from_env(void) {
  const char* v = getenv(KERN_SCALE_STREAM_ENV);
  if (v == NULL) return KERN_SCALE_STREAM_BYTES;
  char* end = NULL;
  long long n = strtoll(v, &end, 10);
  return end != v && *end == '\0' && n > 0 ? (int64_t)n : KERN_SCALE_STREAM_BYTES;
}

static const Config* scale_config(void) {
  if (__atomic_load_n(&config.ready, __ATOMIC_ACQUIRE)) return &config;
  const char* want = getenv(KERN_SCALE_ISA_ENV);
  int portable_only = want != NULL && strcmp(want, "portable") == 0;
  int isa = !portable_only && kern_scale_cpu_has_avx2() ? KERN_ISA_AVX2 : KERN_ISA_PORTABLE;
  __atomic_store_n(&config.isa, isa, __ATOMIC_RELAXED);
  __atomic_store_n(&config.stream_bytes, stream_bytes_from_env(), __ATOMIC_RELAXED);
  __atomic_store_n(&config.ready, 1, __ATOMIC_RELEASE);
  return &config;
}

static void scale_any(void* out, const void* in, int dtype_bit, double factor, int64_t n) {
  size_t es = dtype_bit == KERN_SCALE_F64 ? 8 : dtype_bit == KERN_SCALE_F32 ? 4 : 2;
  if ((((uintptr_t)out | (uintptr_t)in) & (es - 1)) != 0) {
    scale_unaligned((char*)out, (const char*)in, dtype_bit, factor, n);
    return;
  }
  const Config* c = scale_config();
#if defined(__x86_64__)
  if (c->isa == KERN_ISA_AVX2) {
    kern_scale_cpu_avx2(out, in, dtype_bit, factor, n, n * (int64_t)es >= c->stream_bytes);
    return;
  }
#else
  (void)c;
#endif
  scale_portable(out, in, dtype_bit, factor, n);
}

__attribute__((visibility("default"))) int __tvm_ffi_scale(void* handle, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result) {
  (void)handle; /* NULL from a library module; the Function object via FunctionCreate */
  (void)result; /* returns None: the caller's result slot stays as it was given */
  KernScaleArgs a = {NULL, NULL, 0.0, 0}; /* zeroed only to quiet -Wmaybe-uninitialized */
  if (kern_scale_unpack(args, num_args, kDLCPU, "CPU", KERN_SCALE_CPU_DTYPES, &a) != 0) return -1;
  if (a.n == 0) return 0;
  scale_any(kern_scale_data(a.output), kern_scale_data(a.input),
            kern_scale_dtype_bit(a.input->dtype), a.factor, a.n);
  return 0;
}
