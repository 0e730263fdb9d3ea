/* Reading a file that has no section headers (a stripped one may lack
 * them; ld.so never reads them) through its segments (elf_segments.c). */
#ifndef CERT_ELF_SEGMENTS_H_
#define CERT_ELF_SEGMENTS_H_

#include <gelf.h>
#include <stddef.h>

#include "elf_image.h"

/* Maps addresses through PT_LOAD and reads PT_DYNAMIC: DT_NEEDED, the
 * path and soname strings, the dynamic symbols. 0, or -1 with err. */
int cert_elf_read_segments(Elf* elf, CertElf* out, char* err, size_t errlen);

#endif
