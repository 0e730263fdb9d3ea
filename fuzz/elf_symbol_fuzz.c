/*
 * Fuzz harness: the libbin tool's ELF reader (tools/libbin/elf_symbol.c),
 * which finds `__tvm_ffi__library_bin` in a shared library file without
 * loading it, then the reference checker on the bytes it found, exactly as
 * `libbin dump|validate LIB.so` does with an untrusted file.
 *
 * The whole input is the file. Invariants: the reader either fails with a
 * reason or returns a span inside the input (so the checker, given the
 * symbol's size as its bound, can never be pointed outside the file); a
 * found span is accepted or refused with a ValueError.
 */
#include <stdint.h>
#include <string.h>

#include "fuzz/fuzz_common.h"
#include "reference/library_bin.h"
#include "tools/libbin/elf_symbol.h"

static const char* const kParseKinds[] = {"ValueError", "MemoryError", NULL};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* bytes = NULL;
  size_t nbytes = 0;
  const char* why = NULL;
  int rc = libbin_elf_find_symbol(data, size, "__tvm_ffi__library_bin", &bytes, &nbytes, &why);
  if (rc != 0) {
    FUZZ_CHECK(rc == -1, "libbin_elf_find_symbol returned %d", rc);
    FUZZ_CHECK(why != NULL && why[0] != '\0', "a refused file came without a reason");
    return 0;
  }
  FUZZ_CHECK(libbin_is_elf(data, size), "found a symbol in a file without the ELF magic");
  FUZZ_CHECK(
      bytes >= data && (size_t)(bytes - data) <= size && nbytes <= size - (size_t)(bytes - data),
      "the symbol's bytes [%td, +%zu) lie outside the %zu-byte file", bytes - data, nbytes, size);
  TffiLibraryBinView bin;
  if (tffi_library_bin_check(bytes, nbytes, &bin) != 0) {
    fuzz_expect_raised("tffi_library_bin_check", kParseKinds);
  } else {
    fuzz_expect_nothing_raised("tffi_library_bin_check");
  }
  return 0;
}
