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
#include "ptr_table.h"
#include "recursive.h"
#include "vec.h"

/* What a frame still has to hash: the elements of a sequence, the keys
 * and values of a map, the reflected fields of an object; a hook's frame
 * has its hash as soon as it is made. */
enum { TFFI_HASH_SEQ, TFFI_HASH_MAP, TFFI_HASH_FIELDS, TFFI_HASH_DONE };

/* An object being hashed. */
typedef struct {
  TVMFFIAny v; /* owned */
  int kind;
  int64_t i;         /* the next element or field; a map's next key (even) or value (odd) */
  uint64_t p;        /* the map entry of the next key or value */
  uint64_t acc;      /* the hash so far */
  uint64_t key;      /* the hash of the key whose value comes next */
  uint64_t* entries; /* a map's entry hashes so far */
  size_t n_entries;  /* ... and how many */
  TVMFFIAny* fields; /* owned */
  int32_t n_fields;
} TffiHashFrame;

typedef struct {
  TffiHashFrame* items; /* innermost last */
  size_t n, cap;
  TffiPtrTable memo; /* object -> its hash (mark 2), or mark 1 while being hashed */
} TffiHasher;

static int tffi_hash_value(TffiHasher* h, const TVMFFIAny* value, uint64_t* out);
static int tffi_hash_enter(TffiHasher* h, const TVMFFIAny* value, uint64_t* out);

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

static void tffi_hash_pop(TffiHasher* h) {
  TffiHashFrame* f = &h->items[--h->n];
  tffi_free(f->entries);
  tffi_rec_values_free(f->fields, f->n_fields);
  tffi_any_release(&f->v);
}

/* Readies the frame on top to hash the children of its object. */
static int tffi_hash_init(TffiHasher* h, TffiHashFrame* f, const TVMFFIAny* hook) {
  int32_t t = f->v.type_index;
  if (hook != NULL) {
    TVMFFIAny v = f->v; /* the hook may grow the stack */
    uint64_t result = 0;
    if (tffi_hash_hook(h, hook, &v, &result) != 0) return -1;
    h->items[h->n - 1].acc = result;
  } else if (t == kTVMFFIArray || t == kTVMFFIList) {
    f->kind = TFFI_HASH_SEQ;
    f->acc = tffi_combine(tffi_type_hash(t), (uint64_t)TVMFFISeqGetCellPtr(f->v.v_obj)->size);
  } else if (t == kTVMFFIMap || t == kTVMFFIDict) {
    const TffiMap* m = (const TffiMap*)f->v.v_obj;
    f->kind = TFFI_HASH_MAP;
    f->acc = tffi_combine(tffi_type_hash(t), m->size);
    f->p = tffi_map_begin(m);
    f->entries = tffi_malloc((m->size ? m->size : 1) * sizeof(uint64_t));
    if (f->entries == NULL) return tffi_raise_oom(m->size * sizeof(uint64_t));
  } else {
    f->kind = TFFI_HASH_FIELDS;
    f->acc = tffi_type_hash(t);
    return tffi_rec_fields(f->v.v_obj,
                           kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                           &f->fields, &f->n_fields);
  }
  return 0;
}

/* Pushes a frame for the object v, marked as being hashed. */
static int tffi_hash_push(TffiHasher* h, const TVMFFIAny* v, const TVMFFIAny* hook) {
  if (h->n >= TFFI_WALK_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "ObjectGraphDFS: maximum stack depth (%d) exceeded",
                      TFFI_WALK_MAX_DEPTH);
  if (TFFI_VEC_RESERVE(h, h->n + 1) != 0) return tffi_raise_oom(sizeof *h->items * (h->n + 1));
  TffiPtrSlot* slot = tffi_ptr_slot(&h->memo, v->v_obj);
  if (slot == NULL) return -1;
  slot->mark = 1;
  TffiHashFrame* f = &h->items[h->n++];
  memset(f, 0, sizeof *f);
  f->kind = TFFI_HASH_DONE;
  f->v = *v;
  tffi_incref(v->v_obj);
  return tffi_hash_init(h, f, hook);
}

static int tffi_hash_remember(TffiHasher* h, const TVMFFIAny* v, uint64_t hash) {
  TffiPtrSlot* slot = tffi_ptr_slot(&h->memo, v->v_obj);
  if (slot == NULL) return -1;
  slot->mark = 2;
  slot->value = (int64_t)hash;
  return 0;
}

/* An object: its hash (0) when known, in a cycle or without children,
 * else a frame pushed for it (1). */
static int tffi_hash_object(TffiHasher* h, const TVMFFIAny* v, uint64_t* out) {
  static const TVMFFITypeAttrColumn *hash_column, *eq_column, *cmp_column;
  int32_t t = v->type_index;
  const TffiPtrSlot* seen = tffi_ptr_find(&h->memo, v->v_obj);
  if (seen != NULL && seen->mark != 0) {
    *out = seen->mark == 2 ? (uint64_t)seen->value : tffi_type_hash(t);
    return 0;
  }
  if (t == kTVMFFIShape) {
    const TVMFFIShapeCell* s = TVMFFIShapeGetCellPtr(v->v_obj);
    *out = tffi_combine(tffi_type_hash(t), s->size);
    for (size_t i = 0; i < s->size; ++i) *out = tffi_combine(*out, (uint64_t)s->data[i]);
    return tffi_hash_remember(h, v, *out);
  }
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
  return tffi_hash_push(h, v, hook) != 0 ? -1 : 1;
}

/* The next child of the frame (1), or its hash (0). */
static int tffi_hash_next(TffiHashFrame* f, const TVMFFIAny** child, uint64_t* out) {
  if (f->kind == TFFI_HASH_SEQ) {
    if ((*child = tffi_rec_seq_child(f->v.v_obj, &f->i)) != NULL) return 1;
  } else if (f->kind == TFFI_HASH_MAP) {
    if ((*child = tffi_rec_map_child((const TffiMap*)f->v.v_obj, &f->p, &f->i)) != NULL) return 1;
    qsort(f->entries, f->n_entries, sizeof *f->entries, tffi_cmp_u64);
    for (size_t i = 0; i < f->n_entries; ++i) f->acc = tffi_combine(f->acc, f->entries[i]);
  } else if (f->kind == TFFI_HASH_FIELDS && f->i < f->n_fields) {
    return *child = &f->fields[f->i++], 1;
  }
  *out = f->acc;
  return 0;
}

/* Takes the hash of the child the frame handed out last. */
static void tffi_hash_feed(TffiHashFrame* f, uint64_t child) {
  if (f->kind == TFFI_HASH_SEQ) {
    f->acc = tffi_combine(f->acc, tffi_combine(child, (uint64_t)(f->i - 1)));
  } else if (f->kind == TFFI_HASH_FIELDS) {
    f->acc = tffi_combine(f->acc, child);
  } else if (f->i % 2 == 1) {
    f->key = child;
  } else if (f->n_entries < ((const TffiMap*)f->v.v_obj)->size) {
    f->entries[f->n_entries++] = tffi_combine(f->key, child);
  }
}

/* The value's hash: objects with the frames above those already on the
 * stack (a hook's recursion hashes above its caller's). */
static int tffi_hash_value(TffiHasher* h, const TVMFFIAny* value, uint64_t* out) {
  size_t base = h->n;
  int rc = tffi_hash_enter(h, value, out);
  while (rc >= 0 && h->n > base) {
    const TVMFFIAny* child = NULL;
    rc = tffi_hash_next(&h->items[h->n - 1], &child, out);
    if (rc == 1) {
      rc = tffi_hash_enter(h, child, out);
    } else {
      TffiHashFrame* f = &h->items[h->n - 1];
      rc = tffi_hash_remember(h, &f->v, *out);
      tffi_hash_pop(h);
    }
    if (rc == 0 && h->n > base) tffi_hash_feed(&h->items[h->n - 1], *out);
  }
  /* Unmarked, as a hook may go on after its recursion failed. */
  for (; h->n > base; tffi_hash_pop(h))
    tffi_ptr_find(&h->memo, h->items[h->n - 1].v.v_obj)->mark = 0;
  return rc < 0 ? -1 : 0;
}

static int tffi_hash_enter(TffiHasher* h, const TVMFFIAny* value, uint64_t* out) {
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
  TffiHasher h = {0};
  uint64_t out;
  int rc = tffi_hash_value(&h, &v, &out);
  tffi_free(h.items);
  tffi_ptr_table_free(&h.memo);
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
