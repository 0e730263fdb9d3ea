#include "alloc_fail.h"

#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CONF_ALLOC_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CONF_ALLOC_SANITIZER 1
#endif
#endif

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CONF_ALLOC_VALGRIND_CHECK 1
#endif
#endif

enum { CONF_ALLOC_OFF, CONF_ALLOC_NTH, CONF_ALLOC_FROM };

/* Per thread, in the executable's static TLS: reading it never allocates. */
static _Thread_local struct {
  int scribble;
  int guard;
  int zero_null;
  int mode;
  long target;
  long seen;
  long failed;
} conf_alloc_state;

static void conf_alloc_arm_mode(int mode, long n) {
  conf_alloc_state.target = n;
  conf_alloc_state.seen = 0;
  conf_alloc_state.failed = 0;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  conf_alloc_state.mode = mode;
}

void conf_alloc_fail_nth(long n) { conf_alloc_arm_mode(CONF_ALLOC_NTH, n); }
void conf_alloc_fail_from(long n) { conf_alloc_arm_mode(CONF_ALLOC_FROM, n); }

long conf_alloc_off(void) {
  conf_alloc_state.mode = CONF_ALLOC_OFF;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return conf_alloc_state.failed;
}

long conf_alloc_seen(void) { return conf_alloc_state.seen; }

void conf_alloc_scribble(int on) { conf_alloc_state.scribble = on; }

void conf_alloc_guard(int on) { conf_alloc_state.guard = on; }

static long conf_alloc_overrun_count;
long conf_alloc_overruns(void) {
  return __atomic_load_n(&conf_alloc_overrun_count, __ATOMIC_SEQ_CST);
}

/* A guarded block: this head, the bytes asked for, then the guard. The
 * head keeps the pointer handed out 16-byte aligned, and its magic sits
 * where glibc keeps a chunk's size, which never takes that value, so free
 * tells guarded blocks from the others. */
typedef struct {
  size_t size;
  uint64_t magic;
} ConfGuardHead;

#define CONF_GUARD_MAGIC 0x5a5a6775617264a5ull
#define CONF_GUARD_BYTES 16
#define CONF_GUARD_BYTE 0xA5

static ConfGuardHead* conf_guard_head(void* p) {
#ifdef CONF_ALLOC_SANITIZER
  (void)p;
  return NULL; /* never made here, and the bytes before a block are the sanitizer's */
#else
  if (p == NULL) return NULL;
  ConfGuardHead* h = (ConfGuardHead*)p - 1;
  return h->magic == CONF_GUARD_MAGIC ? h : NULL;
#endif
}

/* Counts an overrun when the guard of h changed. */
__attribute__((unused)) static void conf_guard_check(const ConfGuardHead* h) {
  const unsigned char* guard = (const unsigned char*)(h + 1) + h->size;
  for (int i = 0; i < CONF_GUARD_BYTES; ++i) {
    if (guard[i] != CONF_GUARD_BYTE) {
      __atomic_add_fetch(&conf_alloc_overrun_count, 1, __ATOMIC_RELAXED);
      return;
    }
  }
}

/* The bytes a live block holds: those asked for when guarded. */
__attribute__((unused)) static size_t conf_block_bytes(void* p) {
  ConfGuardHead* h = conf_guard_head(p);
  return h ? h->size : malloc_usable_size(p);
}

void conf_alloc_zero_null(int on) { conf_alloc_state.zero_null = on; }

static int conf_alloc_counting;
static long conf_alloc_live_blocks;
static long conf_alloc_bytes;
static size_t conf_alloc_max_request;

void conf_alloc_count_start(void) {
  __atomic_store_n(&conf_alloc_live_blocks, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&conf_alloc_bytes, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&conf_alloc_max_request, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&conf_alloc_counting, 1, __ATOMIC_SEQ_CST);
}

long conf_alloc_count_stop(void) {
  __atomic_store_n(&conf_alloc_counting, 0, __ATOMIC_SEQ_CST);
  return conf_alloc_live();
}

long conf_alloc_live(void) { return __atomic_load_n(&conf_alloc_live_blocks, __ATOMIC_SEQ_CST); }
long conf_alloc_live_bytes(void) { return __atomic_load_n(&conf_alloc_bytes, __ATOMIC_SEQ_CST); }
size_t conf_alloc_largest(void) {
  return __atomic_load_n(&conf_alloc_max_request, __ATOMIC_SEQ_CST);
}

/* Notes a request of `size` bytes; returns it. */
__attribute__((unused)) static size_t conf_alloc_asked(size_t size) {
  if (__atomic_load_n(&conf_alloc_counting, __ATOMIC_RELAXED)) {
    size_t seen = __atomic_load_n(&conf_alloc_max_request, __ATOMIC_RELAXED);
    while (size > seen && !__atomic_compare_exchange_n(&conf_alloc_max_request, &seen, size, 0,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
  return size;
}

/* Counts block p coming (delta 1) or going (-1). */
__attribute__((unused)) static void* conf_alloc_counted(void* p, long delta) {
  if (p != NULL && __atomic_load_n(&conf_alloc_counting, __ATOMIC_RELAXED)) {
    __atomic_add_fetch(&conf_alloc_live_blocks, delta, __ATOMIC_RELAXED);
    __atomic_add_fetch(&conf_alloc_bytes, delta * (long)conf_block_bytes(p), __ATOMIC_RELAXED);
  }
  return p;
}

#ifndef CONF_ALLOC_SANITIZER

/* Whether the allocation being asked for now is to fail. */
static int conf_alloc_fails(void) {
  if (conf_alloc_state.mode == CONF_ALLOC_OFF) return 0;
  long i = conf_alloc_state.seen++;
  int fail = conf_alloc_state.mode == CONF_ALLOC_NTH ? i == conf_alloc_state.target
                                                     : i >= conf_alloc_state.target;
  if (fail) {
    conf_alloc_state.failed++;
    errno = ENOMEM;
  }
  return fail;
}

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t n, size_t size);
extern void* __libc_realloc(void* ptr, size_t size);
extern void __libc_free(void* ptr);
extern void* __libc_memalign(size_t align, size_t size);
extern void* __libc_valloc(size_t size);
extern void* __libc_pvalloc(size_t size);

/* Fills a fresh block when the thread asked for it. */
static void* conf_alloc_scribbled(void* p, size_t size) {
  if (p != NULL && conf_alloc_state.scribble) memset(p, 0xA5, size);
  return p;
}

static void* conf_guard_alloc(size_t size) {
  if (size > SIZE_MAX / 2) return NULL;
  ConfGuardHead* h = __libc_malloc(sizeof *h + size + CONF_GUARD_BYTES);
  if (h == NULL) return NULL;
  h->size = size;
  h->magic = CONF_GUARD_MAGIC;
  memset((char*)(h + 1) + size, CONF_GUARD_BYTE, CONF_GUARD_BYTES);
  return h + 1;
}

void* malloc(size_t size) {
  if (size == 0 && conf_alloc_state.zero_null) return NULL;
  conf_alloc_asked(size);
  if (conf_alloc_fails()) return NULL;
  void* p = conf_alloc_state.guard ? conf_guard_alloc(size) : __libc_malloc(size);
  return conf_alloc_scribbled(conf_alloc_counted(p, 1), size);
}

void* calloc(size_t n, size_t size) {
  if ((n == 0 || size == 0) && conf_alloc_state.zero_null) return NULL;
  conf_alloc_asked(size != 0 && n > SIZE_MAX / size ? SIZE_MAX : n * size);
  return conf_alloc_fails() ? NULL : conf_alloc_counted(__libc_calloc(n, size), 1);
}

/* realloc(p, 0) frees p in glibc: not an allocation, never failed (a NULL
 * there would read as "freed" and leak p). */
void* realloc(void* ptr, size_t size) {
  conf_alloc_asked(size);
  if (size != 0 && conf_alloc_fails()) return NULL;
  ConfGuardHead* h = conf_guard_head(ptr);
  if (h != NULL) { /* moves to a new guarded block; free checks the old guard */
    void* p = size != 0 ? conf_guard_alloc(size) : NULL;
    if (size != 0 && p == NULL) return NULL;
    if (p != NULL) memcpy(p, ptr, h->size < size ? h->size : size);
    free(ptr);
    return conf_alloc_counted(p, 1);
  }
  long old_bytes = ptr ? (long)malloc_usable_size(ptr) : 0;
  void* p = __libc_realloc(ptr, size);
  if (ptr != NULL && (p != NULL || size == 0) &&
      __atomic_load_n(&conf_alloc_counting, __ATOMIC_RELAXED)) {
    /* the old block is gone (moved, resized or freed) */
    __atomic_sub_fetch(&conf_alloc_live_blocks, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&conf_alloc_bytes, old_bytes, __ATOMIC_RELAXED);
  }
  return conf_alloc_counted(p, 1);
}

void free(void* ptr) {
  conf_alloc_counted(ptr, -1);
  ConfGuardHead* h = conf_guard_head(ptr);
  if (h != NULL) {
    conf_guard_check(h);
    h->magic = 0;
    ptr = h;
  }
  __libc_free(ptr);
}

void* memalign(size_t align, size_t size) {
  conf_alloc_asked(size);
  if (conf_alloc_fails()) return NULL;
  return conf_alloc_scribbled(conf_alloc_counted(__libc_memalign(align, size), 1), size);
}

void* aligned_alloc(size_t align, size_t size) { return memalign(align, size); }

int posix_memalign(void** out, size_t align, size_t size) {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  void* p = memalign(align, size);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) {
  return conf_alloc_fails() ? NULL : conf_alloc_counted(__libc_valloc(size), 1);
}

void* pvalloc(size_t size) {
  return conf_alloc_fails() ? NULL : conf_alloc_counted(__libc_pvalloc(size), 1);
}

/* Why injection cannot work in this process, or NULL when it can: the
 * malloc every library resolves must be this file's, and calling it armed
 * must fail (valgrind redirects calls to its own allocator). */
static const char* conf_alloc_unavailable(void) {
#ifdef CONF_ALLOC_VALGRIND_CHECK
  if (RUNNING_ON_VALGRIND) return "valgrind replaces malloc, so no allocation can be made to fail";
#endif
  void* (*volatile global_malloc)(size_t) = (void* (*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
  if (global_malloc != malloc)
    return "the malloc that shared libraries resolve is not the test binary's interposer";
  conf_alloc_fail_nth(0);
  void* p = global_malloc(32);
  long failed = conf_alloc_off();
  if (p != NULL || failed != 1) {
    free(p);
    return "an armed malloc did not fail (another allocator replaces the interposer)";
  }
  return NULL;
}

#else

static const char* conf_alloc_unavailable(void) {
  return "a sanitizer owns malloc in this build, so no allocation can be made to fail";
}

#endif

void conf_alloc_require(void) {
  const char* why = conf_alloc_unavailable();
  if (why != NULL) criterion_skip_test("allocation failure injection unavailable: %s", why);
}

ConfAllocWalk conf_alloc_walk(int sticky) {
  ConfAllocWalk w = {sticky, -1, 1, 0};
  conf_alloc_require();
  return w;
}

int conf_alloc_next(ConfAllocWalk* w) {
  if (w->injected == 0) return 0;
  w->n++;
  cr_assert_lt(w->n, CONF_ALLOC_MAX_STEPS, "the call still allocates after %d allocations",
               CONF_ALLOC_MAX_STEPS);
  return 1;
}

void conf_alloc_arm(ConfAllocWalk* w) {
  if (w->sticky)
    conf_alloc_fail_from(w->n);
  else
    conf_alloc_fail_nth(w->n);
}

void conf_alloc_disarm(ConfAllocWalk* w) {
  w->injected = conf_alloc_off();
  if (w->injected) w->points++;
}

void conf_alloc_done(long points, const char* call) {
  if (points == 0)
    criterion_skip_test("no allocation of %s reached malloc, so no failure could be injected",
                        call);
}
