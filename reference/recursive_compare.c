/* "ffi.RecursiveEq", "ffi.RecursiveLt", "...Le", "...Gt", "...Ge": equality
 * and ordering of values through containers and reflected fields, as
 * upstream's package uses them for `==` and `<` on containers and classes:
 *
 *   None first; str with str and bytes with bytes by content, whatever
 *   their form; values of different kinds are unequal and cannot be ordered
 *   (but an int and a big int can); ints, floats (NaN equals NaN and orders
 *   nowhere), dtypes and devices field by field; shapes and sequences
 *   lexicographically, the shorter first; maps and dicts by the values of
 *   equal keys, and never ordered; other objects by their type's __ffi_eq__
 *   or __ffi_compare__ hook, else by their reflected fields (parents'
 *   first, compare-off ones skipped). A pair met again while it is being
 *   compared counts as equal (a cycle) and cannot be ordered. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "ptr_table.h"
#include "recursive.h"
#include "recursive_order.h"
#include "vec.h"

/* What a frame still has to compare: the elements of two sequences, the
 * values under each key of two maps, the reflected fields of two objects;
 * a hook's frame is decided as soon as it is made. */
enum { TFFI_CMP_SEQ, TFFI_CMP_MAP, TFFI_CMP_FIELDS, TFFI_CMP_DECIDED };

/* The pair (l, r) being compared, which cycles are told by. */
typedef struct {
  TVMFFIAny l, r; /* owned */
  int kind;
  int64_t i;          /* the next element or field */
  uint64_t p;         /* the next entry of l (maps) */
  TVMFFIAny *lv, *rv; /* the fields (owned) */
  int32_t ln, rn;
  int32_t result; /* TFFI_CMP_DECIDED: the answer */
} TffiCmpFrame;

typedef struct {
  int eq_only;
  TffiCmpFrame* items; /* innermost last */
  size_t n, cap;
  TffiPtrTable busy; /* left object -> how many frames hold it */
} TffiCmp;

static int tffi_cmp(TffiCmp* c, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out);

/* The recursion handed to a hook: (lhs, rhs) -> bool (eq) or int. */
static int tffi_cmp_recurse_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  TffiCmp* c = self;
  int32_t cmp;
  if (tffi_args_count("RecursiveCompare hook callback", num_args, 2) ||
      tffi_cmp(c, &args[0], &args[1], &cmp))
    return -1;
  *result = tffi_any_none();
  result->type_index = c->eq_only ? kTVMFFIBool : kTVMFFIInt;
  result->v_int64 = c->eq_only ? cmp == 0 : cmp;
  return 0;
}

/* Calls hook(lhs, rhs, recurse); a bool result means equal or not. */
static int tffi_cmp_hook(TffiCmp* c, const TVMFFIAny* hook, const TVMFFIAny* l, const TVMFFIAny* r,
                         int32_t* out) {
  TVMFFIObject* recurse = tffi_function_new(c, tffi_cmp_recurse_call, NULL);
  if (recurse == NULL) return -1;
  TVMFFIAny args[3] = {*l, *r, tffi_any_object(recurse)};
  TVMFFIAny result = tffi_any_none();
  int rc = TVMFFIFunctionCall(hook->v_obj, args, 3, &result);
  tffi_decref(recurse);
  if (rc != 0) return -1;
  if (result.type_index == kTVMFFIBool) {
    *out = !result.v_int64;
  } else if (result.type_index == kTVMFFIInt) {
    *out = (result.v_int64 > 0) - (result.v_int64 < 0);
  } else {
    tffi_any_release(&result);
    return tffi_raise(TFFI_TYPE_ERROR,
                      "a __ffi_eq__ or __ffi_compare__ hook returned type index %d",
                      (int)result.type_index);
  }
  return 0;
}

static int tffi_cmp_unordered(const TffiCmp* c, int32_t* out) {
  *out = 1;
  return c->eq_only ? 0 : tffi_raise(TFFI_TYPE_ERROR, "Cannot order Map/Dict values");
}

/* 1 when the pair is being compared already, 0 when not. */
static int tffi_cmp_is_busy(const TffiCmp* c, const TVMFFIAny* l, const TVMFFIAny* r) {
  const TffiPtrSlot* slot = tffi_ptr_find(&c->busy, l->v_obj);
  if (slot == NULL || slot->value == 0) return 0;
  for (size_t i = c->n; i-- > 0;)
    if (c->items[i].l.v_obj == l->v_obj && c->items[i].r.v_obj == r->v_obj) return 1;
  return 0;
}

static void tffi_cmp_pop(TffiCmp* c) {
  TffiCmpFrame* f = &c->items[--c->n];
  tffi_ptr_find(&c->busy, f->l.v_obj)->value -= 1;
  tffi_rec_values_free(f->lv, f->ln);
  tffi_rec_values_free(f->rv, f->rn);
  tffi_any_release(&f->l);
  tffi_any_release(&f->r);
}

/* Readies the frame on top to compare the children of its pair. */
static int tffi_cmp_init(TffiCmp* c, TffiCmpFrame* f) {
  static const TVMFFITypeAttrColumn *eq_column, *cmp_column;
  int32_t t = f->l.type_index;
  const TVMFFIAny* hook = NULL;
  if (t >= kTVMFFIStaticObjectEnd) {
    if (c->eq_only) hook = tffi_rec_hook(&eq_column, "__ffi_eq__", t);
    if (hook == NULL) hook = tffi_rec_hook(&cmp_column, "__ffi_compare__", t);
  }
  if (hook != NULL) {
    TVMFFIAny l = f->l, r = f->r; /* the hook may grow the stack */
    f->kind = TFFI_CMP_DECIDED;
    int32_t result = 0;
    if (tffi_cmp_hook(c, hook, &l, &r, &result) != 0) return -1;
    c->items[c->n - 1].result = result;
    return 0;
  }
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    f->kind = TFFI_CMP_SEQ;
  } else if (t == kTVMFFIMap || t == kTVMFFIDict) {
    const TffiMap *l = (const TffiMap*)f->l.v_obj, *r = (const TffiMap*)f->r.v_obj;
    f->kind = TFFI_CMP_MAP;
    f->p = tffi_map_begin(l);
    if (l->size != r->size) {
      f->kind = TFFI_CMP_DECIDED;
      return tffi_cmp_unordered(c, &f->result);
    }
  } else {
    f->kind = TFFI_CMP_FIELDS;
    if (tffi_rec_fields(f->l.v_obj, kTVMFFIFieldFlagBitMaskCompareOff, &f->lv, &f->ln) != 0)
      return -1;
    if (tffi_rec_fields(f->r.v_obj, kTVMFFIFieldFlagBitMaskCompareOff, &f->rv, &f->rn) != 0)
      return -1;
  }
  return 0;
}

/* Two different objects of one type index, neither NULL: decided (0) when
 * a cycle, else a frame pushed for them (1). */
static int tffi_cmp_push(TffiCmp* c, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out) {
  if (tffi_cmp_is_busy(c, l, r)) {
    *out = 0;
    return c->eq_only ? 0
                      : tffi_raise(TFFI_VALUE_ERROR,
                                   "RecursiveCompare: cyclic reference detected in ordering");
  }
  if (c->n >= TFFI_WALK_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "RecursiveCompare: maximum stack depth (%d) exceeded",
                      TFFI_WALK_MAX_DEPTH);
  if (TFFI_VEC_RESERVE(c, c->n + 1) != 0) return tffi_raise_oom(sizeof *c->items * (c->n + 1));
  TffiPtrSlot* slot = tffi_ptr_slot(&c->busy, l->v_obj);
  if (slot == NULL) return -1;
  slot->value += 1;
  TffiCmpFrame* f = &c->items[c->n++];
  memset(f, 0, sizeof *f);
  f->kind = TFFI_CMP_DECIDED;
  f->l = *l;
  f->r = *r;
  tffi_incref(l->v_obj);
  tffi_incref(r->v_obj);
  return tffi_cmp_init(c, f) != 0 ? -1 : 1;
}

/* The next pair of children of the frame (1), or its answer (0). */
static int tffi_cmp_next(TffiCmp* c, TffiCmpFrame* f, const TVMFFIAny** cl, const TVMFFIAny** cr,
                         int32_t* out) {
  if (f->kind == TFFI_CMP_SEQ) {
    const TVMFFISeqCell* l = TVMFFISeqGetCellPtr(f->l.v_obj);
    const TVMFFISeqCell* r = TVMFFISeqGetCellPtr(f->r.v_obj);
    if (f->i < l->size && f->i < r->size) {
      *cl = (const TVMFFIAny*)l->data + f->i;
      *cr = (const TVMFFIAny*)r->data + f->i++;
      return 1;
    }
    *out = (l->size > r->size) - (l->size < r->size);
    return 0;
  }
  if (f->kind == TFFI_CMP_MAP) {
    const TffiMap *l = (const TffiMap*)f->l.v_obj, *r = (const TffiMap*)f->r.v_obj;
    if (f->p == tffi_map_end(l)) return *out = 0;
    TffiKV *at = tffi_map_at(l, f->p), *other;
    int found = tffi_map_find(r, &at->key, &other);
    if (found <= 0) return found < 0 ? -1 : tffi_cmp_unordered(c, out);
    f->p = tffi_map_next(l, f->p);
    *cl = &at->value;
    *cr = &other->value;
    return 1;
  }
  if (f->kind == TFFI_CMP_FIELDS && f->i < f->ln && f->i < f->rn) {
    *cl = &f->lv[f->i];
    *cr = &f->rv[f->i++];
    return 1;
  }
  *out = f->kind == TFFI_CMP_DECIDED ? f->result : 0;
  return 0;
}

/* A child's answer: the first difference decides the frame. */
static int tffi_cmp_feed(TffiCmp* c, TffiCmpFrame* f, int32_t child) {
  if (child == 0) return 0;
  int is_map = f->kind == TFFI_CMP_MAP;
  f->kind = TFFI_CMP_DECIDED;
  f->result = child;
  return is_map ? tffi_cmp_unordered(c, &f->result) : 0;
}

static int tffi_cmp_enter(TffiCmp* c, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out) {
  int rc = tffi_cmp_shallow(c->eq_only, l, r, out);
  return rc == 1 ? tffi_cmp_push(c, l, r, out) : rc;
}

/* Walks the pair with the frames above those already on the stack (a
 * hook's recursion walks above its caller's). */
static int tffi_cmp(TffiCmp* c, const TVMFFIAny* l, const TVMFFIAny* r, int32_t* out) {
  size_t base = c->n;
  int rc = tffi_cmp_enter(c, l, r, out);
  while (rc >= 0 && c->n > base) {
    const TVMFFIAny *cl = NULL, *cr = NULL;
    rc = tffi_cmp_next(c, &c->items[c->n - 1], &cl, &cr, out);
    if (rc == 1)
      rc = tffi_cmp_enter(c, cl, cr, out);
    else if (rc == 0)
      tffi_cmp_pop(c);
    if (rc == 0 && c->n > base) rc = tffi_cmp_feed(c, &c->items[c->n - 1], *out);
  }
  while (c->n > base) tffi_cmp_pop(c);
  return rc < 0 ? -1 : 0;
}

/* The five functions: which results of the comparison mean true. */
typedef struct {
  const char* name;
  int eq_only, lt, eq, gt;
} TffiCmpFn;

static int tffi_cmp_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const TffiCmpFn* fn = self;
  TVMFFIAny l, r;
  if (tffi_args_count(fn->name, num_args, 2) || tffi_any_copy_owned(&args[0], &l)) return -1;
  if (tffi_any_copy_owned(&args[1], &r) != 0) {
    tffi_any_release(&l);
    return -1;
  }
  TffiCmp c = {.eq_only = fn->eq_only};
  int32_t cmp;
  int rc = tffi_cmp(&c, &l, &r, &cmp);
  tffi_free(c.items);
  tffi_ptr_table_free(&c.busy);
  tffi_any_release(&l);
  tffi_any_release(&r);
  if (rc != 0) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = cmp < 0 ? fn->lt : cmp == 0 ? fn->eq : fn->gt;
  return 0;
}

static const TffiCmpFn tffi_cmp_fns[] = {
    {"ffi.RecursiveEq", 1, 0, 1, 0}, {"ffi.RecursiveLt", 0, 1, 0, 0},
    {"ffi.RecursiveLe", 0, 1, 1, 0}, {"ffi.RecursiveGt", 0, 0, 0, 1},
    {"ffi.RecursiveGe", 0, 0, 1, 1},
};

__attribute__((constructor)) static void tffi_recursive_compare_register(void) {
  for (size_t i = 0; i < sizeof tffi_cmp_fns / sizeof *tffi_cmp_fns; ++i)
    tffi_builtin_register_self(tffi_cmp_fns[i].name, (void*)&tffi_cmp_fns[i], tffi_cmp_call);
}
