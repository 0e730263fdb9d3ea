#include <string.h>

#include "kernels/half_bits.h"
#include "probe_call.h"

int cert_value_load(DLDataType t, const void* p, double* out) {
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) {
        uint16_t h;
        memcpy(&h, p, 2);
        *out = kern_f16_to_f32(h);
        return 0;
      }
      if (t.bits == 32) {
        float f;
        memcpy(&f, p, 4);
        *out = f;
        return 0;
      }
      if (t.bits == 64) {
        memcpy(out, p, 8);
        return 0;
      }
      return -1;
    case kDLBfloat:
      if (t.bits == 16) {
        uint16_t h;
        memcpy(&h, p, 2);
        *out = kern_bf16_to_f32(h);
        return 0;
      }
      return -1;
    case kDLInt:
      if (t.bits == 8) {
        int8_t v;
        memcpy(&v, p, 1);
        *out = v;
        return 0;
      }
      if (t.bits == 16) {
        int16_t v;
        memcpy(&v, p, 2);
        *out = v;
        return 0;
      }
      if (t.bits == 32) {
        int32_t v;
        memcpy(&v, p, 4);
        *out = v;
        return 0;
      }
      if (t.bits == 64) {
        int64_t v;
        memcpy(&v, p, 8);
        *out = (double)v;
        return 0;
      }
      return -1;
    case kDLUInt:
    case kDLBool:
      if (t.bits == 8) {
        uint8_t v;
        memcpy(&v, p, 1);
        *out = v;
        return 0;
      }
      if (t.bits == 16) {
        uint16_t v;
        memcpy(&v, p, 2);
        *out = v;
        return 0;
      }
      if (t.bits == 32) {
        uint32_t v;
        memcpy(&v, p, 4);
        *out = v;
        return 0;
      }
      if (t.bits == 64) {
        uint64_t v;
        memcpy(&v, p, 8);
        *out = (double)v;
        return 0;
      }
      return -1;
    default: return -1;
  }
}

/* Integers: the values certify stores are small, so a plain conversion of
 * the (finite, in-range) double is what every C caller would write. */
static int store_int(DLDataType t, void* p, double v, int is_signed) {
  if (!(v > -9.2e18 && v < 9.2e18)) v = 0;
  int64_t i = (int64_t)v;
  switch (t.bits) {
    case 8: {
      if (is_signed) {
        int8_t x = (int8_t)i;
        memcpy(p, &x, 1);
      } else {
        uint8_t x = (uint8_t)i;
        memcpy(p, &x, 1);
      }
      return 0;
    }
    case 16: {
      int16_t x = (int16_t)i;
      memcpy(p, &x, 2);
      return 0;
    }
    case 32: {
      int32_t x = (int32_t)i;
      memcpy(p, &x, 4);
      return 0;
    }
    case 64: {
      memcpy(p, &i, 8);
      return 0;
    }
    default: return -1;
  }
}

int cert_value_store(DLDataType t, void* p, double v) {
  if (t.lanes != 1) return -1;
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) {
        uint16_t h = kern_f32_to_f16((float)v);
        memcpy(p, &h, 2);
        return 0;
      }
      if (t.bits == 32) {
        float f = (float)v;
        memcpy(p, &f, 4);
        return 0;
      }
      if (t.bits == 64) {
        memcpy(p, &v, 8);
        return 0;
      }
      return -1;
    case kDLBfloat:
      if (t.bits == 16) {
        uint16_t h = kern_f32_to_bf16((float)v);
        memcpy(p, &h, 2);
        return 0;
      }
      return -1;
    case kDLInt: return store_int(t, p, v, 1);
    case kDLUInt: return store_int(t, p, v, 0);
    case kDLBool:
      if (t.bits == 8) {
        uint8_t x = v != 0;
        memcpy(p, &x, 1);
        return 0;
      }
      return -1;
    default: return -1;
  }
}
