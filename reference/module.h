/*
 * Module objects (type index kTVMFFIModule) of the reference runtime.
 *
 * A C host sees only the object header; everything else goes through the
 * `ffi.Module*` global functions (module_globals.c). A module here is always
 * a library module: functions come from `__tvm_ffi_<name>` symbols of a
 * dlopen'ed shared library or of the system-library symbol table. Modules
 * of other kinds come from `ffi.Module.load_from_bytes.<kind>` loaders that
 * the host registers, and those return library modules too.
 */
#ifndef TFFI_MODULE_H_
#define TFFI_MODULE_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "library.h"

/* Property bits reported by ffi.ModuleGetPropertyMask (values as upstream). */
#define TFFI_MODULE_BINARY_SERIALIZABLE 1
#define TFFI_MODULE_RUNNABLE 2

/* The module object. Only module.c looks inside. */
typedef struct TffiModule TffiModule;

/* 1 when `obj` is a module object. */
int tffi_is_module(const TVMFFIObject* obj);

/* Makes a library module over `lib` (takes a reference to lib). Returns a
 * new reference, or NULL with MemoryError raised. */
TVMFFIObject* tffi_module_new(TffiLibrary* lib);

/* The symbol `name` of the module's library in *out (NULL: none); -1 only
 * when the lookup failed (raised). */
int tffi_module_symbol(TVMFFIObject* mod, const char* name, void** out);

/* The function `__tvm_ffi_<name>` of this module alone (imports not
 * searched). *out is a new reference or NULL when absent. Names holding a NUL
 * byte and symbols that are data, not code, are absent. */
int tffi_module_get_own_function(TVMFFIObject* mod, const char* name, size_t len,
                                 TVMFFIObject** out);

/* Own function, then (query_imports) each import depth-first in order. */
int tffi_module_get_function(TVMFFIObject* mod, const char* name, size_t len, int query_imports,
                             TVMFFIObject** out);

/* Calls `<prefix><name>` (metadata or doc getter) if the module or, with
 * query_imports, an import defines it; *out is an owned string or None. */
int tffi_module_get_info(TVMFFIObject* mod, const char* prefix, const char* name, size_t len,
                         int query_imports, TVMFFIAny* out);

/* Appends `child` to the imports (new reference); RuntimeError when that
 * would close a cycle. */
int tffi_module_import(TVMFFIObject* mod, TVMFFIObject* child);

/* Imports pool[index[0]], ..., pool[index[n - 1]] in that order, as n calls
 * of tffi_module_import would (up to the first refused child), with mod's
 * lock taken once. */
int tffi_module_import_list(TVMFFIObject* mod, TVMFFIObject* const* pool, const uint64_t* index,
                            size_t n);

void tffi_module_clear_imports(TVMFFIObject* mod);

/* Backs TVMFFIEnvModLookupFromImports: searches imports then the global
 * registry; the result is borrowed from the module's cache. */
int tffi_module_lookup_from_imports(TVMFFIObject* mod, const char* name, TVMFFIObject** out);

#endif
