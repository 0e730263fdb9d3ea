/* "ffi.RecursiveHash"(value): the hash that goes with "ffi.RecursiveEq"
 * (equal values hash alike), computed as upstream computes it so that a
 * value hashes the same in either runtime within a process:
 *
 *   None, str and bytes (by content, any form), ints, bools, floats (every
 *   NaN alike, -0.0 as 0.0), dtypes and devices from their parts; a shape
 *   and a sequence from the type, the length and each element with its
 *   position; a map or dict from the sorted hashes of its entries (order
 *   does not matter); another object from its __ffi_hash__ hook, else from
 *   its type and its reflected fields (hash-off and compare-off skipped).
 *   An object met again inside itself hashes as its type (a cycle); each
 *   object is hashed once per call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "any_hash.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "recursive.h"
#include "vec.h"

typedef struct {
  const void** items; /* objects being hashed, innermost last */
  size_t n, cap;
  TffiMap* memo; /* object -> its hash (an int), for shared parts */
} TffiHasher;

static int tffi_hash_value(TffiHasher* h, const TVMFFIAny* value, uint64_t* out);

/* Upstream's StableHashCombine. */
static uint64_t tffi_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ull + (key << 6) + (key >> 2));
}

static uint64_t tffi_hash_pod(const TVMFFIAny* v) {
  uint64_t t = (uint64_t)v->type_index, bits;
  switch (v->type_index) {
    case kTVMFFIBool: return tffi_combine(t, v->v_int64 != 0);
    case kTVMFFIFloat: {
      double d = v->v_float64;
      if (isnan(d))
        d = NAN;
      else if (d == 0.0)
        d = 0.0;
      memcpy(&bits, &d, sizeof bits);
      return tffi_combine(t, bits);
    }
    case kTVMFFIDataType:
      return tffi_combine(tffi_combine(tffi_combine(t, v->v_dtype.code), v->v_dtype.bits),
                          v->v_dtype.lanes);
    case kTVMFFIDevice:
      return tffi_combine(tffi_combine(t, (uint64_t)v->v_device.device_type),
                          (uint64_t)v->v_device.device_id);
    default: return tffi_combine(t, v->v_uint64);
  }
}

static uint64_t tffi_type_hash(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) tffi_set_raised(NULL); /* every object's type is registered */
  return info ? info->type_key_hash : 0;
}

/* The recursion handed to a __ffi_hash__ hook: (value) -> int. */
static int tffi_hash_recurse_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  uint64_t h;
  if (tffi_args_count("RecursiveHash hook callback", num_args, 1) ||
      tffi_hash_value(self, &args[0], &h))
    return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)h;
  return 0;
}

static int tffi_hash_hook(TffiHasher* h, const TVMFFIAny* hook, const TVMFFIAny* v, uint64_t* out) {
  TVMFFIObject* recurse = tffi_function_new(h, tffi_hash_recurse_call, NULL);
  if (recurse == NULL) return -1;
  TVMFFIAny args[2] = {*v, tffi_any_object(recurse)};
  TVMFFIAny result = tffi_any_none();
  int rc = TVMFFIFunctionCall(hook->v_obj, args, 2, &result);
  tffi_decref(recurse);
  if (rc != 0) return -1;
  if (result.type_index != kTVMFFIInt) {
    tffi_any_release(&result);
    return tffi_raise(TFFI_TYPE_ERROR, "a __ffi_hash__ hook returned type index %d",
                      (int)result.type_index);
  }
  *out = (uint64_t)result.v_int64;
  return 0;
}

static int tffi_cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

static int tffi_hash_map(TffiHasher* h, const TffiMap* m, uint64_t* out) {
  uint64_t* entries = tffi_malloc((m->size ? m->size : 1) * sizeof(uint64_t));
  if (entries == NULL) return tffi_raise_oom(m->size * sizeof(uint64_t));
  size_t n = 0;
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p), ++n) {
    uint64_t kh, vh;
    if (tffi_hash_value(h, &tffi_map_at(m, p)->key, &kh) ||
        tffi_hash_value(h, &tffi_map_at(m, p)->value, &vh)) {
      tffi_free(entries);
      return -1;
    }
    entries[n] = tffi_combine(kh, vh);
  }
  qsort(entries, n, sizeof *entries, tffi_cmp_u64);
  for (size_t i = 0; i < n; ++i) *out = tffi_combine(*out, entries[i]);
  tffi_free(entries);
  return 0;
}

/* The hash of an object not being hashed already (children included). */
static int tffi_hash_children(TffiHasher* h, const TVMFFIAny* v, uint64_t* out) {
  int32_t t = v->type_index;
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(v->v_obj);
    *out = tffi_combine(tffi_type_hash(t), (uint64_t)cell->size);
    for (int64_t i = 0; i < cell->size; ++i) {
      uint64_t eh;
      if (tffi_hash_value(h, (const TVMFFIAny*)cell->data + i, &eh) != 0) return -1;
      *out = tffi_combine(*out, tffi_combine(eh, (uint64_t)i));
    }
    return 0;
  }
  if (t == kTVMFFIMap || t == kTVMFFIDict) {
    *out = tffi_combine(tffi_type_hash(t), ((const TffiMap*)v->v_obj)->size);
    return tffi_hash_map(h, (const TffiMap*)v->v_obj, out);
  }
  TVMFFIAny* fields;
  int32_t n;
  if (tffi_rec_fields(v->v_obj, kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                      &fields, &n) != 0)
    return -1;
  *out = tffi_type_hash(t);
  int rc = 0;
  for (int32_t i = 0; i < n && rc == 0; ++i) {
    uint64_t fh;
    rc = tffi_hash_value(h, &fields[i], &fh);
    *out = tffi_combine(*out, fh);
  }
  tffi_rec_values_free(fields, n);
  return rc;
}

static int tffi_hash_object(TffiHasher* h, const TVMFFIAny* v, uint64_t* out) {
  static const TVMFFITypeAttrColumn *hash_column, *eq_column, *cmp_column;
  int32_t t = v->type_index;
  TffiKV* seen;
  int rc = tffi_map_find(h->memo, v, &seen);
  if (rc != 0) return rc < 0 ? -1 : (*out = (uint64_t)seen->value.v_int64, 0);
  for (size_t i = 0; i < h->n; ++i)
    if (h->items[i] == v->v_obj) return *out = tffi_type_hash(t), 0;
  if (t == kTVMFFIShape) {
    const TVMFFIShapeCell* s = TVMFFIShapeGetCellPtr(v->v_obj);
    *out = tffi_combine(tffi_type_hash(t), s->size);
    for (size_t i = 0; i < s->size; ++i) *out = tffi_combine(*out, (uint64_t)s->data[i]);
  } else {
    const TVMFFIAny* hook = tffi_rec_hook(&hash_column, "__ffi_hash__", t);
    if (hook == NULL && t >= kTVMFFIStaticObjectEnd &&
        (tffi_rec_hook(&eq_column, "__ffi_eq__", t) ||
         tffi_rec_hook(&cmp_column, "__ffi_compare__", t))) {
      int len;
      const char* key = tffi_rec_type_key(t, &len);
      return tffi_raise(TFFI_VALUE_ERROR,
                        "RecursiveHash: type '%.*s' defines __ffi_eq__ or __ffi_compare__ but not "
                        "__ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant "
                        "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                        len, key);
    }
    if (h->n >= TFFI_RECURSIVE_MAX_DEPTH)
      return tffi_raise(TFFI_VALUE_ERROR, "RecursiveHash: maximum stack depth (%d) exceeded",
                        TFFI_RECURSIVE_MAX_DEPTH);
    if (TFFI_VEC_PUSH(h, (const void*)v->v_obj) != 0) return tffi_raise_oom(sizeof(void*) * h->cap);
    rc = hook ? tffi_hash_hook(h, hook, v, out) : tffi_hash_children(h, v, out);
    h->n -= 1;
    if (rc != 0) return -1;
  }
  TVMFFIAny memo_value = tffi_any_none();
  memo_value.type_index = kTVMFFIInt;
  memo_value.v_int64 = (int64_t)*out;
  return tffi_map_set(h->memo, v, &memo_value);
}

static int tffi_hash_value(TffiHasher* h, const TVMFFIAny* value, uint64_t* out) {
  int32_t t = value->type_index;
  size_t n;
  const char* data;
  if (t == kTVMFFINone || (t >= kTVMFFIStaticObjectBegin && value->v_obj == NULL)) {
    *out = tffi_combine(0, 0);
    return 0;
  }
  for (int is_bytes = 0; is_bytes < 2; ++is_bytes) {
    if ((data = tffi_rec_text(value, is_bytes, &n)) != NULL) {
      *out = tffi_combine(is_bytes ? kTVMFFIBytes : kTVMFFIStr, tffi_hash_bytes(data, n));
      return 0;
    }
  }
  if (t < kTVMFFIStaticObjectBegin) {
    *out = tffi_hash_pod(value);
    return 0;
  }
  return tffi_hash_object(h, value, out);
}

static int tffi_recursive_hash_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                    TVMFFIAny* result) {
  TVMFFIAny v;
  if (tffi_args_count(self, num_args, 1) || tffi_any_copy_owned(&args[0], &v)) return -1;
  TVMFFIObject* memo = tffi_map_new(kTVMFFIDict, 0);
  if (memo == NULL) {
    tffi_any_release(&v);
    return -1;
  }
  TffiHasher h = {NULL, 0, 0, (TffiMap*)memo};
  uint64_t out;
  int rc = tffi_hash_value(&h, &v, &out);
  tffi_free(h.items);
  tffi_decref(memo);
  tffi_any_release(&v);
  if (rc != 0) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)out;
  return 0;
}

__attribute__((constructor)) static void tffi_recursive_hash_register(void) {
  tffi_builtin_register("ffi.RecursiveHash", tffi_recursive_hash_call);
}
