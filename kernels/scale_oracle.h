/*
 * The expected results of scale, computed the obvious way and independently
 * of the kernels' own conversion code: float16 through the compiler's
 * _Float16, bfloat16 by choosing the nearer of the two bfloat16 neighbours
 * of the float32 product (ties to the even one).
 */
#ifndef KERNELS_SCALE_ORACLE_H_
#define KERNELS_SCALE_ORACLE_H_

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernel_harness.h"

typedef enum { ORACLE_F16, ORACLE_BF16, ORACLE_F32, ORACLE_F64, ORACLE_NUM } OracleDtype;

static const char* const oracle_names[ORACLE_NUM] = {"float16", "bfloat16", "float32", "float64"};
static const size_t oracle_sizes[ORACLE_NUM] = {2, 2, 4, 8};

static inline DLDataType oracle_dl(OracleDtype d) {
  switch (d) {
    case ORACLE_F16: return kern_dtype(kDLFloat, 16);
    case ORACLE_BF16: return kern_dtype(kDLBfloat, 16);
    case ORACLE_F32: return kern_dtype(kDLFloat, 32);
    default: return kern_dtype(kDLFloat, 64);
  }
}

static inline float oracle_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static inline float oracle_bf16_value(uint16_t b) { return oracle_bits_f32((uint32_t)b << 16); }

static inline uint16_t oracle_bf16_round(float p) {
  uint32_t u;
  memcpy(&u, &p, sizeof u);
  if (isnan(p)) return 0x7fc0;
  if (isinf(p)) return (uint16_t)(u >> 16);
  uint16_t toward_zero = (uint16_t)(u >> 16);
  uint16_t away = (uint16_t)(toward_zero + 1); /* next magnitude, may be inf */
  double d_lo = fabs((double)p - (double)oracle_bf16_value(toward_zero));
  /* Past the largest finite value the next neighbour is inf; rounding
   * treats it as the value 2^128 it would have with a wider exponent. */
  double hi =
      (away & 0x7fff) == 0x7f80 ? copysign(0x1p128, (double)p) : (double)oracle_bf16_value(away);
  double d_hi = fabs(hi - (double)p);
  if (d_lo < d_hi) return toward_zero;
  if (d_hi < d_lo) return away;
  return (toward_zero & 1) ? away : toward_zero;
}

static inline uint16_t oracle_f16_round(float p) {
  _Float16 h = (_Float16)p; /* the compiler's correctly rounded conversion */
  uint16_t b;
  memcpy(&b, &h, sizeof b);
  return b;
}

static inline float oracle_f16_value(uint16_t b) {
  _Float16 h;
  memcpy(&h, &b, sizeof h);
  return (float)h;
}

/* Deterministic inputs. 16-bit types get arbitrary bit patterns (so
 * subnormals, overflow to inf, infinities and NaNs all occur); wider types
 * get finite values spread over many magnitudes. */
static inline uint64_t oracle_next(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return *state >> 17;
}

static inline void oracle_fill(OracleDtype d, void* buf, int64_t n, uint64_t seed) {
  uint64_t s = seed;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = oracle_next(&s);
    double v =
        ((double)(int64_t)(r % 2000001) - 1000000.0) / 997.0 * ldexp(1.0, (int)(r % 41) - 20);
    switch (d) {
      case ORACLE_F16:
      case ORACLE_BF16: ((uint16_t*)buf)[i] = (uint16_t)r; break;
      case ORACLE_F32: ((float*)buf)[i] = (float)v; break;
      default: ((double*)buf)[i] = v; break;
    }
  }
}

/* Compares element i of got with the expected value of in[i] * factor;
 * returns 1 when they agree (NaN agrees with any NaN). */
static inline int oracle_check(OracleDtype d, const void* in, const void* got, int64_t i,
                               double factor, char* why, size_t why_size) {
  switch (d) {
    case ORACLE_F64: {
      double x = ((const double*)in)[i], want = x * factor, have = ((const double*)got)[i];
      if (memcmp(&want, &have, sizeof want) == 0) return 1;
      snprintf(why, why_size, "%.17g * %.17g: want %.17g got %.17g", x, factor, want, have);
      return 0;
    }
    case ORACLE_F32: {
      float x = ((const float*)in)[i], want = x * (float)factor, have = ((const float*)got)[i];
      if (memcmp(&want, &have, sizeof want) == 0) return 1;
      snprintf(why, why_size, "%.9g * %.9g: want %.9g got %.9g", x, (double)(float)factor, want,
               have);
      return 0;
    }
    default: {
      uint16_t xb = ((const uint16_t*)in)[i], have = ((const uint16_t*)got)[i];
      int f16 = d == ORACLE_F16;
      float x = f16 ? oracle_f16_value(xb) : oracle_bf16_value(xb);
      float p = x * (float)factor;
      uint16_t want = f16 ? oracle_f16_round(p) : oracle_bf16_round(p);
      float have_v = f16 ? oracle_f16_value(have) : oracle_bf16_value(have);
      if (isnan(p) && isnan(have_v)) return 1;
      if (want == have) return 1;
      snprintf(why, why_size, "0x%04x (%.9g) * %.9g: want 0x%04x got 0x%04x", xb, (double)x,
               (double)(float)factor, want, have);
      return 0;
    }
  }
}

#endif
