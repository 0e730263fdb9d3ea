/* The `ffi.Module*` global functions, registered at load time: the only way
 * a C host can work with modules (upstream's module object is opaque past
 * its header). Names, arguments and results follow upstream. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "builtin.h"
#include "error.h"
#include "function.h"
#include "module.h"
#include "object.h"
#include "string.h"
#include "mem.h"

/* ---- argument unpacking: each failure names the function and argument ---- */

static int tffi_arg_module(const char* fn, const TVMFFIAny* args, int i, const char* name,
                           TVMFFIObject** out) {
  if (args[i].type_index != kTVMFFIModule) {
    return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d (%s) expected ffi.Module but got type index %d",
                      fn, i, name, (int)args[i].type_index);
  }
  /* A Module-tagged value with no object would be dereferenced later. */
  if (args[i].v_obj == NULL) {
    return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d (%s) is a NULL ffi.Module", fn, i, name);
  }
  *out = args[i].v_obj;
  return 0;
}

static int tffi_arg_str(const char* fn, const TVMFFIAny* args, int i, const char* name,
                        const char** data, size_t* size) {
  int32_t t = args[i].type_index;
  *data = NULL;
  if (t == kTVMFFIRawStr && args[i].v_c_str != NULL) {
    *data = args[i].v_c_str;
    *size = strlen(*data);
  } else if (t == kTVMFFISmallStr || t == kTVMFFIStr) {
    *data = tffi_any_str_data(&args[i], size);
  }
  if (*data == NULL) {
    return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d (%s) expected str but got type index %d",
                      fn, i, name, (int)t);
  }
  return 0;
}

static int tffi_arg_bool(const char* fn, const TVMFFIAny* args, int i, const char* name,
                         int* out) {
  int32_t t = args[i].type_index;
  if (t != kTVMFFIBool && t != kTVMFFIInt) {
    return tffi_raise(TFFI_TYPE_ERROR, "%s: argument #%d (%s) expected bool but got type index %d",
                      fn, i, name, (int)t);
  }
  *out = args[i].v_int64 != 0;
  return 0;
}

/* The common shape (mod, name, query_imports). */
static int tffi_args_lookup(const char* fn, const TVMFFIAny* args, int32_t n, TVMFFIObject** mod,
                            const char** name, size_t* len, int* query_imports) {
  if (tffi_builtin_check_count(fn, n, 3) != 0 || tffi_arg_module(fn, args, 0, "mod", mod) != 0 ||
      tffi_arg_str(fn, args, 1, "name", name, len) != 0) {
    return -1;
  }
  return tffi_arg_bool(fn, args, 2, "query_imports", query_imports);
}

static int tffi_one_module(const char* fn, const TVMFFIAny* args, int32_t n, TVMFFIObject** mod) {
  if (tffi_builtin_check_count(fn, n, 1) != 0) return -1;
  return tffi_arg_module(fn, args, 0, "mod", mod);
}

static int tffi_return_obj(TVMFFIObject* obj, TVMFFIAny* result) {
  if (obj == NULL) return 0; /* None: already in *result */
  result->type_index = obj->type_index;
  result->zero_padding = 0;
  result->v_obj = obj;
  return 0;
}

/* ---- lookups ---- */

static int tffi_mod_get_function(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject *mod = NULL, *fn = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup("ffi.ModuleGetFunction", args, n, &mod, &name, &len, &qi) != 0) return -1;
  if (tffi_module_get_function(mod, name, len, qi, &fn) != 0) return -1;
  return tffi_return_obj(fn, result);
}

static int tffi_mod_implements(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject *mod = NULL, *fn = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup("ffi.ModuleImplementsFunction", args, n, &mod, &name, &len, &qi) != 0 ||
      tffi_module_get_function(mod, name, len, qi, &fn) != 0) {
    return -1;
  }
  result->type_index = kTVMFFIBool;
  result->v_int64 = fn != NULL;
  if (fn) tffi_decref(fn);
  return 0;
}

static int tffi_mod_info(const char* fn_name, const char* prefix, const TVMFFIAny* args, int32_t n,
                         TVMFFIAny* result) {
  TVMFFIObject* mod = NULL;
  const char* name;
  size_t len;
  int qi;
  if (tffi_args_lookup(fn_name, args, n, &mod, &name, &len, &qi) != 0) return -1;
  return tffi_module_get_info(mod, prefix, name, len, qi, result);
}

static int tffi_mod_metadata(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  return tffi_mod_info("ffi.ModuleGetFunctionMetadata", TFFI_SYMBOL_METADATA_PREFIX, args, n,
                       result);
}

static int tffi_mod_doc(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  return tffi_mod_info("ffi.ModuleGetFunctionDoc", TFFI_SYMBOL_DOC_PREFIX, args, n, result);
}

/* ---- properties of library modules ---- */

static int tffi_mod_kind(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module("ffi.ModuleGetKind", args, n, &mod) != 0) return -1;
  return tffi_any_from_bytes(kTVMFFIStr, "library", 7, result);
}

static int tffi_mod_property_mask(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module("ffi.ModuleGetPropertyMask", args, n, &mod) != 0) return -1;
  result->type_index = kTVMFFIInt;
  result->v_int64 = TFFI_MODULE_BINARY_SERIALIZABLE | TFFI_MODULE_RUNNABLE;
  return 0;
}

static int tffi_mod_inspect_source(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject* mod = NULL;
  const char* format;
  size_t len;
  if (tffi_builtin_check_count("ffi.ModuleInspectSource", n, 2) != 0 ||
      tffi_arg_module("ffi.ModuleInspectSource", args, 0, "mod", &mod) != 0 ||
      tffi_arg_str("ffi.ModuleInspectSource", args, 1, "format", &format, &len) != 0) {
    return -1;
  }
  return tffi_any_from_bytes(kTVMFFIStr, "", 0, result); /* a library has no source */
}

/* A library writes no formats: an empty Array, made by "ffi.Array" so the
 * array layout stays in array.c. */
static int tffi_mod_write_formats(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  TVMFFIObject *mod = NULL, *make_array = NULL;
  if (tffi_one_module("ffi.ModuleGetWriteFormats", args, n, &mod) != 0) return -1;
  if (tffi_global_get("ffi.Array", 9, &make_array) != 0) return -1;
  if (make_array == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "ffi.ModuleGetWriteFormats: ffi.Array is not registered");
  }
  int rc = TVMFFIFunctionCall(make_array, NULL, 0, result);
  tffi_decref(make_array);
  return rc;
}

static int tffi_mod_write_to_file(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  (void)result;
  TVMFFIObject* mod = NULL;
  const char *file, *format;
  size_t l1, l2;
  const char* fn = "ffi.ModuleWriteToFile";
  if (tffi_builtin_check_count(fn, n, 3) != 0 || tffi_arg_module(fn, args, 0, "mod", &mod) != 0 ||
      tffi_arg_str(fn, args, 1, "file_name", &file, &l1) != 0 ||
      tffi_arg_str(fn, args, 2, "format", &format, &l2) != 0) {
    return -1;
  }
  return tffi_raise(TFFI_RUNTIME_ERROR, "Module[library] does not support WriteToFile");
}

/* ---- imports ---- */

static int tffi_mod_import(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  (void)result;
  TVMFFIObject *mod = NULL, *other = NULL;
  const char* fn = "ffi.ModuleImportModule";
  if (tffi_builtin_check_count(fn, n, 2) != 0 || tffi_arg_module(fn, args, 0, "mod", &mod) != 0 ||
      tffi_arg_module(fn, args, 1, "other", &other) != 0) {
    return -1;
  }
  return tffi_module_import(mod, other);
}

static int tffi_mod_clear_imports(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module("ffi.ModuleClearImports", args, n, &mod) != 0) return -1;
  tffi_module_clear_imports(mod);
  return 0;
}

/* ---- modules pinned for the process (ffi.ModuleGlobalsAdd/Remove) ---- */

static pthread_mutex_t tffi_pinned_lock = PTHREAD_MUTEX_INITIALIZER;
static TVMFFIObject** tffi_pinned;
static size_t tffi_num_pinned, tffi_cap_pinned;

static int tffi_mod_globals_add(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module("ffi.ModuleGlobalsAdd", args, n, &mod) != 0) return -1;
  int rc = 0;
  pthread_mutex_lock(&tffi_pinned_lock);
  size_t i = 0;
  while (i < tffi_num_pinned && tffi_pinned[i] != mod) ++i;
  if (i == tffi_num_pinned && tffi_num_pinned == tffi_cap_pinned) {
    size_t cap = tffi_cap_pinned ? tffi_cap_pinned * 2 : 8;
    TVMFFIObject** more = tffi_realloc(tffi_pinned, cap * sizeof *more);
    if (more == NULL) rc = tffi_raise_oom(cap * sizeof *more);
    else tffi_pinned = more, tffi_cap_pinned = cap;
  }
  if (rc == 0 && i == tffi_num_pinned) {
    tffi_incref(mod);
    tffi_pinned[tffi_num_pinned++] = mod;
  }
  pthread_mutex_unlock(&tffi_pinned_lock);
  return rc;
}

static int tffi_mod_globals_remove(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  (void)result;
  TVMFFIObject* mod = NULL;
  if (tffi_one_module("ffi.ModuleGlobalsRemove", args, n, &mod) != 0) return -1;
  TVMFFIObject* dropped = NULL;
  pthread_mutex_lock(&tffi_pinned_lock);
  for (size_t i = 0; i < tffi_num_pinned && dropped == NULL; ++i) {
    if (tffi_pinned[i] != mod) continue;
    dropped = mod;
    tffi_pinned[i] = tffi_pinned[--tffi_num_pinned];
  }
  pthread_mutex_unlock(&tffi_pinned_lock);
  if (dropped) tffi_decref(dropped); /* outside the lock: may unload a library */
  return 0;
}

/* ---- loading ---- */

static int tffi_mod_load_so(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  const char *path, *format;
  size_t len, flen;
  const char* fn = "ffi.Module.load_from_file.so";
  if (tffi_builtin_check_count(fn, n, 2) != 0 ||
      tffi_arg_str(fn, args, 0, "path", &path, &len) != 0 ||
      tffi_arg_str(fn, args, 1, "format", &format, &flen) != 0) {
    return -1;
  }
  if (memchr(path, '\0', len) != NULL) {
    return tffi_raise(TFFI_VALUE_ERROR, "%s: argument #0 (path) contains a NUL byte", fn);
  }
  TffiLibrary* lib = tffi_library_open(path);
  if (lib == NULL) return -1;
  TVMFFIObject* mod = NULL;
  int rc = tffi_library_module_create(lib, &mod);
  tffi_library_release(lib);
  return rc != 0 ? -1 : tffi_return_obj(mod, result);
}

/* The text after the last '.', with the aliases of shared libraries on
 * other systems folded into "so". */
static int tffi_file_format(const char* path, size_t len, char* out, size_t cap) {
  size_t dot = len;
  while (dot > 0 && path[dot - 1] != '.') --dot;
  if (dot == 0) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "ffi.ModuleLoadFromFile: failed to get file format from %.*s (no '.')",
                      (int)(len < 4096 ? len : 4096), path);
  }
  size_t flen = len - dot;
  if (flen >= cap) {
    return tffi_raise(TFFI_RUNTIME_ERROR, "ffi.ModuleLoadFromFile: file format of %.*s is too long",
                      (int)(len < 4096 ? len : 4096), path);
  }
  memcpy(out, path + dot, flen);
  out[flen] = '\0';
  if (!strcmp(out, "dll") || !strcmp(out, "dylib") || !strcmp(out, "dso")) strcpy(out, "so");
  return 0;
}

static int tffi_mod_load_from_file(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  const char* path;
  size_t len;
  char loader_name[320] = "ffi.Module.load_from_file.";
  size_t base = strlen(loader_name);
  if (tffi_builtin_check_count("ffi.ModuleLoadFromFile", n, 1) != 0 ||
      tffi_arg_str("ffi.ModuleLoadFromFile", args, 0, "file_name", &path, &len) != 0 ||
      tffi_file_format(path, len, loader_name + base, sizeof loader_name - base) != 0) {
    return -1;
  }
  TVMFFIObject* loader = NULL;
  if (tffi_global_get(loader_name, strlen(loader_name), &loader) != 0) return -1;
  if (loader == NULL) {
    return tffi_raise(TFFI_RUNTIME_ERROR,
                      "ffi.ModuleLoadFromFile: loader for `.%s` files is not registered: %s",
                      loader_name + base, loader_name);
  }
  TVMFFIAny call_args[2] = {args[0], tffi_any_none()};
  call_args[1].type_index = kTVMFFIRawStr;
  call_args[1].v_c_str = loader_name + base;
  int rc = TVMFFIFunctionCall(loader, call_args, 2, result);
  tffi_decref(loader);
  if (rc == 0 && result->type_index != kTVMFFIModule) {
    int32_t got = result->type_index;
    tffi_any_release(result);
    return tffi_raise(TFFI_TYPE_ERROR, "ffi.ModuleLoadFromFile: %s returned type index %d, "
                      "expected a Module", loader_name, (int)got);
  }
  return rc;
}

static int tffi_mod_system_lib(void* h, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)h;
  const char* prefix = "";
  size_t len = 0;
  if (n > 1) return tffi_builtin_check_count("ffi.SystemLib", n, 1);
  if (n == 1 && tffi_arg_str("ffi.SystemLib", args, 0, "symbol_prefix", &prefix, &len) != 0) {
    return -1;
  }
  TVMFFIObject* mod = NULL;
  if (tffi_system_lib_get(prefix, len, &mod) != 0) return -1;
  return tffi_return_obj(mod, result);
}

/* ---- registration ---- */

static const struct {
  const char* name;
  TVMFFISafeCallType call;
} tffi_module_globals[] = {
    {"ffi.ModuleLoadFromFile", tffi_mod_load_from_file},
    {"ffi.Module.load_from_file.so", tffi_mod_load_so},
    {"ffi.ModuleGetFunction", tffi_mod_get_function},
    {"ffi.ModuleImplementsFunction", tffi_mod_implements},
    {"ffi.ModuleGetFunctionMetadata", tffi_mod_metadata},
    {"ffi.ModuleGetFunctionDoc", tffi_mod_doc},
    {"ffi.ModuleGetKind", tffi_mod_kind},
    {"ffi.ModuleGetPropertyMask", tffi_mod_property_mask},
    {"ffi.ModuleInspectSource", tffi_mod_inspect_source},
    {"ffi.ModuleGetWriteFormats", tffi_mod_write_formats},
    {"ffi.ModuleWriteToFile", tffi_mod_write_to_file},
    {"ffi.ModuleImportModule", tffi_mod_import},
    {"ffi.ModuleClearImports", tffi_mod_clear_imports},
    {"ffi.ModuleGlobalsAdd", tffi_mod_globals_add},
    {"ffi.ModuleGlobalsRemove", tffi_mod_globals_remove},
    {"ffi.SystemLib", tffi_mod_system_lib},
};

/* Runs when the runtime is loaded, so a host finds the functions with its
 * first TVMFFIFunctionGetGlobal. */
__attribute__((constructor)) static void tffi_register_module_globals(void) {
  for (size_t i = 0; i < sizeof tffi_module_globals / sizeof tffi_module_globals[0]; ++i) {
    tffi_builtin_register(tffi_module_globals[i].name, tffi_module_globals[i].call);
  }
}
