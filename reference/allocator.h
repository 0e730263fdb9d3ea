/* The process-wide object allocator (TVMFFIGetCustomAllocator and
 * TVMFFISetCustomAllocator) and the built-in default behind it. */
#ifndef TFFI_ALLOCATOR_H_
#define TFFI_ALLOCATOR_H_

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "mem.h"

/* The allocator new objects come from: the registered one, or the built-in
 * default when none is registered. Never NULL. */
TVMFFICustomAllocator* tffi_allocator_current(void);

/* The registered custom allocator (NULL while the default is in charge).
 * Read on every allocation from any thread, through tffi_allocator_custom;
 * an atomic pointer keeps a concurrent registration from being seen
 * half-written. Written only by tffi_allocator_set. */
extern __attribute__((visibility("hidden"))) TVMFFICustomAllocator* tffi_allocator_registered;

/* The default allocator puts the body this far into the block: far enough
 * for the header, and a multiple of every alignment malloc already gives,
 * so the body keeps that alignment. */
#define TFFI_BODY_OFFSET ((size_t)alignof(max_align_t))

/* The default allocator's delete_space: frees the whole block. */
void tffi_allocator_default_delete_space(void* body);

/* The three below run on every object's birth or death: inline, so that
 * the default path costs no call of its own. */

/* The registered custom allocator, or NULL when the default is in charge. */
static inline TVMFFICustomAllocator* tffi_allocator_custom(void) {
  return __atomic_load_n(&tffi_allocator_registered, __ATOMIC_ACQUIRE);
}

/* What the default allocator's allocate does for an object body of `size`
 * bytes (its natural alignment), without the indirect call: the body, with
 * the allocation header before it set, or NULL when memory runs out. */
static inline void* tffi_allocator_default_body(size_t size) {
  /* No object is larger than PTRDIFF_MAX; asking malloc for more is a bug
   * memory checkers report, so the request is refused here. */
  if (size > PTRDIFF_MAX - TFFI_BODY_OFFSET) return NULL;
  char* block = tffi_malloc(TFFI_BODY_OFFSET + size);
  if (block == NULL) return NULL;
  void* body = block + TFFI_BODY_OFFSET;
  ((TVMFFIObjectAllocHeader*)body)[-1].delete_space = tffi_allocator_default_delete_space;
  return body;
}

/* Gives back a body the default allocator made (tffi_allocator_default_body)
 * when the caller knows it did, without asking the allocation header. */
static inline void tffi_allocator_default_free_body(void* body) {
  tffi_free((char*)body - TFFI_BODY_OFFSET);
}

/* Gives an object body back to the allocator that made it, through the
 * allocation header before it. The default's blocks are freed here
 * directly, one indirect call fewer. */
static inline void tffi_allocator_free_body(void* body) {
  TVMFFIObjectAllocHeader* header = (TVMFFIObjectAllocHeader*)body - 1;
  if (header->delete_space == tffi_allocator_default_delete_space)
    tffi_allocator_default_free_body(body);
  else if (header->delete_space)
    header->delete_space(body);
}

/* The built-in default allocator. */
TVMFFICustomAllocator* tffi_allocator_default(void);

/* 1 when `allocator` is the built-in default. */
int tffi_allocator_is_default(const TVMFFICustomAllocator* allocator);

/* Registers `allocator` for new objects; NULL or the default restore the
 * default. */
void tffi_allocator_set(TVMFFICustomAllocator* allocator);

#endif
