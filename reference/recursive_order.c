/* The part of "ffi.RecursiveEq" and the orderings (recursive_compare.c)
 * that needs no walk: values, text, big ints, shapes (recursive_order.h). */
#include "recursive_order.h"

#include <math.h>
#include <string.h>

#include "recursive.h"
#include "tffi_error.h"

static int32_t tffi_sign64(int64_t v) { return (v > 0) - (v < 0); }

static int32_t tffi_cmp_text(const char* a, size_t an, const char* b, size_t bn) {
  int v = memcmp(a, b, an < bn ? an : bn);
  return v ? tffi_sign64(v) : (an > bn) - (an < bn);
}

/* Two's complement word arrays in shortest form, least significant first. */
static int32_t tffi_cmp_words(TVMFFIByteArray a, TVMFFIByteArray b) {
  size_t an = a.size / 8, bn = b.size / 8;
  int64_t atop, btop;
  memcpy(&atop, a.data + (an - 1) * 8, 8);
  memcpy(&btop, b.data + (bn - 1) * 8, 8);
  if ((atop < 0) != (btop < 0)) return atop < 0 ? -1 : 1;
  if (an != bn) return ((an < bn) == (atop >= 0)) ? -1 : 1;
  if (atop != btop) return atop < btop ? -1 : 1;
  for (size_t i = an - 1; i-- > 0;) {
    uint64_t x, y;
    memcpy(&x, a.data + i * 8, 8);
    memcpy(&y, b.data + i * 8, 8);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

static int tffi_cmp_kinds_error(const char* what, int32_t lt, int32_t rt) {
  int ln, rn;
  const char* lk = tffi_rec_type_key(lt, &ln);
  const char* rk = tffi_rec_type_key(rt, &rn);
  return tffi_raise(TFFI_TYPE_ERROR, "Cannot compare %s of different types: %.*s vs %.*s", what, ln,
                    lk, rn, rk);
}

static int tffi_cmp_pod(int eq_only, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out) {
  switch (l->type_index) {
    case kTVMFFIBool: *out = (l->v_int64 != 0) - (r->v_int64 != 0); return 0;
    case kTVMFFIInt: *out = (l->v_int64 > r->v_int64) - (l->v_int64 < r->v_int64); return 0;
    case kTVMFFIFloat: {
      double a = l->v_float64, b = r->v_float64;
      if (isnan(a) || isnan(b)) {
        if (!eq_only) return tffi_raise(TFFI_TYPE_ERROR, "Cannot order NaN values");
        *out = !(isnan(a) && isnan(b));
        return 0;
      }
      *out = (a > b) - (a < b);
      return 0;
    }
    case kTVMFFIDataType: {
      DLDataType a = l->v_dtype, b = r->v_dtype;
      *out = a.code != b.code   ? (a.code < b.code ? -1 : 1)
             : a.bits != b.bits ? (a.bits < b.bits ? -1 : 1)
                                : (a.lanes > b.lanes) - (a.lanes < b.lanes);
      return 0;
    }
    case kTVMFFIDevice: {
      DLDevice a = l->v_device, b = r->v_device;
      *out = a.device_type != b.device_type
                 ? (a.device_type < b.device_type ? -1 : 1)
                 : (a.device_id > b.device_id) - (a.device_id < b.device_id);
      return 0;
    }
    default:
      *out = !(l->zero_padding == r->zero_padding && l->v_int64 == r->v_int64);
      if (*out == 0 || eq_only) return 0;
      int n;
      const char* key = tffi_rec_type_key(l->type_index, &n);
      return tffi_raise(TFFI_TYPE_ERROR, "Cannot order values of type %.*s", n, key);
  }
}

static int tffi_cmp_shape(const TVMFFIAny* l, const TVMFFIAny* r) {
  const TVMFFIShapeCell* a = TVMFFIShapeGetCellPtr(l->v_obj);
  const TVMFFIShapeCell* b = TVMFFIShapeGetCellPtr(r->v_obj);
  size_t n = a->size < b->size ? a->size : b->size;
  for (size_t i = 0; i < n; ++i)
    if (a->data[i] != b->data[i]) return a->data[i] < b->data[i] ? -1 : 1;
  return (a->size > b->size) - (a->size < b->size);
}

int tffi_cmp_shallow(int eq_only, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out) {
  int32_t lt = l->type_index, rt = r->type_index;
  size_t ln, rn;
  const char *ld, *rd;
  *out = 0;
  if (lt == kTVMFFINone || rt == kTVMFFINone) {
    *out = (lt != kTVMFFINone) - (rt != kTVMFFINone);
    return 0;
  }
  for (int is_bytes = 0; is_bytes < 2; ++is_bytes) {
    if ((ld = tffi_rec_text(l, is_bytes, &ln)) && (rd = tffi_rec_text(r, is_bytes, &rn))) {
      *out = tffi_cmp_text(ld, ln, rd, rn);
      return 0;
    }
  }
  if (lt != rt) {
    *out = 1;
    if (eq_only) return 0;
    if ((lt == kTVMFFIInt || lt == kTVMFFIBigInt) && (rt == kTVMFFIInt || rt == kTVMFFIBigInt)) {
      *out = tffi_cmp_words(TVMFFIBigIntGetContentByteArray(l), TVMFFIBigIntGetContentByteArray(r));
      return 0;
    }
    return tffi_cmp_kinds_error("values", lt, rt);
  }
  if (lt < kTVMFFIStaticObjectBegin) return tffi_cmp_pod(eq_only, l, r, out);
  if (l->v_obj == r->v_obj) return 0;
  if (l->v_obj == NULL || r->v_obj == NULL) {
    *out = l->v_obj == NULL ? -1 : 1;
    return 0;
  }
  if (lt == kTVMFFIBigInt) {
    *out = tffi_cmp_words(TVMFFIBigIntGetContentByteArray(l), TVMFFIBigIntGetContentByteArray(r));
    if (eq_only) *out = *out != 0;
    return 0;
  }
  if (lt == kTVMFFIShape) {
    *out = tffi_cmp_shape(l, r);
    return 0;
  }
  return 1;
}
