/*
 * Library handles: where a module finds its symbols. Either a dlopen'ed
 * shared library or the system-library symbol table under a prefix
 * (ffi.SystemLib). Shared by a module and every function taken from it,
 * so the code stays mapped while any of them is alive. Below modules:
 * nothing here knows about module objects.
 */
#ifndef TFFI_LIBRARY_H_
#define TFFI_LIBRARY_H_

#include <stddef.h>

#define TFFI_SYMBOL_PREFIX "__tvm_ffi_"
#define TFFI_SYMBOL_LIBRARY_CTX "__tvm_ffi__library_ctx"
#define TFFI_SYMBOL_LIBRARY_BIN "__tvm_ffi__library_bin"
#define TFFI_SYMBOL_METADATA_PREFIX "__tvm_ffi__metadata_"
#define TFFI_SYMBOL_DOC_PREFIX "__tvm_ffi__doc_"

typedef struct TffiLibrary TffiLibrary;

/* dlopen(path): NULL with RuntimeError (naming the path and dlerror) or
 * MemoryError raised. */
TffiLibrary* tffi_library_open(const char* path);

/* The system-library symbol table seen under `prefix`: NULL with
 * MemoryError raised. */
TffiLibrary* tffi_library_system(const char* prefix, size_t len);

void tffi_library_retain(TffiLibrary* lib);
void tffi_library_release(TffiLibrary* lib);

/* Looks `name` up exactly; `with_prefix` asks for a function symbol
 * (`__tvm_ffi_<name>`; system libraries then also try their own prefix).
 * *out is NULL when there is no such symbol; -1 (MemoryError raised) only
 * when the lookup itself failed, so that running out of memory never reads
 * as "not found". */
int tffi_library_symbol(TffiLibrary* lib, const char* name, int with_prefix, void** out);

/* 1 when `addr` is code (a function symbol), not data, as far as the
 * dynamic loader can tell; unknown addresses count as code. */
int tffi_library_is_code(void* addr);

#endif
