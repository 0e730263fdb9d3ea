/* Unit tests of the type registry. */
#include "type.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "object.h"
#include "unit_test_support.h"

static TVMFFIByteArray key(const char* k) {
  TVMFFIByteArray b = {k, strlen(k)};
  return b;
}

Test(type, child_slots_overflow_to_fresh_indices) {
  TVMFFIByteArray p = key("unit.Parent");
  int32_t parent = TVMFFITypeGetOrAllocIndex(&p, -1, 1, 1, 1, kTVMFFIObject);
  cr_assert_geq(parent, TFFI_TYPE_DYN_BEGIN);
  TVMFFIByteArray a = key("unit.A"), b = key("unit.B");
  int32_t first = TVMFFITypeGetOrAllocIndex(&a, -1, 2, 0, 1, parent);
  int32_t second = TVMFFITypeGetOrAllocIndex(&b, -1, 2, 0, 1, parent);
  cr_expect_eq(first, parent + 1);
  cr_expect_gt(second, first + 0, "the second child overflows to a fresh index");
  cr_expect_neq(second, parent + 1);
}

Test(type, no_overflow_when_parent_forbids_it) {
  TVMFFIByteArray p = key("unit.Closed");
  int32_t parent = TVMFFITypeGetOrAllocIndex(&p, -1, 1, 1, 0, kTVMFFIObject);
  cr_assert_geq(parent, TFFI_TYPE_DYN_BEGIN);
  TVMFFIByteArray a = key("unit.C1"), b = key("unit.C2");
  cr_expect_eq(TVMFFITypeGetOrAllocIndex(&a, -1, 2, 0, 1, parent), parent + 1);
  cr_expect_eq(TVMFFITypeGetOrAllocIndex(&b, -1, 2, 0, 1, parent), -1);
  drop_raised();
}

Test(type, builtin_object_types_cannot_be_subclassed) {
  TVMFFIByteArray k = key("unit.MyString");
  cr_expect_eq(TVMFFITypeGetOrAllocIndex(&k, -1, 2, 0, 1, kTVMFFIStr), -1);
  drop_raised();
}

Test(type, many_types_grow_the_table) {
  char name[32];
  int32_t last = -1;
  for (int i = 0; i < 300; ++i) {
    snprintf(name, sizeof name, "unit.Many%d", i);
    TVMFFIByteArray k = key(name);
    int32_t index = TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 1, kTVMFFIObject);
    cr_assert_gt(index, last);
    last = index;
  }
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(last);
  cr_assert_not_null(info);
  cr_expect_eq(info->type_index, last);
}

Test(type, overlong_key_refused) {
  static char big[TFFI_TYPE_KEY_MAX + 2];
  memset(big, 'k', sizeof big);
  TVMFFIByteArray k = {big, sizeof big};
  int32_t out;
  cr_expect_eq(TVMFFITypeKeyToIndex(&k, &out), -1);
  drop_raised();
}
