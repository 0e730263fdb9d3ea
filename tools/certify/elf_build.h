/* Filling a CertElf as a reader meets its parts (section headers in
 * elf_facts.c, segments in elf_segments.c), and reading its bytes back. */
#ifndef CERT_ELF_BUILD_H_
#define CERT_ELF_BUILD_H_

#include <gelf.h>
#include <stddef.h>

#include "elf_image.h"

/* The file bytes at virtual address `vaddr` (the loaded image's address),
 * at most `max` of them and never past their section or the file. Returns
 * the count (0 when the address has no file contents) and sets *bytes. */
size_t cert_elf_bytes_at(const CertElf* elf, unsigned long long vaddr, size_t max,
                         const unsigned char** bytes);

/* Writes the reason into err (when there is room) and returns -1. */
int cert_elf_fail(char* err, size_t errlen, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One .dynsym entry into exports or imports; locals and hidden ones are
 * neither. cap_exp and cap_imp are the two lists' capacities. 0, or -1
 * when out of memory. */
int cert_elf_add_symbol(CertElf* out, const GElf_Sym* sym, size_t index, const char* name,
                        size_t* cap_exp, size_t* cap_imp);

/* A DT_NEEDED entry, copied (cap: the list's capacity); 0 or -1. */
int cert_elf_add_needed(CertElf* out, size_t* cap, const char* name);

/* A string-valued dynamic entry, kept once (the first one wins, as ld.so's). */
int cert_elf_keep_string(char** slot, const char* value);

/* A library that asks for immediate binding has every import looked up at
 * load, whatever host loads it. */
void cert_elf_note_bind_now(CertElf* out, const GElf_Dyn* dyn);

#endif
