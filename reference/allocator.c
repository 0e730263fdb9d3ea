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

_Static_assert(TFFI_BODY_OFFSET >= sizeof(TVMFFIObjectAllocHeader),
               "the header must fit before the body");

void tffi_allocator_default_delete_space(void* body) { tffi_allocator_default_free_body(body); }

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

TVMFFICustomAllocator* tffi_allocator_registered;

TVMFFICustomAllocator* tffi_allocator_current(void) {
  TVMFFICustomAllocator* a = __atomic_load_n(&tffi_allocator_registered, __ATOMIC_ACQUIRE);
  return a ? a : &tffi_default_allocator;
}

TVMFFICustomAllocator* tffi_allocator_default(void) { return &tffi_default_allocator; }

int tffi_allocator_is_default(const TVMFFICustomAllocator* allocator) {
  return allocator == &tffi_default_allocator;
}

void tffi_allocator_set(TVMFFICustomAllocator* allocator) {
  /* NULL, or the default handed back, both mean "no custom allocator". */
  if (allocator == &tffi_default_allocator) allocator = NULL;
  __atomic_store_n(&tffi_allocator_registered, allocator, __ATOMIC_RELEASE);
}
