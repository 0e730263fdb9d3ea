/* Storage for classes defined in Python (upstream's `py_class`): the
 * package lays their fields out itself and asks the runtime for the pieces
 * that touch memory:
 *
 *   "ffi.MakeFieldGetter"(field_type_index) -> the address of a C getter
 *     reading a field of that kind (an int, for TVMFFIFieldInfo.getter);
 *   "ffi.MakeFieldSetter"(field_type_index, converter, convert_fn) -> a
 *     setter Function(field address, value) that runs the package's C
 *     converter convert_fn(converter, value, &out) and stores the result;
 *   "ffi._PyClassRegisterTypeAttrColumns"(type_index, total_size) gives the
 *     type `__ffi_init__` (as "ffi._RegisterFFIInit"), `__ffi_new__` (a
 *     zeroed object of total_size bytes) and `__ffi_shallow_copy__`.
 *
 * A field's storage follows from its static type index: Any (-1) is a
 * 16-byte value (an 8-byte Any field is an object pointer), an object type
 * an object pointer, anything else plain bytes. The deleter releases what
 * the fields own by the same rule. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "object.h"
#include "reflect_def.h"

#define TFFI_ANY_INDEX (-1) /* kTVMFFIAny: a field of any kind */

enum { TFFI_POD, TFFI_ANY, TFFI_OBJREF };

static int tffi_storage(const TVMFFIFieldInfo* f) {
  if (f->field_static_type_index == TFFI_ANY_INDEX)
    return f->size == (int64_t)sizeof(void*) ? TFFI_OBJREF : TFFI_ANY;
  return f->field_static_type_index >= kTVMFFIStaticObjectBegin ? TFFI_OBJREF : TFFI_POD;
}

/* Calls visit on every field of the object's type, ancestors' first. */
static void tffi_each_field(TVMFFIObject* obj, void (*visit)(const TVMFFIFieldInfo*, void*, void*),
                            void* ctx) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(obj->type_index);
  if (info == NULL) {
    tffi_set_raised(NULL); /* objects made here always have a registered type */
    return;
  }
  for (int32_t d = 1; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* t = d < info->type_depth ? info->type_ancestors[d] : info;
    for (int32_t i = 0; i < t->num_fields; ++i)
      visit(&t->fields[i], (char*)obj + t->fields[i].offset, ctx);
  }
}

static void tffi_release_field(const TVMFFIFieldInfo* f, void* addr, void* ctx) {
  (void)ctx;
  int kind = tffi_storage(f);
  if (kind == TFFI_ANY) tffi_any_release(addr);
  if (kind == TFFI_OBJREF && *(TVMFFIObject**)addr) tffi_decref(*(TVMFFIObject**)addr);
}

static void tffi_pyclass_delete(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong)
    tffi_each_field(self, tffi_release_field, NULL);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* Getters for each field kind: an owned value of the field's content. */
static int tffi_get_float(void* field, TVMFFIAny* out) {
  *out = tffi_any_none();
  out->type_index = kTVMFFIFloat;
  memcpy(&out->v_float64, field, sizeof(double));
  return 0;
}

static int tffi_get_bool(void* field, TVMFFIAny* out) {
  *out = tffi_any_none();
  out->type_index = kTVMFFIBool;
  out->v_int64 = *(const unsigned char*)field != 0;
  return 0;
}

/* A NULL pointer stays an opaque pointer, as upstream's getter reads it. */
static int tffi_get_ptr(void* field, TVMFFIAny* out) {
  *out = tffi_any_none();
  memcpy(&out->v_ptr, field, sizeof(void*));
  out->type_index = kTVMFFIOpaquePtr;
  return 0;
}

static int tffi_get_dtype(void* field, TVMFFIAny* out) {
  *out = tffi_any_none();
  out->type_index = kTVMFFIDataType;
  memcpy(&out->v_dtype, field, sizeof(DLDataType));
  return 0;
}

static int tffi_get_device(void* field, TVMFFIAny* out) {
  *out = tffi_any_none();
  out->type_index = kTVMFFIDevice;
  memcpy(&out->v_device, field, sizeof(DLDevice));
  return 0;
}

static int tffi_get_any(void* field, TVMFFIAny* out) { return tffi_any_copy_owned(field, out); }

static TVMFFIFieldGetter tffi_getter_for(int64_t ti) {
  switch (ti) {
    case kTVMFFIInt: return tffi_field_get_int;
    case kTVMFFIFloat: return tffi_get_float;
    case kTVMFFIBool: return tffi_get_bool;
    case kTVMFFIOpaquePtr: return tffi_get_ptr;
    case kTVMFFIDataType: return tffi_get_dtype;
    case kTVMFFIDevice: return tffi_get_device;
    default:
      if (ti == TFFI_ANY_INDEX || ti == kTVMFFINone) return tffi_get_any;
      return ti >= kTVMFFIStaticObjectBegin ? tffi_field_get_object : NULL;
  }
}

static int tffi_make_getter_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  int64_t ti = 0;
  if (tffi_args_count(self, num_args, 1) || tffi_args_int(self, args, 0, "field_type_index", &ti))
    return -1;
  TVMFFIFieldGetter getter = tffi_getter_for(ti);
  if (getter == NULL)
    return tffi_raise(TFFI_VALUE_ERROR, "Unsupported field type index for getter: %lld",
                      (long long)ti);
  *result = tffi_any_none();
  result->type_index = kTVMFFIInt;
  result->v_int64 = (int64_t)(intptr_t)getter;
  return 0;
}

/* Stores the owned value v into a field of kind ti (the value already
 * converted by the package to the field's type); takes v's reference. */
static int tffi_store(int64_t ti, int64_t size, void* addr, TVMFFIAny* v) {
  int32_t t = v->type_index;
  int ok = 1;
  switch (ti) {
    case kTVMFFIInt:
    case kTVMFFIBool:
      ok = t == kTVMFFIInt || t == kTVMFFIBool;
      if (ok && ti == kTVMFFIInt) memcpy(addr, &v->v_int64, sizeof(int64_t));
      if (ok && ti == kTVMFFIBool) *(unsigned char*)addr = v->v_int64 != 0;
      break;
    case kTVMFFIFloat: {
      double d = t == kTVMFFIFloat ? v->v_float64 : (double)v->v_int64;
      ok = t == kTVMFFIFloat || t == kTVMFFIInt || t == kTVMFFIBool;
      if (ok) memcpy(addr, &d, sizeof d);
      break;
    }
    case kTVMFFIOpaquePtr:
      ok = t == kTVMFFIOpaquePtr || t == kTVMFFINone;
      if (ok) memcpy(addr, &v->v_ptr, sizeof(void*));
      break;
    case kTVMFFIDataType:
      ok = t == kTVMFFIDataType;
      if (ok) memcpy(addr, &v->v_dtype, sizeof(DLDataType));
      break;
    case kTVMFFIDevice:
      ok = t == kTVMFFIDevice;
      if (ok) memcpy(addr, &v->v_device, sizeof(DLDevice));
      break;
    default:
      if ((ti == TFFI_ANY_INDEX || ti == kTVMFFINone) && size != (int64_t)sizeof(void*)) {
        TVMFFIAny old = *(TVMFFIAny*)addr;
        *(TVMFFIAny*)addr = *v;
        tffi_any_release(&old);
        return 0;
      }
      ok = t == kTVMFFINone || t >= kTVMFFIStaticObjectBegin;
      if (ok) {
        TVMFFIObject* old = *(TVMFFIObject**)addr;
        *(TVMFFIObject**)addr = t == kTVMFFINone ? NULL : v->v_obj;
        if (old) tffi_decref(old);
        return 0;
      }
  }
  if (!ok) {
    tffi_any_release(v);
    return tffi_raise(TFFI_TYPE_ERROR,
                      "field setter: a value of type index %d cannot be stored "
                      "in a field of type index %lld",
                      (int)t, (long long)ti);
  }
  return 0;
}

/* The package's converter: (converter, value, &out) -> 0 or -1 raised. */
typedef int (*TffiConvert)(void* converter, const TVMFFIAny* value, TVMFFIAny* out);

typedef struct {
  int64_t type_index;
  void* converter;
  TffiConvert convert;
} TffiSetter;

static int tffi_setter_call(void* self, const TVMFFIAny* args, int32_t num_args,
                            TVMFFIAny* result) {
  const TffiSetter* s = self;
  if (tffi_args_count("py_class field setter", num_args, 2)) return -1;
  if (args[0].type_index != kTVMFFIOpaquePtr || args[0].v_ptr == NULL)
    return tffi_args_error(TFFI_TYPE_ERROR, "py_class field setter", 0, "field",
                           "expected a field address but got type index %d",
                           (int)args[0].type_index);
  TVMFFIAny converted = tffi_any_none();
  if (s->convert(s->converter, &args[1], &converted) != 0) return -1;
  /* Object fields are 8 bytes; an Any field of 8 bytes is one as well. */
  int64_t size = s->type_index >= kTVMFFIStaticObjectBegin ? 8 : 16;
  if (tffi_store(s->type_index, size, args[0].v_ptr, &converted) != 0) return -1;
  *result = tffi_any_none();
  return 0;
}

static int tffi_make_setter_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                 TVMFFIAny* result) {
  int64_t ti = 0, converter = 0, convert = 0;
  if (tffi_args_count(self, num_args, 3) || tffi_args_int(self, args, 0, "field_type_index", &ti) ||
      tffi_args_int(self, args, 1, "type_converter", &converter) ||
      tffi_args_int(self, args, 2, "f_convert", &convert))
    return -1;
  if (convert == 0) return tffi_args_error(TFFI_VALUE_ERROR, self, 2, "f_convert", "is NULL");
  if (tffi_getter_for(ti) == NULL)
    return tffi_raise(TFFI_VALUE_ERROR, "Unsupported field type index for setter: %lld",
                      (long long)ti);
  TffiSetter* s = tffi_malloc(sizeof *s);
  if (s == NULL) return tffi_raise_oom(sizeof *s);
  s->type_index = ti;
  s->converter = (void*)(intptr_t)converter;
  s->convert = (TffiConvert)(intptr_t)convert;
  TVMFFIObject* fn = tffi_function_new(s, tffi_setter_call, tffi_free);
  if (fn == NULL) {
    tffi_free(s);
    return -1;
  }
  *result = tffi_any_object(fn);
  return 0;
}

/* What `__ffi_new__` and `__ffi_shallow_copy__` need of the type. */
typedef struct {
  int32_t type_index;
  int32_t total_size;
} TffiPyClass;

static TVMFFIObject* tffi_pyclass_alloc(const TffiPyClass* c) {
  return tffi_object_alloc((size_t)c->total_size, c->type_index, tffi_pyclass_delete);
}

static int tffi_new_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  (void)args;
  if (tffi_args_count("__ffi_new__", num_args, 0)) return -1;
  TVMFFIObject* obj = tffi_pyclass_alloc(self);
  if (obj == NULL) return -1;
  *result = tffi_any_object(obj);
  return 0;
}

/* A copy's field takes a reference of its own to what the source holds. */
static void tffi_copy_field(const TVMFFIFieldInfo* f, void* dst, void* src_obj) {
  const void* src = (const char*)src_obj + f->offset;
  memcpy(dst, src, (size_t)f->size);
  int kind = tffi_storage(f);
  const TVMFFIAny* any = dst;
  if (kind == TFFI_ANY && any->type_index >= kTVMFFIStaticObjectBegin && any->v_obj)
    tffi_incref(any->v_obj);
  if (kind == TFFI_OBJREF && *(TVMFFIObject* const*)dst) tffi_incref(*(TVMFFIObject* const*)dst);
}

static int tffi_copy_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const TffiPyClass* c = self;
  if (tffi_args_count("__ffi_shallow_copy__", num_args, 1)) return -1;
  if (args[0].type_index != c->type_index || args[0].v_obj == NULL)
    return tffi_args_error(TFFI_TYPE_ERROR, "__ffi_shallow_copy__", 0, "self",
                           "expected type index %d but got %d", (int)c->type_index,
                           (int)args[0].type_index);
  TVMFFIObject* copy = tffi_pyclass_alloc(c);
  if (copy == NULL) return -1;
  tffi_each_field(copy, tffi_copy_field, args[0].v_obj);
  *result = tffi_any_object(copy);
  return 0;
}

/* Registers a Function over a copy of `c` as the type attribute `name`. */
static int tffi_pyclass_attr(const TffiPyClass* c, const char* name, TVMFFISafeCallType call) {
  TffiPyClass* self = tffi_malloc(sizeof *self);
  if (self == NULL) return tffi_raise_oom(sizeof *self);
  *self = *c;
  TVMFFIObject* fn = tffi_function_new(self, call, tffi_free);
  if (fn == NULL) {
    tffi_free(self);
    return -1;
  }
  TVMFFIAny value = tffi_any_object(fn);
  TVMFFIByteArray attr = {name, strlen(name)};
  int rc = TVMFFITypeRegisterAttr(c->type_index, &attr, &value);
  tffi_decref(fn);
  return rc;
}

static int tffi_register_columns_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  int64_t ti = 0, size = 0;
  if (tffi_args_count(self, num_args, 2) || tffi_args_int(self, args, 0, "type_index", &ti) ||
      tffi_args_int(self, args, 1, "total_size", &size))
    return -1;
  if (size < (int64_t)sizeof(TVMFFIObject) || size > (1 << 24))
    return tffi_args_error(TFFI_VALUE_ERROR, self, 1, "total_size", "%lld is out of range",
                           (long long)size);
  TffiPyClass c = {(int32_t)ti, (int32_t)size};
  TVMFFIAny arg = args[0], ignored;
  if (tffi_builtin_call(self, "ffi._RegisterFFIInit", &arg, 1, &ignored) ||
      tffi_pyclass_attr(&c, "__ffi_new__", tffi_new_call) ||
      tffi_pyclass_attr(&c, "__ffi_shallow_copy__", tffi_copy_call))
    return -1;
  *result = tffi_any_none();
  return 0;
}

__attribute__((constructor)) static void tffi_pyclass_register(void) {
  tffi_builtin_register("ffi.MakeFieldGetter", tffi_make_getter_call);
  tffi_builtin_register("ffi.MakeFieldSetter", tffi_make_setter_call);
  tffi_builtin_register("ffi._PyClassRegisterTypeAttrColumns", tffi_register_columns_call);
}
