#include "mem.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Armed only by tests. Relaxed atomics: a test arms before the operation and
 * disarms after it, and needs no ordering beyond each counter's own. */
int tffi_mem_armed;
static long tffi_mem_target, tffi_mem_count, tffi_mem_failed;
static int tffi_mem_sticky;

/* Call sites failed so far (a set of return addresses; small and bounded). */
#define TFFI_MEM_MAX_SITES 256
static void* tffi_mem_sites[TFFI_MEM_MAX_SITES];
static size_t tffi_mem_num_sites;

static void tffi_mem_note_site(void* site) {
  size_t n = __atomic_load_n(&tffi_mem_num_sites, __ATOMIC_ACQUIRE);
  for (size_t i = 0; i < n; ++i)
    if (tffi_mem_sites[i] == site) return;
  if (n < TFFI_MEM_MAX_SITES) {
    tffi_mem_sites[n] = site;
    __atomic_store_n(&tffi_mem_num_sites, n + 1, __ATOMIC_RELEASE);
  }
}

/* 1 when this allocation must fail. Out of line: only armed tests get here. */
__attribute__((noinline)) static int tffi_mem_should_fail(void* site) {
  long k = __atomic_add_fetch(&tffi_mem_count, 1, __ATOMIC_RELAXED);
  long target = __atomic_load_n(&tffi_mem_target, __ATOMIC_RELAXED);
  int fail = k == target || (__atomic_load_n(&tffi_mem_sticky, __ATOMIC_RELAXED) && k > target);
  if (!fail) return 0;
  __atomic_add_fetch(&tffi_mem_failed, 1, __ATOMIC_RELAXED);
  tffi_mem_note_site(site);
  return 1;
}

#define TFFI_MEM_FAILS()                                                      \
  (__builtin_expect(__atomic_load_n(&tffi_mem_armed, __ATOMIC_RELAXED), 0) && \
   tffi_mem_should_fail(__builtin_return_address(0)))

/* noinline: the failed site recorded must be the caller's, not a site
 * inside a copy of this function inlined somewhere. */
__attribute__((noinline)) void* tffi_malloc_armed(size_t size) {
  return tffi_mem_should_fail(__builtin_return_address(0)) ? NULL : malloc(size);
}

void* tffi_calloc(size_t count, size_t size) {
  return TFFI_MEM_FAILS() ? NULL : calloc(count, size);
}

void* tffi_realloc(void* ptr, size_t size) { return TFFI_MEM_FAILS() ? NULL : realloc(ptr, size); }

void* tffi_aligned_alloc(size_t alignment, size_t size) {
  return TFFI_MEM_FAILS() ? NULL : aligned_alloc(alignment, size);
}

char* tffi_strdup(const char* s) { return TFFI_MEM_FAILS() ? NULL : strdup(s); }

char* tffi_strndup(const char* s, size_t len) { return TFFI_MEM_FAILS() ? NULL : strndup(s, len); }

/* C++'s operator new (nothrow) and delete, when the process has them; the
 * choice is made once, so every buffer is given back the way it came. */
typedef void* (*TffiCxxNew)(size_t size, const void* nothrow);
typedef void (*TffiCxxDelete)(void* ptr);
static TffiCxxNew tffi_cxx_new;
static TffiCxxDelete tffi_cxx_delete;
static const void* tffi_cxx_nothrow;
static int tffi_cxx_mode; /* 0: not chosen; 1: malloc and free; 2: C++ */

static int tffi_cxx_choose(void) {
  int mode = __atomic_load_n(&tffi_cxx_mode, __ATOMIC_ACQUIRE);
  if (mode != 0) return mode;
  TffiCxxNew alloc = (TffiCxxNew)dlsym(RTLD_DEFAULT, "_ZnwmRKSt9nothrow_t");
  TffiCxxDelete release = (TffiCxxDelete)dlsym(RTLD_DEFAULT, "_ZdlPv");
  const void* nothrow = dlsym(RTLD_DEFAULT, "_ZSt7nothrow");
  mode = alloc && release && nothrow ? 2 : 1;
  int unset = 0;
  if (__atomic_compare_exchange_n(&tffi_cxx_mode, &unset, -1, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    tffi_cxx_new = alloc;
    tffi_cxx_delete = release;
    tffi_cxx_nothrow = nothrow;
    __atomic_store_n(&tffi_cxx_mode, mode, __ATOMIC_RELEASE);
  }
  while ((mode = __atomic_load_n(&tffi_cxx_mode, __ATOMIC_ACQUIRE)) < 0) {
  }
  return mode;
}

void* tffi_cxx_malloc(size_t size) {
  if (TFFI_MEM_FAILS()) return NULL;
  return tffi_cxx_choose() == 2 ? tffi_cxx_new(size ? size : 1, tffi_cxx_nothrow) : malloc(size);
}

void tffi_cxx_free(void* ptr) {
  if (ptr == NULL) return;
  if (tffi_cxx_choose() == 2)
    tffi_cxx_delete(ptr);
  else
    free(ptr);
}

void tffi_mem_fail_at(long n, int sticky) {
  __atomic_store_n(&tffi_mem_armed, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tffi_mem_count, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tffi_mem_failed, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tffi_mem_target, n, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tffi_mem_sticky, sticky, __ATOMIC_SEQ_CST);
  __atomic_store_n(&tffi_mem_armed, 1, __ATOMIC_SEQ_CST);
}

long tffi_mem_fail_off(void) {
  __atomic_store_n(&tffi_mem_armed, 0, __ATOMIC_SEQ_CST);
  return __atomic_load_n(&tffi_mem_failed, __ATOMIC_SEQ_CST);
}

long tffi_mem_seen(void) { return __atomic_load_n(&tffi_mem_count, __ATOMIC_SEQ_CST); }

size_t tffi_mem_failed_sites(void) {
  return __atomic_load_n(&tffi_mem_num_sites, __ATOMIC_ACQUIRE);
}

void* tffi_mem_failed_site(size_t i) {
  return i < tffi_mem_failed_sites() ? tffi_mem_sites[i] : NULL;
}
