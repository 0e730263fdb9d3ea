/* Unit tests of ptr_table.c: every key found with its marks after the
 * table has grown many times, absent keys not found, a reference held to
 * each key until the table is freed, and a failing growth refused with
 * MemoryError and the table left whole. */
#include <criterion/criterion.h>

#include "fault_test_support.h"
#include "mem.h"
#include "object.h"
#include "ptr_table.h"
#include "tffi_error.h"
#include "unit_test_support.h"

enum { kKeys = 1000 };

static TVMFFIObject* plain_object(void) {
  TVMFFIObject* obj =
      tffi_object_alloc(sizeof(TVMFFIObject), kTVMFFIObject, tffi_object_delete_plain);
  cr_assert_not_null(obj);
  return obj;
}

Test(ptr_table, keys_found_after_growth) {
  static TVMFFIObject* keys[kKeys];
  TffiPtrTable t = {0};
  for (int i = 0; i < kKeys; ++i) {
    keys[i] = plain_object();
    TffiPtrSlot* slot = tffi_ptr_slot(&t, keys[i]);
    cr_assert_not_null(slot);
    cr_assert_eq(slot->value, 0);
    cr_assert_eq(slot->mark, 0);
    slot->value = i * 3;
    slot->mark = i % 3;
  }
  cr_expect_eq(t.n, kKeys);
  cr_expect_geq(t.cap, 2 * t.n, "a table of %zu keys has %zu slots", t.n, t.cap);
  for (int i = 0; i < kKeys; ++i) {
    const TffiPtrSlot* slot = tffi_ptr_find(&t, keys[i]);
    cr_assert_not_null(slot, "key %d lost", i);
    cr_expect_eq(slot->value, i * 3);
    cr_expect_eq(slot->mark, i % 3);
    cr_expect_eq(tffi_ptr_slot(&t, keys[i]), slot, "key %d made twice", i);
    cr_expect_eq(tffi_strong_count(keys[i]), 2, "the table holds no reference to key %d", i);
  }
  cr_expect_eq(t.n, kKeys);
  TVMFFIObject* other = plain_object();
  cr_expect_null(tffi_ptr_find(&t, other));
  tffi_ptr_table_free(&t);
  cr_expect_null(tffi_ptr_find(&t, other));
  for (int i = 0; i < kKeys; ++i) {
    cr_expect_eq(tffi_strong_count(keys[i]), 1, "key %d still held after the free", i);
    tffi_decref(keys[i]);
  }
  tffi_decref(other);
}

/* Fills a table past its first growth; 0, or -1 with the error raised. */
static int fill(void* ctx) {
  TVMFFIObject** keys = ctx;
  TffiPtrTable t = {0};
  int rc = 0;
  for (int i = 0; i < 100 && rc == 0; ++i) {
    TffiPtrSlot* slot = tffi_ptr_slot(&t, keys[i]);
    if (slot == NULL) rc = -1;
    for (int j = 0; j <= i && rc == 0; ++j)
      cr_assert_not_null(tffi_ptr_find(&t, keys[j]), "key %d lost when key %d came", j, i);
  }
  tffi_ptr_table_free(&t);
  return rc;
}

Test(ptr_table, failing_growth_is_memory_error) {
  TVMFFIObject* keys[100];
  for (int i = 0; i < 100; ++i) keys[i] = plain_object();
  cr_expect_eq(fault_walk_both("tffi_ptr_slot", fill, keys), 3, "100 keys take 64, 128, 256 slots");
  for (int i = 0; i < 100; ++i) {
    cr_expect_eq(tffi_strong_count(keys[i]), 1, "key %d still held", i);
    tffi_decref(keys[i]);
  }
}
