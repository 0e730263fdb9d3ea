/*
 * The library whose `__tvm_ffi__library_bin` fuzz/module_load_fuzz.c fills
 * with each input before the runtime under test loads it.
 *
 * The symbol is exactly BLOB_CAPACITY bytes (its ELF size, which a runtime
 * may bound its reads by), and `fuzz_blob_guard` follows it directly: the
 * harness poisons the guard for AddressSanitizer, so a runtime that reads
 * past the symbol is caught at the first byte. Both are names for parts
 * of one object, with their sizes set here: a sanitizer's redzones (which
 * an instrumented global's own symbol size would count) come after both,
 * so the size a runtime reads is the blob's and nothing more.
 */
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#define BLOB_CAPACITY 32768
#define GUARD_SIZE 4096

__attribute__((used, aligned(64))) static struct {
  unsigned char blob[BLOB_CAPACITY];
  unsigned char guard[GUARD_SIZE];
} storage;

/* The two exported names, with their sizes, on the two parts of storage. */
__asm__(
    ".globl __tvm_ffi__library_bin\n"
    ".type __tvm_ffi__library_bin, @object\n"
    ".set __tvm_ffi__library_bin, storage\n"
    ".size __tvm_ffi__library_bin, 32768\n"
    ".globl fuzz_blob_guard\n"
    ".type fuzz_blob_guard, @object\n"
    ".set fuzz_blob_guard, storage + 32768\n"
    ".size fuzz_blob_guard, 4096\n");

/* The runtime writes its library context here when it loads the blob; the
 * harness passes it to TVMFFIEnvModLookupFromImports, as library code does. */
__attribute__((visibility("default"))) void* __tvm_ffi__library_ctx;

__attribute__((visibility("default"))) int __tvm_ffi_ping(void* handle, const TVMFFIAny* args,
                                                          int32_t num_args, TVMFFIAny* result) {
  (void)handle, (void)args, (void)num_args;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = 1;
  return 0;
}
