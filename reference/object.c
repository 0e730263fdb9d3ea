#include "object.h"

#include <string.h>

#include "allocator.h"

/* Set while a custom allocator runs on this thread. A custom allocator that
 * fails must raise an error, and making that error object allocates again:
 * that nested allocation goes to the default allocator, not back into the
 * custom one (which would recurse without end). */
static _Thread_local int tffi_in_custom_allocate;

/* A registered custom allocator's call, out of line so that the common
 * default path keeps a short frame. *custom tells whether the custom one
 * was asked (it then raised its own error if it failed). */
__attribute__((noinline)) static void* tffi_allocate_custom(TVMFFICustomAllocator* allocator,
                                                            size_t size, int32_t type_index,
                                                            int* custom) {
  *custom = !tffi_in_custom_allocate;
  if (!*custom) return tffi_allocator_default_body(size);
  tffi_in_custom_allocate = 1;
  void* body = allocator->allocate(size, _Alignof(TVMFFIObject), type_index, allocator->context);
  tffi_in_custom_allocate = 0;
  return body;
}

void* tffi_object_alloc_uninit_from(size_t size, int32_t type_index,
                                    void (*deleter)(void* self, int flags), int* custom) {
  TVMFFICustomAllocator* allocator = tffi_allocator_custom();
  TVMFFIObject* obj;
  if (allocator == NULL) {
    *custom = 0;
    obj = tffi_allocator_default_body(size);
  } else {
    obj = tffi_allocate_custom(allocator, size, type_index, custom);
  }
  /* Allocators hand back uninitialised storage: the header is set here. */
  if (obj != NULL) tffi_object_init_header(obj, type_index, deleter);
  return obj;
}

void* tffi_object_alloc_from(size_t size, int32_t type_index,
                             void (*deleter)(void* self, int flags), int* custom) {
  TVMFFIObject* obj = tffi_object_alloc_uninit_from(size, type_index, deleter, custom);
  if (obj != NULL && size > sizeof *obj) memset(obj + 1, 0, size - sizeof *obj);
  return obj;
}

void* tffi_object_alloc_quiet(size_t size, int32_t type_index,
                              void (*deleter)(void* self, int flags)) {
  int custom;
  return tffi_object_alloc_from(size, type_index, deleter, &custom);
}

void tffi_object_delete_plain(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* The last strong reference went while weak ones remain: destroy the
 * contents now, the storage when the last weak reference goes. */
__attribute__((noinline)) static void tffi_decref_weak_left(TVMFFIObject* obj) {
  if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
  if (__atomic_fetch_sub(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_ACQ_REL) ==
      TFFI_REF_WEAK_ONE) {
    if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}

/* The last strong reference went. With no weak reference left (nearly
 * always) contents and storage go in one deleter call, made as a tail call. */
void tffi_decref_slow(TVMFFIObject* obj, uint64_t before) {
  if (before != TFFI_REF_BOTH_ONE) {
    tffi_decref_weak_left(obj);
    return;
  }
  if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
}

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_incref(obj);
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_decref(obj);
  return 0;
}
