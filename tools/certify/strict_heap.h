/* The strict heap of a probe's call process: while it is on, every block
 * malloc, calloc, realloc or an aligned allocation hands out ends exactly
 * where an unreadable page begins (to the byte for sizes that are multiples
 * of 8, which every C struct of pointers is). A runtime that reads an
 * object the library allocated with an older, smaller layout then faults at
 * the first byte past it, instead of reading whatever the allocator put
 * there, and the fault handler can say which allocation it ran off.
 *
 * The functions replace the C library's allocator in the whole process by
 * ELF interposition (certify's executable defines malloc and friends, so
 * the runtime and the library bind to them). Off, they forward to glibc.
 * Built under ASan or TSan (CERT_SANITIZED) there is no strict heap: the
 * sanitizer owns the allocator, and cert_strict_heap_available() says so. */
#ifndef CERT_STRICT_HEAP_H_
#define CERT_STRICT_HEAP_H_

#include <stddef.h>
#include <stdint.h>

/* 1 when this build can make a strict heap. */
int cert_strict_heap_available(void);

/* Turns strict allocation on or off for the whole process (blocks made
 * while on stay strict until freed, whenever that is). */
void cert_strict_heap_enable(int on);

/* Strict blocks made since the process started (for tests). */
long cert_strict_heap_blocks(void);

/* Async-signal-safe: when `addr` lies in the unreadable page right after a
 * live strict block, sets its start and size and returns 1; else 0. */
int cert_strict_heap_owner(uintptr_t addr, uintptr_t* start, size_t* size);

#endif
