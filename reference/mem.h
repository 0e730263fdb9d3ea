/*
 * The runtime's one door to the heap. Every allocation in reference/ goes
 * through these, so that a test can make the Nth one fail (as SQLite does)
 * and walk every out-of-memory path. With no failure armed the cost is one
 * load and one branch predicted not taken.
 */
#ifndef TFFI_MEM_H_
#define TFFI_MEM_H_

#include <stddef.h>
#include <stdlib.h>

/* Nonzero while a test has armed a failure (tffi_mem_fail_at). Inside the
 * runtime (its units are built with TFFI_IN_RUNTIME) it is declared hidden,
 * so that the library reads it directly rather than through the GOT; code
 * outside it that uses this door (tools/libbin) links against the runtime
 * as a shared library, where a hidden symbol cannot be reached. */
#ifdef TFFI_IN_RUNTIME
extern __attribute__((visibility("hidden"))) int tffi_mem_armed;
#else
extern int tffi_mem_armed;
#endif

/* tffi_malloc while armed: counts the allocation and fails it when its turn
 * has come. Out of line, so that the door inlined at every call site is one
 * test; the failed site it records is the return address into that site. */
void* tffi_malloc_armed(size_t size);

/* malloc through the door. Inline: every object's birth passes here, and an
 * out-of-line door would cost a call of its own on top of malloc's. */
static inline void* tffi_malloc(size_t size) {
  if (__builtin_expect(__atomic_load_n(&tffi_mem_armed, __ATOMIC_RELAXED), 0))
    return tffi_malloc_armed(size);
  return malloc(size);
}

void* tffi_calloc(size_t count, size_t size);
void* tffi_realloc(void* ptr, size_t size);
void* tffi_aligned_alloc(size_t alignment, size_t size);
char* tffi_strdup(const char* s);
char* tffi_strndup(const char* s, size_t len);

/* Frees what any of the above gave (inline for the reason tffi_malloc is). */
static inline void tffi_free(void* ptr) {
  /* No door: a free cannot fail, so there is nothing to inject. */
  free(ptr);
}

/*
 * Test hook. After tffi_mem_fail_at(n, sticky), the nth allocation from now
 * (n >= 1) returns NULL, and with `sticky` every one after it too. Counting
 * is process-wide and atomic, so allocations on other threads count.
 * tffi_mem_fail_off() disarms and returns how many allocations failed.
 */
void tffi_mem_fail_at(long n, int sticky);
long tffi_mem_fail_off(void);

/* Allocations seen since the last tffi_mem_fail_at. */
long tffi_mem_seen(void);

/* Distinct allocation call sites that have been made to fail since the
 * process started (return addresses; for the fault-injection report). */
size_t tffi_mem_failed_sites(void);

/* The i-th of those call sites (NULL past the end). */
void* tffi_mem_failed_site(size_t i);

#endif
