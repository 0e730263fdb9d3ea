/* The `ffi.Module*` global functions that query and wire modules: the only
 * way a C host can work with them (upstream's module object is opaque past
 * its header). Names, arguments and results follow upstream. Each is
 * registered with its own name as `self`, so messages name it without
 * repeating it. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "module.h"
#include "object.h"
#include "registry.h"
#include "tffi_string.h"

static int tffi_arg_module(const char* fn, const TVMFFIAny* args, int32_t i, TVMFFIObject** mod) {
  return tffi_args_object(fn, args, i, i == 0 ? "mod" : "other", kTVMFFIModule, "ffi.Module", mod);
}

static int tffi_one_module(const char* fn, const TVMFFIAny* args, int32_t n, TVMFFIObject** mod) {
  if (tffi_args_count(fn, n, 1) != 0) return -1;
  return tffi_arg_module(fn, args, 0, mod);
}

/* The common shape (mod, name, query_imports). */
static int tffi_args_lookup(const char* fn, const TVMFFIAny* args, int32_t n, TVMFFIObject** mod,
                            const char** name, size_t* len, int* query_imports) {
  if (tffi_args_count(fn, n, 3) != 0 || tffi_arg_module(fn, args, 0, mod) != 0 ||
      tffi_args_str(fn, args, 1, "name", name, len) != 0) {
    return -1;
  }
  return tffi_args_bool(fn, args, 2, "query_imports", query_imports);
}

/* ---- lookups ---- */

static int tffi_mod_get_function(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject *mod = NULL, *found = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup(fn, args, n, &mod, &name, &len, &qi) != 0 ||
      tffi_module_get_function(mod, name, len, qi, &found) != 0) {
    return -1;
  }
  *result = tffi_any_object(found);
  return 0;
}

static int tffi_mod_implements(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject *mod = NULL, *found = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup(fn, args, n, &mod, &name, &len, &qi) != 0 ||
      tffi_module_get_function(mod, name, len, qi, &found) != 0) {
    return -1;
  }
  result->type_index = kTVMFFIBool;
  result->v_int64 = found != NULL;
  if (found) tffi_decref(found);
  return 0;
}

static int tffi_mod_info(const char* fn, const char* prefix, const TVMFFIAny* args, int32_t n,
                         TVMFFIAny* result) {
  TVMFFIObject* mod = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup(fn, args, n, &mod, &name, &len, &qi) != 0) return -1;
  return tffi_module_get_info(mod, prefix, name, len, qi, result);
}

static int tffi_mod_metadata(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  return tffi_mod_info(fn, TFFI_SYMBOL_METADATA_PREFIX, args, n, result);
}

static int tffi_mod_doc(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  return tffi_mod_info(fn, TFFI_SYMBOL_DOC_PREFIX, args, n, result);
}

/* ---- properties of library modules ---- */

static int tffi_mod_kind(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* mod = NULL;
  if (tffi_one_module(fn, args, n, &mod) != 0) return -1;
  return tffi_any_from_bytes(kTVMFFIStr, "library", 7, result);
}

static int tffi_mod_property_mask(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* mod = NULL;
  if (tffi_one_module(fn, args, n, &mod) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->v_int64 = TFFI_MODULE_BINARY_SERIALIZABLE | TFFI_MODULE_RUNNABLE;
  return 0;
}

static int tffi_mod_inspect_source(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject* mod = NULL;
  const char* format;
  size_t len;
  if (tffi_args_count(fn, n, 2) != 0 || tffi_arg_module(fn, args, 0, &mod) != 0 ||
      tffi_args_str(fn, args, 1, "format", &format, &len) != 0) {
    return -1;
  }
  return tffi_any_from_bytes(kTVMFFIStr, "", 0, result); /* a library has no source */
}

/* A library writes no formats: an empty Array, made by "ffi.Array" so the
 * array layout stays in array.c. */
static int tffi_mod_write_formats(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  TVMFFIObject *mod = NULL, *make_array = NULL;
  if (tffi_one_module(fn, args, n, &mod) != 0) return -1;
  if (tffi_global_get("ffi.Array", 9, &make_array) != 0) return -1;
  if (make_array == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "%s: ffi.Array is not registered", (const char*)fn);
  }
  int rc = TVMFFIFunctionCall(make_array, NULL, 0, result);
  tffi_decref(make_array);
  return rc;
}

static int tffi_mod_write_to_file(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* mod = NULL;
  const char *file, *format;
  size_t l1, l2;
  if (tffi_args_count(fn, n, 3) != 0 || tffi_arg_module(fn, args, 0, &mod) != 0 ||
      tffi_args_str(fn, args, 1, "file_name", &file, &l1) != 0 ||
      tffi_args_str(fn, args, 2, "format", &format, &l2) != 0) {
    return -1;
  }
  return tffi_raise(TFFI_RUNTIME_ERROR, "Module[library] does not support WriteToFile");
}

/* ---- imports ---- */

static int tffi_mod_import(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject *mod = NULL, *other = NULL;
  if (tffi_args_count(fn, n, 2) != 0 || tffi_arg_module(fn, args, 0, &mod) != 0 ||
      tffi_arg_module(fn, args, 1, &other) != 0) {
    return -1;
  }
  return tffi_module_import(mod, other);
}

static int tffi_mod_clear_imports(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module(fn, args, n, &mod) != 0) return -1;
  tffi_module_clear_imports(mod);
  return 0;
}

/* Runs when the runtime is loaded, so a host finds the functions with its
 * first TVMFFIFunctionGetGlobal. */
__attribute__((constructor)) static void tffi_register_module_globals(void) {
  tffi_builtin_register("ffi.ModuleGetFunction", tffi_mod_get_function);
  tffi_builtin_register("ffi.ModuleImplementsFunction", tffi_mod_implements);
  tffi_builtin_register("ffi.ModuleGetFunctionMetadata", tffi_mod_metadata);
  tffi_builtin_register("ffi.ModuleGetFunctionDoc", tffi_mod_doc);
  tffi_builtin_register("ffi.ModuleGetKind", tffi_mod_kind);
  tffi_builtin_register("ffi.ModuleGetPropertyMask", tffi_mod_property_mask);
  tffi_builtin_register("ffi.ModuleInspectSource", tffi_mod_inspect_source);
  tffi_builtin_register("ffi.ModuleGetWriteFormats", tffi_mod_write_formats);
  tffi_builtin_register("ffi.ModuleWriteToFile", tffi_mod_write_to_file);
  tffi_builtin_register("ffi.ModuleImportModule", tffi_mod_import);
  tffi_builtin_register("ffi.ModuleClearImports", tffi_mod_clear_imports);
}
