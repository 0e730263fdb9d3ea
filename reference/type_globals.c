/* The type registry and constructors seen from across the ABI:
 * "ffi.GetRegisteredTypeKeys" (every type key, in index order) and
 * "ffi.FunctionFromExternC" (a Function around a C callback, as
 * TVMFFIFunctionCreate makes it, for hosts that hold raw pointers). */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "mem.h"
#include "object.h"
#include "tffi_string.h"
#include "type.h"
#include "vec.h"

typedef struct {
  TVMFFIAny* items;
  size_t n, cap;
} TffiKeys;

/* Type registry lock held: only values are made here. */
static int tffi_keys_add(void* ctx, const TVMFFITypeInfo* info) {
  TffiKeys* keys = ctx;
  TVMFFIAny key;
  if (tffi_any_from_bytes(kTVMFFIStr, info->type_key.data, info->type_key.size, &key) != 0)
    return -1;
  if (TFFI_VEC_PUSH(keys, key) != 0) {
    tffi_any_release(&key);
    return tffi_raise(TFFI_MEMORY_ERROR, "ffi.GetRegisteredTypeKeys: out of memory");
  }
  return 0;
}

static int tffi_type_keys_call(void* self, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)args;
  if (tffi_args_count(self, num_args, 0)) return -1;
  TffiKeys keys = {NULL, 0, 0};
  int rc = tffi_type_each(tffi_keys_add, &keys);
  if (rc == 0) rc = tffi_builtin_call(self, "ffi.Array", keys.items, (int32_t)keys.n, result);
  for (size_t i = 0; i < keys.n; ++i) tffi_any_release(&keys.items[i]);
  tffi_free(keys.items);
  return rc;
}

/* A void* argument: an opaque pointer, or None for NULL. */
static int tffi_args_ptr(const char* fn, const TVMFFIAny* args, int32_t i, const char* name,
                         void** out) {
  int32_t t = args[i].type_index;
  if (t != kTVMFFIOpaquePtr && t != kTVMFFINone)
    return tffi_args_error(TFFI_TYPE_ERROR, fn, i, name, "expected void* but got type index %d",
                           (int)t);
  *out = t == kTVMFFINone ? NULL : args[i].v_ptr;
  return 0;
}

static int tffi_from_extern_c_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  void *ctx = NULL, *call = NULL, *deleter = NULL;
  if (tffi_args_count(self, num_args, 3) || tffi_args_ptr(self, args, 0, "self", &ctx) ||
      tffi_args_ptr(self, args, 1, "safe_call", &call) ||
      tffi_args_ptr(self, args, 2, "deleter", &deleter))
    return -1;
  if (call == NULL) return tffi_args_error(TFFI_VALUE_ERROR, self, 1, "safe_call", "is NULL");
  TVMFFIObject* fn = tffi_function_new(ctx, (TVMFFISafeCallType)call, (void (*)(void*))deleter);
  if (fn == NULL) return -1;
  *result = tffi_any_object(fn);
  return 0;
}

__attribute__((constructor)) static void tffi_type_globals_register(void) {
  tffi_builtin_register("ffi.GetRegisteredTypeKeys", tffi_type_keys_call);
  tffi_builtin_register("ffi.FunctionFromExternC", tffi_from_extern_c_call);
}
