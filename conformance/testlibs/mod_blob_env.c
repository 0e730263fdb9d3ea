/* Test library whose `__tvm_ffi__library_bin` is filled, before the loader
 * reads it, from the file named by TFFI_TEST_LIBRARY_BIN: one library
 * serves every malformed blob in conformance/testdata/. The symbol is
 * TFFI_BLOB_CAPACITY bytes; a blob shorter than that is followed by zeros
 * (padding past nbytes). */
#include <stdio.h>
#include <stdlib.h>

#include "mod_common.h"

#define TFFI_BLOB_CAPACITY 512

TFFI_EXPORT __attribute__((aligned(8))) unsigned char __tvm_ffi__library_bin[TFFI_BLOB_CAPACITY];

__attribute__((constructor)) static void tffi_fill_blob(void) {
  const char* path = getenv("TFFI_TEST_LIBRARY_BIN");
  FILE* f = path ? fopen(path, "rb") : NULL;
  if (f == NULL) return;
  size_t n = fread(__tvm_ffi__library_bin, 1, TFFI_BLOB_CAPACITY, f);
  (void)n;
  fclose(f);
}

TFFI_EXPORT int __tvm_ffi_ping(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  return tffi_lib_return_int(result, 1);
}
