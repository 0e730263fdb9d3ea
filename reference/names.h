/* Names made of a prefix and a name: symbol names (`__tvm_ffi_<name>`),
 * loader names (`ffi.Module.load_from_bytes.<kind>`), and the like. */
#ifndef TFFI_NAMES_H_
#define TFFI_NAMES_H_

#include <stddef.h>

/* A new NUL-terminated `<prefix><name[0..len)>` (free with tffi_free), or
 * NULL with MemoryError raised. */
char* tffi_prefixed(const char* prefix, const char* name, size_t len);

/* As tffi_prefixed, written into buf[0..cap) when it fits there (no
 * allocation: names made once per loaded entry are short), else a new
 * allocation. Give the result back with tffi_prefixed_done(result, buf). */
char* tffi_prefixed_in(char* buf, size_t cap, const char* prefix, const char* name, size_t len);

/* Frees what tffi_prefixed_in allocated (nothing when it used buf). */
void tffi_prefixed_done(char* name, const char* buf);

#endif
