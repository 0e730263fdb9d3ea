/* The strict heap: blocks end exactly at an unreadable page while it is
 * on, free/realloc/aligned allocations keep working across the switch,
 * and the fault handler's lookup finds the block a fault ran off. */
#include "tools/certify/strict_heap.h"

#include <criterion/criterion.h>
#include <malloc.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/certify/probe_readback.h"

static void needs_strict_heap(void) {
  if (!cert_strict_heap_available())
    cr_skip_test("no strict heap under a sanitizer: it owns the allocator");
}

Test(strict_heap, CDY_042_a_block_ends_at_an_unreadable_page) {
  needs_strict_heap();
  cert_strict_heap_enable(1);
  long before = cert_strict_heap_blocks();
  char* p = malloc(80);
  char* q = calloc(3, 8);
  cert_strict_heap_enable(0);
  cr_assert_not_null(p);
  cr_expect_eq(cert_strict_heap_blocks(), before + 2);
  cr_expect_eq((uintptr_t)p % 16, 0, "80 bytes: 16-byte aligned");
  cr_expect_eq((uintptr_t)q % 8, 0);
  for (int k = 0; k < 24; ++k) cr_expect_eq(q[k], 0, "calloc zeroes");
  char byte;
  cr_expect_eq(cert_safe_read((uintptr_t)p + 79, &byte, 1), 0);
  cr_expect_eq(cert_safe_read((uintptr_t)p + 80, &byte, 1), -1,
               "the byte after the block is unreadable");
  cr_expect_eq(cert_safe_read((uintptr_t)q + 24, &byte, 1), -1);
  uintptr_t start;
  size_t size;
  cr_expect_eq(cert_strict_heap_owner((uintptr_t)p + 80, &start, &size), 1);
  cr_expect_eq(start, (uintptr_t)p);
  cr_expect_eq(size, 80);
  cr_expect_eq(cert_strict_heap_owner((uintptr_t)&byte, &start, &size), 0);
  cr_expect_eq(cert_strict_heap_owner(0, &start, &size), 0, "a NULL dereference is no block's");
  cr_expect_eq(cert_strict_heap_owner(1, &start, &size), 0);
  cr_expect_eq(malloc_usable_size(p), 80);
  free(p);
  free(q);
  cr_expect_eq(cert_strict_heap_owner((uintptr_t)p + 80, &start, &size), 0,
               "a freed block is forgotten");
}

Test(strict_heap, CDY_042_realloc_and_aligned_blocks_cross_the_switch) {
  needs_strict_heap();
  char* plain = malloc(10); /* glibc's */
  strcpy(plain, "123456789");
  cert_strict_heap_enable(1);
  char* moved = realloc(plain, 40); /* glibc keeps its own */
  void* aligned = NULL;
  cr_assert_eq(posix_memalign(&aligned, 64, 100), 0);
  char* strict = malloc(16);
  strcpy(strict, "abcdefghijklmno");
  cert_strict_heap_enable(0);
  cr_expect_str_eq(moved, "123456789");
  cr_expect_eq((uintptr_t)aligned % 64, 0);
  char* grown = realloc(strict, 64); /* a strict block moves into glibc's heap */
  cr_expect_str_eq(grown, "abcdefghijklmno");
  free(grown);
  free(aligned);
  free(moved);
}

Test(strict_heap, CDY_042_reading_past_a_block_kills_the_reader) {
  needs_strict_heap();
  pid_t pid = fork();
  if (pid == 0) {
    cert_strict_heap_enable(1);
    char* volatile p = malloc(24); /* volatile: the compiler sees no bounds */
    char c = *(volatile char*)(p + 24);
    _exit(c == 1 ? 3 : 0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV, "status %d", status);
}

/* Many blocks come and go in one call: each allocation and free costs the
 * same however many came before (the registry is a hash table), and every
 * live block stays named. */
Test(strict_heap, CDY_042_many_blocks_come_and_go) {
  needs_strict_heap();
  enum { LIVE = 2000, ROUNDS = 30000 };
  static char* live[LIVE];
  cert_strict_heap_enable(1);
  for (long k = 0; k < ROUNDS; ++k) {
    long i = k % LIVE;
    free(live[i]);
    live[i] = malloc((size_t)(8 + k % 200));
    cr_assert_not_null(live[i]);
  }
  cert_strict_heap_enable(0);
  uintptr_t start;
  size_t size;
  for (long i = 0; i < LIVE; ++i) {
    size_t want = (size_t)(8 + (ROUNDS - LIVE + i) % 200);
    cr_assert_eq(
        cert_strict_heap_owner((uintptr_t)live[i] + ((want + 7) & ~(size_t)7), &start, &size), 1);
    cr_assert_eq(start, (uintptr_t)live[i]);
    cr_assert_eq(size, want);
    free(live[i]);
  }
}
