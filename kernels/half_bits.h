/*
 * float16 and bfloat16 conversions on bit patterns, for the CPU kernel.
 *
 * The CUDA kernel converts with the device's round-to-nearest-even
 * instructions; these functions give the same results on the host so the two
 * kernels agree bit for bit on every finite and infinite value (a NaN stays a
 * NaN; its payload is not promised).
 */
#ifndef KERNELS_HALF_BITS_H_
#define KERNELS_HALF_BITS_H_

#include <stdint.h>
#include <string.h>

static inline uint32_t kern_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float kern_f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* float16 -> float32 is exact: every half value is a float value. */
static inline float kern_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    /* zero or subnormal: mant units of 2^-24, exactly representable */
    float mag = (float)mant * 0x1p-24f;
    return kern_f32_from_bits(kern_f32_bits(mag) | sign);
  }
  if (exp == 31) return kern_f32_from_bits(sign | 0x7f800000u | (mant << 13));
  return kern_f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

/* float32 -> float16, rounding to nearest, ties to even. */
static inline uint16_t kern_f32_to_f16(float f) {
  uint32_t x = kern_f32_bits(f);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((x >> 13) & 0x3ffu)); /* NaN */
  if (x >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504: inf */
  if (x < 0x38800000u) {
    /* Below the smallest normal half: count units of 2^-24. Scaling by a
     * power of two is exact, and adding then removing 2^23 rounds the
     * (at most 2^10) integer part to nearest-even in float arithmetic (IEEE
     * semantics forbid folding the pair away). A result of 1024 is exactly
     * the encoding of the smallest normal. */
    float units = kern_f32_from_bits(x) * 0x1p24f;
    float rounded = (units + 0x1p23f) - 0x1p23f;
    return (uint16_t)(sign | (uint16_t)rounded);
  }
  /* Normal: drop 13 mantissa bits with ties-to-even; a carry moves into the
   * exponent, which is the correct rounding. Rebias 127 -> 15. */
  uint32_t r = x + 0x0fffu + ((x >> 13) & 1u);
  return (uint16_t)(sign | ((r >> 13) - (112u << 10)));
}

static inline float kern_bf16_to_f32(uint16_t b) { return kern_f32_from_bits((uint32_t)b << 16); }

/* float32 -> bfloat16, rounding to nearest, ties to even (same exponent
 * range, so subnormals and overflow to inf fall out of the integer add). */
static inline uint16_t kern_f32_to_bf16(float f) {
  uint32_t x = kern_f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  uint32_t r = x + 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(r >> 16);
}

#endif
