/* Finding a data symbol's bytes in an ELF64 shared library without loading
 * it (loading would run the library's constructors and need its undefined
 * symbols resolved; a tool that inspects untrusted files should do neither). */
#ifndef TOOLS_ELF_SYMBOL_H_
#define TOOLS_ELF_SYMBOL_H_

#include <stddef.h>
#include <stdint.h>

/* 1 when `data` starts with the ELF magic. */
int libbin_is_elf(const uint8_t* data, size_t size);

/*
 * Looks `name` up in the dynamic symbol table (then the static one) of the
 * little-endian ELF64 image `data[0..size)`. On success points *bytes at the
 * symbol's contents inside `data`, sets *nbytes to its st_size and returns 0.
 * Returns -1 with a reason in `why` (a static string) when the file is not a
 * readable ELF64 image, the symbol is absent, or its bytes lie outside the
 * file. Every offset read from the file is checked against `size`.
 */
int libbin_elf_find_symbol(const uint8_t* data, size_t size, const char* name,
                           const uint8_t** bytes, size_t* nbytes, const char** why);

#endif
