/*
 * What the reference's Criterion unit tests share: taking the error a call
 * raised on this thread and checking it. These tests link the runtime
 * statically, so they may read error cells directly (the reference keeps
 * kind and message NUL-terminated).
 */
#ifndef TFFI_UNIT_TEST_SUPPORT_H_
#define TFFI_UNIT_TEST_SUPPORT_H_

#include <criterion/criterion.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#include "object.h"

/* The raised error, moved out (the caller owns it); NULL if none. */
static inline TVMFFIObject* take_raised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  return err;
}

/* Asserts that an error was raised, and releases it. */
static inline void drop_raised(void) {
  TVMFFIObject* err = take_raised();
  cr_assert_not_null(err, "an error should have been raised");
  tffi_decref(err);
}

/* Asserts that an error of exactly `kind` was raised whose message contains
 * `part` (NULL: any message), and releases it. */
static inline void expect_raised(const char* kind, const char* part) {
  TVMFFIObject* err = take_raised();
  cr_assert_not_null(err, "expected a raised %s, but nothing was raised", kind);
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, kind, "error kind: expected %s, got %s (message: %s)", kind,
                   cell->kind.data, cell->message.data);
  cr_assert(part == NULL || strstr(cell->message.data, part) != NULL,
            "the %s message \"%s\" lacks \"%s\"", kind, cell->message.data, part ? part : "");
  tffi_decref(err);
}

#endif
