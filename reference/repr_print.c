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
 *   TVM_FFI_REPR_WITH_ADDR=1 containers and objects carry "@0x<address>". */
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "dtype.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "mem.h"
#include "object.h"
#include "recursive.h"
#include "repr_text.h"
#include "sentinel.h"
#include "tffi_string.h"

typedef struct {
  TffiText* out;
  TffiMap* seen; /* object -> 0 while being printed, else its text */
  int with_addr;
  int depth;
} TffiRepr;

static int tffi_repr(TffiRepr* r, const TVMFFIAny* v);

static void tffi_repr_addr(TffiRepr* r, const void* obj) {
  if (r->with_addr) tffi_text_printf(r->out, "@%p", obj);
}

static int tffi_repr_pod(TffiRepr* r, const TVMFFIAny* v) {
  char buf[TFFI_DTYPE_TEXT_MAX];
  int len;
  switch (v->type_index) {
    case kTVMFFINone: tffi_text_str(r->out, "None"); return 0;
    case kTVMFFIBool: tffi_text_str(r->out, v->v_int64 ? "True" : "False"); return 0;
    case kTVMFFIInt: tffi_text_printf(r->out, "%lld", (long long)v->v_int64); return 0;
    case kTVMFFIFloat: tffi_text_printf(r->out, "%g", v->v_float64); return 0;
    case kTVMFFIDevice: tffi_text_device(r->out, v->v_device); return 0;
    case kTVMFFIDataType:
      len = tffi_dtype_format(v->v_dtype, buf);
      if (len < 0) return -1;
      tffi_text_add(r->out, buf, (size_t)len);
      return 0;
    default: {
      const char* key = tffi_rec_type_key(v->type_index, &len);
      tffi_text_add(r->out, key, (size_t)len);
      return 0;
    }
  }
}

/* Whether type_index is ffi.Enum or below it. */
static int tffi_is_enum(int32_t type_index) {
  static int32_t enum_index = -1;
  if (enum_index < 0) {
    TVMFFIByteArray key = {"ffi.Enum", 8};
    if (TVMFFITypeKeyToIndex(&key, &enum_index) != 0) {
      tffi_set_raised(NULL);
      return 0;
    }
  }
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == NULL) return tffi_set_raised(NULL), 0;
  if (type_index == enum_index) return 1;
  for (int32_t d = 0; d < info->type_depth; ++d)
    if (info->type_ancestors[d]->type_index == enum_index) return 1;
  return 0;
}

/* Renders v into a text of its own (for caching and for hooks). */
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

static void tffi_repr_sep(TffiRepr* r, size_t i) {
  if (i > 0) tffi_text_str(r->out, ", ");
}

/* An object's fields as "Key(name=value, ...)"; each name once. */
static int tffi_repr_fields(TffiRepr* r, const TVMFFIAny* v) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(v->type_index);
  if (info == NULL) return -1;
  tffi_text_add(r->out, info->type_key.data, info->type_key.size);
  tffi_repr_addr(r, v->v_obj);
  size_t shown = 0;
  for (int32_t d = 1; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_fields; ++i) {
      const TVMFFIFieldInfo* f = &t->fields[i];
      if ((f->flags & kTVMFFIFieldFlagBitMaskReprOff) || f->getter == NULL) continue;
      int dup = 0;
      for (int32_t e = 1; e <= d && !dup; ++e) {
        const TVMFFITypeInfo* u = e < info->type_depth ? info->type_ancestors[e] : info;
        for (int32_t j = 0; j < (u == t ? i : u->num_fields) && !dup; ++j)
          dup = !(u->fields[j].flags & kTVMFFIFieldFlagBitMaskReprOff) &&
                u->fields[j].name.size == f->name.size &&
                memcmp(u->fields[j].name.data, f->name.data, f->name.size) == 0;
      }
      if (dup) continue;
      TVMFFIAny value = tffi_any_none();
      if (f->getter((char*)v->v_obj + f->offset, &value) != 0) return -1;
      tffi_text_str(r->out, shown++ ? ", " : "(");
      tffi_text_add(r->out, f->name.data, f->name.size);
      tffi_text_add(r->out, "=", 1);
      int rc = tffi_repr(r, &value);
      tffi_any_release(&value);
      if (rc != 0) return -1;
    }
  }
  if (shown) tffi_text_add(r->out, ")", 1);
  return 0;
}

/* The children of a container or object, the pair marked as in progress. */
static int tffi_repr_children(TffiRepr* r, const TVMFFIAny* v) {
  int32_t t = v->type_index;
  int rc = 0;
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(v->v_obj);
    tffi_text_add(r->out, t == kTVMFFIArray ? "(" : "[", 1);
    for (int64_t i = 0; i < cell->size && rc == 0; ++i) {
      tffi_repr_sep(r, (size_t)i);
      rc = tffi_repr(r, (const TVMFFIAny*)cell->data + i);
    }
    if (t == kTVMFFIArray && cell->size == 1) tffi_text_add(r->out, ",", 1);
    tffi_text_add(r->out, t == kTVMFFIArray ? ")" : "]", 1);
  } else if (t == kTVMFFIMap || t == kTVMFFIDict) {
    const TffiMap* m = (const TffiMap*)v->v_obj;
    size_t i = 0;
    tffi_text_add(r->out, "{", 1);
    for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m) && rc == 0; p = tffi_map_next(m, p)) {
      tffi_repr_sep(r, i++);
      rc = tffi_repr(r, &tffi_map_at(m, p)->key);
      tffi_text_str(r->out, ": ");
      if (rc == 0) rc = tffi_repr(r, &tffi_map_at(m, p)->value);
    }
    tffi_text_add(r->out, "}", 1);
  } else {
    return tffi_repr_fields(r, v);
  }
  if (rc == 0) tffi_repr_addr(r, v->v_obj);
  return rc;
}

/* Objects printed without looking inside them; 1 when v was one. */
static int tffi_repr_leaf(TffiRepr* r, const TVMFFIAny* v) {
  int32_t t = v->type_index;
  if (v->v_obj == tffi_missing_object())
    tffi_text_str(r->out, "<MISSING>");
  else if (v->v_obj == tffi_kwargs_object())
    tffi_text_str(r->out, "<KWARGS>");
  else if (t == kTVMFFIBigInt) {
    TVMFFIByteArray w = TVMFFIBigIntGetContentByteArray(v);
    tffi_text_bigint(r->out, w.data, w.size);
  } else if (t == kTVMFFIShape) {
    const TVMFFIShapeCell* s = TVMFFIShapeGetCellPtr(v->v_obj);
    tffi_text_str(r->out, "Shape(");
    for (size_t i = 0; i < s->size; ++i)
      tffi_text_printf(r->out, i ? ", %lld" : "%lld", (long long)s->data[i]);
    tffi_text_add(r->out, ")", 1);
  } else if (t == kTVMFFITensor) {
    const DLTensor* d = TVMFFITensorGetDLTensorPtr(v->v_obj);
    TVMFFIAny dtype = tffi_any_none();
    dtype.type_index = kTVMFFIDataType;
    dtype.v_dtype = d->dtype;
    if (tffi_repr_pod(r, &dtype) != 0) return -1;
    tffi_text_add(r->out, "[", 1);
    for (int i = 0; i < d->ndim; ++i)
      tffi_text_printf(r->out, i ? ", %lld" : "%lld", (long long)d->shape[i]);
    tffi_text_str(r->out, "]@");
    tffi_text_device(r->out, d->device);
    tffi_repr_addr(r, v->v_obj);
  } else {
    return 0;
  }
  return 1;
}

static int tffi_repr_object(TffiRepr* r, const TVMFFIAny* v) {
  static const TVMFFITypeAttrColumn* repr_column;
  TffiKV* seen;
  int rc = tffi_map_find(r->seen, v, &seen);
  if (rc < 0) return -1;
  if (rc == 1 && seen->value.type_index == kTVMFFIInt) {
    tffi_text_str(r->out, "...");
    tffi_repr_addr(r, v->v_obj);
    return 0;
  }
  if (rc == 1) {
    size_t n;
    const char* text = tffi_any_str_data(&seen->value, &n);
    tffi_text_add(r->out, text, n);
    return 0;
  }
  if ((rc = tffi_repr_leaf(r, v)) != 0) return rc < 0 ? -1 : 0;
  if (r->depth >= TFFI_RECURSIVE_MAX_DEPTH)
    return tffi_raise(TFFI_VALUE_ERROR, "ffi.ReprPrint: nesting deeper than %d",
                      TFFI_RECURSIVE_MAX_DEPTH);
  TVMFFIAny marker = tffi_any_none();
  marker.type_index = kTVMFFIInt;
  if (tffi_map_set(r->seen, v, &marker) != 0) return -1;
  TffiText text = {NULL, 0, 0, 0};
  TffiText* parent = r->out;
  r->out = &text;
  r->depth += 1;
  const TVMFFIAny* hook = tffi_rec_hook(&repr_column, "__ffi_repr__", v->type_index);
  if (hook != NULL) {
    rc = tffi_repr_hook(r, hook, v);
  } else if (tffi_is_enum(v->type_index)) {
    int len;
    const char* key = tffi_rec_type_key(v->type_index, &len);
    size_t n;
    const char* name = tffi_any_str_data((const TVMFFIAny*)((char*)v->v_obj + 32), &n);
    tffi_text_add(r->out, key, (size_t)len);
    tffi_text_add(r->out, ".", 1);
    tffi_text_add(r->out, name ? name : "", name ? n : 0);
    tffi_repr_addr(r, v->v_obj);
  } else {
    rc = tffi_repr_children(r, v);
  }
  r->depth -= 1;
  r->out = parent;
  if (rc == 0 && text.failed) rc = tffi_raise(TFFI_MEMORY_ERROR, "ffi.ReprPrint: out of memory");
  TVMFFIAny cached = tffi_any_none();
  if (rc == 0) rc = tffi_any_from_bytes(kTVMFFIStr, text.items ? text.items : "", text.n, &cached);
  if (rc == 0) rc = tffi_map_set(r->seen, v, &cached);
  if (rc == 0) tffi_text_add(r->out, text.items ? text.items : "", text.n);
  tffi_any_release(&cached);
  tffi_free(text.items);
  return rc;
}

static int tffi_repr(TffiRepr* r, const TVMFFIAny* v) {
  int32_t t = v->type_index;
  size_t n;
  const char* text = tffi_any_str_data(v, &n);
  /* Text of either form first: the heap forms need no cache. */
  if (text && (t == kTVMFFISmallStr || t == kTVMFFIStr))
    tffi_text_quoted(r->out, text, n);
  else if (text)
    tffi_text_bytes(r->out, text, n);
  else if (t < kTVMFFIStaticObjectBegin)
    return tffi_repr_pod(r, v);
  else if (v->v_obj == NULL)
    tffi_text_str(r->out, "None");
  else
    return tffi_repr_object(r, v);
  return 0;
}

static int tffi_repr_print_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  TVMFFIAny v;
  if (tffi_args_count(self, num_args, 1) || tffi_any_copy_owned(&args[0], &v)) return -1;
  TVMFFIObject* seen = tffi_map_new(kTVMFFIDict, 0);
  const char* env = getenv("TVM_FFI_REPR_WITH_ADDR");
  TffiText text = {NULL, 0, 0, 0};
  TffiRepr r = {&text, (TffiMap*)seen, env != NULL && strcmp(env, "1") == 0, 0};
  int rc = seen ? tffi_repr_to(&r, &v, &text) : -1;
  if (rc == 0) rc = tffi_any_from_bytes(kTVMFFIStr, text.items ? text.items : "", text.n, result);
  if (seen) tffi_decref(seen);
  tffi_any_release(&v);
  tffi_free(text.items);
  return rc;
}

__attribute__((constructor)) static void tffi_repr_print_register(void) {
  tffi_builtin_register("ffi.ReprPrint", tffi_repr_print_call);
}
