/* Unit tests of deep_copy.c: graphs that lead from a list or dict back to
 * an array or map enclosing it (whose copy can only be made after the
 * list's), a list that holds itself, and every allocation of such copies
 * failing in turn, which must lose nothing (ASan's leak check sees cycles
 * of copies that were dropped without being emptied). */
#include <criterion/criterion.h>
#include <string.h>

#include "any.h"
#include "fault_test_support.h"
#include "map.h"
#include "registry.h"
#include "unit_test_support.h"

static int call(const char* name, TVMFFIAny* args, int32_t n, TVMFFIAny* out) {
  TVMFFIObject* fn = NULL;
  cr_assert_eq(tffi_global_get(name, strlen(name), &fn), 0);
  cr_assert_not_null(fn, "%s is not registered", name);
  *out = tffi_any_none();
  int rc = TVMFFIFunctionCall(fn, args, n, out);
  tffi_decref(fn);
  return rc;
}

static TVMFFIAny ok(const char* name, TVMFFIAny* args, int32_t n) {
  TVMFFIAny out;
  cr_assert_eq(call(name, args, n, &out), 0, "%s failed", name);
  return out;
}

static TVMFFIAny text(const char* s) {
  TVMFFIAny a = tffi_any_none();
  a.type_index = kTVMFFIRawStr;
  a.v_c_str = s;
  return a;
}

static const TVMFFIAny* items_of(TVMFFIAny seq) { return TVMFFISeqGetCellPtr(seq.v_obj)->data; }

static int64_t size_of(TVMFFIAny seq) { return TVMFFISeqGetCellPtr(seq.v_obj)->size; }

static void append(TVMFFIAny list, TVMFFIAny item) {
  TVMFFIAny args[2] = {list, item}, none = ok("ffi.ListAppend", args, 2);
  tffi_any_release(&none);
}

/* Empties a list (breaking the cycle it is part of) and releases it. */
static void drop_list(TVMFFIAny* list) {
  TVMFFIAny none = ok("ffi.ListClear", list, 1);
  tffi_any_release(&none);
  tffi_any_release(list);
}

/* The graph A = (L,), L = [A, "a string long enough for the heap", L, ...
 * (L `selves` times)]: the list leads back to the array that holds it, and
 * holds itself. */
typedef struct {
  TVMFFIAny array, list;
  int selves;
} ArrayCycle;

static ArrayCycle array_cycle(int selves) {
  ArrayCycle g = {.selves = selves};
  g.list = ok("ffi.List", NULL, 0);
  g.array = ok("ffi.Array", &g.list, 1);
  append(g.list, g.array);
  append(g.list, text("a string long enough for the heap"));
  for (int i = 0; i < selves; ++i) append(g.list, g.list);
  return g;
}

/* Checks that copy is a copy of array_cycle's array made by the clause's
 * rules, and empties its list (0), or returns -1 when DeepCopy failed. */
static int check_array_copy(ArrayCycle g, int rc, TVMFFIAny copy) {
  if (rc != 0) return -1;
  cr_assert_eq(copy.type_index, kTVMFFIArray);
  cr_assert_neq(copy.v_obj, g.array.v_obj, "the array was shared, not copied");
  cr_assert_eq(size_of(copy), 1);
  TVMFFIAny list = items_of(copy)[0];
  cr_assert_eq(list.type_index, kTVMFFIList);
  cr_assert_neq(list.v_obj, g.list.v_obj, "the list was shared, not copied");
  cr_assert_eq(size_of(list), 2 + g.selves);
  const TVMFFIAny* in = items_of(list);
  cr_assert_eq(in[0].v_obj, copy.v_obj, "the list's copy holds %s array, not the copy",
               in[0].v_obj == g.array.v_obj ? "the original" : "another");
  cr_assert_eq(in[1].v_obj, items_of(g.list)[1].v_obj, "a string was copied");
  for (int i = 0; i < g.selves; ++i)
    cr_assert_eq(in[2 + i].v_obj, list.v_obj, "the list's copy does not hold itself");
  TVMFFIAny none = ok("ffi.ListClear", &list, 1);
  tffi_any_release(&none);
  tffi_any_release(&copy);
  return 0;
}

Test(deep_copy, list_back_to_enclosing_array) {
  ArrayCycle g = array_cycle(1);
  TVMFFIAny copy;
  int rc = call("ffi.DeepCopy", &g.array, 1, &copy);
  check_array_copy(g, rc, copy);
  drop_list(&g.list);
  tffi_any_release(&g.array);
}

/* M = {"k": D}, D = {M: M, "after": 1}: the dict's copy has the map's copy
 * as key and value, that entry moved after the untouched one. */
Test(deep_copy, dict_back_to_enclosing_map) {
  TVMFFIAny dict = ok("ffi.Dict", NULL, 0), kv[2] = {text("k"), dict};
  TVMFFIAny map = ok("ffi.Map", kv, 2);
  TVMFFIAny set1[3] = {dict, map, map}, set2[3] = {dict, text("after"), tffi_any_none()};
  set2[2].type_index = kTVMFFIInt;
  set2[2].v_int64 = 1;
  ok("ffi.DictSetItem", set1, 3);
  ok("ffi.DictSetItem", set2, 3);
  TVMFFIAny copy = ok("ffi.DeepCopy", &map, 1);
  cr_assert_eq(copy.type_index, kTVMFFIMap);
  cr_assert_neq(copy.v_obj, map.v_obj);
  TffiMap* m = (TffiMap*)copy.v_obj;
  cr_assert_eq(m->size, 1);
  TffiKV* at = tffi_map_at(m, tffi_map_begin(m));
  TffiMap* d = (TffiMap*)at->value.v_obj;
  cr_assert_eq(at->value.type_index, kTVMFFIDict);
  cr_assert_neq((void*)d, dict.v_obj, "the dict was shared, not copied");
  cr_assert_eq(d->size, 2);
  const TffiKV* first = tffi_map_at(d, tffi_map_begin(d));
  const TffiKV* second = tffi_map_at(d, tffi_map_next(d, tffi_map_begin(d)));
  cr_assert_eq(first->key.type_index, kTVMFFISmallStr, "the changed entry was not moved last");
  cr_assert_eq(second->key.v_obj, copy.v_obj, "the key is not the map's copy");
  cr_assert_eq(second->value.v_obj, copy.v_obj, "the value is not the map's copy");
  cr_assert_eq(tffi_map_find(d, &map, &at), 0, "the original map is still a key");
  tffi_map_clear(d);
  tffi_map_clear((TffiMap*)dict.v_obj);
  tffi_any_release(&copy);
  tffi_any_release(&map);
  tffi_any_release(&dict);
}

static int op_copy_array_cycle(void* ctx) {
  ArrayCycle* g = ctx;
  TVMFFIAny copy;
  int rc = call("ffi.DeepCopy", &g->array, 1, &copy);
  return check_array_copy(*g, rc, copy);
}

/* A failure anywhere, in the walk or in replacing the placeholders, gives
 * back every copy made, cycles among them included. */
Test(deep_copy, allocation_failures) {
  /* Enough elements that the list copy's buffer grows while it is built,
   * after it holds itself. */
  ArrayCycle g = array_cycle(12);
  fault_walk_both("ffi.DeepCopy of a cycle", op_copy_array_cycle, &g);
  drop_list(&g.list);
  tffi_any_release(&g.array);
}
