/*
 * Loading a library as modules: the context symbols the host registered,
 * the library_bin blob (the library's own module tree), library_ctx. Above
 * modules and library handles; the ffi.* loaders call it.
 */
#ifndef TFFI_LIBRARY_LOADER_H_
#define TFFI_LIBRARY_LOADER_H_

#include <tvm/ffi/c_api.h>

#include "library.h"

/* The whole load of `lib`: context symbols, the library_bin blob (bounded by
 * the symbol's size), library_ctx. *out is the root module, a new
 * reference. */
int tffi_library_module_create(TffiLibrary* lib, TVMFFIObject** out);

#endif
