/* Unit tests of value ownership helpers. */
#include "any.h"

#include <criterion/criterion.h>

#include "object.h"
#include "string.h"

Test(any, release_of_inline_value_zeroes_it) {
  TVMFFIAny v = tffi_any_none();
  v.type_index = kTVMFFIFloat;
  v.v_float64 = 1.5;
  tffi_any_release(&v);
  cr_expect_eq(v.type_index, kTVMFFINone);
  cr_expect_eq(v.v_int64, 0);
}

Test(any, copy_owned_failure_leaves_none) {
  TVMFFIObject* slot = NULL;
  TVMFFIAny view = tffi_any_none(), out;
  view.type_index = kTVMFFIObjectRValueRef;
  view.v_ptr = &slot;
  cr_expect_eq(tffi_any_copy_owned(&view, &out), -1);
  cr_expect_eq(out.type_index, kTVMFFINone);
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  cr_assert_not_null(err);
  tffi_decref(err);
}

Test(any, copy_owned_of_object_counts) {
  TVMFFIObject* obj = tffi_str_new(kTVMFFIStr, "object", 6);
  TVMFFIAny view = tffi_any_none(), out;
  view.type_index = kTVMFFIStr;
  view.v_obj = obj;
  cr_assert_eq(tffi_any_copy_owned(&view, &out), 0);
  cr_expect_eq(tffi_strong_count(obj), 2u);
  tffi_any_release(&out);
  cr_expect_eq(tffi_strong_count(obj), 1u);
  tffi_decref(obj);
}
