/*
 * The timed loops of scale_bench (CPU), loaded by scale_bench.py through
 * ctypes so that NumPy, measured in the same process on the same buffers,
 * is compared with like.
 *
 * It loads a TVM-FFI runtime RTLD_GLOBAL and the CPU kernel library the way
 * a host does, and times `inner` back-to-back repetitions of one of:
 *   - the kernel, called directly as __tvm_ffi_scale on DLTensor views (the
 *     library-module path: NULL handle), float32, factor 1.5;
 *   - the streaming limit: the kernel's exact work in a loop that writes
 *     whole 64-byte lines with non-temporal stores (AVX2 when the CPU has
 *     it, SSE2 otherwise), which is what memory can do for this job;
 *   - the cached loop: out[i] = in[i] * f compiled with ordinary stores;
 *   - memcpy of the same bytes.
 * Timing, repetition and statistics are the driver's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>

#include "kernels/scale_cpu.h"

#define SB_EXPORT __attribute__((visibility("default")))

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
SB_EXPORT int sb_load(const char* runtime, const char* kernel, char* err, size_t err_size);
SB_EXPORT int64_t sb_stream_threshold(void);
SB_EXPORT const char* sb_cpu_features(void);
SB_EXPORT double sb_time(int what, float* out, const float* in, int64_t n, int inner);

enum { SB_KERNEL, SB_STREAM, SB_CACHED, SB_MEMCPY };

static TVMFFISafeCallType sb_kernel;

SB_EXPORT int sb_load(const char* runtime, const char* kernel, char* err, size_t err_size) {
  if (dlopen(runtime, RTLD_NOW | RTLD_GLOBAL) == NULL) {
    snprintf(err, err_size, "cannot load runtime %s: %s", runtime, dlerror());
    return -1;
  }
  void* lib = dlopen(kernel, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    snprintf(err, err_size, "cannot load kernel %s: %s", kernel, dlerror());
    return -1;
  }
  sb_kernel = (TVMFFISafeCallType)dlsym(lib, "__tvm_ffi_scale");
  if (sb_kernel == NULL) {
    snprintf(err, err_size, "%s does not export __tvm_ffi_scale", kernel);
    return -1;
  }
  return 0;
}

/* Output bytes from which the kernel streams (unless the environment says
 * otherwise, KERN_SCALE_CPU_STREAM_BYTES). */
SB_EXPORT int64_t sb_stream_threshold(void) { return KERN_SCALE_STREAM_BYTES; }

/* What the streaming limit and the kernel can use on this CPU. */
SB_EXPORT const char* sb_cpu_features(void) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "sse2 only";
}

/* Kept out of line so the compiler cannot merge the loops with each other. */
__attribute__((noinline)) static void cached_loop(float* out, const float* in, float f, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * f;
}

__attribute__((noinline, target("avx2"))) static void stream_avx2(float* out, const float* in,
                                                                  float f, int64_t n) {
  int64_t i = 0;
  while (i < n && ((uintptr_t)(out + i) & 63) != 0) out[i] = in[i] * f, ++i;
  __m256 vf = _mm256_set1_ps(f);
  for (; i + 16 <= n; i += 16) {
    _mm256_stream_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(in + i), vf));
    _mm256_stream_ps(out + i + 8, _mm256_mul_ps(_mm256_loadu_ps(in + i + 8), vf));
  }
  for (; i < n; ++i) out[i] = in[i] * f;
  _mm_sfence();
}

__attribute__((noinline)) static void stream_sse2(float* out, const float* in, float f, int64_t n) {
  int64_t i = 0;
  while (i < n && ((uintptr_t)(out + i) & 63) != 0) out[i] = in[i] * f, ++i;
  __m128 vf = _mm_set1_ps(f);
  for (; i + 16 <= n; i += 16) {
    for (int j = 0; j < 16; j += 4) {
      _mm_stream_ps(out + i + j, _mm_mul_ps(_mm_loadu_ps(in + i + j), vf));
    }
  }
  for (; i < n; ++i) out[i] = in[i] * f;
  _mm_sfence();
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds for `inner` repetitions of `what` on n float32 elements; -1 when
 * the kernel refused the call. Both buffers must be float-aligned. */
SB_EXPORT double sb_time(int what, float* out, const float* in, int64_t n, int inner) {
  int64_t extent = n;
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = &extent;
  DLTensor tin = t, tout = t;
  tin.data = (void*)in;
  tout.data = out;
  TVMFFIAny args[3], result;
  memset(args, 0, sizeof args);
  args[0].type_index = kTVMFFIDLTensorPtr;
  args[0].v_ptr = &tout;
  args[1].type_index = kTVMFFIDLTensorPtr;
  args[1].v_ptr = &tin;
  args[2].type_index = kTVMFFIFloat;
  args[2].v_float64 = 1.5;
  int avx2 = strcmp(sb_cpu_features(), "avx2") == 0;
  double t0 = now_s();
  for (int r = 0; r < inner; ++r) {
    switch (what) {
      case SB_KERNEL:
        memset(&result, 0, sizeof result);
        if (sb_kernel(NULL, args, 3, &result) != 0) return -1;
        break;
      case SB_STREAM:
        if (avx2)
          stream_avx2(out, in, 1.5f, n);
        else
          stream_sse2(out, in, 1.5f, n);
        break;
      case SB_CACHED: cached_loop(out, in, 1.5f, n); break;
      default: memcpy(out, in, (size_t)n * sizeof(float)); break;
    }
  }
  return now_s() - t0;
}
