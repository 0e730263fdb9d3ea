/*
 * Allocation failure on demand, for the out-of-memory clauses.
 *
 * The test binary defines malloc, calloc, realloc, free, the aligned
 * allocators and valloc on top of glibc's __libc_* functions. Every
 * allocation of the process goes through them, those of the implementation
 * under test included (C malloc, strdup, and C++ operator new, which calls
 * malloc), so a test can fail the n-th allocation an API call makes on any
 * implementation and demand a documented outcome.
 *
 * Arming is per thread: only the allocations of the thread that armed count
 * and fail, so Criterion's machinery and other threads are never hit. Arm
 * right before the call under test and disarm right after it, before any
 * cr_assert (which allocates).
 *
 * Where the interposer cannot own malloc (ASan or TSan replace the
 * allocator; under valgrind its replacement wins) conf_alloc_require()
 * skips the test, saying why.
 */
#ifndef CONFORMANCE_ALLOC_FAIL_H_
#define CONFORMANCE_ALLOC_FAIL_H_

#include <stddef.h>

/* Skips the running test when failures cannot be injected here. */
void conf_alloc_require(void);

/* The calling thread's n-th allocation from now (0: the next one) fails,
 * once; the others succeed. */
void conf_alloc_fail_nth(long n);

/* The calling thread's first n allocations from now succeed; every later
 * one fails until conf_alloc_off(). */
void conf_alloc_fail_from(long n);

/* Stops failing allocations on the calling thread. Returns how many
 * allocations were made to fail since it was armed. */
long conf_alloc_off(void);

/* Allocations the calling thread asked for since it was armed. */
long conf_alloc_seen(void);

/* While on, blocks the calling thread gets from malloc and the aligned
 * allocators are filled with 0xA5, so a reader of bytes nobody wrote sees
 * garbage, not the zeros a fresh heap often holds (calloc still zeroes;
 * realloc's growth is left as it comes). Silently off under sanitizers. */
void conf_alloc_scribble(int on);

/* While on, blocks the calling thread gets from malloc carry 16 guard
 * bytes right after the size asked for (the pointer stays 16-byte aligned);
 * a block whose guard changed by the time it is freed (or reallocated) adds
 * one to a process-wide count of overruns: a write of even one byte past
 * what was asked for is seen. Silently off under sanitizers, which see
 * such writes themselves. */
void conf_alloc_guard(int on);
long conf_alloc_overruns(void);

/* While on, malloc(0) and calloc of zero bytes return NULL on the calling
 * thread, as C allows them to (glibc returns a unique pointer instead), so
 * code that takes NULL from a zero-size request for out of memory shows.
 * Silently off under sanitizers. */
void conf_alloc_zero_null(int on);

/*
 * Leak measurement on any implementation: while counting is on, every
 * thread's successful allocations add one to a process-wide count of live
 * blocks and every free of a block takes one off. Compare the change across
 * two runs that differ only in what the implementation should release
 * (thread setup and teardown cost the same in both). Starting sets the
 * counts to 0. Needs conf_alloc_require().
 */
void conf_alloc_count_start(void);
long conf_alloc_count_stop(void);
long conf_alloc_live(void);

/* The same for bytes (each block's usable size): what the blocks allocated
 * since counting started, less those freed, hold now. */
long conf_alloc_live_bytes(void);

/* The largest size one allocation asked for since counting started
 * (failed requests included). */
size_t conf_alloc_largest(void);

/*
 * A walk over every allocation of one call: step n runs the call with its
 * n-th allocation failing (or, when sticky, every allocation from the n-th
 * on), until a step injects nothing, that is, the call made fewer than n+1
 * allocations and ran as it does with memory to spare.
 *
 *     ConfAllocWalk w = conf_alloc_walk(0);
 *     while (conf_alloc_next(&w)) {
 *       conf_alloc_arm(&w);
 *       int rc = call(...);
 *       conf_alloc_disarm(&w);
 *       ... check rc: w.injected says whether an allocation failed ...
 *     }
 *     conf_alloc_done(w.points, "TVMFFIxxx");
 */
typedef struct {
  int sticky;    /* fail every allocation from the n-th on, not only the n-th */
  long n;        /* the step: which allocation fails */
  long injected; /* allocations failed in this step (0 ends the walk) */
  long points;   /* steps that failed an allocation */
} ConfAllocWalk;

/* Upper bound on the allocations of one call: a walk that never ends is a
 * test failure, not a hang. */
#define CONF_ALLOC_MAX_STEPS 4096

ConfAllocWalk conf_alloc_walk(int sticky);
int conf_alloc_next(ConfAllocWalk* w);
void conf_alloc_arm(ConfAllocWalk* w);
void conf_alloc_disarm(ConfAllocWalk* w);

/* After the walks of a test, given the sum of their `points`: skips the
 * test, naming `call`, when no allocation of the call reached malloc (an
 * implementation with an allocator of its own), since the clause was then
 * not exercised. */
void conf_alloc_done(long points, const char* call);

#endif
