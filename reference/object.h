/* Heap objects of the reference runtime: allocation and reference counts. */
#ifndef TFFI_OBJECT_H_
#define TFFI_OBJECT_H_

#include <stddef.h>
#include <stdint.h>
#include <tvm/ffi/c_api.h>

#include "allocator.h"

/* A new object starts with one strong reference and the weak reference that
 * all strong references hold together. */
#define TFFI_REF_STRONG_ONE ((uint64_t)1)
#define TFFI_REF_WEAK_ONE ((uint64_t)1 << 32)
#define TFFI_REF_BOTH_ONE (TFFI_REF_STRONG_ONE | TFFI_REF_WEAK_ONE)

/*
 * Allocates a zeroed object of `size` bytes (header included), with one
 * strong reference, the given type index and deleter, from the registered
 * custom allocator (TVMFFISetCustomAllocator) or the built-in default.
 * Returns NULL when memory runs out, raising nothing here: making an error
 * allocates an object too, so raising sits one layer up (tffi_object_alloc
 * in error.h). *custom tells whether a custom allocator was asked (it then
 * raised its own error when it failed).
 */
void* tffi_object_alloc_from(size_t size, int32_t type_index,
                             void (*deleter)(void* self, int flags), int* custom);

/* As tffi_object_alloc_from, but only the header is initialised: for
 * objects whose constructor writes every byte after it (strings, tensors),
 * which need not be zero-filled first. */
void* tffi_object_alloc_uninit_from(size_t size, int32_t type_index,
                                    void (*deleter)(void* self, int flags), int* custom);

/* The header of a new object: one strong reference (and the weak one all
 * strong ones hold together), its type index and deleter. */
static inline void tffi_object_init_header(TVMFFIObject* obj, int32_t type_index,
                                           void (*deleter)(void* self, int flags)) {
  obj->combined_ref_count = TFFI_REF_BOTH_ONE;
  obj->type_index = type_index;
  obj->__padding = 0;
  obj->deleter = deleter;
}

/* As tffi_object_alloc_from, for code that runs while an error is being
 * raised (which must not raise again). */
void* tffi_object_alloc_quiet(size_t size, int32_t type_index,
                              void (*deleter)(void* self, int flags));

/* Releases the storage of an object made by tffi_object_alloc: hands it to
 * the delete_space of the allocation header before the object (inline: every
 * object's death ends here). */
static inline void tffi_object_free(void* obj) { tffi_allocator_free_body(obj); }

/* The deleter for objects that own nothing beyond their own storage. */
void tffi_object_delete_plain(void* self, int flags);

static inline void tffi_incref(TVMFFIObject* obj) {
  __atomic_fetch_add(&obj->combined_ref_count, TFFI_REF_STRONG_ONE, __ATOMIC_RELAXED);
}

void tffi_decref_slow(TVMFFIObject* obj, uint64_t before);

static inline void tffi_decref(TVMFFIObject* obj) {
  /* Release publishes this thread's writes to whichever thread destroys the
   * object; acquire makes that thread see every other's. One RMW does both
   * (the same x86 instruction as release alone), and TSan models it, where
   * it would not model a separate fence. */
  uint64_t before =
      __atomic_fetch_sub(&obj->combined_ref_count, TFFI_REF_STRONG_ONE, __ATOMIC_ACQ_REL);
  if ((before & 0xffffffffu) == 1) tffi_decref_slow(obj, before);
}

static inline uint32_t tffi_strong_count(const TVMFFIObject* obj) {
  return (uint32_t)(__atomic_load_n(&obj->combined_ref_count, __ATOMIC_RELAXED) & 0xffffffffu);
}

#endif
