/* ffi.SystemLib: one module per prefix over the system-library symbol
 * table, kept for the life of the process. */
#ifndef TFFI_SYSTEM_LIB_H_
#define TFFI_SYSTEM_LIB_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>

/* The module for `prefix` (made and loaded on first use); *out is a new
 * reference. ValueError for a prefix holding a NUL byte. */
int tffi_system_lib_get(const char* prefix, size_t len, TVMFFIObject** out);

#endif
