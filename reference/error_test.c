/* Unit tests of the error helpers that the ABI tests cannot reach. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "object.h"

static TVMFFIObject* take_raised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  return err;
}

Test(error, raise_formats_kind_and_message) {
  cr_assert_eq(tffi_raise(TFFI_VALUE_ERROR, "argument %s: %d", "x", 42), -1);
  TVMFFIObject* err = take_raised();
  cr_assert_not_null(err);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, "ValueError");
  cr_assert_eq(cell->message.size, strlen("argument x: 42"));
  cr_assert_str_eq(cell->message.data, "argument x: 42");
  tffi_decref(err);
}

Test(error, raise_keeps_long_messages_whole) {
  char name[1000];
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  tffi_raise(TFFI_TYPE_ERROR, "[%s]", name);
  TVMFFIObject* err = take_raised();
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_eq(cell->message.size, sizeof name + 1);
  cr_assert_eq(cell->message.data[cell->message.size - 1], ']');
  tffi_decref(err);
}

Test(error, oom_names_the_size) {
  cr_assert_eq(tffi_raise_oom(12345), -1);
  TVMFFIObject* err = take_raised();
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, "MemoryError");
  cr_assert_not_null(strstr(cell->message.data, "12345"));
  tffi_decref(err);
}
