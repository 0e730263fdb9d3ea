/* Object storage: every object body is preceded by a TVMFFIObjectAllocHeader
 * whose delete_space knows how to give the whole block back, so a frontend
 * can register its own allocator and the runtime frees what it allocated
 * without knowing how. */
#include "allocator.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "mem.h"

/* The default allocator puts the body this far into the block: far enough
 * for the header, and a multiple of every alignment malloc already gives,
 * so the body keeps that alignment. */
#define TFFI_BODY_OFFSET ((size_t)alignof(max_align_t))

_Static_assert(TFFI_BODY_OFFSET >= sizeof(TVMFFIObjectAllocHeader),
               "the header must fit before the body");

static void tffi_default_delete_space(void* body) { tffi_free((char*)body - TFFI_BODY_OFFSET); }

void* tffi_allocator_default_body(size_t size) {
  /* No object is larger than PTRDIFF_MAX; asking malloc for more is a bug
   * memory checkers report, so the request is refused here. */
  if (size > PTRDIFF_MAX - TFFI_BODY_OFFSET) return NULL;
  char* block = tffi_malloc(TFFI_BODY_OFFSET + size);
  if (block == NULL) return NULL;
  void* body = block + TFFI_BODY_OFFSET;
  ((TVMFFIObjectAllocHeader*)body)[-1].delete_space = tffi_default_delete_space;
  return body;
}

static void* tffi_default_allocate(size_t size, size_t alignment, int32_t type_index,
                                   void* context) {
  (void)type_index;
  (void)context;
  /* Larger alignments would need a different offset than the fixed one
   * delete_space assumes; objects never ask for them. */
  if (alignment > TFFI_BODY_OFFSET) return NULL;
  return tffi_allocator_default_body(size);
}

static TVMFFICustomAllocator tffi_default_allocator = {tffi_default_allocate, NULL};

/* Read on every allocation from any thread; an atomic pointer keeps a
 * concurrent registration from being seen half-written. */
static TVMFFICustomAllocator* tffi_registered;

TVMFFICustomAllocator* tffi_allocator_current(void) {
  TVMFFICustomAllocator* a = __atomic_load_n(&tffi_registered, __ATOMIC_ACQUIRE);
  return a ? a : &tffi_default_allocator;
}

TVMFFICustomAllocator* tffi_allocator_custom(void) {
  return __atomic_load_n(&tffi_registered, __ATOMIC_ACQUIRE);
}

void tffi_allocator_free_body(void* body) {
  TVMFFIObjectAllocHeader* header = (TVMFFIObjectAllocHeader*)body - 1;
  /* The default's blocks are freed here directly, one indirect call fewer. */
  if (header->delete_space == tffi_default_delete_space)
    tffi_free((char*)body - TFFI_BODY_OFFSET);
  else if (header->delete_space)
    header->delete_space(body);
}

TVMFFICustomAllocator* tffi_allocator_default(void) { return &tffi_default_allocator; }

int tffi_allocator_is_default(const TVMFFICustomAllocator* allocator) {
  return allocator == &tffi_default_allocator;
}

void tffi_allocator_set(TVMFFICustomAllocator* allocator) {
  /* NULL, or the default handed back, both mean "no custom allocator". */
  if (allocator == &tffi_default_allocator) allocator = NULL;
  __atomic_store_n(&tffi_registered, allocator, __ATOMIC_RELEASE);
}
