/* Unit tests of the error helpers that the ABI tests cannot reach. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "tffi_error.h"
#include "object.h"
#include "unit_test_support.h"

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

Test(error, oom_raises_memory_error) {
  cr_assert_eq(tffi_raise_oom(12345), -1);
  TVMFFIObject* err = take_raised();
  TVMFFIErrorCell* cell = TVMFFIErrorGetCellPtr(err);
  cr_assert_str_eq(cell->kind.data, "MemoryError");
  cr_assert_str_eq(cell->message.data, "out of memory");
  tffi_decref(err);
}

#include <pthread.h>

static TVMFFIObject* left_behind;
static void* raise_and_exit(void* arg) {
  (void)arg;
  tffi_incref(left_behind);
  tffi_set_raised(left_behind);
  return NULL;
}

/* The thread-exit destructor releases an unretrieved error, on every
 * thread, not just the first one that raised. */
Test(error, unretrieved_error_released_at_thread_exit) {
  TVMFFIByteArray k = {"RuntimeError", 12};
  left_behind = tffi_error_new(&k, &k, NULL, NULL, NULL);
  for (int i = 0; i < 3; ++i) {
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, raise_and_exit, NULL), 0);
    pthread_join(t, NULL);
    cr_assert_eq(tffi_strong_count(left_behind), 1, "round %d", i);
  }
  tffi_decref(left_behind);
}

Test(error, create_rejects_null_out) {
  TVMFFIByteArray k = {"ValueError", 10};
  cr_assert_eq(TVMFFIErrorCreate(&k, &k, &k, NULL), -1);
  TVMFFIObject* err = take_raised();
  cr_assert_not_null(err);
  cr_assert_not_null(strstr(TVMFFIErrorGetCellPtr(err)->message.data, "out"));
  tffi_decref(err);
}
