/* "ffi.DeepCopy"(value): a copy of a graph of containers (Array, List, Map,
 * Dict) whose sharing and cycles the copy keeps (each container is copied
 * once; a list or dict that contains itself, directly or not, is copied
 * into a copy that contains itself). Values and immutable leaf objects
 * (str, bytes, shapes, big ints) are shared, as upstream shares them.
 * Other objects (functions, errors, modules, tensors, reflected objects)
 * would need their type's copy constructor, which this runtime does not
 * have: they are refused with TypeError.
 *
 * An array or map can only be made once its elements are, so a list or
 * dict inside it that leads back to it first holds the original; when the
 * walk is over, the elements of list copies and the keys and values of
 * dict copies that are originals with a copy are replaced by the copy
 * (moving a dict's changed entries last), as upstream's copier does. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "map.h"
#include "mem.h"
#include "object.h"

/* Deeper nesting is refused rather than risk the C stack. */
#define TFFI_COPY_MAX_DEPTH 2048

typedef struct {
  const char* fn;
  TffiMap* memo; /* original -> copy, keyed by identity; an array or map
                   being copied maps to itself until its copy is made */
  int depth;
  int placeholders; /* whether some copy holds an original to replace */
} TffiCopier;

static int tffi_copy(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out);

static int tffi_is_container(int32_t t) {
  return t == kTVMFFIArray || t == kTVMFFIList || t == kTVMFFIMap || t == kTVMFFIDict;
}

/* Objects with no children that can change and that upstream shares:
 * text, shapes, big ints (and Python objects). Functions, errors, modules,
 * tensors and plain objects have no copy constructor there, and are
 * refused as other objects are. */
static int tffi_is_leaf(int32_t t) {
  return t == kTVMFFIStr || t == kTVMFFIBytes || t == kTVMFFIShape || t == kTVMFFIBigInt ||
         t == kTVMFFIOpaquePyObject;
}

/* Copies the elements of a sequence cell into owned copies in `into`. */
static int tffi_copy_items(TffiCopier* c, const TVMFFISeqCell* cell, TVMFFIAny* into) {
  for (int64_t i = 0; i < cell->size; ++i) {
    if (tffi_copy(c, (const TVMFFIAny*)cell->data + i, &into[i]) != 0) {
      while (i-- > 0) tffi_any_release(&into[i]);
      return -1;
    }
  }
  return 0;
}

/* A sequence: copied elements, then the new container made from them. A
 * list's copy is made (empty) and remembered first, for cycles. */
static int tffi_copy_seq(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(value->v_obj);
  int is_list = value->type_index == kTVMFFIList;
  TVMFFIAny copy = tffi_any_none();
  if (is_list) {
    if (tffi_builtin_call(c->fn, "ffi.List", NULL, 0, &copy) ||
        tffi_map_set(c->memo, value, &copy)) {
      tffi_any_release(&copy);
      return -1;
    }
  }
  int64_t n = cell->size;
  TVMFFIAny stack[8];
  TVMFFIAny* elems = n <= 8 ? stack : NULL;
  TVMFFIObject* holder = NULL;
  if (elems == NULL) {
    /* A temporary array object holds the copies while they are made. */
    holder = tffi_object_alloc(sizeof(TVMFFIObject) + (size_t)n * sizeof(TVMFFIAny), kTVMFFIObject,
                               tffi_object_delete_plain);
    if (holder == NULL) {
      tffi_any_release(&copy);
      return -1;
    }
    elems = (TVMFFIAny*)(holder + 1);
  }
  int rc = tffi_copy_items(c, cell, elems);
  if (rc == 0) {
    if (is_list) {
      for (int64_t i = 0; i < n && rc == 0; ++i) {
        TVMFFIAny args[2] = {copy, elems[i]}, none;
        rc = tffi_builtin_call(c->fn, "ffi.ListAppend", args, 2, &none);
      }
    } else {
      rc = tffi_builtin_call(c->fn, "ffi.Array", elems, (int32_t)n, &copy);
    }
    for (int64_t i = 0; i < n; ++i) tffi_any_release(&elems[i]);
  }
  if (holder) tffi_decref(holder);
  if (rc != 0) {
    tffi_any_release(&copy);
    return -1;
  }
  if (!is_list && tffi_map_set(c->memo, value, &copy) != 0) {
    tffi_any_release(&copy);
    return -1;
  }
  *out = copy;
  return 0;
}

/* A map or dict: entries copied in order into a new one; a dict's copy is
 * remembered before its entries are copied. */
static int tffi_copy_map(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  const TffiMap* m = (const TffiMap*)value->v_obj;
  TVMFFIObject* copy = tffi_map_new(value->type_index, m->size);
  if (copy == NULL) return -1;
  TVMFFIAny result = tffi_any_object(copy);
  int is_dict = value->type_index == kTVMFFIDict;
  if (is_dict && tffi_map_set(c->memo, value, &result) != 0) {
    tffi_decref(copy);
    return -1;
  }
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p)) {
    TffiKV kv = {tffi_any_none(), tffi_any_none()};
    const TffiKV* at = tffi_map_at(m, p);
    int rc = tffi_copy(c, &at->key, &kv.key);
    if (rc == 0) rc = tffi_copy(c, &at->value, &kv.value);
    if (rc == 0) rc = tffi_map_set((TffiMap*)copy, &kv.key, &kv.value);
    tffi_any_release(&kv.key);
    tffi_any_release(&kv.value);
    if (rc != 0) {
      tffi_decref(copy);
      return -1;
    }
  }
  if (!is_dict && tffi_map_set(c->memo, value, &result) != 0) {
    tffi_decref(copy);
    return -1;
  }
  *out = result;
  return 0;
}

static int tffi_copy(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  int32_t t = value->type_index;
  if (t < kTVMFFIStaticObjectBegin || value->v_obj == NULL || tffi_is_leaf(t))
    return tffi_any_copy_owned(value, out);
  if (!tffi_is_container(t)) {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(t);
    return tffi_raise(
        TFFI_TYPE_ERROR,
        "%s: objects of type `%.*s` are not copied by this runtime, which deep-copies "
        "containers and values only",
        c->fn, info ? (int)info->type_key.size : 1, info ? info->type_key.data : "?");
  }
  TffiKV* seen;
  int rc = tffi_map_find(c->memo, value, &seen);
  if (rc < 0) return -1;
  if (rc == 1) {
    c->placeholders |= seen->value.v_obj == value->v_obj;
    return tffi_any_copy_owned(&seen->value, out);
  }
  if (c->depth >= TFFI_COPY_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "%s: containers nested deeper than %d", c->fn,
                      TFFI_COPY_MAX_DEPTH);
  if ((t == kTVMFFIArray || t == kTVMFFIMap) && tffi_map_set(c->memo, value, value) != 0) return -1;
  c->depth += 1;
  rc = (t == kTVMFFIMap || t == kTVMFFIDict) ? tffi_copy_map(c, value, out)
                                             : tffi_copy_seq(c, value, out);
  c->depth -= 1;
  return rc;
}

/* *copy: the copy made of `v` when v is an original that has one, else
 * NULL. Returns 0, or -1 with an error raised. */
static int tffi_copy_made(TffiCopier* c, const TVMFFIAny* v, const TVMFFIAny** copy) {
  *copy = NULL;
  if (v->type_index < kTVMFFIStaticObjectBegin || v->v_obj == NULL) return 0;
  TffiKV* seen;
  int rc = tffi_map_find(c->memo, v, &seen);
  if (rc == 1 && seen->value.v_obj != v->v_obj) *copy = &seen->value;
  return rc < 0 ? -1 : 0;
}

static int tffi_fix_list(TffiCopier* c, const TVMFFIAny* list) {
  const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(list->v_obj);
  TVMFFIAny* items = (TVMFFIAny*)cell->data;
  for (int64_t i = 0; i < cell->size; ++i) {
    const TVMFFIAny* copy;
    TVMFFIAny owned;
    if (tffi_copy_made(c, &items[i], &copy)) return -1;
    if (copy == NULL) continue;
    if (tffi_any_copy_owned(copy, &owned)) return -1;
    tffi_any_release(&items[i]);
    items[i] = owned;
  }
  return 0;
}

/* A dict's entries to change are taken out first (owned), then each is
 * erased and set again with its copies. */
static int tffi_fix_dict(TffiCopier* c, const TVMFFIAny* dict) {
  TffiMap* d = (TffiMap*)dict->v_obj;
  TffiKV* moves = tffi_calloc(d->size + 1, sizeof(TffiKV));
  if (moves == NULL) return tffi_raise_oom((d->size + 1) * sizeof(TffiKV));
  uint64_t n = 0;
  int rc = 0;
  for (uint64_t p = tffi_map_begin(d); p != tffi_map_end(d) && rc == 0; p = tffi_map_next(d, p)) {
    const TffiKV* at = tffi_map_at(d, p);
    const TVMFFIAny *key, *value;
    rc = tffi_copy_made(c, &at->key, &key) || tffi_copy_made(c, &at->value, &value);
    if (rc == 0 && (key || value)) {
      rc = tffi_any_copy_owned(&at->key, &moves[n].key) ||
           tffi_any_copy_owned(&at->value, &moves[n].value);
      n += 1;
    }
  }
  for (uint64_t i = 0; i < n && rc == 0; ++i) {
    const TVMFFIAny *key, *value;
    rc = tffi_copy_made(c, &moves[i].key, &key) || tffi_copy_made(c, &moves[i].value, &value);
    if (rc == 0) rc = tffi_map_erase(d, &moves[i].key) < 0;
    if (rc == 0) rc = tffi_map_set(d, key ? key : &moves[i].key, value ? value : &moves[i].value);
  }
  for (uint64_t i = 0; i < n; ++i) {
    tffi_any_release(&moves[i].key);
    tffi_any_release(&moves[i].value);
  }
  tffi_free(moves);
  return rc ? -1 : 0;
}

static int tffi_fix_placeholders(TffiCopier* c) {
  const TffiMap* m = c->memo;
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p)) {
    const TVMFFIAny* copy = &tffi_map_at(m, p)->value;
    if (copy->type_index == kTVMFFIList && tffi_fix_list(c, copy)) return -1;
    if (copy->type_index == kTVMFFIDict && tffi_fix_dict(c, copy)) return -1;
  }
  return 0;
}

/* After a failure: the copies made so far are dropped, but lists and dicts
 * among them may hold each other (or themselves) and would never be freed.
 * Only the memo and the dropped result hold them, so they are emptied. */
static void tffi_empty_copies(TffiCopier* c) {
  const TffiMap* m = c->memo;
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p)) {
    const TVMFFIAny* copy = &tffi_map_at(m, p)->value;
    if (copy->type_index == kTVMFFIDict) tffi_map_clear((TffiMap*)copy->v_obj);
    if (copy->type_index != kTVMFFIList) continue;
    TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(copy->v_obj);
    TVMFFIAny* items = (TVMFFIAny*)cell->data;
    int64_t n = cell->size;
    cell->size = 0;
    for (int64_t i = 0; i < n; ++i) tffi_any_release(&items[i]);
  }
}

static int tffi_deep_copy_call(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  if (tffi_args_count(self, num_args, 1)) return -1;
  TVMFFIObject* memo = tffi_map_new(kTVMFFIDict, 0);
  if (memo == NULL) return -1;
  TffiCopier c = {self, (TffiMap*)memo, 0, 0};
  int rc = tffi_copy(&c, &args[0], result);
  if (rc == 0 && c.placeholders && tffi_fix_placeholders(&c) != 0) {
    tffi_any_release(result);
    rc = -1;
  }
  if (rc != 0) tffi_empty_copies(&c);
  tffi_decref(memo);
  return rc;
}

__attribute__((constructor)) static void tffi_deep_copy_register(void) {
  tffi_builtin_register("ffi.DeepCopy", tffi_deep_copy_call);
}
