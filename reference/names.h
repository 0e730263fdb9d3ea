/* Names made of a prefix and a name: symbol names (`__tvm_ffi_<name>`),
 * loader names (`ffi.Module.load_from_bytes.<kind>`), and the like. */
#ifndef TFFI_NAMES_H_
#define TFFI_NAMES_H_

#include <stddef.h>

/* A new NUL-terminated `<prefix><name[0..len)>` (free with tffi_free), or
 * NULL with MemoryError raised. */
char* tffi_prefixed(const char* prefix, const char* name, size_t len);

#endif
