/* Unit tests of the string helpers other parts of the runtime build on. */
#include "tffi_string.h"

#include <criterion/criterion.h>
#include <string.h>

#include "any.h"
#include "object.h"
#include "unit_test_support.h"

Test(string, str_new_is_heap_even_when_short) {
  TVMFFIObject* obj = tffi_str_new(kTVMFFIStr, "ab", 2);
  cr_assert_not_null(obj);
  cr_expect_eq(obj->type_index, kTVMFFIStr);
  const TVMFFIByteArray* b = TVMFFIBytesGetByteArrayPtr(obj);
  cr_expect_eq(b->size, 2u);
  cr_expect_eq(memcmp(b->data, "ab", 3), 0);
  tffi_decref(obj);
}

Test(string, str_new_refuses_sizes_that_wrap) {
  cr_expect_null(tffi_str_new(kTVMFFIBytes, "x", SIZE_MAX - 8));
  drop_raised();
}

Test(string, any_from_bytes_threshold) {
  TVMFFIAny v;
  cr_assert_eq(tffi_any_from_bytes(kTVMFFIBytes, "1234567", 7, &v), 0);
  cr_expect_eq(v.type_index, kTVMFFISmallBytes);
  cr_assert_eq(tffi_any_from_bytes(kTVMFFIBytes, "12345678", 8, &v), 0);
  cr_expect_eq(v.type_index, kTVMFFIBytes);
  size_t n = 0;
  const char* data = tffi_any_str_data(&v, &n);
  cr_expect_eq(n, 8u);
  cr_expect_eq(memcmp(data, "12345678", 8), 0);
  tffi_any_release(&v);
  cr_expect_eq(v.type_index, kTVMFFINone);
}

Test(string, any_str_data_of_non_string_is_null) {
  TVMFFIAny v = tffi_any_none();
  v.type_index = kTVMFFIInt;
  size_t n = 99;
  cr_expect_null(tffi_any_str_data(&v, &n));
  cr_expect_eq(n, 0u);
}
