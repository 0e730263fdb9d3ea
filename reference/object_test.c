/* Unit tests of the reference-count helpers. */
#include <criterion/criterion.h>

#include "tffi_error.h"
#include "object.h"

static int deleted_flags[4];
static int deleted_calls;

static void counting_delete(void* self, int flags) {
  deleted_flags[deleted_calls++] = flags;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) tffi_object_free(self);
}

Test(object, alloc_starts_with_one_strong_and_one_weak) {
  TVMFFIObject* obj = tffi_object_alloc(sizeof(TVMFFIObject) + 8, 1000, counting_delete);
  cr_assert_not_null(obj);
  cr_assert_eq(obj->combined_ref_count, TFFI_REF_BOTH_ONE);
  cr_assert_eq(obj->type_index, 1000);
  tffi_incref(obj);
  cr_assert_eq(tffi_strong_count(obj), 2);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 0);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 1);
  cr_assert_eq(deleted_flags[0], kTVMFFIObjectDeleterFlagBitMaskBoth);
}

Test(object, weak_reference_splits_the_deleter_call) {
  TVMFFIObject* obj = tffi_object_alloc(sizeof(TVMFFIObject), 1000, counting_delete);
  __atomic_fetch_add(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_RELAXED);
  tffi_decref(obj);
  cr_assert_eq(deleted_calls, 1);
  cr_assert_eq(deleted_flags[0], kTVMFFIObjectDeleterFlagBitMaskStrong);
  /* Dropping the extra weak reference by hand releases the storage. */
  uint64_t before =
      __atomic_fetch_sub(&obj->combined_ref_count, TFFI_REF_WEAK_ONE, __ATOMIC_ACQ_REL);
  cr_assert_eq(before, TFFI_REF_WEAK_ONE);
  counting_delete(obj, kTVMFFIObjectDeleterFlagBitMaskWeak);
}
