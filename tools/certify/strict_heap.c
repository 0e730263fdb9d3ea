#include "strict_heap.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/certify/sanitized.h"

/* Exported by name and declared in no header: declared here, so that
 * every definition has its prototype (-Wmissing-prototypes). */
void* malloc(size_t n);
void free(void* p);
void* calloc(size_t n, size_t size);
void* realloc(void* p, size_t n);
void* memalign(size_t align, size_t n);
void* reallocarray(void* p, size_t n, size_t size);
void* aligned_alloc(size_t align, size_t n);
int posix_memalign(void** out, size_t align, size_t n);
void* valloc(size_t n);
void* pvalloc(size_t n);
size_t malloc_usable_size(void* p);

#if CERT_SANITIZED

int cert_strict_heap_available(void) { return 0; }
void cert_strict_heap_enable(int on) { (void)on; }
long cert_strict_heap_blocks(void) { return 0; }
int cert_strict_heap_owner(uintptr_t addr, uintptr_t* start, size_t* size) {
  (void)addr, (void)start, (void)size;
  return 0;
}

#else

/* glibc's own allocator, which these replace. */
void* __libc_malloc(size_t n);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t align, size_t n);

/* Each strict block is a mapping of its own: a head at the mapping's start,
 * which is the page holding the 16 bytes before the block, then the block,
 * then one PROT_NONE page. Telling a strict block from one of glibc's reads
 * only the page of the 16 bytes before the pointer, which for glibc's is
 * the page of its chunk header: always mapped. The head's check word (a
 * magic number mixed with the block's address) does not occur there. */
typedef struct {
  uint64_t check;
  uint32_t size; /* bytes asked for */
  uint32_t body; /* bytes from the block's start to the guard page */
} Head;

#define STRICT_MAGIC 0x74636972745f6870ull
#define STRICT_MAX ((size_t)1 << 31)

/* Live blocks by their guard page, for the fault handler: an open-addressed
 * table, slots claimed with compare-and-swap (two threads of a call may
 * allocate at once), a freed block's slot left as a tombstone for reuse.
 * A block that finds no slot within a few probes is still strict, only
 * unnamed in a fault report. */
enum { REGISTRY = 1 << 16, PROBES = 64 };
#define SLOT_EMPTY ((uintptr_t)0)
#define SLOT_FREED ((uintptr_t)1)
static struct {
  uintptr_t guard, start;
  size_t size;
} g_live[REGISTRY];
static volatile int g_on;
static long g_made;

int cert_strict_heap_available(void) { return 1; }

void cert_strict_heap_enable(int on) { __atomic_store_n(&g_on, on, __ATOMIC_SEQ_CST); }

long cert_strict_heap_blocks(void) { return __atomic_load_n(&g_made, __ATOMIC_SEQ_CST); }

static size_t page(void) {
  static size_t ps;
  if (ps == 0) ps = (size_t)sysconf(_SC_PAGESIZE);
  return ps;
}

static Head* head_of(void* p) {
  uintptr_t at = ((uintptr_t)p - sizeof(Head)) & ~(uintptr_t)(page() - 1);
  Head* h = (Head*)at;
  return h->check == (STRICT_MAGIC ^ (uintptr_t)p) ? h : NULL;
}

static size_t map_len_of(const Head* h) {
  uintptr_t user = (uintptr_t)(h->check ^ STRICT_MAGIC);
  return user + h->body + page() - (uintptr_t)h;
}

static size_t slot_of(uintptr_t guard, size_t k) {
  return ((size_t)(((guard >> 12) * 0x9e3779b97f4a7c15ull) >> 48) + k) & (REGISTRY - 1);
}

static void register_block(uintptr_t guard, uintptr_t start, size_t size) {
  for (size_t k = 0; k < PROBES; ++k) {
    size_t s = slot_of(guard, k);
    uintptr_t seen = __atomic_load_n(&g_live[s].guard, __ATOMIC_SEQ_CST);
    if (seen != SLOT_EMPTY && seen != SLOT_FREED) continue;
    /* Claimed with a placeholder first, so the fields are whole before
     * the guard that names them is visible. */
    if (!__atomic_compare_exchange_n(&g_live[s].guard, &seen, SLOT_FREED + 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
      continue;
    }
    g_live[s].start = start;
    g_live[s].size = size;
    __atomic_store_n(&g_live[s].guard, guard, __ATOMIC_SEQ_CST);
    return;
  }
}

/* The slot naming `guard`, or -1. The first page (where a NULL
 * dereference faults) holds no block, and its numbers mark free slots. */
static long find_block(uintptr_t guard) {
  if (guard < page()) return -1;
  for (size_t k = 0; k < PROBES; ++k) {
    size_t s = slot_of(guard, k);
    uintptr_t seen = __atomic_load_n(&g_live[s].guard, __ATOMIC_SEQ_CST);
    if (seen == guard) return (long)s;
    if (seen == SLOT_EMPTY) return -1;
  }
  return -1;
}

/* A block of n bytes whose end is the guard page, its start aligned to
 * `align` (a power of two no larger than a page). */
static void* strict_alloc(size_t n, size_t align) {
  size_t ps = page();
  if (align < 8) align = 8;
  size_t body = n == 0 ? align : n;
  if (body > STRICT_MAX) return __libc_memalign(align, n);
  body = (body + align - 1) & ~(align - 1);
  size_t map_len = ((body + sizeof(Head) + ps - 1) & ~(ps - 1)) + ps;
  char* m = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    errno = ENOMEM;
    return NULL;
  }
  char* guard = m + map_len - ps;
  if (mprotect(guard, ps, PROT_NONE) != 0) {
    munmap(m, map_len);
    errno = ENOMEM;
    return NULL;
  }
  char* user = guard - body;
  Head* h = (Head*)m;
  *h = (Head){STRICT_MAGIC ^ (uintptr_t)user, (uint32_t)n, (uint32_t)body};
  register_block((uintptr_t)guard, (uintptr_t)user, n);
  __atomic_add_fetch(&g_made, 1, __ATOMIC_SEQ_CST);
  return user;
}

static void strict_free(Head* h) {
  size_t len = map_len_of(h);
  long s = find_block((uintptr_t)h + len - page());
  if (s >= 0) __atomic_store_n(&g_live[s].guard, SLOT_FREED, __ATOMIC_SEQ_CST);
  munmap(h, len);
}

int cert_strict_heap_owner(uintptr_t addr, uintptr_t* start, size_t* size) {
  long s = find_block(addr & ~(uintptr_t)(page() - 1));
  if (s < 0) return 0;
  *start = g_live[s].start;
  *size = g_live[s].size;
  return 1;
}

static int strict_on(void) { return __atomic_load_n(&g_on, __ATOMIC_RELAXED); }

/* Objects of a size that is a multiple of 16 may hold 16-byte-aligned
 * members; others get 8, so that the block still ends at the guard. */
static size_t natural_align(size_t n) { return n % 16 == 0 ? 16 : 8; }

void* malloc(size_t n) {
  return strict_on() ? strict_alloc(n, natural_align(n)) : __libc_malloc(n);
}

void free(void* p) {
  if (p == NULL) return;
  Head* h = head_of(p);
  if (h) {
    strict_free(h);
  } else {
    __libc_free(p);
  }
}

void* calloc(size_t n, size_t size) {
  if (!strict_on()) return __libc_calloc(n, size);
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return strict_alloc(total, natural_align(total)); /* fresh mappings are zero */
}

void* realloc(void* p, size_t n) {
  if (p == NULL) return malloc(n);
  Head* h = head_of(p);
  if (h == NULL) return __libc_realloc(p, n);
  if (n == 0) {
    strict_free(h);
    return NULL;
  }
  void* q = malloc(n);
  if (q == NULL) return NULL;
  memcpy(q, p, h->size < n ? h->size : n);
  strict_free(h);
  return q;
}

void* reallocarray(void* p, size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return NULL;
  }
  return realloc(p, total);
}

static void* aligned(size_t align, size_t n) {
  if (!strict_on() || align > page()) return __libc_memalign(align, n);
  return strict_alloc(n, align);
}

void* memalign(size_t align, size_t n) { return aligned(align, n); }

void* aligned_alloc(size_t align, size_t n) { return aligned(align, n); }

int posix_memalign(void** out, size_t align, size_t n) {
  if (align < sizeof(void*) || (align & (align - 1)) != 0) return EINVAL;
  void* p = aligned(align, n);
  if (p == NULL) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t n) { return aligned(page(), n); }

void* pvalloc(size_t n) { return aligned(page(), (n + page() - 1) & ~(page() - 1)); }

size_t malloc_usable_size(void* p) {
  if (p == NULL) return 0;
  Head* h = head_of(p);
  if (h) return h->size;
  static size_t (*libc_usable)(void*);
  if (libc_usable == NULL) *(void**)&libc_usable = dlsym(RTLD_NEXT, "malloc_usable_size");
  return libc_usable ? libc_usable(p) : 0;
}

#endif
