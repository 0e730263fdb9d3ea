/*
 * The runtime's one door to the heap. Every allocation in reference/ goes
 * through these, so that a test can make the Nth one fail (as SQLite does)
 * and walk every out-of-memory path. With no failure armed the cost is one
 * load and one branch predicted not taken.
 */
#ifndef TFFI_MEM_H_
#define TFFI_MEM_H_

#include <stddef.h>

void* tffi_malloc(size_t size);
void* tffi_calloc(size_t count, size_t size);
void* tffi_realloc(void* ptr, size_t size);
void* tffi_aligned_alloc(size_t alignment, size_t size);
char* tffi_strdup(const char* s);
char* tffi_strndup(const char* s, size_t len);
void tffi_free(void* ptr);

/*
 * For buffers C++ code built on upstream's headers may free or replace
 * (a List's data, whose deleter such code keeps for the buffer it puts in
 * its place): C++'s nothrow operator new when the process has libstdc++
 * (chosen once, at the first call), else malloc; tffi_cxx_free gives a
 * buffer back the same way, and serves as such a buffer's deleter.
 */
void* tffi_cxx_malloc(size_t size);
void tffi_cxx_free(void* ptr);

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
