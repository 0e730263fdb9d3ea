#include "object.h"

#include <string.h>

#include "allocator.h"
#include "mem.h"
#include "vec.h"

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

/* The last strong reference went (`before`: the counts just before). With
 * no weak reference left (nearly always) contents and storage go in one
 * deleter call. */
static void tffi_destroy(TVMFFIObject* obj, uint64_t before) {
  if (before != TFFI_REF_BOTH_ONE)
    tffi_decref_weak_left(obj);
  else if (obj->deleter)
    obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
}

/* A container's deleter releases its elements from inside itself, so a
 * list nested a million deep would take a million nested deleter calls
 * and overflow the C stack. Past TFFI_RELEASE_NESTING deleters under way
 * on a thread, a container whose last reference goes is set aside instead
 * and destroyed by the outermost release, one after another. Only
 * containers wait: their deleters are the runtime's, always loaded, where
 * another object's deleter may be in a library its owner is unloading. */
enum { TFFI_RELEASE_NESTING = 256 };

typedef struct {
  TVMFFIObject* obj;
  uint64_t before;
} TffiDying;

static _Thread_local struct {
  int depth;        /* deleter calls under way */
  TffiDying* items; /* set aside, the latest last */
  size_t n, cap;
} tffi_dying;

static int tffi_release_can_wait(int32_t type_index) {
  return type_index == kTVMFFIArray || type_index == kTVMFFIList || type_index == kTVMFFIMap ||
         type_index == kTVMFFIDict;
}

/* Destroys what was set aside, and what that sets aside in turn. */
static void tffi_destroy_set_aside(void) {
  while (tffi_dying.n > 0) {
    TffiDying d = tffi_dying.items[--tffi_dying.n];
    tffi_destroy(d.obj, d.before);
  }
  tffi_free(tffi_dying.items);
  tffi_dying.items = NULL;
  tffi_dying.cap = 0;
}

void tffi_decref_slow(TVMFFIObject* obj, uint64_t before) {
  /* Without room to set it aside, it is destroyed at once, as below. */
  if (tffi_dying.depth >= TFFI_RELEASE_NESTING && tffi_release_can_wait(obj->type_index) &&
      TFFI_VEC_PUSH(&tffi_dying, ((TffiDying){obj, before})) == 0)
    return;
  tffi_dying.depth += 1;
  tffi_destroy(obj, before);
  if (tffi_dying.depth == 1 && tffi_dying.items != NULL) tffi_destroy_set_aside();
  tffi_dying.depth -= 1;
}

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_incref(obj);
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_decref(obj);
  return 0;
}
