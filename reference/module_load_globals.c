/* The global functions that load modules: ffi.ModuleLoadFromFile (which
 * dispatches on the file's extension), its loader for shared libraries,
 * and ffi.SystemLib. Each is registered with its own name as `self`. */
#include <string.h>

#include "any.h"
#include "arg.h"
#include "builtin.h"
#include "tffi_error.h"
#include "function.h"
#include "library_loader.h"
#include "mem.h"
#include "names.h"
#include "object.h"
#include "registry.h"
#include "system_lib.h"

static int tffi_load_so(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const char *path, *format;
  size_t len, flen;
  if (tffi_args_count(fn, n, 2) != 0 || tffi_args_str(fn, args, 0, "path", &path, &len) != 0 ||
      tffi_args_str(fn, args, 1, "format", &format, &flen) != 0) {
    return -1;
  }
  /* A C string holds no NUL by its measure; a str object may. */
  if (args[0].type_index != kTVMFFIRawStr && memchr(path, '\0', len) != NULL)
    return tffi_args_error(TFFI_VALUE_ERROR, fn, 0, "path", "contains a NUL byte");
  TffiLibrary* lib = tffi_library_open(path);
  if (lib == NULL) return -1;
  TVMFFIObject* mod = NULL;
  int rc = tffi_library_module_create(lib, &mod);
  tffi_library_release(lib);
  if (rc != 0) return -1;
  *result = tffi_any_object(mod);
  return 0;
}

#define TFFI_LOAD_FROM_FILE "ffi.Module.load_from_file."

/* The name of the loader for `path`, ffi.Module.load_from_file.<format>:
 * the format is the text after the last '.', with the aliases of shared
 * libraries on other systems folded into "so", and *format points at it in
 * the name. In buf when it fits there (tffi_prefixed_in). */
static char* tffi_file_loader(const char* fn, const char* path, size_t len, char* buf, size_t cap,
                              const char** format) {
  size_t dot = len;
  while (dot > 0 && path[dot - 1] != '.') --dot;
  if (dot == 0) {
    tffi_raise(TFFI_RUNTIME_ERROR, "%s: failed to get file format from %.*s (no '.')", fn,
               (int)(len < 4096 ? len : 4096), path);
    return NULL;
  }
  const char* ext = path + dot;
  size_t elen = len - dot;
  static const char* const aliases[] = {"dll", "dylib", "dso"};
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; ++i)
    if (strlen(aliases[i]) == elen && memcmp(ext, aliases[i], elen) == 0) ext = "so", elen = 2;
  char* name = tffi_prefixed_in(buf, cap, TFFI_LOAD_FROM_FILE, ext, elen);
  if (name != NULL) *format = name + sizeof TFFI_LOAD_FROM_FILE - 1;
  return name;
}

/* ffi.Module.load_from_file.<format>(file_name, format) must give a Module. */
static int tffi_load_with(const char* fn, TVMFFIObject* loader, const char* loader_name,
                          const TVMFFIAny* path, const char* format, TVMFFIAny* result) {
  TVMFFIAny call_args[2] = {*path, {.type_index = kTVMFFIRawStr, .v_c_str = format}};
  int rc = TVMFFIFunctionCall(loader, call_args, 2, result);
  if (rc == 0 && result->type_index != kTVMFFIModule) {
    int32_t got = result->type_index;
    tffi_any_release(result);
    return tffi_raise(TFFI_TYPE_ERROR, "%s: %s returned type index %d, expected a Module", fn,
                      loader_name, (int)got);
  }
  return rc;
}

static int tffi_load_from_file(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const char* path;
  size_t len;
  if (tffi_args_count(fn, n, 1) != 0 || tffi_args_str(fn, args, 0, "file_name", &path, &len) != 0)
    return -1;
  /* On the stack when it fits (nearly always): a load makes it once. */
  char name_buf[64];
  const char* format = NULL;
  char* loader_name = tffi_file_loader(fn, path, len, name_buf, sizeof name_buf, &format);
  if (loader_name == NULL) return -1;
  TVMFFIObject* loader = NULL;
  int rc = tffi_global_get(loader_name, strlen(loader_name), &loader);
  if (rc == 0 && loader == NULL) {
    rc = tffi_raise(TFFI_RUNTIME_ERROR, "%s: loader for `.%s` files is not registered: %s",
                    (const char*)fn, format, loader_name);
  }
  if (rc == 0) rc = tffi_load_with(fn, loader, loader_name, &args[0], format, result);
  if (loader) tffi_decref(loader);
  tffi_prefixed_done(loader_name, name_buf);
  return rc;
}

static int tffi_system_lib(void* fn, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  const char* prefix = "";
  size_t len = 0;
  if (n > 1) return tffi_args_count(fn, n, 1);
  if (n == 1 && tffi_args_str(fn, args, 0, "symbol_prefix", &prefix, &len) != 0) return -1;
  TVMFFIObject* mod = NULL;
  if (tffi_system_lib_get(prefix, len, &mod) != 0) return -1;
  *result = tffi_any_object(mod);
  return 0;
}

__attribute__((constructor)) static void tffi_register_module_load_globals(void) {
  tffi_builtin_register("ffi.ModuleLoadFromFile", tffi_load_from_file);
  tffi_builtin_register("ffi.Module.load_from_file.so", tffi_load_so);
  tffi_builtin_register("ffi.SystemLib", tffi_system_lib);
}
