/* Test library whose `__tvm_ffi__library_bin` is filled, before the loader
 * reads it, from the file named by CONF_TEST_LIBRARY_BIN: one library
 * serves every malformed blob in conformance/testdata/. The symbol is
 * CONF_BLOB_CAPACITY bytes; a blob shorter than that is followed by zeros
 * (padding past nbytes). */
#include <stdio.h>
#include <stdlib.h>

#include "mod_common.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
CONF_EXPORT int __tvm_ffi_ping(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result);

#ifndef CONF_BLOB_CAPACITY /* blob_env_large sets a larger one */
#define CONF_BLOB_CAPACITY 512
#endif

#ifdef CONF_BLOB_TAIL
/* blob_env_tail: the symbol is initialized, so it lies in .data, and the
 * zero-filled .bss after it keeps its loaded segment going for at least
 * CONF_BLOB_TAIL bytes: only the symbol's own size bounds a read. */
// clang-format off
CONF_EXPORT __attribute__((aligned(8))) unsigned char __tvm_ffi__library_bin[CONF_BLOB_CAPACITY] = {1};
// clang-format on
CONF_EXPORT unsigned char conf_blob_tail[CONF_BLOB_TAIL];
#else
CONF_EXPORT __attribute__((aligned(8))) unsigned char __tvm_ffi__library_bin[CONF_BLOB_CAPACITY];
#endif

__attribute__((constructor)) static void conf_fill_blob(void) {
  const char* path = getenv("CONF_TEST_LIBRARY_BIN");
  FILE* f = path ? fopen(path, "rb") : NULL;
  if (f == NULL) return;
  size_t n = fread(__tvm_ffi__library_bin, 1, CONF_BLOB_CAPACITY, f);
  (void)n;
  fclose(f);
}

CONF_EXPORT int __tvm_ffi_ping(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return conf_lib_return_int(result, 1);
}
