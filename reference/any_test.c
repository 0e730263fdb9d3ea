/* Unit tests of value ownership helpers. */
#include "any.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "tffi_string.h"

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

/* C strings of every length around the inline limit: the inline scan reads
 * at most 8 bytes and stops at the NUL, so each length must come out with
 * its exact bytes, zero padding, and the right kind. The text sits at the
 * end of a buffer so that a read past its NUL would leave it (ASan). */
Test(any, c_strings_of_every_length_around_the_inline_limit) {
  const char* text = "0123456789abcdefghij";
  for (size_t n = 0; n <= 20; ++n) {
    char* buf = malloc(n + 1);
    cr_assert_not_null(buf);
    memcpy(buf, text, n);
    buf[n] = '\0';
    TVMFFIAny view = tffi_any_none(), out;
    view.type_index = kTVMFFIRawStr;
    view.v_c_str = buf;
    cr_assert_eq(TVMFFIAnyViewToOwnedAny(&view, &out), 0, "length %zu", n);
    size_t size = 0;
    const char* data = tffi_any_str_data(&out, &size);
    cr_expect_eq(size, n, "length %zu came out as %zu", n, size);
    cr_expect(memcmp(data, text, n) == 0 && data[n] == '\0', "length %zu: bytes differ", n);
    if (n <= TFFI_SMALL_STR_MAX) {
      cr_expect_eq(out.type_index, kTVMFFISmallStr, "length %zu", n);
      for (size_t i = n; i < 8; ++i) cr_expect_eq(out.v_bytes[i], 0, "length %zu, byte %zu", n, i);
    } else {
      cr_expect_eq(out.type_index, kTVMFFIStr, "length %zu", n);
      cr_expect_neq(data, buf, "the heap string owns a copy");
    }
    tffi_any_release(&out);
    free(buf);
  }
}
