/* The registry seen from across the ABI: "ffi.FunctionListGlobalNamesFunctor",
 * "ffi.FunctionRemoveGlobal" and "ffi.GetGlobalFuncMetadata", which hosts
 * (upstream's Python package first) call to list, drop and describe the
 * global functions. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "mem.h"
#include "object.h"
#include "registry.h"
#include "tffi_string.h"
#include "vec.h"

/* The names as they were when the functor was made: a later registration
 * does not shift the indices a caller is walking. */
typedef struct {
  TVMFFIAny* items;
  size_t n, cap;
} TffiNames;

static void tffi_names_free(void* self) {
  TffiNames* names = self;
  for (size_t i = 0; i < names->n; ++i) tffi_any_release(&names->items[i]);
  tffi_free(names->items);
  tffi_free(names);
}

/* Registry lock held: only values are made here, nothing looked up. */
static int tffi_names_add(void* ctx, const char* name, size_t len) {
  TffiNames* names = ctx;
  TVMFFIAny value;
  if (tffi_any_from_bytes(kTVMFFIStr, name, len, &value) != 0) return -1;
  if (TFFI_VEC_PUSH(names, value) != 0) {
    tffi_any_release(&value);
    return tffi_raise(TFFI_MEMORY_ERROR, "ffi.FunctionListGlobalNamesFunctor: out of memory");
  }
  return 0;
}

/* The functor: (-1) -> how many names; (i) -> the i-th name. */
static int tffi_names_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const char* fn = "ffi.FunctionListGlobalNamesFunctor()";
  const TffiNames* names = self;
  int64_t i = 0;
  if (tffi_args_count(fn, num_args, 1) || tffi_args_int(fn, args, 0, "index", &i)) return -1;
  if (i < 0) {
    *result = tffi_any_none();
    result->type_index = kTVMFFIInt;
    result->v_int64 = (int64_t)names->n;
    return 0;
  }
  if ((uint64_t)i >= names->n)
    return tffi_raise(TFFI_INDEX_ERROR, "%s: index %lld out of bounds for %zu names", fn,
                      (long long)i, names->n);
  return tffi_any_copy_owned(&names->items[i], result);
}

static int tffi_list_names_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                TVMFFIAny* result) {
  (void)args;
  if (tffi_args_count(self, num_args, 0)) return -1;
  TffiNames* names = tffi_calloc(1, sizeof *names);
  if (names == NULL) return tffi_raise(TFFI_MEMORY_ERROR, "%s: out of memory", (const char*)self);
  if (tffi_global_each(tffi_names_add, names) != 0) {
    tffi_names_free(names);
    return -1;
  }
  TVMFFIObject* functor = tffi_function_new(names, tffi_names_call, tffi_names_free);
  if (functor == NULL) {
    tffi_names_free(names);
    return -1;
  }
  *result = tffi_any_object(functor);
  return 0;
}

/* "ffi.FunctionRemoveGlobal"(name) -> bool: whether there was one. */
static int tffi_remove_global_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                   TVMFFIAny* result) {
  const char* name;
  size_t len;
  if (tffi_args_count(self, num_args, 1) || tffi_args_str(self, args, 0, "name", &name, &len))
    return -1;
  int removed = tffi_global_remove(name, len);
  if (removed < 0) return -1;
  *result = tffi_any_none();
  result->type_index = kTVMFFIBool;
  result->v_int64 = removed;
  return 0;
}

/* "ffi.GetGlobalFuncMetadata"(name) -> str; a name nobody registered is a
 * RuntimeError, as upstream raises it. */
static int tffi_global_metadata_call(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  const char* name;
  size_t len;
  if (tffi_args_count(self, num_args, 1) || tffi_args_str(self, args, 0, "name", &name, &len))
    return -1;
  char* metadata;
  size_t metadata_len = 0;
  int found = tffi_global_metadata(name, len, &metadata, &metadata_len);
  if (found < 0) return -1;
  if (found == 0)
    return tffi_raise(TFFI_RUNTIME_ERROR, "Global Function is not found: %.*s", (int)len, name);
  int rc = tffi_any_from_bytes(kTVMFFIStr, metadata, metadata_len, result);
  tffi_free(metadata);
  return rc;
}

__attribute__((constructor)) static void tffi_registry_globals_register(void) {
  tffi_builtin_register("ffi.FunctionListGlobalNamesFunctor", tffi_list_names_call);
  tffi_builtin_register("ffi.FunctionRemoveGlobal", tffi_remove_global_call);
  tffi_builtin_register("ffi.GetGlobalFuncMetadata", tffi_global_metadata_call);
}
