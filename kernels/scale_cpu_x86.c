/*
 * The x86-64 body of the CPU scale kernel: AVX2 arithmetic, F16C half
 * conversions, and non-temporal stores for large outputs.
 *
 * The file is built for baseline x86-64; only the functions marked AVX2 use
 * the wider instructions, and scale_cpu.c calls them only after
 * kern_scale_cpu_has_avx2() said yes, so the library loads and runs on any
 * x86-64 CPU. On other architectures the file is empty of code.
 *
 * Results are bit for bit the portable loops' (half_bits.h): the products
 * are the same IEEE single or double multiplications, vcvtps2ph with
 * round-to-nearest-even is exactly kern_f32_to_f16, and the bfloat16
 * rounding below is kern_f32_to_bf16 done eight lanes at a time.
 */
#include "scale_cpu.h"

#if defined(__x86_64__)

#include <cpuid.h>
#include <immintrin.h>
#include <string.h>

#include "half_bits.h"
#include "scale_check.h"

#define AVX2 __attribute__((target("avx2,f16c")))
#define AVX2_INLINE __attribute__((target("avx2,f16c"), always_inline)) static inline

/* AVX2 as the compiler's runtime reports it (which includes the operating
 * system saving the YMM registers), and F16C from CPUID leaf 1 (asked
 * directly: not every compiler's __builtin_cpu_supports knows "f16c"). */
int kern_scale_cpu_has_avx2(void) {
  __builtin_cpu_init(); /* harmless when the constructor already ran */
  unsigned a = 0, b = 0, c = 0, d = 0;
  int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  return __builtin_cpu_supports("avx2") && f16c;
}

/* The factor in the forms the vector and scalar code need. */
typedef struct {
  __m256 ps;
  __m256d pd;
  float f32;
  double f64;
} Factor;

/* 32 bytes of output from 32 bytes of input, one function per dtype. */
AVX2_INLINE __m256i vec_f32(__m256i x, const Factor* f) {
  return _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(x), f->ps));
}

AVX2_INLINE __m256i vec_f64(__m256i x, const Factor* f) {
  return _mm256_castpd_si256(_mm256_mul_pd(_mm256_castsi256_pd(x), f->pd));
}

AVX2_INLINE __m128i half8(__m128i h, const Factor* f) {
  __m256 p = _mm256_mul_ps(_mm256_cvtph_ps(h), f->ps);
  return _mm256_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

AVX2_INLINE __m256i vec_f16(__m256i x, const Factor* f) {
  __m128i lo = half8(_mm256_castsi256_si128(x), f);
  __m128i hi = half8(_mm256_extracti128_si256(x, 1), f);
  return _mm256_set_m128i(hi, lo);
}

/* Eight bfloat16 products, rounded to nearest-even on the bit patterns;
 * a NaN keeps its top bits and is made quiet. */
AVX2_INLINE __m128i bf16x8(__m128i b, const Factor* f) {
  __m256i wide = _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16);
  __m256i u = _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(wide), f->ps));
  __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i rounded = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd));
  __m256i mag = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  __m256i is_nan = _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(0x7f800000));
  __m256i quiet = _mm256_or_si256(u, _mm256_set1_epi32(0x00400000));
  __m256i top = _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, is_nan), 16);
  return _mm_packus_epi32(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
}

AVX2_INLINE __m256i vec_bf16(__m256i x, const Factor* f) {
  __m128i lo = bf16x8(_mm256_castsi256_si128(x), f);
  __m128i hi = bf16x8(_mm256_extracti128_si256(x, 1), f);
  return _mm256_set_m128i(hi, lo);
}

/* One element, for the head (until the output is line-aligned) and the
 * tail (after the last whole 32 bytes): the portable rounding. */
static inline void one(char* out, const char* in, int dtype_bit, const Factor* f) {
  switch (dtype_bit) {
    case KERN_SCALE_F32: {
      float x;
      memcpy(&x, in, 4);
      x *= f->f32;
      memcpy(out, &x, 4);
      return;
    }
    case KERN_SCALE_F64: {
      double x;
      memcpy(&x, in, 8);
      x *= f->f64;
      memcpy(out, &x, 8);
      return;
    }
    default: {
      uint16_t h;
      memcpy(&h, in, 2);
      h = dtype_bit == KERN_SCALE_F16 ? kern_f32_to_f16(kern_f16_to_f32(h) * f->f32)
                                      : kern_f32_to_bf16(kern_bf16_to_f32(h) * f->f32);
      memcpy(out, &h, 2);
      return;
    }
  }
}

typedef __m256i (*VecOp)(__m256i, const Factor*);

/* The loop, instantiated per dtype by inlining `op`: elements one by one
 * until the output is aligned (to a 64-byte line when streaming, to a
 * vector otherwise), then 64 bytes per step, then the tail. Streaming
 * writes whole lines (two 32-byte non-temporal stores fill a line in the
 * write-combining buffer); the sfence then orders those weakly-ordered
 * stores before whatever the caller does next (a release to another thread
 * that reads the output, for instance). */
AVX2_INLINE void drive(char* out, const char* in, int64_t n, int64_t es, int dtype_bit, VecOp op,
                       const Factor* f, int stream) {
  int64_t bytes = n * es, i = 0;
  uintptr_t align = stream ? 63 : 31;
  while (i < bytes && ((uintptr_t)(out + i) & align) != 0) {
    one(out + i, in + i, dtype_bit, f);
    i += es;
  }
  if (stream) {
    for (; i + 64 <= bytes; i += 64) {
      __m256i a = op(_mm256_loadu_si256((const __m256i*)(in + i)), f);
      __m256i b = op(_mm256_loadu_si256((const __m256i*)(in + i + 32)), f);
      _mm256_stream_si256((__m256i*)(out + i), a);
      _mm256_stream_si256((__m256i*)(out + i + 32), b);
    }
  } else {
    for (; i + 64 <= bytes; i += 64) {
      __m256i a = op(_mm256_loadu_si256((const __m256i*)(in + i)), f);
      __m256i b = op(_mm256_loadu_si256((const __m256i*)(in + i + 32)), f);
      _mm256_store_si256((__m256i*)(out + i), a);
      _mm256_store_si256((__m256i*)(out + i + 32), b);
    }
  }
  for (; i + 32 <= bytes; i += 32) {
    _mm256_storeu_si256((__m256i*)(out + i), op(_mm256_loadu_si256((const __m256i*)(in + i)), f));
  }
  for (; i < bytes; i += es) one(out + i, in + i, dtype_bit, f);
  if (stream) _mm_sfence();
}

AVX2 void kern_scale_cpu_avx2(void* out, const void* in, int dtype_bit, double factor, int64_t n,
                              int stream) {
  Factor f;
  f.f32 = (float)factor;
  f.f64 = factor;
  f.ps = _mm256_set1_ps(f.f32);
  f.pd = _mm256_set1_pd(factor);
  char* o = (char*)out;
  const char* x = (const char*)in;
  switch (dtype_bit) {
    case KERN_SCALE_F32: drive(o, x, n, 4, dtype_bit, vec_f32, &f, stream); break;
    case KERN_SCALE_F64: drive(o, x, n, 8, dtype_bit, vec_f64, &f, stream); break;
    case KERN_SCALE_F16: drive(o, x, n, 2, dtype_bit, vec_f16, &f, stream); break;
    default: drive(o, x, n, 2, dtype_bit, vec_bf16, &f, stream); break;
  }
}

#else

int kern_scale_cpu_has_avx2(void) { return 0; }

#endif
