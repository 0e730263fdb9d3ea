/* The `__ffi_convert__` attribute of the built-in object types, as
 * upstream's runtime registers it: a Function taking any value and
 * returning it as the type, converting what the type's C++ reference class
 * accepts (a list for an array and back, a dict for a map and back, a
 * sequence of ints for a shape, any form of text for str and bytes), else
 * TypeError "Cannot cast from `<kind>` to `<type>`". Python's type
 * converter calls it to coerce values into typed fields and arguments. */
#include <string.h>

#include "any.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "map.h"
#include "object.h"
#include "recursive.h"
#include "reflect_def.h"
#include "tffi_string.h"
#include "type.h"

static int tffi_cannot_cast(int32_t from, int32_t to) {
  int fn, tn;
  const char* fk = tffi_rec_type_key(from, &fn);
  const char* tk = tffi_rec_type_key(to, &tn);
  return tffi_raise(TFFI_TYPE_ERROR, "Cannot cast from `%.*s` to `%.*s`", fn, fk, tn, tk);
}

/* A sequence's elements, or a map's keys and values in turn, as the
 * arguments of another container's constructor. */
static int tffi_rebuild(const char* ctor, const TVMFFIAny* from, int require_ints, TVMFFIAny* out) {
  TVMFFIAny* args;
  int32_t n;
  int t = from->type_index;
  if (t == kTVMFFIArray || t == kTVMFFIList) {
    const TVMFFISeqCell* cell = TVMFFISeqGetCellPtr(from->v_obj);
    args = cell->data;
    n = (int32_t)cell->size;
    for (int32_t i = 0; require_ints && i < n; ++i)
      if (args[i].type_index != kTVMFFIInt && args[i].type_index != kTVMFFIBool) return 1;
    return tffi_builtin_call("__ffi_convert__", ctor, args, n, out);
  }
  const TffiMap* m = (const TffiMap*)from->v_obj;
  TVMFFIObject* holder = tffi_object_alloc(sizeof(TVMFFIObject) + 2 * m->size * sizeof(TVMFFIAny),
                                           kTVMFFIObject, tffi_object_delete_plain);
  if (holder == NULL) return -1;
  args = (TVMFFIAny*)(holder + 1);
  n = 0;
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p)) {
    args[n++] = tffi_map_at(m, p)->key;
    args[n++] = tffi_map_at(m, p)->value;
  }
  int rc = tffi_builtin_call("__ffi_convert__", ctor, args, n, out);
  tffi_decref(holder);
  return rc;
}

/* `self` holds the target type index. */
static int tffi_convert_call(void* self, const TVMFFIAny* args, int32_t num_args,
                             TVMFFIAny* result) {
  int32_t to = (int32_t)(intptr_t)self, from = num_args == 1 ? args[0].type_index : -1;
  if (num_args != 1)
    return tffi_raise(TFFI_TYPE_ERROR, "__ffi_convert__: expected 1 argument but got %d",
                      (int)num_args);
  int is_obj = from >= kTVMFFIStaticObjectBegin && args[0].v_obj != NULL;
  if (from == to || (to == kTVMFFIObject && (is_obj || from == kTVMFFINone)))
    return tffi_any_copy_owned(&args[0], result);
  size_t size;
  const char* text = tffi_any_str_data(&args[0], &size);
  if (to == kTVMFFIStr && (from == kTVMFFISmallStr || from == kTVMFFIRawStr)) {
    if (from == kTVMFFIRawStr && args[0].v_c_str == NULL) return tffi_cannot_cast(from, to);
    if (from == kTVMFFIRawStr) text = args[0].v_c_str, size = strlen(text);
    return tffi_any_from_bytes(kTVMFFIStr, text, size, result);
  }
  if (to == kTVMFFIBytes && (from == kTVMFFISmallBytes || from == kTVMFFIByteArrayPtr)) {
    const TVMFFIByteArray* bytes = args[0].v_ptr;
    if (from == kTVMFFIByteArrayPtr && (bytes == NULL || (bytes->data == NULL && bytes->size)))
      return tffi_cannot_cast(from, to);
    if (from == kTVMFFIByteArrayPtr) text = bytes->data ? bytes->data : "", size = bytes->size;
    return tffi_any_from_bytes(kTVMFFIBytes, text, size, result);
  }
  int seq = is_obj && (from == kTVMFFIArray || from == kTVMFFIList);
  int map = is_obj && (from == kTVMFFIMap || from == kTVMFFIDict);
  int rc = 1;
  if (seq && (to == kTVMFFIArray || to == kTVMFFIList))
    rc = tffi_rebuild(to == kTVMFFIArray ? "ffi.Array" : "ffi.List", &args[0], 0, result);
  else if (seq && to == kTVMFFIShape)
    rc = tffi_rebuild("ffi.Shape", &args[0], 1, result);
  else if (map && (to == kTVMFFIMap || to == kTVMFFIDict))
    rc = tffi_rebuild(to == kTVMFFIMap ? "ffi.Map" : "ffi.Dict", &args[0], 0, result);
  return rc == 1 ? tffi_cannot_cast(from, to) : rc;
}

static const int32_t tffi_convert_types[] = {
    kTVMFFIObject, kTVMFFIStr,   kTVMFFIBytes, kTVMFFIError, kTVMFFIFunction, kTVMFFIShape,
    kTVMFFITensor, kTVMFFIArray, kTVMFFIMap,   kTVMFFIList,  kTVMFFIDict,
};

static int tffi_convert_attrs_register(void) {
  for (size_t i = 0; i < sizeof tffi_convert_types / sizeof *tffi_convert_types; ++i) {
    int32_t t = tffi_convert_types[i];
    TVMFFIObject* fn = tffi_function_new((void*)(intptr_t)t, tffi_convert_call, NULL);
    if (fn == NULL) return -1;
    TVMFFIAny value = tffi_any_object(fn);
    int rc = tffi_define_attr(t, "__ffi_convert__", &value);
    tffi_decref(fn);
    if (rc != 0) return -1;
  }
  return 0;
}

__attribute__((constructor)) static void tffi_convert_attrs_at_load(void) {
  tffi_type_on_ready(tffi_convert_attrs_register);
}
