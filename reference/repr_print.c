/* "ffi.ReprPrint"(value) -> str: the text upstream's Python package shows
 * for repr() and str() of FFI objects, spelled as upstream spells it:
 *
 *   None True False, ints, floats as C++ streams print doubles (%g), dtype
 *   strings, devices "cpu:0", str as a quoted literal, bytes as b"...";
 *   an array "(1, 2)" ("(1,)" alone), a list "[1, 2]", a map or dict
 *   "{k: v, ...}"; a shape "Shape(1, 2)", a tensor "float32[2, 3]@cpu:0";
 *   the missing and keyword markers "<MISSING>", "<KWARGS>"; an enum
 *   singleton "<type key>.<name>"; an object with a `__ffi_repr__` hook by
 *   the hook, else "<type key>(field=value, ...)" over its reflected fields
 *   (repr-off ones skipped), or the bare type key without fields. An
 *   object met again inside itself prints as "...". With
 *   TVM_FFI_REPR_WITH_ADDR=1 containers and objects carry "@0x<address>".
 *
 * Objects are walked with a stack of frames of their own, each writing
 * straight into the text. An object met again once printed is printed
 * again from a copy: of its place in the result, or of its own text when
 * it was printed for a hook's recursion (into a text of its own). */
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "function.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "ptr_table.h"
#include "recursive.h"
#include "repr_leaf.h"
#include "repr_text.h"
#include "tffi_error.h"
#include "tffi_string.h"
#include "vec.h"

/* What a frame still has to print: elements, entries, fields; a hook's or
 * an enum's frame is printed as soon as it is made. */
enum { TFFI_REPR_SEQ, TFFI_REPR_MAP, TFFI_REPR_FIELDS, TFFI_REPR_DONE };

/* An object being printed. */
typedef struct {
  TVMFFIAny v;   /* owned */
  TffiText* out; /* where its text goes */
  size_t start;  /* ... from this offset */
  int kind;
  int64_t i;       /* the next element, entry part (key even, value odd) or field */
  uint64_t p;      /* the entry of a map's next key or value */
  int32_t d;       /* the ancestor level of the type whose field comes next */
  size_t shown;    /* the fields printed so far */
  TVMFFIAny field; /* the value of the field being printed (owned) */
} TffiReprFrame;

/* Where the text of a printed object is: in the result, or in a str of
 * its own when it was printed for a hook's recursion. */
typedef struct {
  size_t start, size;
  TVMFFIAny text; /* None: in the result */
} TffiSpan;

typedef struct {
  TffiText* out;
  TffiText result;
  TffiPtrTable seen; /* object -> mark 1 while being printed, 2 with its span's index */
  int with_addr;
  TffiReprFrame* items; /* innermost last */
  size_t n, cap;
  struct {
    TffiSpan* items;
    size_t n, cap;
  } spans;
} TffiRepr;

static int tffi_repr(TffiRepr* r, const TVMFFIAny* v);

/* Renders v into a text of its own (for hooks). */
static int tffi_repr_to(TffiRepr* r, const TVMFFIAny* v, TffiText* into) {
  TffiText* saved = r->out;
  r->out = into;
  int rc = tffi_repr(r, v);
  r->out = saved;
  if (rc == 0 && into->failed) rc = tffi_raise(TFFI_MEMORY_ERROR, "ffi.ReprPrint: out of memory");
  return rc;
}

/* The recursion handed to a __ffi_repr__ hook: (value) -> str. */
static int tffi_repr_recurse_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                  TVMFFIAny* result) {
  TffiText text = {NULL, 0, 0, 0};
  if (tffi_args_count("ReprPrint hook callback", num_args, 1)) return -1;
  int rc = tffi_repr_to(self, &args[0], &text);
  if (rc == 0) rc = tffi_any_from_bytes(kTVMFFIStr, text.items ? text.items : "", text.n, result);
  tffi_free(text.items);
  return rc;
}

static int tffi_repr_hook(TffiRepr* r, const TVMFFIAny* hook, const TVMFFIAny* v) {
  TVMFFIObject* recurse = tffi_function_new(r, tffi_repr_recurse_call, NULL);
  if (recurse == NULL) return -1;
  TVMFFIAny args[2] = {*v, tffi_any_object(recurse)}, result = tffi_any_none();
  int rc = TVMFFIFunctionCall(hook->v_obj, args, 2, &result);
  tffi_decref(recurse);
  if (rc != 0) return -1;
  size_t n;
  const char* text = tffi_any_str_data(&result, &n);
  if (text) tffi_text_add(r->out, text, n);
  tffi_any_release(&result);
  return text ? 0 : tffi_raise(TFFI_TYPE_ERROR, "a __ffi_repr__ hook returned no str");
}

static void tffi_repr_enum(TffiRepr* r, const TVMFFIAny* v) {
  int len;
  const char* key = tffi_rec_type_key(v->type_index, &len);
  size_t n;
  const char* name = tffi_any_str_data((const TVMFFIAny*)((char*)v->v_obj + 32), &n);
  tffi_text_add(r->out, key, (size_t)len);
  tffi_text_add(r->out, ".", 1);
  tffi_text_add(r->out, name ? name : "", name ? n : 0);
  tffi_repr_addr(r->out, r->with_addr, v->v_obj);
}

/* Readies the frame on top, marked as being printed, to print its object:
 * writes what comes before the first child (or all of a hook's text). */
static int tffi_repr_init(TffiRepr* r, TffiReprFrame* f) {
  static const TVMFFITypeAttrColumn* repr_column;
  int32_t t = f->v.type_index;
  const TVMFFIAny* hook = tffi_rec_hook(&repr_column, "__ffi_repr__", t);
  if (hook != NULL) {
    TVMFFIAny v = f->v; /* the hook may grow the stack */
    return tffi_repr_hook(r, hook, &v);
  }
  if (tffi_repr_is_enum(t)) {
    tffi_repr_enum(r, &f->v);
  } else if (t == kTVMFFIArray || t == kTVMFFIList) {
    f->kind = TFFI_REPR_SEQ;
    tffi_text_add(r->out, t == kTVMFFIArray ? "(" : "[", 1);
  } else if (t == kTVMFFIMap || t == kTVMFFIDict) {
    f->kind = TFFI_REPR_MAP;
    f->p = tffi_map_begin((const TffiMap*)f->v.v_obj);
    tffi_text_add(r->out, "{", 1);
  } else {
    const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(t);
    if (info == NULL) return -1;
    f->kind = TFFI_REPR_FIELDS;
    f->d = 1;
    tffi_text_add(r->out, info->type_key.data, info->type_key.size);
    tffi_repr_addr(r->out, r->with_addr, f->v.v_obj);
  }
  return 0;
}

static int tffi_repr_push(TffiRepr* r, const TVMFFIAny* v) {
  if (r->n >= TFFI_WALK_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "ObjectGraphDFS: maximum stack depth (%d) exceeded",
                      TFFI_WALK_MAX_DEPTH);
  if (TFFI_VEC_RESERVE(r, r->n + 1) != 0) return tffi_raise_oom(sizeof *r->items * (r->n + 1));
  TffiPtrSlot* slot = tffi_ptr_slot(&r->seen, v->v_obj);
  if (slot == NULL) return -1;
  slot->mark = 1;
  TffiReprFrame* f = &r->items[r->n++];
  memset(f, 0, sizeof *f);
  f->v = *v;
  tffi_incref(v->v_obj);
  f->out = r->out;
  f->start = r->out->n;
  f->kind = TFFI_REPR_DONE;
  return tffi_repr_init(r, f);
}

/* An object printed before (or being printed); 0 when it was not. */
static int tffi_repr_seen(TffiRepr* r, const TVMFFIAny* v) {
  const TffiPtrSlot* seen = tffi_ptr_find(&r->seen, v->v_obj);
  if (seen == NULL || seen->mark == 0) return 0;
  if (seen->mark == 1) {
    tffi_text_str(r->out, "...");
    tffi_repr_addr(r->out, r->with_addr, v->v_obj);
    return 1;
  }
  const TffiSpan* span = &r->spans.items[seen->value];
  size_t n;
  const char* text = tffi_any_str_data(&span->text, &n);
  if (text != NULL)
    tffi_text_add(r->out, text, n);
  else
    tffi_text_copy(r->out, &r->result, span->start, span->size);
  return 1;
}

/* A value: printed (0), or an object with a frame pushed for it (1). */
static int tffi_repr_enter(TffiRepr* r, const TVMFFIAny* v) {
  int32_t t = v->type_index;
  size_t n;
  const char* text = tffi_any_str_data(v, &n);
  /* Text of either form first: the heap forms need no cache. */
  if (text && (t == kTVMFFISmallStr || t == kTVMFFIStr)) {
    tffi_text_quoted(r->out, text, n);
  } else if (text) {
    tffi_text_bytes(r->out, text, n);
  } else if (t < kTVMFFIStaticObjectBegin) {
    return tffi_repr_pod(r->out, v);
  } else if (v->v_obj == NULL) {
    tffi_text_str(r->out, "None");
  } else {
    int rc = tffi_repr_seen(r, v);
    if (rc == 0) rc = tffi_repr_leaf(r->out, r->with_addr, v);
    if (rc != 0) return rc < 0 ? -1 : 0;
    return tffi_repr_push(r, v) != 0 ? -1 : 1;
  }
  return 0;
}

/* Whether field i of level d of the type is printed: not repr-off, with a
 * getter, and its name not printed already (by a parent or before it). */
static int tffi_repr_field_shown(const TVMFFITypeInfo* info, int32_t d, int32_t i) {
  const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
  const TVMFFIFieldInfo* f = &t->fields[i];
  if ((f->flags & kTVMFFIFieldFlagBitMaskReprOff) || f->getter == NULL) return 0;
  for (int32_t e = 1; e <= d; ++e) {
    const TVMFFITypeInfo* u = e < info->type_depth ? info->type_ancestors[e] : info;
    for (int32_t j = 0; j < (u == t ? i : u->num_fields); ++j)
      if (!(u->fields[j].flags & kTVMFFIFieldFlagBitMaskReprOff) &&
          u->fields[j].name.size == f->name.size &&
          memcmp(u->fields[j].name.data, f->name.data, f->name.size) == 0)
        return 0;
  }
  return 1;
}

/* The next field to print (1, with "name=" written), or none (0). */
static int tffi_repr_next_field(TffiRepr* r, TffiReprFrame* f, const TVMFFIAny** child) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(f->v.type_index);
  tffi_any_release(&f->field);
  for (; f->d <= info->type_depth; ++f->d, f->i = 0) {
    const TVMFFITypeInfo* t = f->d < info->type_depth ? info->type_ancestors[f->d] : info;
    while (f->i < t->num_fields) {
      const TVMFFIFieldInfo* field = &t->fields[f->i];
      if (!tffi_repr_field_shown(info, f->d, (int32_t)f->i++)) continue;
      if (field->getter((char*)f->v.v_obj + field->offset, &f->field) != 0) return -1;
      tffi_text_str(r->out, f->shown++ ? ", " : "(");
      tffi_text_add(r->out, field->name.data, field->name.size);
      tffi_text_add(r->out, "=", 1);
      *child = &f->field;
      return 1;
    }
  }
  if (f->shown) tffi_text_add(r->out, ")", 1);
  return 0;
}

/* The next child of the frame to print (1), with what comes before it
 * written; or the frame's end written (0). */
static int tffi_repr_next(TffiRepr* r, TffiReprFrame* f, const TVMFFIAny** child) {
  int32_t t = f->v.type_index;
  if (f->kind == TFFI_REPR_SEQ) {
    if ((*child = tffi_rec_seq_child(f->v.v_obj, &f->i)) != NULL) {
      if (f->i > 1) tffi_text_str(r->out, ", ");
      return 1;
    }
    if (t == kTVMFFIArray && f->i == 1) tffi_text_add(r->out, ",", 1);
    tffi_text_add(r->out, t == kTVMFFIArray ? ")" : "]", 1);
  } else if (f->kind == TFFI_REPR_MAP) {
    if ((*child = tffi_rec_map_child((const TffiMap*)f->v.v_obj, &f->p, &f->i)) != NULL) {
      tffi_text_str(r->out, f->i % 2 == 0 ? ": " : f->i > 1 ? ", " : "");
      return 1;
    }
    tffi_text_add(r->out, "}", 1);
  } else {
    return f->kind == TFFI_REPR_FIELDS ? tffi_repr_next_field(r, f, child) : 0;
  }
  if (f->kind != TFFI_REPR_DONE) tffi_repr_addr(r->out, r->with_addr, f->v.v_obj);
  return 0; /* a hook's or an enum's frame wrote its address, if any, already */
}

/* The frame on top is printed: remembered (where its text is, or the text
 * itself when not in the result) and popped. */
static int tffi_repr_finish(TffiRepr* r) {
  TffiReprFrame* f = &r->items[r->n - 1];
  if (f->out->failed) return tffi_raise(TFFI_MEMORY_ERROR, "ffi.ReprPrint: out of memory");
  TffiSpan span = {f->start, f->out->n - f->start, tffi_any_none()};
  if (f->out != &r->result &&
      tffi_any_from_bytes(kTVMFFIStr, f->out->items + span.start, span.size, &span.text) != 0)
    return -1;
  if (TFFI_VEC_PUSH(&r->spans, span) != 0) {
    tffi_any_release(&span.text);
    return tffi_raise_oom(sizeof span * (r->spans.n + 1));
  }
  TffiPtrSlot* slot = tffi_ptr_find(&r->seen, f->v.v_obj); /* marked when pushed */
  slot->mark = 2;
  slot->value = (int64_t)(r->spans.n - 1);
  return 0;
}

static void tffi_repr_pop(TffiRepr* r) {
  TffiReprFrame* f = &r->items[--r->n];
  tffi_any_release(&f->field);
  tffi_any_release(&f->v);
}

/* Prints v into r->out, objects with the frames above those already on
 * the stack (a hook's recursion prints above its caller's). */
static int tffi_repr(TffiRepr* r, const TVMFFIAny* v) {
  size_t base = r->n;
  int rc = tffi_repr_enter(r, v);
  while (rc >= 0 && r->n > base) {
    const TVMFFIAny* child = NULL;
    rc = tffi_repr_next(r, &r->items[r->n - 1], &child);
    if (rc == 1) {
      rc = tffi_repr_enter(r, child);
    } else if (rc == 0) {
      rc = tffi_repr_finish(r);
      tffi_repr_pop(r);
    }
  }
  while (r->n > base) tffi_repr_pop(r);
  return rc < 0 ? -1 : 0;
}

static int tffi_repr_print_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  TVMFFIAny v;
  if (tffi_args_count(self, num_args, 1) || tffi_any_copy_owned(&args[0], &v)) return -1;
  const char* env = getenv("TVM_FFI_REPR_WITH_ADDR");
  TffiRepr r = {.with_addr = env != NULL && strcmp(env, "1") == 0};
  int rc = tffi_repr_to(&r, &v, &r.result);
  if (rc == 0) {
    const char* text = r.result.items ? r.result.items : "";
    rc = tffi_any_from_bytes(kTVMFFIStr, text, r.result.n, result);
  }
  tffi_ptr_table_free(&r.seen);
  for (size_t i = 0; i < r.spans.n; ++i) tffi_any_release(&r.spans.items[i].text);
  tffi_any_release(&v);
  tffi_free(r.result.items);
  tffi_free(r.items);
  tffi_free(r.spans.items);
  return rc;
}

__attribute__((constructor)) static void tffi_repr_print_register(void) {
  tffi_builtin_register("ffi.ReprPrint", tffi_repr_print_call);
}
