/* Unit tests of map.c, map_dense.c and map_layout.c: the small and dense
 * forms against a plain model under long random runs (which reach the
 * spare-a-head and grow paths), the invariants of upstream's table (every
 * key found from its home slot through the chain, the insertion-order list
 * whole), and every allocation of an insertion failing in turn. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "any.h"
#include "fault_test_support.h"
#include "map.h"
#include "map_dense.h"
#include "unit_test_support.h"

static TffiMap* new_map(int32_t kind, uint64_t cap) {
  TVMFFIObject* m = tffi_map_new(kind, cap);
  cr_assert_not_null(m);
  return (TffiMap*)m;
}

static TVMFFIAny int_value(int64_t v) {
  TVMFFIAny a = tffi_any_none();
  a.type_index = kTVMFFIInt;
  a.v_int64 = v;
  return a;
}

static int64_t lookup(TffiMap* m, int64_t key) {
  TVMFFIAny k = int_value(key);
  TffiKV* kv;
  int rc = tffi_map_find(m, &k, &kv);
  cr_assert_geq(rc, 0);
  return rc ? kv->value.v_int64 : -1;
}

/* Every entry reached by walking the insertion-order list, both ways
 * consistent, and found again by look-up. */
static void check_whole(TffiMap* m) {
  uint64_t n = 0;
  for (uint64_t p = tffi_map_begin(m); p != tffi_map_end(m); p = tffi_map_next(m, p), ++n) {
    cr_assert(tffi_map_has_pos(m, p));
    TffiKV *kv = tffi_map_at(m, p), *again;
    cr_assert_eq(tffi_map_find(m, &kv->key, &again), 1, "an entry is not found from its home");
    cr_assert_eq(again, kv);
  }
  cr_assert_eq(n, m->size, "the walk met %llu of %llu entries", (unsigned long long)n,
               (unsigned long long)m->size);
}

Test(map, small_then_dense) {
  TffiMap* m = new_map(kTVMFFIDict, 0);
  cr_assert(tffi_map_is_small(m));
  for (int64_t i = 0; i < 4; ++i) {
    TVMFFIAny k = int_value(i), v = int_value(i * 3);
    cr_assert_eq(tffi_map_set(m, &k, &v), 0);
  }
  cr_assert(tffi_map_is_small(m));
  cr_assert_eq(m->slots & ~TFFI_MAP_SMALL_TAG, 4);
  TVMFFIAny k = int_value(4), v = int_value(12);
  cr_assert_eq(tffi_map_set(m, &k, &v), 0);
  cr_assert(!tffi_map_is_small(m), "a fifth entry keeps the small form");
  cr_assert_eq(m->slots, 8);
  for (int64_t i = 0; i < 5; ++i) cr_expect_eq(lookup(m, i), i * 3);
  check_whole(m);
  tffi_decref(&m->header);
}

Test(map, erase_and_clear) {
  for (int n = 3; n <= 40; n += 37) {
    TffiMap* m = new_map(kTVMFFIDict, 0);
    for (int64_t i = 0; i < n; ++i) {
      TVMFFIAny k = int_value(i), v = int_value(i);
      cr_assert_eq(tffi_map_set(m, &k, &v), 0);
    }
    TVMFFIAny k = int_value(1), absent = int_value(1000);
    cr_expect_eq(tffi_map_erase(m, &k), 1);
    cr_expect_eq(tffi_map_erase(m, &k), 0);
    cr_expect_eq(tffi_map_erase(m, &absent), 0);
    cr_expect_eq(lookup(m, 1), -1);
    cr_expect_eq(lookup(m, 2), 2);
    check_whole(m);
    tffi_map_clear(m);
    cr_expect_eq(m->size, 0);
    cr_expect_eq(tffi_map_begin(m), tffi_map_end(m));
    TVMFFIAny v = int_value(5);
    cr_assert_eq(tffi_map_set(m, &k, &v), 0);
    cr_expect_eq(lookup(m, 1), 5);
    tffi_decref(&m->header);
  }
}

/* Keys that crowd few home slots: int keys whose hashes differ only in
 * high bits, mixed with strings, inserted and erased at random against a
 * model; the table must stay whole throughout. */
Test(map, random_against_model) {
  enum { N = 600 };
  static int64_t model[N];
  for (int i = 0; i < N; ++i) model[i] = -1;
  TffiMap* m = new_map(kTVMFFIDict, 0);
  srand(7);
  for (int step = 0; step < 20000; ++step) {
    int key = rand() % N;
    TVMFFIAny k = int_value((int64_t)key << 40);
    if (rand() % 3 == 0) {
      int rc = tffi_map_erase(m, &k);
      cr_assert_eq(rc, model[key] >= 0, "step %d: erase of %d returned %d", step, key, rc);
      model[key] = -1;
    } else {
      TVMFFIAny v = int_value(step);
      cr_assert_eq(tffi_map_set(m, &k, &v), 0);
      model[key] = step;
    }
    if (step % 997 == 0) check_whole(m);
  }
  uint64_t live = 0;
  for (int i = 0; i < N; ++i) {
    live += model[i] >= 0;
    cr_expect_eq(lookup(m, (int64_t)i << 40), model[i], "key %d", i);
  }
  cr_expect_eq(m->size, live);
  check_whole(m);
  tffi_decref(&m->header);
}

typedef struct {
  TffiMap* m;
  int64_t next;
} GrowCtx;

/* Inserts one more key (keys 0, 1, 2, ...) into the shared map. */
static int grow_one(void* p) {
  GrowCtx* c = p;
  TVMFFIAny k = int_value(c->next), v = int_value(c->next * 2);
  uint64_t before = c->m->size;
  if (tffi_map_set(c->m, &k, &v) != 0) {
    cr_assert_eq(c->m->size, before, "a failed insertion changed the size");
    for (int64_t i = 0; i < c->next; ++i) cr_assert_eq(lookup(c->m, i), i * 2);
    return -1;
  }
  c->next += 1;
  return 0;
}

/* Every allocation of an insertion failing in turn, across the small,
 * small-to-dense and dense-growth paths: the map is as it was, or has the
 * new entry. */
Test(map, insert_allocation_failures) {
  GrowCtx c = {new_map(kTVMFFIDict, 0), 0};
  for (int i = 0; i < 40; ++i) fault_walk("tffi_map_set", grow_one, &c, 0);
  check_whole(c.m);
  tffi_decref(&c.m->header);
}
