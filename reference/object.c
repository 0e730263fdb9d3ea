#include "object.h"

#include <stdlib.h>

#include "error.h"

void* tffi_object_alloc(size_t size, int32_t type_index, void (*deleter)(void* self, int flags)) {
  TVMFFIObject* obj = calloc(1, size);
  if (obj == NULL) {
    tffi_raise_oom(size);
    return NULL;
  }
  obj->combined_ref_count = TFFI_REF_BOTH_ONE;
  obj->type_index = type_index;
  obj->deleter = deleter;
  return obj;
}

void tffi_object_free(void* obj) { free(obj); }

void tffi_object_delete_plain(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

/* The last strong reference went. Destroy the contents, then give back the
 * storage once no weak reference remains either. */
void tffi_decref_slow(TVMFFIObject* obj, uint64_t before) {
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (before == TFFI_REF_BOTH_ONE) {
    if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskBoth);
    return;
  }
  if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskStrong);
  if (__atomic_fetch_sub(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_ACQ_REL) ==
      TFFI_REF_WEAK_ONE) {
    if (obj->deleter) obj->deleter(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
  }
}

int TVMFFIObjectIncRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_incref(obj);
  return 0;
}

int TVMFFIObjectDecRef(TVMFFIObjectHandle obj) {
  if (obj != NULL) tffi_decref(obj);
  return 0;
}
