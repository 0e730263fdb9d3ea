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
#include "recursive.h"
#include "vec.h"

/* A container being copied. */
typedef struct {
  TVMFFIAny v;    /* the original (owned) */
  TVMFFIAny copy; /* a list, dict or map: the copy being filled (owned) */
  int64_t i;      /* the next element; a map's next key (even) or value (odd) */
  uint64_t p;     /* the entry of a map's next key or value */
  TVMFFIAny key;  /* the copied key whose value comes next (owned) */
  struct {
    TVMFFIAny* items; /* an array's copied elements (owned) */
    size_t n, cap;
  } elems;
} TffiCopyFrame;

typedef struct {
  const char* fn;
  TffiMap* memo;        /* original -> copy, keyed by identity; an array or map
                          being copied maps to itself until its copy is made */
  int placeholders;     /* whether some copy holds an original to replace */
  TffiCopyFrame* items; /* innermost last */
  size_t n, cap;
} TffiCopier;

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

static void tffi_copy_pop(TffiCopier* c) {
  TffiCopyFrame* f = &c->items[--c->n];
  for (size_t i = 0; i < f->elems.n; ++i) tffi_any_release(&f->elems.items[i]);
  tffi_free(f->elems.items);
  tffi_any_release(&f->key);
  tffi_any_release(&f->copy);
  tffi_any_release(&f->v);
}

/* The copy is made first (empty) for a list, dict or map, and remembered
 * first for a list or dict, for cycles; an array or map is remembered as
 * itself until its copy is whole. */
static int tffi_copy_init(TffiCopier* c, TffiCopyFrame* f) {
  int32_t t = f->v.type_index;
  if (t == kTVMFFIArray) {
    int64_t n = TVMFFISeqGetCellPtr(f->v.v_obj)->size;
    if (TFFI_VEC_RESERVE(&f->elems, (size_t)n) != 0)
      return tffi_raise_oom((size_t)n * sizeof(TVMFFIAny));
  } else if (t == kTVMFFIList) {
    if (tffi_builtin_call(c->fn, "ffi.List", NULL, 0, &f->copy) != 0) return -1;
  } else {
    const TffiMap* m = (const TffiMap*)f->v.v_obj;
    TVMFFIObject* copy = tffi_map_new(t, m->size);
    if (copy == NULL) return -1;
    f->copy = tffi_any_object(copy);
    f->p = tffi_map_begin(m);
  }
  int is_new = t == kTVMFFIList || t == kTVMFFIDict;
  return tffi_map_set(c->memo, &f->v, is_new ? &f->copy : &f->v);
}

static int tffi_copy_push(TffiCopier* c, const TVMFFIAny* value) {
  if (c->n >= TFFI_WALK_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "ObjectGraphDFS: maximum stack depth (%d) exceeded",
                      TFFI_WALK_MAX_DEPTH);
  if (TFFI_VEC_RESERVE(c, c->n + 1) != 0) return tffi_raise_oom(sizeof *c->items * (c->n + 1));
  TffiCopyFrame* f = &c->items[c->n++];
  memset(f, 0, sizeof *f);
  f->v = *value;
  tffi_incref(value->v_obj);
  return tffi_copy_init(c, f);
}

/* A value: its copy (0) when it is a value, a leaf or copied already,
 * else a frame pushed for it (1). */
static int tffi_copy_enter(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out) {
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
  return tffi_copy_push(c, value) != 0 ? -1 : 1;
}

/* The frame's copy, whole: an array's is made of its elements now, and an
 * array's or map's remembered. */
static int tffi_copy_finish(TffiCopier* c, TffiCopyFrame* f, TVMFFIAny* out) {
  int32_t t = f->v.type_index;
  if (t == kTVMFFIArray &&
      tffi_builtin_call(c->fn, "ffi.Array", f->elems.items, (int32_t)f->elems.n, &f->copy) != 0)
    return -1;
  if ((t == kTVMFFIArray || t == kTVMFFIMap) && tffi_map_set(c->memo, &f->v, &f->copy) != 0)
    return -1;
  *out = f->copy;
  f->copy = tffi_any_none();
  return 0;
}

/* The next child of the frame to copy (1), or the frame's copy (0). */
static int tffi_copy_next(TffiCopier* c, TffiCopyFrame* f, const TVMFFIAny** child,
                          TVMFFIAny* out) {
  int32_t t = f->v.type_index;
  *child = t == kTVMFFIArray || t == kTVMFFIList
               ? tffi_rec_seq_child(f->v.v_obj, &f->i)
               : tffi_rec_map_child((const TffiMap*)f->v.v_obj, &f->p, &f->i);
  return *child != NULL ? 1 : tffi_copy_finish(c, f, out);
}

/* Takes the copy of the child the frame handed out last (owned). */
static int tffi_copy_feed(TffiCopier* c, TffiCopyFrame* f, TVMFFIAny* child) {
  int32_t t = f->v.type_index;
  int rc = 0;
  if (t == kTVMFFIArray) {
    if (TFFI_VEC_PUSH(&f->elems, *child) == 0) return 0;
    rc = tffi_raise_oom(sizeof(TVMFFIAny) * (f->elems.n + 1));
  } else if (t == kTVMFFIList) {
    TVMFFIAny args[2] = {f->copy, *child}, none;
    rc = tffi_builtin_call(c->fn, "ffi.ListAppend", args, 2, &none);
  } else if (f->i % 2 == 1) {
    f->key = *child;
    return 0;
  } else {
    rc = tffi_map_set((TffiMap*)f->copy.v_obj, &f->key, child);
    tffi_any_release(&f->key);
  }
  tffi_any_release(child);
  return rc;
}

/* The copy of value into *out (owned), containers with a stack of frames. */
static int tffi_copy(TffiCopier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  int rc = tffi_copy_enter(c, value, out);
  while (rc >= 0 && c->n > 0) {
    const TVMFFIAny* child = NULL;
    rc = tffi_copy_next(c, &c->items[c->n - 1], &child, out);
    if (rc == 1)
      rc = tffi_copy_enter(c, child, out);
    else if (rc == 0)
      tffi_copy_pop(c);
    if (rc == 0 && c->n > 0) rc = tffi_copy_feed(c, &c->items[c->n - 1], out);
  }
  while (c->n > 0) tffi_copy_pop(c);
  if (rc < 0) *out = tffi_any_none(); /* what it held was fed to a frame */
  return rc < 0 ? -1 : 0;
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
  TffiCopier c = {self, (TffiMap*)memo, 0, NULL, 0, 0};
  int rc = tffi_copy(&c, &args[0], result);
  tffi_free(c.items);
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
